/**
 * ffmpeg's `-progress pipe:1` output is blocks of `key=value` lines, each ending with
 * `progress=continue` (or `progress=end`). Only the encoded position matters to us.
 */

/**
 * Percent done (0..100, not rounded) implied by one line of `-progress` output, or null for
 * lines that say nothing about position (`fps=`, `out_time_us=N/A`, the first negative times).
 * `out_time_us` and the misnamed `out_time_ms` are both microseconds in ffmpeg 5.x.
 */
export function parseFfmpegProgress(line: string, durationSeconds: number): number | null {
  const eq = line.indexOf('=');
  if (eq < 0) return null;
  const key = line.slice(0, eq).trim();
  const value = line.slice(eq + 1).trim();
  if (key === 'progress') return value === 'end' ? 100 : null;
  if (key !== 'out_time_us' && key !== 'out_time_ms') return null;
  const us = Number(value);
  if (value === '' || !Number.isFinite(us) || us < 0 || !(durationSeconds > 0)) return null;
  return Math.min(100, (us / 1e6 / durationSeconds) * 100);
}

/**
 * Feeds stdout chunks (split anywhere) line by line to the parser and reports whole percents,
 * only when they grow: the job record's percent never goes backwards. 100 is left to the
 * caller, who says it once the output file is complete.
 */
export function createProgressReporter(durationSeconds: number, onProgress: (percent: number) => void): (chunk: string) => void {
  let partial = '';
  let last = -1;
  return (chunk) => {
    const lines = (partial + chunk).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) {
      const p = parseFfmpegProgress(line, durationSeconds);
      if (p === null) continue;
      const whole = Math.min(99, Math.floor(p));
      if (whole > last) {
        last = whole;
        onProgress(whole);
      }
    }
  };
}
