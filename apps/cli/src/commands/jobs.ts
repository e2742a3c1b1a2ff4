import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { CaptionfarmApiError, CaptionfarmNetworkError, createClient, describeError, type CaptionfarmClient, type Job } from '@captionfarm/sdk';
import type { CliEnv } from '../env.ts';
import { CliError, print, table } from '../output.ts';

export const JOBS_USAGE = `captionfarm jobs <command> [--json]

  list [--limit N]     your jobs, newest first (default 20; --limit 0 for all)
  get ID               one job: status, phase, percent, failure code and reason, download link
  cancel ID            cancel a queued or running job (its reserved minutes are refunded)
  transcript ID [--format json|srt|vtt] [-o FILE]
                       the words a succeeded job burned: JSON (default; edit it and pass it to
                       burn --transcript-in), or SRT / WebVTT subtitles; to stdout or FILE

Uses CAPTIONFARM_API_KEY and CAPTIONFARM_URL (default http://127.0.0.1:8080).`;

/** The SDK client for the API user's commands (burn, jobs, templates); a missing key is a usage error. */
export function apiClient(env: CliEnv): CaptionfarmClient {
  if (!env.apiKey) {
    throw new CliError(
      'CAPTIONFARM_API_KEY is not set: create a key with `captionfarm admin keys create --account ACCOUNT_ID` and export CAPTIONFARM_API_KEY=cf_live_...',
      2,
    );
  }
  return createClient({ baseUrl: env.url, apiKey: env.apiKey });
}

/**
 * An SDK error as one line with its code. A request the API refused as invalid (400
 * invalid_request, 415 unsupported_media_type) came from the command line: exit 2, like local
 * usage errors; everything else exits 1.
 */
export function toCliError(err: unknown, env: Pick<CliEnv, 'url'>): unknown {
  if (err instanceof CliError) return err;
  if (err instanceof CaptionfarmApiError) {
    let hint = '';
    if (err.code === 'unauthenticated') hint = '; check CAPTIONFARM_API_KEY';
    const details = Array.isArray(err.details)
      ? (err.details as { path?: string; message?: string }[]).map((d) => `\n  ${d.path || '(body)'}: ${d.message}`).join('')
      : '';
    return new CliError(`${describeError(err)}${hint}${details}`, err.code === 'invalid_request' || err.code === 'unsupported_media_type' ? 2 : 1);
  }
  if (err instanceof CaptionfarmNetworkError) {
    return new CliError(`${describeError(err)}; is the control plane running at ${env.url} (npm start)? Set CAPTIONFARM_URL otherwise.`);
  }
  if (err instanceof Error && 'code' in err && typeof err.code === 'string' && !err.code.startsWith('ERR_')) {
    return new CliError(describeError(err));
  }
  return err;
}

function oneId(positionals: string[], usage: string): string {
  const [id, ...extra] = positionals;
  if (!id || extra.length > 0) throw new CliError(`give exactly one job ID\n\n${usage}`, 2);
  return id;
}

/** The fields of a job a person reads, in the spec's order, nulls shown as "-". */
export function describeJob(job: Job): string {
  const rows: [string, unknown][] = [
    ['id', job.id],
    ['status', job.status],
    ['phase', job.phase],
    ['percent', job.percent],
    ['template', job.templateId],
    ['format', job.format],
    ['quality', job.quality],
    ['resolution', job.resolution ? `${job.resolution.width}x${job.resolution.height}` : null],
    ['quotedSeconds', job.quotedSeconds],
    ['failureCode', job.failureCode],
    ['failureReason', job.failureReason],
    ['downloadUrl', job.downloadUrl],
    ['outputExpiresAt', job.outputExpiresAt],
    ['settledAt', job.settledAt],
    ['createdAt', job.createdAt],
  ];
  const w = Math.max(...rows.map(([k]) => k.length));
  return rows.map(([k, v]) => `${k.padEnd(w)}  ${v === null || v === undefined ? '-' : String(v)}`).join('\n');
}

export async function jobsCommand(argv: string[], env: CliEnv): Promise<void> {
  const [command, ...rest] = argv;
  if (!command || command === '--help' || command === 'help') {
    process.stdout.write(`${JOBS_USAGE}\n`);
    return;
  }
  const { values, positionals } = parseArgs({
    args: rest,
    options: { json: { type: 'boolean', default: false }, limit: { type: 'string' }, format: { type: 'string' }, output: { type: 'string', short: 'o' } },
    strict: true,
    allowPositionals: true,
  });
  const json = values.json === true;
  try {
    switch (command) {
      case 'list': {
        if (positionals.length > 0) throw new CliError(`jobs list takes no arguments\n\n${JOBS_USAGE}`, 2);
        const limit = values.limit === undefined ? 20 : Number(values.limit);
        if (!Number.isInteger(limit) || limit < 0) throw new CliError('--limit must be a whole number (0: all jobs)', 2);
        const client = apiClient(env);
        const jobs: Job[] = [];
        let more = false;
        for await (const job of client.listJobs({ pageSize: limit === 0 ? 100 : Math.min(100, limit + 1) })) {
          if (limit !== 0 && jobs.length === limit) {
            more = true;
            break;
          }
          jobs.push(job);
        }
        if (json) return print(jobs, true);
        const rows = jobs.map((j) => ({ ...j, percent: j.percent === null ? null : `${j.percent}%`, template: j.templateId, failure: j.failureCode }));
        process.stdout.write(`${table(rows, ['id', 'status', 'phase', 'percent', 'template', 'format', 'createdAt', 'failure'])}\n`);
        if (more) process.stdout.write(`(newest ${limit} shown; --limit N for more, --limit 0 for all)\n`);
        return;
      }
      case 'get': {
        const job = await apiClient(env).getJob(oneId(positionals, JOBS_USAGE));
        return print(job, json, describeJob);
      }
      case 'cancel': {
        const job = await apiClient(env).cancelJob(oneId(positionals, JOBS_USAGE));
        return print(job, json, (j: Job) => `cancelled job ${j.id} (its reserved minutes were refunded)`);
      }
      case 'transcript': {
        const id = oneId(positionals, JOBS_USAGE);
        const format = values.format ?? 'json';
        if (format !== 'json' && format !== 'srt' && format !== 'vtt') throw new CliError(`--format must be json, srt or vtt, not "${format}"`, 2);
        const client = apiClient(env);
        const text = format === 'json' ? `${JSON.stringify(await client.getTranscript(id), null, 2)}\n` : await client.getTranscript(id, { format });
        if (values.output === undefined) {
          process.stdout.write(text);
          return;
        }
        const file = path.resolve(env.cwd, values.output);
        await writeFile(file, text);
        process.stderr.write(`saved ${path.relative(env.cwd, file) || file}\n`);
        return;
      }
      default:
        throw new CliError(`unknown jobs command "${command}"\n\n${JOBS_USAGE}`, 2);
    }
  } catch (err) {
    throw toCliError(err, env);
  }
}
