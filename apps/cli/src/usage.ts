import type { Command } from 'commander';
import { CliError, UsageError } from './output.ts';

/** The command's generated help without its "Usage: " title: what a usage error prints after the message. */
export function usageText(cmd: Command): string {
  return cmd
    .helpInformation()
    .replace(/^Usage: /, '')
    .trimEnd();
}

/** The full command line of a command, e.g. "captionfarm admin keys create". */
function commandPath(cmd: Command): string {
  const names: string[] = [];
  for (let c: Command | null = cmd; c; c = c.parent) names.unshift(c.name());
  return names.join(' ');
}

/**
 * Settings every command of the tree needs (commander copies them only to commands made with
 * `.command()` after they are set): parse errors throw instead of exiting, so main.ts picks the
 * exit code (2, as for every usage error), and they print as "captionfarm: ..." like our own errors.
 */
export function configureTree(cmd: Command, output: { writeOut?: (s: string) => void; writeErr?: (s: string) => void } = {}): Command {
  cmd.exitOverride();
  cmd.configureOutput({
    ...output,
    outputError: (message, write) => write(`captionfarm: ${message.replace(/^error: /, '')}`),
  });
  cmd.showHelpAfterError(`(${commandPath(cmd)} --help shows the usage)`);
  for (const sub of cmd.commands) configureTree(sub, output);
  return cmd;
}

/** A UsageError thrown by a command's action, with that command's usage after the message. */
export function withUsage(err: unknown, cmd: Command): unknown {
  if (err instanceof UsageError) return new CliError(`${err.message}\n\n${usageText(cmd)}`, 2);
  return err;
}
