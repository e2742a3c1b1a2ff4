/**
 * `captionfarm-agent`, the agent's own command: an agent machine that installed only this
 * workspace (`npm install --workspace agent`) starts agents with it, without the control plane.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../..');
const bin = path.join(root, 'agent/bin/captionfarm-agent.js');

/** The option names a help text lists, in order. */
const options = (help: string) => [...help.matchAll(/^ {2}(--[a-z-]+|-h, --help)/gm)].map((m) => m[1]);

describe('captionfarm-agent', () => {
  it('has the same options as `captionfarm agent`, with generated help', async () => {
    const own = await execa('node', [bin, '--help'], { reject: false });
    expect(own.exitCode).toBe(0);
    expect(own.stdout).toMatch(/^Usage: captionfarm-agent \[options\]/);
    const cli = await execa('node', [path.join(root, 'apps/cli/bin/captionfarm.js'), 'agent', '--help'], { reject: false });
    expect(cli.exitCode).toBe(0);
    expect(options(own.stdout)).toEqual(options(cli.stdout));
    expect(options(own.stdout)).toEqual(expect.arrayContaining(['--control-plane', '--token', '--self-test', '--seconds']));
  });

  it('refuses a missing --token with exit 2 and its usage, like the CLI', async () => {
    const r = await execa('node', [bin, '--control-plane', 'http://127.0.0.1:9'], { reject: false });
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(/^captionfarm-agent: --control-plane and --token are required\n\ncaptionfarm-agent \[options\]/);
    const unknown = await execa('node', [bin, '--bogus'], { reject: false });
    expect(unknown.exitCode).toBe(2);
    expect(unknown.stderr).toContain("captionfarm-agent: unknown option '--bogus'");
  });

  it("an agent-only install (the agent workspace's locked dependency tree) holds no control plane", () => {
    // What `npm install --workspace agent` installs: the workspace's dependencies and
    // devDependencies, and theirs (with optional and peer ones), resolved like node does from
    // package-lock.json.
    const lock = JSON.parse(readFileSync(path.join(root, 'package-lock.json'), 'utf8')) as {
      packages: Record<string, { link?: boolean; resolved?: string; [k: string]: unknown }>;
    };
    const resolve = (from: string, name: string): string | undefined => {
      for (let dir = from; ; dir = dir.includes('/node_modules/') ? dir.slice(0, dir.lastIndexOf('/node_modules/')) : '') {
        const key = dir ? `${dir}/node_modules/${name}` : `node_modules/${name}`;
        const entry = lock.packages[key];
        if (entry) return entry.link ? entry.resolved : key;
        if (!dir) return undefined;
      }
    };
    const seen = new Set<string>();
    const visit = (key: string, dev: boolean) => {
      if (seen.has(key)) return;
      seen.add(key);
      const entry = lock.packages[key]!;
      const kinds = ['dependencies', 'optionalDependencies', 'peerDependencies', ...(dev ? ['devDependencies'] : [])];
      for (const kind of kinds) {
        for (const name of Object.keys((entry[kind] as Record<string, string> | undefined) ?? {})) {
          const found = resolve(key, name);
          if (found) visit(found, false);
          else expect(kind, `${key} needs ${name}`).not.toBe('dependencies');
        }
      }
    };
    visit('agent', true);
    const names = [...seen].map((k) => (k.includes('node_modules/') ? k.slice(k.lastIndexOf('node_modules/') + 'node_modules/'.length) : k));
    expect(names).toEqual(expect.arrayContaining(['packages/transcriber', 'packages/renderer', 'commander', 'tsx']));
    for (const heavy of ['apps/control-plane', 'packages/db', 'packages/storage', 'express', 'better-sqlite3', 'pg']) expect(names).not.toContain(heavy);
    expect(names.filter((n) => n.startsWith('@aws-sdk/'))).toEqual([]);
  });
});
