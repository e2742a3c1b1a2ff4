import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runToEnd } from '@captionfarm/process';

// A fresh Node process loads the renderer as the agent does; mimalloc, inside the canvas binding,
// prints the options it took when MIMALLOC_VERBOSE is set.
const TSX = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
const ENTRY = fileURLToPath(new URL('../src/index.ts', import.meta.url));

async function allocatorOptions(env: Record<string, string>): Promise<string> {
  // Not the test process's own: a renderer loaded in this worker has set it already.
  const { MIMALLOC_ALLOW_THP: _, ...inherited } = process.env;
  const { stderrTail } = await runToEnd(process.execPath, {
    args: ['--import', TSX, '-e', `await import(${JSON.stringify(pathToFileURL(ENTRY).href)}); process.exit(0)`],
    env: { ...inherited, MIMALLOC_VERBOSE: '1', ...env },
    stderrTailChars: 1 << 16,
  });
  return stderrTail;
}

describe("the canvas binding's allocator", () => {
  it('takes no transparent huge pages (a fresh 2 MB page zeroed for each read-back), unless the operator asks for them', async () => {
    const ours = await allocatorOptions({});
    expect(ours).toMatch(/option 'allow_thp': 0\b/);
    const theirs = await allocatorOptions({ MIMALLOC_ALLOW_THP: '1' });
    expect(theirs).toMatch(/option 'allow_thp': 1\b/);
  });
});
