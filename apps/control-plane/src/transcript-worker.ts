import { ApiError } from '@captionfarm/contracts';
import { Piscina } from 'piscina';
import { prepareJob, type PreparedJob } from './jobs/body.ts';
import { exportTranscript, editOfPlan } from './services/output-timeline.ts';
import { lowerThisThreadPriority } from './worker-threads.ts';

// Background work, below the main thread's priority (worker-threads.ts).
lowerThisThreadPriority();

export type TranscriptTask =
  | { kind: 'job-body'; bytes: Uint8Array }
  | {
      kind: 'export';
      format: 'json' | 'srt' | 'vtt';
      wordsJson: string;
      language: string | null;
      languageProbability: number | null;
      /** The job's edit plan as stored (job_transcripts.edit_json): its keep-ranges place the words on the output timeline; null: not edited. */
      editJson: string | null;
    };

/**
 * A job body's verdict, or an export's bytes (an ArrayBuffer, moved: Piscina moves only a value
 * returned as it is). An error crosses the thread as data: the main thread makes it an ApiError.
 */
export type TranscriptResult =
  | { ok: true; job: PreparedJob }
  | ArrayBuffer
  | { ok: false; error: { code: ApiError['code']; message: string; details: unknown } }
  | { ok: false; malformed: true };

/** The bytes of `text`, moved (not copied) to the main thread, which sends them as they are. */
function moved(text: string): TranscriptResult {
  const b = Buffer.from(text, 'utf8');
  return Piscina.move(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength) as ArrayBuffer) as ArrayBuffer;
}

/** Runs on the transcript worker: a large job body parsed and validated, or a transcript exported. */
export default function transcriptTask(task: TranscriptTask): TranscriptResult {
  if (task.kind === 'export') {
    const words = JSON.parse(task.wordsJson) as { text: string; start: number; end: number }[];
    const body = exportTranscript(task.format, {
      words,
      language: task.language,
      languageProbability: task.languageProbability,
      edit: editOfPlan(task.editJson),
    });
    return moved(typeof body === 'string' ? body : JSON.stringify(body));
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
