import type { JobEdit } from '@captionfarm/sdk';

// An edited job's cut list as a person reads it: after `captionfarm burn`, and by `captionfarm jobs edit`.

/** "12.6 s", "0.4 s". */
const secs = (n: number) => `${(Math.round(n * 10) / 10).toFixed(1)} s`;

/**
 * What an edited job did, from GET .../edit: the cuts by reason, the seconds removed and the
 * output's length, then the punch-ins, bleeps and hook title when there are any.
 */
export function editSummary(edit: JobEdit): string[] {
  const { plan } = edit;
  const byReason = new Map<string, number>();
  for (const c of plan.cuts) byReason.set(c.reason, (byReason.get(c.reason) ?? 0) + 1);
  const reasons = [...byReason].map(([reason, n]) => `${n} ${reason}`).join(', ');
  const n = plan.cuts.length;
  const lines = [
    n === 0
      ? `no cuts: ${secs(plan.outputSeconds)} long`
      : `${n} cut${n === 1 ? '' : 's'} (${reasons}): ${secs(Math.max(0, plan.sourceSeconds - plan.outputSeconds))} removed, ` +
        `${secs(plan.sourceSeconds)} -> ${secs(plan.outputSeconds)}`,
  ];
  if (plan.zooms.length > 0) lines.push(`${plan.zooms.length} punch-in zoom${plan.zooms.length === 1 ? '' : 's'}`);
  if (plan.bleeps.length > 0) lines.push(`${plan.bleeps.length} word${plan.bleeps.length === 1 ? '' : 's'} bleeped`);
  if (edit.hookTitle) lines.push(`hook title "${edit.hookTitle.text}" for the first ${secs(edit.hookTitle.seconds)}`);
  return lines;
}

/** Source seconds as --keep takes them: "0-4.2,5.1-12" (to the millisecond, no trailing zeros). */
export function keepArgument(keep: readonly { start: number; end: number }[]): string {
  const n = (x: number) => String(Math.round(x * 1000) / 1000);
  return keep.map((r) => `${n(r.start)}-${n(r.end)}`).join(',');
}

/** Every cut, one a line: "cut  1.000-1.600 s  filler   um," in source seconds. */
export function cutLines(edit: JobEdit): string[] {
  const w = Math.max(0, ...edit.plan.cuts.map((c) => c.reason.length));
  return edit.plan.cuts.map((c) => `cut  ${c.start.toFixed(3)}-${c.end.toFixed(3)} s  ${c.reason.padEnd(w)}${c.text === null ? '' : `  ${c.text}`}`.trimEnd());
}
