/**
 * English word starts from an acoustic forced aligner: CMU PocketSphinx (scripts/build-pocketsphinx)
 * with its US English HMMs aligns the words whisper recognized to the audio of their chunk.
 *
 * Why: whisper's DTW reads word times off its attention, which on real voices puts a median word
 * 50-60 ms early and one in ten 250-350 ms off; after a filler ("um", "uh", which whisper leaves
 * out) the next word takes the filler's time. The TTS alignment (tts-align.ts) fixed read speech
 * but moved runs of spontaneous, noisy or telephone words by 0.2-0.9 s. An HMM aligner scores
 * the words' phones against the audio itself, with optional fillers and silences between words.
 *
 * - Words: each recognized word is one entry of a small dictionary made per chunk (`w0`, `w1`...,
 *   so any spelling is safe in the grammar): its CMUdict pronunciations (up to 3; a hyphenated or
 *   multi-part word, its parts' first ones joined). A word CMUdict lacks (a name, digits) is one
 *   garbage phone (`+SPN+`, the model's spoken-noise unit), which takes its time without
 *   claiming its sounds.
 * - Grammar (JSGF): the words in order, each optionally preceded by a filler word (uh, um, ah,
 *   er, hm, mm); PocketSphinx adds optional silence and noise between words itself.
 * - Audio: the chunk's samples (its speech spans and the pauses between them), a 16 kHz s16 WAV.
 * - An alignment that fails (the program exits non-zero, no path, a word missing or out of
 *   order) returns null: the caller keeps the starts it had. A program that cannot start rejects.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Word } from '@captionfarm/contracts';
import { runProcess } from '@captionfarm/process';
import type { PocketsphinxPaths } from '@captionfarm/process/tools';
import { readSpanPcm, whisperWavHeader } from './audio.ts';

/** Fillers the grammar lets the speaker say before any word, with their CMUdict phones. */
const FILLERS: Record<string, string> = { uh: 'AH', um: 'AH M', ah: 'AA', er: 'ER', hm: 'HH M', mm: 'M' };
/** Wide beams: a 30 s chunk of noisy speech otherwise loses every path (measured: 1e-80 failed on a 25 s clip). */
const BEAMS = ['-beam', '1e-120', '-wbeam', '1e-100', '-pbeam', '1e-120'];
const MAX_PRONUNCIATIONS = 3;

export type Lexicon = Map<string, string[]>;

/** CMUdict text (`word PH ONES`, `word(2) ...` for variants) as word -> pronunciations (pure). */
export function parseLexicon(text: string): Lexicon {
  const lexicon: Lexicon = new Map();
  for (const line of text.split('\n')) {
    const space = line.indexOf(' ');
    if (space <= 0) continue;
    const word = line.slice(0, space).replace(/\(\d+\)$/, '');
    const phones = line.slice(space + 1).trim();
    if (!phones) continue;
    const list = lexicon.get(word);
    if (list) list.push(phones);
    else lexicon.set(word, [phones]);
  }
  return lexicon;
}

