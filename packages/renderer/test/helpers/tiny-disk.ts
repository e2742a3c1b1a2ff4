import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execaSync } from 'execa';

/** A real small file system for the disk-full suites (renderer and control plane). */
type TinyDisk = { path: string; missing?: undefined; unmount(): void } | { path?: undefined; missing: string; unmount(): void };

/**
 * Mounts a tmpfs of `size` (mount's syntax: `64k`, `6m`) on a fresh temp directory. Mounting needs
 * root (CAP_SYS_ADMIN). Where it fails, the suite skips and says why, except on CI (CI=true):
 * .ci/run runs as root and checks a tmpfs mount before the tests, so a failure there is a broken
 * machine, and a skip would read as green. Synchronous: `describe.skipIf` is decided at load, so
 * this is the one place that runs a tool with execa's sync call rather than the process module.
 */
export function mountTinyDisk(size: string, env: NodeJS.ProcessEnv = process.env): TinyDisk {
  const dir = mkdtempSync(join(tmpdir(), 'cf-tiny-disk-'));
  try {
    execaSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir], { stdin: 'ignore', stdout: 'ignore' });
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    const stderr = String((err as { stderr?: string }).stderr ?? '')
      .replace(/\s+/g, ' ')
      .trim();
    const why = `cannot mount a ${size} tmpfs (${stderr || (err as Error).message}; it needs root): the disk-full tests are skipped`;
    if (env.CI === 'true' || env.CI === '1') throw new Error(`CI: ${why.replace(' are skipped', ' cannot run')}; run .ci/run as root`);
    // Said out loud: a reporter lists skipped tests by count only.
    console.warn(`disk-full suites: ${why}`);
    return { missing: why, unmount: () => undefined };
  }
  return {
    path: dir,
    unmount() {
      execaSync('umount', [dir]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
