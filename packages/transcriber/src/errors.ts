/**
 * The one error type of this package. `code` is a closed set:
 * - 'transcription-failed': transcribe() could not produce words (missing or bad model, whisper.cpp
 *   crashed or was not built, unreadable audio). The agent fails the job with this code.
 * - 'unknown-model': modelsPull() was given a name whisper.cpp does not publish.
 * - 'model-download-failed': the model server could not be reached or answered an error.
 * - 'model-checksum-mismatch': the download does not match whisper.cpp's published SHA1.
 */
export type TranscriptionErrorCode = 'transcription-failed' | 'unknown-model' | 'model-download-failed' | 'model-checksum-mismatch';

export class TranscriptionError extends Error {
  override readonly name = 'TranscriptionError';
  readonly code: TranscriptionErrorCode;

  constructor(code: TranscriptionErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}
