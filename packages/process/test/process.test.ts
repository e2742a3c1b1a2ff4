import { getPriority } from 'node:os';
import { describe, expect, it } from 'vitest';
import { HEAP_MALLOC_TUNABLES, runToEnd, withHeapMalloc } from '../src/process.ts';

describe('runToEnd', () => {
  it("gives a tool's output, and refuses a failed run with its exit code and the end of its stderr", async () => {
    expect((await runToEnd('sh', { args: ['-c', 'echo 42'] })).stdout).toBe('42\n');
    await expect(runToEnd('sh', { args: ['-c', 'echo warming up >&2; echo no such file >&2; exit 3'] })).rejects.toThrow(
      /^sh exited with code 3: warming up\nno such file$/,
    );
  });

  it('rejects with the spawn error for a missing binary, and with the reason on abort', async () => {
    await expect(runToEnd('/nonexistent/tool', { args: [] })).rejects.toMatchObject({ code: 'ENOENT' });
    await expect(runToEnd('/nonexistent/tool', { args: [], nice: 10 })).rejects.toMatchObject({ code: 'ENOENT' });
    const reason = new Error('too slow');
    await expect(runToEnd('sleep', { args: ['5'], signal: AbortSignal.timeout(50) })).rejects.toMatchObject({ name: 'TimeoutError' });
    await expect(runToEnd('sleep', { args: ['5'], signal: AbortSignal.abort(reason) })).rejects.toBe(reason);
  });

  it('runs a child at a niceness above ours when asked, with its arguments as given', async () => {
    const ours = getPriority();
    // nice(1) without a command prints the niceness it runs at.
    const niceOf = async (nice?: number) => Number((await runToEnd('nice', { args: [], nice })).stdout);
    expect(await niceOf()).toBe(ours);
    expect(await niceOf(10)).toBe(Math.min(19, ours + 10));
    expect((await runToEnd('echo', { args: ['-n', '--', '-n 5'], nice: 3 })).stdout).toBe('-- -n 5');
  });

  it('feeds stdin, runs in a given directory, and gives binary stdout byte for byte', async () => {
    expect((await runToEnd('tr', { args: ['a-z', 'A-Z'], input: 'said the tool' })).stdout).toBe('SAID THE TOOL');
    expect((await runToEnd('pwd', { args: [], cwd: '/tmp' })).stdout).toBe('/tmp\n');
    const bytes = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0xff, 0xfe, 0x0a]);
    const { stdout } = await runToEnd('cat', { args: [], input: bytes, encoding: 'buffer' });
    expect(Buffer.isBuffer(stdout) && stdout.equals(bytes)).toBe(true);
  });

  it("gives a child glibc's heap malloc setting, keeping the rest of the environment and an operator's own tunables after it", async () => {
    const env = withHeapMalloc({ PATH: process.env.PATH, LANG: 'C.UTF-8' });
    expect(env).toEqual({ PATH: process.env.PATH, LANG: 'C.UTF-8', GLIBC_TUNABLES: HEAP_MALLOC_TUNABLES });
    expect(withHeapMalloc({ GLIBC_TUNABLES: 'glibc.malloc.arena_max=1' }).GLIBC_TUNABLES).toBe(`${HEAP_MALLOC_TUNABLES}:glibc.malloc.arena_max=1`);
    // What a child really starts with (the env option replaces ours whole).
    expect((await runToEnd('sh', { args: ['-c', 'echo "$GLIBC_TUNABLES $LANG"'], env })).stdout).toBe(`${HEAP_MALLOC_TUNABLES} C.UTF-8\n`);
  });
});
