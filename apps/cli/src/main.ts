#!/usr/bin/env -S npx tsx
import { CommanderError } from 'commander';
import { readCliEnv } from './env.ts';
import { CliError } from './output.ts';
import { createProgram } from './program.ts';

/** Runs `captionfarm ARGV...`; errors propagate (the caller picks the exit code). */
async function main(argv: string[]): Promise<void> {
  const program = createProgram(readCliEnv());
  // Alone, `captionfarm` shows what it can do (on stdout, exit 0) rather than commander's error.
  if (argv.length === 0) {
    program.outputHelp();
    return;
  }
  await program.parseAsync(argv, { from: 'user' });
}

main(process.argv.slice(2)).catch((err: unknown) => {
  // commander printed its own message (or the help); parse errors exit 2 like our usage errors.
  if (err instanceof CommanderError) process.exit(err.exitCode === 0 ? 0 : 2);
  if (err instanceof CliError) {
    process.stderr.write(`captionfarm: ${err.message}\n`);
    process.exit(err.exitCode);
  }
  process.stderr.write(`captionfarm: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
