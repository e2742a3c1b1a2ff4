import { describe, expect, it } from 'vitest';
import { createFairShare } from '../src/fair-share.ts';

const deferred = () => {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
};

describe('fair share', () => {
  it('takes turns between keys: a key with a long queue does not make another wait behind all of it', async () => {
    const fair = createFairShare({ slots: 1, queuePerKey: 10 });
    const order: string[] = [];
    const gates: (() => void)[] = [];
    const task = (name: string) => () => {
      order.push(name);
      const d = deferred();
      gates.push(d.resolve);
      return d.promise;
    };
    const all = [fair.run('a', task('a1')), fair.run('a', task('a2')), fair.run('a', task('a3')), fair.run('a', task('a4')), fair.run('b', task('b1'))];
    for (let i = 0; i < all.length; i++) {
      await new Promise((r) => setImmediate(r));
      gates.shift()!();
    }
    await Promise.all(all);
    // b1 arrived last but runs second, not fifth.
    expect(order).toEqual(['a1', 'b1', 'a2', 'a3', 'a4']);
  });

  it('refuses at once (429) past a key’s queue, without delaying other keys', async () => {
    const fair = createFairShare({ slots: 1, queuePerKey: 2 });
    const d = deferred();
    const first = fair.run('a', () => d.promise);
    const queued = [fair.run('a', async () => 1), fair.run('a', async () => 2)];
    await expect(fair.run('a', async () => 3)).rejects.toMatchObject({ code: 'rate_limited' });
    const other = fair.run('b', async () => 'b');
    d.resolve();
    await first;
    expect(await Promise.all(queued)).toEqual([1, 2]);
    expect(await other).toBe('b');
    expect(fair.stats()).toEqual({ running: 0, waiting: 0 });
  });

  it('caps what one key runs at once, and forgets a waiter whose signal aborts', async () => {
    const fair = createFairShare({ slots: 2, perKey: 1 });
    const d = deferred();
    const a1 = fair.run('a', () => d.promise);
    const ac = new AbortController();
    let ran = false;
    const a2 = fair.run(
      'a',
      async () => {
        ran = true;
      },
      ac.signal,
    );
    // The second slot is free, but 'a' already runs its one: b goes first.
    expect(await fair.run('b', async () => 'b')).toBe('b');
    expect(fair.stats()).toEqual({ running: 1, waiting: 1 });
    ac.abort(new Error('gone'));
    await expect(a2).rejects.toThrow('gone');
    d.resolve();
    await a1;
    expect(ran).toBe(false);
    expect(fair.stats()).toEqual({ running: 0, waiting: 0 });
  });
});
