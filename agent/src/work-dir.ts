import { readdir, rm } from 'node:fs/promises';
import path from 'node:path';

/** `job-<first 8 of the job id>-p<pid>-<random>`: whose the directory is, so a sweep can tell debris from work. */
export function jobDirPrefix(jobId: string): string {
  return `job-${jobId.slice(0, 8)}-p${process.pid}-`;
}

const JOB_DIR = /^job-([0-9a-f]{8})-(?:p(\d+)-)?/;

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Removes the job directories of attempts that ended without cleaning up (the agent was killed:
 * a source, a WAV and a partial render each, 351 MB in 12 dirs after about 10 kills): ours whose
 * job is no longer running here, and those of agent processes that no longer exist. Directories
 * of other live agents sharing the work dir are left alone (agents sharing one must share a pid
 * namespace, i.e. run on the same machine, not in separate containers). Returns the names removed.
 */
export async function sweepWorkDir(workDir: string, runningJobIds: Iterable<string>): Promise<string[]> {
  const running = new Set([...runningJobIds].map((id) => id.slice(0, 8)));
  let names: string[];
  try {
    names = await readdir(workDir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  const removed: string[] = [];
  for (const name of names) {
    const m = JOB_DIR.exec(name);
    if (!m) continue;
    const pid = m[2] === undefined ? null : Number(m[2]);
    // No pid: made by a version before this one, which is not running any more.
    const debris = pid === null || (pid === process.pid ? !running.has(m[1]!) : !alive(pid));
    if (!debris) continue;
    await rm(path.join(workDir, name), { recursive: true, force: true });
    removed.push(name);
  }
  return removed;
}
