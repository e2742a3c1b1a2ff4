// The error types and their exit codes are shared with the agent's own command (captionfarm-agent).
export { CliError, UsageError } from '@captionfarm/process/command-line';

export function print(value: unknown, json: boolean, human?: (v: never) => string): void {
  if (json || !human) process.stdout.write(`${JSON.stringify(value, null, json ? 2 : 2)}\n`);
  else process.stdout.write(`${human(value as never)}\n`);
}

export function table(rows: Record<string, unknown>[], columns: string[]): string {
  if (rows.length === 0) return '(none)';
  const cell = (v: unknown) => (v === null || v === undefined ? '-' : String(v));
  const widths = columns.map((c) => Math.max(c.length, ...rows.map((r) => cell(r[c]).length)));
  const line = (vals: string[]) =>
    vals
      .map((v, i) => v.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  return [line(columns.map((c) => c.toUpperCase())), ...rows.map((r) => line(columns.map((c) => cell(r[c]))))].join('\n');
}
