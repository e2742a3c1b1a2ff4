/** Errors the CLI reports as one line on stderr with an exit code, never a stack trace. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
  }
}

/** A command line the user got wrong: exit 2, and the command's usage is shown after the message. */
export class UsageError extends CliError {
  constructor(message: string) {
    super(message, 2);
  }
}

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
