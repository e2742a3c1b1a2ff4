/**
 * npm run pack:cli [-- --out DIR]   -> DIR/captionfarm-VERSION.tgz (default DIR: the current directory)
 *
 * The `captionfarm` command as one tarball for `npm install -g ./captionfarm-VERSION.tgz`. The CLI
 * imports workspace packages that exist only in this repository (their package.json exports their
 * TypeScript sources, which the bin runs through tsx), and npm does not bundle workspace links
 * (`bundleDependencies` of a workspace packs nothing). So this stages a plain package: the CLI at
 * the top, the workspace packages it needs (and the built dashboard `serve` shows) copied into its
 * node_modules as bundled dependencies, and their registry dependencies merged into its own.
 */
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { runToEnd } from '@captionfarm/process';

interface Manifest {
  name: string;
  version: string;
  dependencies?: Record<string, string>;
  [key: string]: unknown;
}

const repo = path.resolve(import.meta.dirname, '..');
const { values } = parseArgs({ options: { out: { type: 'string', default: process.env.INIT_CWD ?? process.cwd() } } });
const out = path.resolve(values.out!);

// Every workspace by package name.
const workspaces = new Map<string, { dir: string; manifest: Manifest }>();
const listed = JSON.parse((await runToEnd('npm', { args: ['query', '.workspace', '--json'], cwd: repo })).stdout) as { path: string }[];
for (const { path: dir } of listed) {
  const manifest = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as Manifest;
  workspaces.set(manifest.name, { dir, manifest });
}

// The CLI's workspace dependencies, transitively.
const needed = new Set<string>();
const visit = (name: string) => {
  for (const dep of Object.keys(workspaces.get(name)!.manifest.dependencies ?? {})) {
    if (workspaces.has(dep) && !needed.has(dep)) {
      needed.add(dep);
      visit(dep);
    }
  }
};
visit('@captionfarm/cli');

const cli = workspaces.get('@captionfarm/cli')!;
const stage = mkdtempSync(path.join(tmpdir(), 'captionfarm-pack-'));
try {
  const copy = (from: string, to: string) =>
    cpSync(from, to, { recursive: true, filter: (src) => !/[/\\](node_modules|test|dist|\.turbo)$/.test(src) || src === from });
  for (const entry of ['bin', 'src', 'README.md']) copy(path.join(cli.dir, entry), path.join(stage, entry));

  const dependencies: Record<string, string> = {};
  for (const name of [...needed].sort()) {
    const ws = workspaces.get(name)!;
    const to = path.join(stage, 'node_modules', name);
    copy(ws.dir, to);
    for (const [dep, range] of Object.entries(ws.manifest.dependencies ?? {})) if (!workspaces.has(dep)) dependencies[dep] ??= range;
    // Their dependencies become the top package's: npm counts the dependencies of a bundled package
    // as part of the bundle and would not install them (better-sqlite3's build then finds no files).
    const { dependencies: _d, devDependencies: _dd, ...rest } = ws.manifest;
    writeFileSync(path.join(to, 'package.json'), `${JSON.stringify(rest, null, 2)}\n`);
  }
  for (const [dep, range] of Object.entries(cli.manifest.dependencies ?? {})) if (!workspaces.has(dep)) dependencies[dep] = range;

  // `serve` shows the built dashboard from the control plane's ../../../dashboard/dist.
  const dashboard = workspaces.get('@captionfarm/dashboard');
  const bundled = [...needed].sort();
  if (dashboard && existsSync(path.join(dashboard.dir, 'dist'))) {
    const to = path.join(stage, 'node_modules', '@captionfarm/dashboard');
    cpSync(path.join(dashboard.dir, 'dist'), path.join(to, 'dist'), { recursive: true });
    writeFileSync(
      path.join(to, 'package.json'),
      `${JSON.stringify({ name: '@captionfarm/dashboard', version: dashboard.manifest.version, private: true }, null, 2)}\n`,
    );
    bundled.push('@captionfarm/dashboard');
  } else {
    process.stderr.write('pack-cli: apps/dashboard/dist is missing (npm run build -w @captionfarm/dashboard); serve will show no dashboard\n');
  }

  const manifest = {
    name: 'captionfarm',
    version: cli.manifest.version,
    description: 'Captionfarm: burn animated, styled captions into videos (control plane, agent and API client in one command)',
    type: 'module',
    engines: { node: '>=20.19' },
    bin: { captionfarm: 'bin/captionfarm.js' },
    dependencies: Object.fromEntries(
      Object.entries({ ...dependencies, ...Object.fromEntries(bundled.map((n) => [n, '*'])) }).sort(([a], [b]) => a.localeCompare(b)),
    ),
    bundleDependencies: bundled,
  };
  writeFileSync(path.join(stage, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  const packed = JSON.parse((await runToEnd('npm', { args: ['pack', '--json', '--pack-destination', out], cwd: stage })).stdout) as {
    filename: string;
    size: number;
  }[];
  process.stdout.write(
    `${path.join(out, packed[0]!.filename)} (${(packed[0]!.size / 1e6).toFixed(1)} MB; install with npm install -g ${packed[0]!.filename})\n`,
  );
} finally {
  rmSync(stage, { recursive: true, force: true });
}
