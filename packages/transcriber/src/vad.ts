/**
 * Speech first: Silero VAD (whisper.cpp's `whisper-vad-speech-segments`) finds where someone
 * speaks, and only that audio goes to whisper (speech-plan.ts), so whisper cannot write words
 * on silence, room tone or music ("Thank you.", "Thanks for watching!" with base), and a file
 * with no speech is not sent to whisper at all.
 *
 * Why not whisper's own --vad: whisper.cpp maps segment times back to the original timeline but
 * not token times, and word times come from tokens. Why not the no-speech threshold:
 * whisper.cpp reads the no-speech probability after the task tokens, where it is near 0 (1e-6
 * on digital silence here), so it never fires.
 */
import { join } from 'node:path';
import { runProcess } from '@captionfarm/process';
import { TranscriptionError } from './errors.ts';

export interface SpeechRegion {
  /** seconds */
  start: number;
  end: number;
}

export interface VadParams {
  /** Speech probability above which a 32 ms window is speech. */
  threshold: number;
  minSpeechMs: number;
  minSilenceMs: number;
  speechPadMs: number;
}

const DEFAULT_VAD: VadParams = { threshold: 0.5, minSpeechMs: 250, minSilenceMs: 100, speechPadMs: 30 };

/** Args of whisper-vad-speech-segments (pure). */
export function vadArgs(opts: { wav: string; model: string; threads: number; params?: VadParams }): string[] {
  const p = opts.params ?? DEFAULT_VAD;
  return [
    '--file',
    opts.wav,
    '--vad-model',
    opts.model,
    '--threads',
    String(opts.threads),
    '--no-prints',
    '--vad-threshold',
    String(p.threshold),
    '--vad-min-speech-duration-ms',
    String(p.minSpeechMs),
    '--vad-min-silence-duration-ms',
    String(p.minSilenceMs),
    '--vad-speech-pad-ms',
    String(p.speechPadMs),
  ];
}

/**
 * Parses its stdout: "Speech segment 0: start = 29.00, end = 1050.00" lines, in centiseconds
 * (whisper.cpp's VAD segment unit).
 */
export function parseSpeechSegments(stdout: string): SpeechRegion[] {
  if (!/Detected \d+ speech segments/.test(stdout)) {
    throw new TranscriptionError('transcription-failed', `unexpected VAD output: ${stdout.slice(0, 200)}`);
  }
  return [...stdout.matchAll(/^Speech segment \d+: start = ([\d.]+), end = ([\d.]+)$/gm)].map((m) => ({
    start: Number(m[1]) / 100,
    end: Number(m[2]) / 100,
  }));
}

/** Runs the VAD on a 16 kHz mono WAV; kills it on abort. */
export async function detectSpeech(opts: {
  binDir: string;
  model: string;
  wav: string;
  threads: number;
  signal?: AbortSignal;
  env?: NodeJS.ProcessEnv;
}): Promise<SpeechRegion[]> {
  const binary = join(opts.binDir, 'whisper-vad-speech-segments');
  const { exitCode, exitSignal, stdout, stderrTail } = await runProcess(binary, { args: vadArgs(opts), signal: opts.signal, env: opts.env }).done.catch(
    (err: unknown) => {
      if (opts.signal?.aborted) throw opts.signal.reason;
      const message = err instanceof Error ? err.message : String(err);
      throw new TranscriptionError('transcription-failed', `could not run ${binary}: ${message}; run "bash scripts/build-whisper"`, { cause: err });
    },
  );
  if (exitCode !== 0) {
    throw new TranscriptionError(
      'transcription-failed',
      `VAD failed (exit ${exitCode ?? exitSignal}) with model ${opts.model}: ${stderrTail.trim().slice(-800) || 'no output'}`,
    );
  }
  return parseSpeechSegments(stdout);
}
