/**
 * CPU seconds from /proc, for the benches' accounting of where a run's CPU went (Linux only;
 * USER_HZ is 100 there).
 */
import { readdirSync, readFileSync } from 'node:fs';

/** The fields after "pid (comm) " of a /proc stat line: index 0 is field 3 (state). */
function statFields(stat: string): string[] {
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

/** CPU seconds of this process's exited, waited-for children (cutime + cstime, fields 16 and 17 of /proc/self/stat). */
export function childCpuSeconds(): number {
  const fields = statFields(readFileSync('/proc/self/stat', 'utf8'));
  return (Number(fields[13]) + Number(fields[14])) / 100;
}

/**
 * CPU seconds so far (utime + stime, fields 14 and 15) of this process's live children named
 * `comm` (a long-running server such as whisper-server, not yet waited for, so not in childCpuSeconds).
 */
export function liveChildCpuSeconds(comm: string): number {
  let total = 0;
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    } catch {
      continue; // gone since the listing
    }
    const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
    const fields = statFields(stat);
    // Field 4 (ppid) is index 1.
    if (name === comm && Number(fields[1]) === process.pid) total += (Number(fields[11]) + Number(fields[12])) / 100;
  }
  return total;
}
