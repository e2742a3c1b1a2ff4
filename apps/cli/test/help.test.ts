import path from 'node:path';
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { runToEnd } from '@captionfarm/process';
import { readCliEnv } from '../src/env.ts';
import { createProgram } from '../src/program.ts';

const root = path.resolve(import.meta.dirname, '../../..');

/** Every command of the tree with its full name, e.g. "captionfarm admin keys create". */
function allCommands(cmd: Command, prefix = ''): { name: string; cmd: Command }[] {
  const name = `${prefix}${cmd.name()}`;
  return [{ name, cmd }, ...cmd.commands.flatMap((c) => allCommands(c, `${name} `))];
}

describe('captionfarm --help', () => {
  it('`npx captionfarm --help` (the bin scripts/setup links) lists every command', async () => {
    // From a package folder, as a newcomer might: npx finds the bin in the repository's node_modules/.bin.
    const { stdout } = await runToEnd('npx', { args: ['--no-install', 'captionfarm', '--help'], cwd: path.join(root, 'packages/sdk') });
    const listed = stdout
      .slice(stdout.indexOf('Commands:'))
      .split('\n')
      .map((l) => /^ {2}([a-z-]+)/.exec(l)?.[1])
      .filter(Boolean);
    expect(listed).toEqual(['serve', 'models', 'preview', 'agent', 'admin', 'burn', 'jobs', 'templates', 'help']);
  });

  it('every command and subcommand has its own generated help with a description', () => {
    // show-help: the hidden default of each group (prints the group's help).
    const commands = allCommands(createProgram(readCliEnv({}))).filter(({ cmd }) => cmd.name() !== 'show-help');
    expect(commands.map((c) => c.name)).toEqual(
      expect.arrayContaining(['captionfarm admin agents token create', 'captionfarm admin agents token list', 'captionfarm admin agents token revoke']),
    );
    for (const { name, cmd } of commands) {
      const help = cmd.helpInformation();
      expect(help, name).toMatch(new RegExp(`^Usage: ${name}( |$)`));
      expect(cmd.description(), name).not.toBe('');
    }
    // Each admin command accepts exactly its own options (no shared table): keys revoke takes --key only.
    const revoke = commands.find((c) => c.name === 'captionfarm admin keys revoke')!.cmd;
    expect(revoke.options.map((o) => o.long).sort()).toEqual(['--json', '--key', '--url']);
  });
});
