import { readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import {
  describeError,
  isApiError,
  isRetryableFailure,
  isTerminal,
  type CaptionStyle,
  type CaptionfarmClient,
  type CreateJobRequest,
  type Job,
  type JobEdit,
  type TransferProgress,
} from '@captionfarm/sdk';
import { TranscriptInputSchema, issuesToDetails, type Replacement } from '@captionfarm/contracts';
import { onShutdown } from '@captionfarm/process/shutdown';
import type { CliEnv } from '../env.ts';
import { CliError, UsageError } from '../output.ts';
import { checkReplacements, vocabularyTerms, type BurnPlan } from './burn-args.ts';
import type { FramingFiles } from './burn-framing.ts';
import { editSummary } from './edit-summary.ts';
import { apiClient, toCliError } from './jobs.ts';

// ---------------------------------------------------------------------------------------------
// Pure parts: the text of every progress line (tested in burn-format.test.ts); the command line is
// parsed in burn-args.ts.

export function formatBytes(n: number): string {
  if (n < 1000) return `${n} B`;
  const units = ['kB', 'MB', 'GB', 'TB'];
  let v = n;
  let i = -1;
  do {
    v /= 1000;
    i++;
  } while (v >= 999.95 && i < units.length - 1);
  return `${v.toFixed(1)} ${units[i]}`;
}

/** 4 -> "0:04", 754 -> "12:34", 3723 -> "1:02:03". */
export function formatDuration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const ss = String(s % 60).padStart(2, '0');
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${ss}` : `${m}:${ss}`;
}

export function progressBar(fraction: number, width: number): string {
  const f = Math.min(1, Math.max(0, Number.isFinite(fraction) ? fraction : 0));
  const full = Math.round(f * width);
  return `[${'█'.repeat(full)}${'░'.repeat(width - full)}]`;
}

/**
 * Seconds left at the average rate so far; null until there is something to go on (nothing done
 * yet, or under half a second of history, which gives wild numbers).
 */
export function etaSeconds(o: { done: number; total: number; elapsedMs: number }): number | null {
  if (o.done <= 0 || o.elapsedMs < 500 || o.total <= 0) return null;
  if (o.done >= o.total) return 0;
  return ((o.elapsedMs / 1000) * (o.total - o.done)) / o.done;
}

const LABEL = 13;

/** "upload       [████░░░░]  45%  5.4 MB / 12.0 MB  2.1 MB/s  ETA 0:03" */
export function transferLine(label: string, p: TransferProgress, elapsedMs: number, barWidth = 24): string {
  const parts = [label.padEnd(LABEL)];
  if (p.totalBytes !== null && p.totalBytes > 0) {
    const f = p.bytes / p.totalBytes;
    parts.push(`${progressBar(f, barWidth)} ${String(Math.floor(f * 100)).padStart(3)}%`, ` ${formatBytes(p.bytes)} / ${formatBytes(p.totalBytes)}`);
  } else {
    parts.push(formatBytes(p.bytes));
  }
  if (elapsedMs >= 500) parts.push(`  ${formatBytes(Math.round((p.bytes * 1000) / elapsedMs))}/s`);
  const eta = p.totalBytes === null ? null : etaSeconds({ done: p.bytes, total: p.totalBytes, elapsedMs });
  if (eta !== null && eta > 0) parts.push(`  ETA ${formatDuration(eta)}`);
  return parts.join('');
}

const PHASE_TEXT: Record<string, string> = {
  queued: 'waiting for an agent',
  ingesting: 'fetching and probing the source',
  transcribing: 'speech to words',
};

/** The live line of a phase: "rendering    [██████░░░░]  42%  ETA 0:31" or "queued       waiting for an agent  0:04". */
export function phaseLine(o: { phase: string; percent: number | null; phaseElapsedMs: number; etaSeconds: number | null; barWidth?: number }): string {
  const label = o.phase.padEnd(LABEL);
  if (o.phase === 'rendering') {
    const p = o.percent ?? 0;
    const eta = o.etaSeconds === null ? '' : `  ETA ${formatDuration(o.etaSeconds)}`;
    return `${label}${progressBar(p / 100, o.barWidth ?? 24)} ${String(p).padStart(3)}%${eta}`;
  }
  return `${label}${PHASE_TEXT[o.phase] ?? ''}  ${formatDuration(o.phaseElapsedMs / 1000)}`;
}

/** Render ETA from the percent moved since the first percent seen (rendering speed is steady). */
export function renderEta(first: { atMs: number; percent: number } | undefined, nowMs: number, percent: number): number | null {
  if (!first || percent <= first.percent) return null;
  return etaSeconds({ done: percent - first.percent, total: 100 - first.percent, elapsedMs: nowMs - first.atMs });
}

// ---------------------------------------------------------------------------------------------
// The terminal: one live line redrawn in place on a TTY; on anything else, plain lines only.

interface Screen {
  readonly tty: boolean;
  /** Redraws the live line (TTY only; throttled unless `force`). */
  live(text: string, force?: boolean): void;
  /** A permanent line (replaces the live line on a TTY). */
  line(text: string): void;
}

function createScreen(out: NodeJS.WriteStream): Screen {
  const tty = out.isTTY === true;
  let last = 0;
  let shown = false;
  const fit = (s: string) => {
    const cols = out.columns || 80;
    return s.length >= cols ? s.slice(0, cols - 1) : s;
  };
  return {
    tty,
    live(text, force = false) {
      if (!tty) return;
      const now = Date.now();
      if (!force && now - last < 100) return;
      last = now;
      shown = true;
      out.write(`\r\x1b[2K${fit(text)}`);
    },
    line(text) {
      out.write(tty && shown ? `\r\x1b[2K${text}\n` : `${text}\n`);
      shown = false;
    },
  };
}

// ---------------------------------------------------------------------------------------------

/**
 * The words of --transcript-in, checked before anything is uploaded: the export of
 * `captionfarm jobs transcript` (or GET .../transcript), or a bare [{text,start,end}] array.
 */
export async function readTranscript(file: string): Promise<NonNullable<CreateJobRequest['transcript']>> {
  const text = await readFile(file, 'utf8').catch((err: NodeJS.ErrnoException) => {
    throw new CliError(`cannot read --transcript-in ${file}: ${err.code ?? err.message}`, 2);
  });
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new CliError(`--transcript-in ${file} is not JSON: ${(err as Error).message}`, 2);
  }
  const parsed = TranscriptInputSchema.safeParse(Array.isArray(raw) ? { words: raw } : raw);
  if (!parsed.success) {
    const details = issuesToDetails(parsed.error.issues);
    const lines = details
      .slice(0, 10)
      .map((d) => `\n  ${d.path || '(file)'}: ${d.message}`)
      .join('');
    throw new CliError(`--transcript-in ${file} is not a valid transcript:${lines}${details.length > 10 ? `\n  ... and ${details.length - 10} more` : ''}`, 2);
  }
  return parsed.data;
}

/** A --style file: a JSON object (the service validates its fields, with the path of each problem). */
export async function readStyle(file: string): Promise<CaptionStyle> {
  const text = await readFile(file, 'utf8').catch((err: NodeJS.ErrnoException) => {
    throw new CliError(`cannot read --style ${file}: ${err.code ?? err.message}`, 2);
  });
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new CliError(`--style ${file} is not JSON: ${(err as Error).message}`, 2);
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    throw new CliError(`--style ${file} must hold a JSON object of template fields, e.g. {"fill":"#FFFFFF"}`, 2);
  return raw as CaptionStyle;
}

/** --vocabulary: the terms of a file (one a line) when the value names one, else comma-separated terms. */
export async function readVocabulary(arg: { value: string; path: string }): Promise<string[]> {
  const st = await stat(arg.path).catch(() => null);
  if (!st?.isFile()) return vocabularyTerms(arg.value, '--vocabulary', false);
  const text = await readFile(arg.path, 'utf8').catch((err: NodeJS.ErrnoException) => {
    throw new CliError(`cannot read --vocabulary ${arg.path}: ${err.code ?? err.message}`, 2);
  });
  return vocabularyTerms(text, `--vocabulary ${arg.path}`, true);
}

/** A --replacements file: a JSON array of {"from","to"}, checked as the service does. */
export async function readReplacements(file: string): Promise<Replacement[]> {
  const text = await readFile(file, 'utf8').catch((err: NodeJS.ErrnoException) => {
    throw new CliError(`cannot read --replacements ${file}: ${err.code ?? err.message}`, 2);
  });
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new CliError(`--replacements ${file} is not JSON: ${(err as Error).message}`, 2);
  }
  return checkReplacements(raw, `--replacements ${file}`);
}

class Interrupted extends Error {
  constructor() {
    super('interrupted (Ctrl-C)');
  }
}

/** `captionfarm burn`: the plan comes from burn-args.ts. */
export async function burnCommand(plan: BurnPlan, env: CliEnv): Promise<void> {
  let size = 0;
  if (plan.input.kind === 'file') {
    const st = await stat(plan.input.path).catch(() => null);
    if (!st?.isFile()) throw new UsageError(`no such file: ${plan.input.path}`);
    size = st.size;
  }
  for (const [flag, file] of [
    ['-o', plan.output],
    ['--srt', plan.subtitles.srt],
    ['--vtt', plan.subtitles.vtt],
  ] as const) {
    if (file === undefined) continue;
    const dir = await stat(path.dirname(file)).catch(() => null);
    if (!dir?.isDirectory()) throw new UsageError(`no such directory for ${flag}: ${path.dirname(file)}`);
  }
  if (plan.transcriptIn) plan.request.transcript = await readTranscript(plan.transcriptIn);
  if (plan.styleIn) plan.request.style = await readStyle(plan.styleIn);
  if (plan.vocabularyIn) plan.request.vocabulary = await readVocabulary(plan.vocabularyIn);
  if (plan.replacementsIn) plan.request.replacements = await readReplacements(plan.replacementsIn);
  if (plan.font?.kind === 'file') {
    const st = await stat(plan.font.path).catch(() => null);
    if (!st?.isFile()) throw new UsageError(`no such font file: ${plan.font.path}`);
  }
  const client = apiClient(env);
  const screen = createScreen(process.stdout);
  const ac = new AbortController();
  // The first Ctrl-C cancels cleanly; another one leaves at once. Repeats within 500 ms count as
  // that one (through `npm run`, one Ctrl-C arrives more than once).
  const stopListening = onShutdown({
    signals: ['SIGINT'],
    repeatsWithinMs: 500,
    first: () => ac.abort(new Interrupted()),
    second: () => {
      screen.line('interrupted again: leaving without waiting for the cancel');
      process.exit(130);
    },
  });
  try {
    await burn({ plan, size, client, screen, signal: ac.signal, cwd: env.cwd });
  } catch (err) {
    throw toCliError(err, env);
  } finally {
    stopListening();
  }
}

/** What the stages of one burn share. */
interface BurnRun {
  plan: BurnPlan;
  size: number;
  client: CaptionfarmClient;
  screen: Screen;
  signal: AbortSignal;
  cwd: string;
}

const barWidth = () => Math.max(10, Math.min(30, (process.stdout.columns || 80) - 56));

async function burn(o: BurnRun): Promise<void> {
  const { plan, client, screen } = o;
  const source = await uploadSource(o);
  if (plan.font) await attachFont(o, plan.font);

  // 2. Create the job. Never aborted midway: a create whose answer is lost would leave a job
  //    (and its reserved minutes) behind that this command could not cancel.
  const created = await client.createJob({ ...plan.request, ...source });
  const renditions = plan.files
    ? `, ${plan.files.renditions.length} rendition${plan.files.renditions.length === 1 ? '' : 's'}${plan.files.poster ? ' and a poster' : ''}`
    : '';
  screen.line(`job ${created.id}: template ${created.templateId}, ${created.format}, ${created.quality} quality${renditions}`);

  const job = await watchJob(o, created);
  const total = formatDuration((Date.now() - Date.parse(created.createdAt)) / 1000);
  if (job.status === 'failed') {
    screen.line(`✗ failed after ${total}`);
    const retry = isRetryableFailure(job.failureCode) ? ' (retryable: running the same burn again may succeed)' : '';
    throw new CliError(`job ${job.id} failed: ${job.failureCode ?? 'unknown'}: ${job.failureReason ?? 'no reason given'}${retry}`, 1);
  }
  if (job.status === 'cancelled') {
    screen.line('✗ cancelled');
    throw new CliError(`job ${job.id} was cancelled (not by this command: captionfarm jobs cancel, or another API client)`, 1);
  }
  screen.line(`✓ succeeded in ${total}`);
  const edit = await showEdit(o, job);
  await download(o, job, edit?.plan.outputSeconds);
}

/**
 * 4b. Issue 43, with --outputs or a poster: every rendition after the first (already saved as -o)
 * and the poster, from GET .../outputs, to the files burn-args chose.
 */
async function downloadRenditions(o: BurnRun, job: Job, files: FramingFiles, outputSeconds: number | undefined): Promise<void> {
  const { client, screen, signal } = o;
  const outputs = await client.getJobOutputs(job.id, { signal });
  const long = outputSeconds !== undefined ? `, ${formatDuration(outputSeconds)} long` : '';
  for (const [i, file] of files.renditions.entries()) {
    if (i === 0) continue;
    const t0 = Date.now();
    const res = await client.downloadRendition(outputs, i, file, {
      signal,
      onProgress: (p) => screen.live(transferLine('download', p, Date.now() - t0, barWidth()), p.bytes === p.totalBytes),
    });
    const r = outputs.outputs.find((x) => x.index === i)?.resolution;
    screen.line(`saved ${path.relative(o.cwd, res.path) || res.path} (${formatBytes(res.bytes)}${r ? `, ${r.width}x${r.height}` : ''}${long})`);
  }
  if (files.poster) {
    const res = await client.downloadRendition(outputs, 'poster', files.poster, { signal });
    const p = outputs.poster;
    const what = p ? `, ${p.width}x${p.height} at ${p.at.toFixed(2)} s` : '';
    screen.line(`saved ${path.relative(o.cwd, res.path) || res.path} (poster, ${formatBytes(res.bytes)}${what})`);
  }
}

/**
 * An edited job's cut list (GET .../edit), when the burn asked for an edit, a hook title or
 * profanity; a service that cannot show it is said, not fatal: the video is there to download.
 */
async function showEdit(o: BurnRun, job: Job): Promise<JobEdit | null> {
  const { request } = o.plan;
  if (!request.edit && !request.hookTitle && (request.profanity ?? 'off') === 'off') return null;
  try {
    const edit = await o.client.getJobEdit(job.id, { signal: o.signal });
    for (const line of editSummary(edit)) o.screen.line(`edit: ${line}`);
    return edit;
  } catch (err) {
    if (o.signal.aborted) throw err;
    o.screen.line(`edit: the cut list is not available (${describeError(err)})`);
    return null;
  }
}

/** 1. Upload a local file (the presigned PUT), with a bytes bar; a URL is the source as given. */
async function uploadSource(o: BurnRun): Promise<{ uploadId: string } | { videoUrl: string }> {
  const { plan, client, screen, signal } = o;
  if (plan.input.kind !== 'file') return { videoUrl: plan.input.url };
  const name = path.basename(plan.input.path);
  screen.line(`uploading ${name} (${formatBytes(o.size)})`);
  const t0 = Date.now();
  let quarter = 0;
  const onProgress = (p: TransferProgress) => {
    screen.live(transferLine('upload', p, Date.now() - t0, barWidth()), p.bytes === p.totalBytes);
    const q = p.totalBytes ? Math.floor((p.bytes / p.totalBytes) * 4) : 0;
    if (!screen.tty && q > quarter && q < 4) {
      quarter = q;
      screen.line(`upload ${q * 25}% (${formatBytes(p.bytes)})`);
    }
  };
  let source: { uploadId: string };
  try {
    const upload = await client.uploadFile(plan.input.path, { signal, onProgress });
    source = { uploadId: upload.uploadId };
  } catch (err) {
    if (signal.aborted) throw new CliError('interrupted during the upload: no job was created', 130);
    throw err;
  }
  screen.line(
    screen.tty
      ? transferLine('upload', { bytes: o.size, totalBytes: o.size }, Date.now() - t0, barWidth())
      : `uploaded ${formatBytes(o.size)} in ${formatDuration((Date.now() - t0) / 1000)}`,
  );
  return source;
}

/**
 * Your font: uploaded and checked by the service (a damaged one is refused with invalid_font),
 * then named by the style.
 */
async function attachFont(o: BurnRun, given: NonNullable<BurnPlan['font']>): Promise<void> {
  const { plan, client, screen, signal } = o;
  let fontId: string;
  if (given.kind === 'file') {
    const font = await client.uploadFont(given.path, { signal });
    screen.line(`font ${[font.family, font.subfamily].filter(Boolean).join(' ')} uploaded as ${font.id}`);
    fontId = font.id;
  } else {
    fontId = given.id;
  }
  const style = plan.request.style ?? {};
  const font = typeof style.font === 'object' && style.font !== null ? style.font : {};
  plan.request.style = { ...style, font: { ...font, fontId } };
}

/** 3. Wait, showing the phase (and render percent with ETA) until the job ends; Ctrl-C cancels it. */
async function watchJob(o: BurnRun, created: Job): Promise<Job> {
  const { client, screen, signal } = o;
  let current: Job = created;
  let phaseStart = Date.now();
  let firstRender: { atMs: number; percent: number } | undefined;
  let lastPlainPercent = -1;
  const draw = (force = false) => {
    if (isTerminal(current)) return;
    const now = Date.now();
    const eta = current.phase === 'rendering' && current.percent !== null ? renderEta(firstRender, now, current.percent) : null;
    screen.live(phaseLine({ phase: current.phase, percent: current.percent, phaseElapsedMs: now - phaseStart, etaSeconds: eta, barWidth: barWidth() }), force);
  };
  const onUpdate = (job: Job) => {
    const now = Date.now();
    if (job.phase !== current.phase) {
      const mark = job.phase === 'failed' || job.phase === 'cancelled' ? '✗' : '✓';
      if (screen.tty) screen.line(`${mark} ${current.phase.padEnd(LABEL)}${formatDuration((now - phaseStart) / 1000)}`);
      phaseStart = now;
    }
    if (job.phase === 'rendering' && job.percent !== null && !firstRender) firstRender = { atMs: now, percent: job.percent };
    const phaseChanged = job.phase !== current.phase || current === created;
    current = job;
    if (!screen.tty) {
      if (job.phase === 'rendering' && job.percent !== null) {
        const step = Math.floor(job.percent / 10) * 10;
        if (step > lastPlainPercent) {
          lastPlainPercent = step;
          const eta = renderEta(firstRender, now, job.percent);
          screen.line(`rendering ${job.percent}%${eta !== null && eta > 0 ? ` (ETA ${formatDuration(eta)})` : ''}`);
        }
      } else if (phaseChanged && !isTerminal(job)) {
        screen.line(job.phase);
      }
    }
    draw(true);
  };
  const ticker = screen.tty ? setInterval(() => draw(), 500) : undefined;
  try {
    return await client.waitForJob(created.id, { signal, onUpdate, poll: { initialDelayMs: 1000, maxDelayMs: 4000 } });
  } catch (err) {
    if (signal.aborted) return cancelAfterInterrupt(client, screen, created.id);
    throw err;
  } finally {
    clearInterval(ticker);
  }
}

/**
 * 4. Download the output, with a bytes bar, and the subtitles asked for. `outputSeconds`: an edited
 * job's length (its quotedSeconds stay the source's, which is what it was charged for).
 */
async function download(o: BurnRun, job: Job, outputSeconds?: number): Promise<void> {
  const { plan, client, screen, signal } = o;
  const t0 = Date.now();
  try {
    const res = await client.downloadOutput(job, plan.output, {
      signal,
      onProgress: (p) => screen.live(transferLine('download', p, Date.now() - t0, barWidth()), p.bytes === p.totalBytes),
    });
    const res2 = job.resolution ? `, ${job.resolution.width}x${job.resolution.height}` : '';
    const seconds = outputSeconds ?? job.quotedSeconds;
    const long = seconds !== null ? `, ${formatDuration(seconds)} long` : '';
    screen.line(`saved ${path.relative(o.cwd, res.path) || res.path} (${formatBytes(res.bytes)}${res2}${long})`);
    if (plan.files) await downloadRenditions(o, job, plan.files, seconds ?? undefined);
    for (const format of ['srt', 'vtt'] as const) {
      const file = plan.subtitles[format];
      if (!file) continue;
      await writeFile(file, await client.getTranscript(job.id, { format, signal }));
      screen.line(`saved ${path.relative(o.cwd, file) || file} (${format === 'srt' ? 'SubRip' : 'WebVTT'} subtitles)`);
    }
  } catch (err) {
    if (signal.aborted) {
      throw new CliError(
        `interrupted during the download; job ${job.id} succeeded and its output stays available until ${job.outputExpiresAt} ` +
          `(captionfarm jobs get ${job.id} shows the link)`,
        130,
      );
    }
    throw err;
  }
}

async function cancelAfterInterrupt(client: CaptionfarmClient, screen: Screen, id: string): Promise<never> {
  screen.line(`Ctrl-C: cancelling job ${id} ...`);
  try {
    const job = await client.cancelJob(id);
    throw new CliError(`cancelled job ${job.id}; its reserved minutes were refunded`, 130);
  } catch (err) {
    if (err instanceof CliError) throw err;
    if (isApiError(err, 'job_not_cancellable'))
      throw new CliError(`interrupted; job ${id} had already ended, nothing to cancel (captionfarm jobs get ${id})`, 130);
    throw new CliError(`interrupted, but cancelling job ${id} failed: ${describeError(err)}; run captionfarm jobs cancel ${id}`, 130);
  }
}
