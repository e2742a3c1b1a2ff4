import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const main = path.resolve(import.meta.dirname, '../src/main.ts');
const tsx = path.resolve(import.meta.dirname, '../../../node_modules/.bin/tsx');

/**
 * Runs the real CLI (a tsx process) as a local admin would: only the control plane's URL and data
 * dir, no token given (the CLI reads it from the data dir). Never throws: the exit code is returned.
 */
export async function runCliAsLocalAdmin(
  where: { url: string; dataDir: string },
  ...args: string[]
): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(tsx, [main, ...args], {
      env: { ...process.env, CAPTIONFARM_URL: where.url, CAPTIONFARM_DATA_DIR: where.dataDir, CAPTIONFARM_ADMIN_TOKEN: '' },
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}
