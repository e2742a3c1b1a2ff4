/**
 * The one way this project starts a child process that must not outlive us (ffmpeg, ffprobe,
 * whisper-server, the VAD). Node kills no child when it dies (SIGKILL, a crash), so a killed
 * agent left its ffmpeg rendering as an orphan (8-9 s on a short clip, minutes on long ones)
 * while the restarted agent rendered the same job again, and its whisper-server holding the
 * model (~300 MB for base). On Linux, util-linux's setpriv (Essential on Debian) sets the
 * parent-death signal to SIGKILL and execs the binary: same pid, killed by the kernel the moment
 * the thread that spawned it dies (Node spawns from the main thread). Elsewhere children still
 * running when this process exits normally are killed by an exit hook.
 */
import { accessSync, constants, existsSync } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';

const SETPRIV = process.platform === 'linux' && existsSync('/usr/bin/setpriv') ? '/usr/bin/setpriv' : null;
/** coreutils' nice (Essential on Debian): the child, and every thread it starts, at a lower priority. */
const NICE = existsSync('/usr/bin/nice') ? '/usr/bin/nice' : null;

const executable = new Map<string, boolean>();
/** Whether `binary` (a path, or a name looked up on PATH like spawn does) can be run. */
function canRun(binary: string): boolean {
  let known = executable.get(binary);
  if (known === undefined) {
    const candidates = binary.includes('/')
      ? [binary]
      : (process.env.PATH ?? '')
          .split(delimiter)
          .filter(isAbsolute)
          .map((d) => join(d, binary));
    known = candidates.some((c) => {
      try {
        accessSync(c, constants.X_OK);
        return true;
      } catch {
        return false;
      }
    });
    executable.set(binary, known);
  }
  return known;
}

/**
 * [command, args] that run `binary args` so that it dies with this process, at niceness `nice`
 * (0: ours) where nice(1) exists. A binary that cannot be run is returned unwrapped, so spawn
 * still fails with ENOENT (and callers keep their "install ffmpeg or set FFMPEG_PATH" message)
 * instead of setpriv or nice exiting 127.
 */
export function dieWithParent(binary: string, args: readonly string[], nice = 0): [string, string[]] {
  if (!canRun(binary)) return [binary, [...args]];
  const [command, rest]: [string, string[]] = SETPRIV ? [SETPRIV, ['--pdeathsig', 'SIGKILL', '--', binary, ...args]] : [binary, [...args]];
  // nice execs setpriv, which sets the death signal and execs the binary: one pid throughout.
  return nice > 0 && NICE ? [NICE, ['-n', String(nice), '--', command, ...rest]] : [command, rest];
}

/** What the exit hook needs of a child (execa's subprocess is one). */
interface Killable {
  kill(signal: NodeJS.Signals): unknown;
  once(event: 'exit', listener: () => void): unknown;
}

const live = new Set<Killable>();
let exitHookInstalled = false;
/** Kills `child` when this process exits normally (for platforms without setpriv). */
export function killOnExit(child: Killable): void {
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.once('exit', () => {
      for (const c of live) c.kill('SIGKILL');
    });
  }
  live.add(child);
  child.once('exit', () => live.delete(child));
}
