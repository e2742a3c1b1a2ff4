import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import {
  CaptionfarmApiError,
  CaptionfarmNetworkError,
  createClient,
  describeError,
  type CaptionfarmClient,
  type Job,
  type JobEdit,
  type JobOutputs,
} from '@captionfarm/sdk';
import type { CliEnv } from '../env.ts';
import { CliError, UsageError, print, table } from '../output.ts';
import { cutLines, editSummary, keepArgument } from './edit-summary.ts';
import { outputsText } from './outputs-summary.ts';

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

/** Runs one jobs command, with the SDK's errors as one-line CliErrors. */
async function withClient<T>(env: CliEnv, fn: (client: CaptionfarmClient) => Promise<T>): Promise<T> {
  try {
    return await fn(apiClient(env));
  } catch (err) {
    throw toCliError(err, env);
  }
}

/** `captionfarm jobs list`: newest first, `limit` 0 for all. */
export function jobsList(opts: { limit?: string; json?: boolean }, env: CliEnv): Promise<void> {
  const limit = opts.limit === undefined ? 20 : Number(opts.limit);
  if (!Number.isInteger(limit) || limit < 0) throw new UsageError('--limit must be a whole number (0: all jobs)');
  return withClient(env, async (client) => {
    const jobs: Job[] = [];
    let more = false;
    for await (const job of client.listJobs({ pageSize: limit === 0 ? 100 : Math.min(100, limit + 1) })) {
      if (limit !== 0 && jobs.length === limit) {
        more = true;
        break;
      }
      jobs.push(job);
    }
    if (opts.json) return print(jobs, true);
    const rows = jobs.map((j) => ({ ...j, percent: j.percent === null ? null : `${j.percent}%`, template: j.templateId, failure: j.failureCode }));
    process.stdout.write(`${table(rows, ['id', 'status', 'phase', 'percent', 'template', 'format', 'createdAt', 'failure'])}\n`);
    if (more) process.stdout.write(`(newest ${limit} shown; --limit N for more, --limit 0 for all)\n`);
  });
}

function oneId(id: string | undefined): string {
  if (!id) throw new UsageError('give exactly one job ID');
  return id;
}

export function jobsGet(id: string | undefined, opts: { json?: boolean }, env: CliEnv): Promise<void> {
  const jobId = oneId(id);
  return withClient(env, async (client) => print(await client.getJob(jobId), opts.json === true, describeJob));
}

export function jobsCancel(id: string | undefined, opts: { json?: boolean }, env: CliEnv): Promise<void> {
  const jobId = oneId(id);
  return withClient(env, async (client) =>
    print(await client.cancelJob(jobId), opts.json === true, (j: Job) => `cancelled job ${j.id} (its reserved minutes were refunded)`),
  );
}

/** `captionfarm jobs transcript`: the words as JSON, or SRT / WebVTT, to stdout or a file. */
export function jobsTranscript(id: string | undefined, opts: { format?: string; output?: string }, env: CliEnv): Promise<void> {
  const jobId = oneId(id);
  const format = opts.format ?? 'json';
  if (format !== 'json' && format !== 'srt' && format !== 'vtt') throw new UsageError(`--format must be json, srt or vtt, not "${format}"`);
  return withClient(env, async (client) => {
    const text = format === 'json' ? `${JSON.stringify(await client.getTranscript(jobId), null, 2)}\n` : await client.getTranscript(jobId, { format });
    if (opts.output === undefined) {
      process.stdout.write(text);
      return;
    }
    const file = path.resolve(env.cwd, opts.output);
    await writeFile(file, text);
    process.stderr.write(`saved ${path.relative(env.cwd, file) || file}\n`);
  });
}

/**
 * `captionfarm jobs edit`: what an edited job cut (the summary, every cut with its reason, and its
 * keep-ranges as `burn --keep` takes them, to fix a cut and burn again), or the JSON of GET .../edit.
 */
export function jobsEdit(id: string | undefined, opts: { json?: boolean }, env: CliEnv): Promise<void> {
  const jobId = oneId(id);
  return withClient(env, async (client) =>
    print(await client.getJobEdit(jobId), opts.json === true, (e: JobEdit) =>
      [...editSummary(e), ...cutLines(e), `--keep ${keepArgument(e.plan.keep)}`].join('\n'),
    ),
  );
}

/** `captionfarm jobs outputs`: every rendition of a job with its link and expiry, and the poster (issue 43), or the JSON of GET .../outputs. */
export function jobsOutputs(id: string | undefined, opts: { json?: boolean }, env: CliEnv): Promise<void> {
  const jobId = oneId(id);
  return withClient(env, async (client) => print(await client.getJobOutputs(jobId), opts.json === true, (o: JobOutputs) => outputsText(o)));
}
