import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { toSrt, toVtt } from '@captionfarm/captions';
import { ApiError } from '@captionfarm/contracts';
import { prepareJob, type PreparedJob } from './services/job-body.ts';

// Background work, below the main thread's priority (as preview-worker.ts).
try {
  const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
  if (Number.isInteger(tid) && tid > 0) setPriority(tid, 10);
} catch {
  /* not Linux, or not permitted: run at normal priority */
}

export type TranscriptTask =
  | { kind: 'job-body'; bytes: Uint8Array }
  | { kind: 'export'; format: 'json' | 'srt' | 'vtt'; wordsJson: string; language: string | null; languageProbability: number | null };

/** An error crosses the thread as data: the main thread makes it an ApiError again. */
export type TranscriptResult =
  | { ok: true; job: PreparedJob }
  | { ok: true; text: string }
  | { ok: false; error: { code: ApiError['code']; message: string; details: unknown } }
  | { ok: false; malformed: true };

/** Runs on the transcript worker: a large job body parsed and validated, or a transcript exported. */
export default function transcriptTask(task: TranscriptTask): TranscriptResult {
  if (task.kind === 'export') {
    const words = JSON.parse(task.wordsJson) as { text: string; start: number; end: number }[];
    if (task.format === 'json') return { ok: true, text: JSON.stringify({ language: task.language, languageProbability: task.languageProbability, words }) };
    return { ok: true, text: task.format === 'srt' ? toSrt(words) : toVtt(words) };
  }
  let body: unknown;
  try {
    const text = Buffer.from(task.bytes.buffer, task.bytes.byteOffset, task.bytes.byteLength).toString('utf8');
    body = JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
  } catch {
    return { ok: false, malformed: true };
  }
  try {
    return { ok: true, job: prepareJob(body) };
  } catch (err) {
    if (err instanceof ApiError) return { ok: false, error: { code: err.code, message: err.message, details: err.details } };
    throw err;
  }
}
