// The load side of bench:api, in its own process: vegeta's open-loop attack at a constant rate
// against one route, rotating through the accounts' keys (and their jobs). Prints p50/p99 (ms),
// the request count, non-2xx answers and errors as JSON.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { runToEnd } from '@captionfarm/process';

interface Spec {
  url: string;
  route: 'create' | 'get' | 'healthz';
  rate: number;
  seconds: number;
  keys: string[];
  jobIds: string[];
  body: string;
  vegeta: string;
}
const spec = JSON.parse(process.argv[2] ?? '{}') as Spec;
const targets = spec.keys.map((key, n) => {
  const header = { authorization: [`Bearer ${key}`], 'content-type': ['application/json'] };
  if (spec.route === 'create') return { method: 'POST', url: `${spec.url}/v1/automation-jobs`, header, body: Buffer.from(spec.body).toString('base64') };
  if (spec.route === 'get') return { method: 'GET', url: `${spec.url}/v1/automation-jobs/${spec.jobIds[n]}`, header };
  return { method: 'GET', url: `${spec.url}/healthz` };
});
const dir = await mkdtemp(path.join(tmpdir(), 'cf-vegeta-'));
const run = async (args: string[]) => {
  const r = await runToEnd(spec.vegeta, { args });
  if (r.exitCode !== 0) throw new Error(`vegeta ${args[0]} failed: ${r.stderrTail}`);
  return r.stdout;
};
await writeFile(path.join(dir, 'targets'), targets.map((t) => JSON.stringify(t)).join('\n'));
await run([
  'attack',
  '-format=json',
  `-targets=${path.join(dir, 'targets')}`,
  `-rate=${spec.rate}/s`,
  `-duration=${spec.seconds}s`,
  '-timeout=10s',
  `-output=${path.join(dir, 'results')}`,
]);
const stdout = await run(['report', '-type=json', path.join(dir, 'results')]);
await rm(dir, { recursive: true, force: true });
const r = JSON.parse(stdout) as { latencies: Record<string, number>; requests: number; status_codes: Record<string, number>; errors: string[] };
const ok = Object.entries(r.status_codes)
  .filter(([c]) => c.startsWith('2'))
  .reduce((n, [, v]) => n + v, 0);
const ms = (ns: number) => Math.round(ns / 1e5) / 10;
process.stdout.write(
  JSON.stringify({ p50: ms(r.latencies['50th']!), p99: ms(r.latencies['99th']!), requests: r.requests, non2xx: r.requests - ok, errors: r.errors.length }),
);
