import { describe, expect, it } from 'vitest';
import { onShutdown } from '../src/shutdown.ts';

/** Sends `signal` to this process and waits for Node to deliver it to the listeners. */
async function send(signal: NodeJS.Signals): Promise<void> {
  const delivered = new Promise<void>((resolve) => process.once(signal, () => setImmediate(resolve)));
  process.kill(process.pid, signal);
  await delivered;
}

describe('onShutdown', () => {
  it('calls first on the first signal and second on every later one, with the signal', async () => {
    const calls: string[] = [];
    const stop = onShutdown({ signals: ['SIGUSR2', 'SIGWINCH'], first: (s) => calls.push(`first ${s}`), second: (s) => calls.push(`second ${s}`) });
    await send('SIGWINCH');
    await send('SIGUSR2');
    await send('SIGUSR2');
    stop();
    expect(calls).toEqual(['first SIGWINCH', 'second SIGUSR2', 'second SIGUSR2']);
    expect(process.listenerCount('SIGUSR2')).toBe(0);
    expect(process.listenerCount('SIGWINCH')).toBe(0);
  });

  it('counts repeats within repeatsWithinMs of the first as the first', async () => {
    const calls: string[] = [];
    const stop = onShutdown({ signals: ['SIGUSR2'], repeatsWithinMs: 300, first: () => calls.push('first'), second: () => calls.push('second') });
    await send('SIGUSR2');
    await send('SIGUSR2');
    expect(calls).toEqual(['first']);
    await new Promise((r) => setTimeout(r, 350));
    await send('SIGUSR2');
    stop();
    expect(calls).toEqual(['first', 'second']);
  });
});
