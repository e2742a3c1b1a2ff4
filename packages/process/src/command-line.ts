/**
 * What a command line of ours needs around commander, shared by `captionfarm-agent` (this package's
 * bin, which an agent-only install has) and the `captionfarm` CLI (which runs the same `agent`
 * command): the two error types and their exit codes, usage after a usage error, one way out.
 */
import { type Command, CommanderError } from 'commander';

/** Errors a command reports as one line on stderr with an exit code, never a stack trace. */
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

/** The program a command belongs to ("captionfarm", "captionfarm-agent"): the prefix of its messages. */
function programName(cmd: Command): string {
  let root = cmd;
  while (root.parent) root = root.parent;
  return root.name();
}

/**
 * Settings every command of the tree needs (commander copies them only to commands made with
 * `.command()` after they are set): parse errors throw instead of exiting, so runProgram picks the
 * exit code (2, as for every usage error), and they print as "captionfarm: ..." like our own errors.
 */
export function configureTree(cmd: Command, output: { writeOut?: (s: string) => void; writeErr?: (s: string) => void } = {}): Command {
  cmd.exitOverride();
  cmd.configureOutput({
    ...output,
    outputError: (message, write) => write(`${programName(cmd)}: ${message.replace(/^error: /, '')}`),
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

/** An action that turns a UsageError into exit 2 with this command's usage after the message. */
export function action<A extends unknown[]>(fn: (...args: A) => Promise<void>) {
  return async function (this: Command, ...args: A): Promise<void> {
    try {
      await fn(...args);
    } catch (err) {
      throw withUsage(err, this);
    }
  };
}

/**
 * Runs the program on `argv` (after the program name) and exits on an error: commander's own
 * (it printed the message or the help; exit 0 for --help, else 2), a CliError (one line, its exit
 * code) or anything else (the stack, exit 1). A command that keeps running (an agent) keeps the
 * process alive on its own.
 */
export function runProgram(program: Command, argv: string[]): void {
  const name = program.name();
  program.parseAsync(argv, { from: 'user' }).catch((err: unknown) => {
    if (err instanceof CommanderError) process.exit(err.exitCode === 0 ? 0 : 2);
    if (err instanceof CliError) {
      process.stderr.write(`${name}: ${err.message}\n`);
      process.exit(err.exitCode);
    }
    process.stderr.write(`${name}: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  });
}
