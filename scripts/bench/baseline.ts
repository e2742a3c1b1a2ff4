/**
 * What a person would script by hand around whisper.cpp, the baseline bench:e2e and bench:gpu
 * measure against: one argument list each, so both benches time the same commands.
 */

/** ffmpeg: the clip's audio as 16 kHz mono 16-bit WAV, whisper's input. */
export function wavArgs(clip: string, wav: string): string[] {
  return ['-y', '-loglevel', 'error', '-i', clip, '-vn', '-ac', '1', '-ar', '16000', '-c:a', 'pcm_s16le', wav];
}

/** whisper-cli: English, beam 5 (its default), word timestamps (-ml 1 -sow) written as JSON to `outBase`.json. */
export function whisperCliArgs(o: { model: string; wav: string; threads: number; outBase: string }): string[] {
  return ['-m', o.model, '-f', o.wav, '-t', String(o.threads), '-l', 'en', '-ml', '1', '-sow', '-oj', '-of', o.outBase, '-np'];
}
