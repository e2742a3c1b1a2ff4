import path from 'node:path';
import { runProcess } from '@captionfarm/process';

/**
 * Shared by the CLI tests: run the real `captionfarm` as a user would, through its bin (tsx's
 * loader in the CLI's own process, so a signal reaches the CLI itself).
 */
export const BIN = path.resolve(import.meta.dirname, '../bin/captionfarm.js');

/** The CLI with stdout/stderr as pipes (not a terminal): plain line output. Never throws: the exit code is returned. */
export async function cliPiped(args: string[], env: Record<string, string>, cwd?: string): Promise<{ code: number; stdout: string; stderr: string }> {
  const r = await runProcess(process.execPath, { args: [BIN, ...args], env: { ...process.env, ...env }, cwd, stderrTailChars: 1 << 20 }).done;
  return { code: r.exitCode ?? -1, stdout: r.stdout, stderr: r.stderrTail };
}

/**
 * The CLI as a local admin runs it: only the control plane's URL and data dir, no token given
 * (the CLI reads it from the data dir).
 */
export function runCliAsLocalAdmin(where: { url: string; dataDir: string }, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return cliPiped(args, { CAPTIONFARM_URL: where.url, CAPTIONFARM_DATA_DIR: where.dataDir, CAPTIONFARM_ADMIN_TOKEN: '' });
}
