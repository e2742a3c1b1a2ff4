import { ApiError, CreateJobRequestSchema, issuesToDetails, type CreateJobInput } from '@captionfarm/contracts';

/** A given transcript as it is stored: its words already serialized (job_transcripts.words). */
export interface GivenTranscript {
  language: string | null;
  wordCount: number;
  wordsJson: string;
}

/** A create body validated: the request without its transcript's words, and those words serialized. */
export interface PreparedJob {
  input: Omit<CreateJobInput, 'transcript'>;
  transcript: GivenTranscript | null;
}

/**
 * Validates a POST /v1/automation-jobs body (throws 400 invalid_request with details) and
 * serializes its transcript's words once. Pure: it runs on the event loop for small bodies and on
 * the transcript worker for large ones (transcript-work.ts), where a 20,000-word transcript's
 * 150-250 ms of parsing and validation block no other request.
 */
export function prepareJob(body: unknown): PreparedJob {
  const parsed = CreateJobRequestSchema.safeParse(body);
  if (!parsed.success) {
    // A 20,000-word transcript can be wrong everywhere: the first 100 problems say enough.
    const details = issuesToDetails(parsed.error.issues);
    const shown = details.length > 100 ? [...details.slice(0, 100), { path: '', message: `... and ${details.length - 100} more problems` }] : details;
    throw new ApiError('invalid_request', 'The request body is not a valid job: see details.', { details: shown });
  }
  const { transcript: t, ...input } = parsed.data;
  return {
    input,
    transcript: t
      ? {
          language: t.language ?? input.language ?? null,
          wordCount: t.words.length,
          wordsJson: JSON.stringify(t.words.map(({ text, start, end }) => ({ text, start, end }))),
        }
      : null,
  };
}