/** A recognized word's spoken parts, as CMUdict spells them (pure): "Don't," -> ["don't"], "e-mail" -> ["e", "mail"]. */
export function lexiconParts(text: string): string[] {
  return text
    .toLowerCase()
    .replace(/[\u2018\u2019]/g, "'")
    .replace(/[^a-z0-9'\s-]/g, '')
    .split(/[\s-]+/)
    .map((p) => p.replace(/^'+|'+$/g, ''))
    .filter(Boolean);
}

/** The pronunciations of a word (pure): CMUdict's, else the garbage phone. */
export function pronunciationsOf(text: string, lexicon: Lexicon): string[] {
  const parts = lexiconParts(text);
  if (parts.length === 0) return ['+SPN+'];
  const known = parts.map((p) => lexicon.get(p));
  if (known.some((k) => !k)) return ['+SPN+'];
  if (known.length === 1) return known[0]!.slice(0, MAX_PRONUNCIATIONS);
  return [known.map((k) => k![0]).join(' ')];
}

/** The per-chunk dictionary and grammar for a chunk's words, `w0`... in order (pure). */
export function alignmentInputs(words: readonly Word[], lexicon: Lexicon): { dictionary: string; grammar: string } {
  const lines = [
    ...Object.entries(FILLERS).map(([w, phones]) => `${w} ${phones}`),
    ...words.flatMap((w, i) => pronunciationsOf(w.text, lexicon).map((phones, k) => `w${i}${k ? `(${k + 1})` : ''} ${phones}`)),
  ];
  const body = words.map((_, i) => `<f> w${i}`).join(' ');
  const grammar = `#JSGF V1.0;\ngrammar words;\npublic <s> = ${body} <f>;\n<f> = [${Object.keys(FILLERS).join(' | ')}];\n`;
  return { dictionary: `${lines.join('\n')}\n`, grammar };
}

/**
 * The aligned start and end of each word (seconds from the audio's start) from PocketSphinx's JSON
 * (pure); null unless every word is there once, in order.
 */
export function parseAlignment(json: string, count: number): { start: number; end: number }[] | null {
  let result: { w?: { b: number; d: number; t: string }[] };
  try {
    result = JSON.parse(json.trim().split('\n').at(-1) ?? '') as typeof result;
  } catch {
    return null;
  }
  const out: { start: number; end: number }[] = [];
  for (const seg of result.w ?? []) {
    const m = /^w(\d+)(?:\(\d+\))?$/.exec(seg.t);
    if (!m) continue;
    if (Number(m[1]) !== out.length) return null;
    out.push({ start: seg.b, end: seg.b + seg.d });
  }
  return out.length === count ? out : null;
}

export interface AcousticAligner {
  /**
   * The words of one chunk (source seconds, all within [from, to]) with aligned starts and ends,
   * or null where the alignment failed.
   */
  align(words: readonly Word[], o: { wavPath: string; from: number; to: number; workDir: string; signal?: AbortSignal | undefined }): Promise<Word[] | null>;
}

/** The aligner over a PocketSphinx build; its dictionary is read once, at the first alignment. */
export function acousticAligner(paths: PocketsphinxPaths): AcousticAligner {
  let lexicon: Promise<Lexicon> | null = null;
  let runs = 0;
  return {
    async align(words, o) {
      if (words.length === 0) return [];
      lexicon ??= readFile(paths.dictionary, 'utf8').then(parseLexicon);
      const { dictionary, grammar } = alignmentInputs(words, await lexicon);
      const base = join(o.workDir, `align-${++runs}`);
      await writeFile(`${base}.dict`, dictionary);
      await writeFile(`${base}.gram`, grammar);
      // A file, not stdin: the program seeks in its input to read the WAV header (on a pipe: "- is not a WAVE file").
      const pcm = await readSpanPcm(o.wavPath, o.from, o.to);
      await writeFile(`${base}.wav`, Buffer.concat([whisperWavHeader(pcm.length), pcm]));
      const args = [
        '-hmm',
        paths.acousticModel,
        '-dict',
        `${base}.dict`,
        '-jsgf',
        `${base}.gram`,
        ...BEAMS,
        '-bestpath',
        'no',
        '-loglevel',
        'FATAL',
        'single',
        `${base}.wav`,
      ];
      // A program that never starts rejects (the caller stops asking); one that exits non-zero failed this chunk.
      const result = await runProcess(paths.program, { args, ...(o.signal ? { signal: o.signal } : {}) }).done;
      const aligned = result.exitCode === 0 ? parseAlignment(result.stdout, words.length) : null;
      if (!aligned) return null;
      return words.map((w, i) => {
        const start = o.from + aligned[i]!.start;
        return { ...w, start, end: Math.max(start, o.from + aligned[i]!.end) };
      });
    },
  };
}
