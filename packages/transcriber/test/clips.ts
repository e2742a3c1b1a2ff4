/**
 * Speech clips with exact word onsets, made at test time (never committed): espeak-ng reads each
 * sentence (espeak-words.py keeps its word events), sox resamples to 16 kHz and inserts quiet
 * room noise between sentences, ffmpeg mixes a music or noise bed under the whole clip. Shared by
 * the accuracy tests and scripts/bench/accuracy.ts, so both measure the same clips.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseReferenceOnsets, type ReferenceOnset } from '../src/index.ts';
import { runToEnd } from '@captionfarm/process';

const ESPEAK_WORDS = new URL('./espeak-words.py', import.meta.url).pathname;

type ClipPart = { say: string } | { quiet: number };

export interface ClipSpec {
  name: string;
  /** The whisper language code. */
  language: string;
  /**
   * espeak-ng voice (a variant: another timbre), rate (words per minute) and pitch (0-99). Each
   * clip has its own, none of them espeak's default voice at 150 wpm: the onset figures must not
   * hang on one synthetic voice.
   */
  voice: { name: string; rate: number; pitch: number };
  parts: ClipPart[];
  /** Mixed under the whole clip. */
  bed?: 'music' | 'noise';
}

export interface Clip {
  name: string;
  language: string;
  /** 16 kHz mono s16 WAV. */
  path: string;
  text: string;
  onsets: ReferenceOnset[];
  /** The inserted pauses, seconds on the clip's timeline. */
  silences: { start: number; end: number }[];
  duration: number;
}

/** A read of four sentences, as in issue 10. */
const EN_READ = [
  'Our quarterly results were better than we expected.',
  'Revenue grew by twelve percent for the third month in a row.',
  'Most new customers found us through the mobile app in the spring.',
  'Next year we will invest in support and in the product itself.',
];
const ES_READ = [
  'El viento del norte y el sol discutían sobre cuál de los dos era el más fuerte.',
  'En ese momento pasó un viajero envuelto en una capa muy gruesa.',
  'Decidieron que el más fuerte sería quien lograra quitarle la capa al viajero.',
];
const DE_READ = [
  'Der Nordwind und die Sonne stritten sich, wer von ihnen beiden wohl der Stärkere wäre.',
  'Da kam ein Wanderer, der in einen warmen Mantel gehüllt war, des Weges daher.',
  'Sie wurden einig, dass derjenige für den Stärkeren gelten sollte, der den Wanderer zwingen würde, seinen Mantel abzunehmen.',
];
const FR_READ = [
  'La bise et le soleil se disputaient, chacun assurant qu’il était le plus fort.',
  'Quand ils virent un voyageur qui s’avançait, enveloppé dans son manteau, ils tombèrent d’accord.',
  'Celui qui arriverait le premier à le lui faire ôter serait regardé comme le plus fort.',
];

const said = (lines: string[], pauseBefore: Record<number, number> = {}): ClipPart[] =>
  lines.flatMap((say, i) => (pauseBefore[i] ? [{ quiet: pauseBefore[i] }, { say }] : [{ say }]));

/** The clips of the benchmark and the accuracy tests (en.wav from ../shared comes on top). */
// The English and Spanish reads and their paused copies share a voice: the pause tests compare their WER.
const EN_VOICE = { name: 'en-us+m7', rate: 165, pitch: 40 };
const ES_VOICE = { name: 'es+f3', rate: 140, pitch: 60 };
export const CLIPS: ClipSpec[] = [
  { name: 'en-read', language: 'en', voice: EN_VOICE, parts: said(EN_READ) },
  { name: 'en-pauses', language: 'en', voice: EN_VOICE, parts: said(EN_READ, { 1: 2.5, 2: 2.5, 3: 2.5 }) },
  { name: 'es-read', language: 'es', voice: ES_VOICE, parts: said(ES_READ) },
  { name: 'es-pause-6s', language: 'es', voice: ES_VOICE, parts: said(ES_READ, { 1: 6 }) },
  { name: 'de-music', language: 'de', voice: { name: 'de+m7', rate: 160, pitch: 45 }, parts: said(DE_READ), bed: 'music' },
  { name: 'fr-noise', language: 'fr', voice: { name: 'fr+m3', rate: 185, pitch: 45 }, parts: said(FR_READ, { 2: 2.5 }), bed: 'noise' },
];

/** Synthesized chords and plucks (the accuracy tests' music), and pink noise. */
export const MUSIC_LAVFI =
  "aevalsrc='0.2*sin(2*PI*(220+110*floor(mod(t*2,4)))*t)+0.15*sin(2*PI*(330+55*floor(mod(t*3,5)))*t)+0.1*sin(2*PI*(440+220*floor(mod(t,3)))*t)*exp(-mod(t,0.5)*4)':s=16000";
const BEDS = {
  // Music about 12 dB under the voice, noise about 25 dB under: a talk over a music bed, a noisy room.
  music: { lavfi: MUSIC_LAVFI, gain: 0.25 },
  noise: { lavfi: 'anoisesrc=r=16000:a=0.02:c=pink:seed=1', gain: 1 },
};

// sox -R: repeatable (seeded) noise; -D: no dither. The same spec gives the same samples every time.
const wavSeconds = async (path: string) => Number((await runToEnd('soxi', { args: ['-D', path] })).stdout);
const sox = (args: string[]) => runToEnd('sox', { args });

/** Builds a clip into `dir` (deterministic: same spec, same samples). */
export async function makeClip(spec: ClipSpec, dir: string): Promise<Clip> {
  const pieces: string[] = [];
  const onsets: ReferenceOnset[] = [];
  const silences: Clip['silences'] = [];
  const texts: string[] = [];
  let offset = 0;
  for (const [i, part] of spec.parts.entries()) {
    const out = join(dir, `${spec.name}-${i}.wav`);
    if ('quiet' in part) {
      // Quiet room noise (pink, about -50 dBFS), not digital silence: what a real pause sounds like.
      await sox(['-R', '-n', '-r', '16000', '-c', '1', '-b', '16', out, 'synth', String(part.quiet), 'pinknoise', 'vol', '0.003']);
      silences.push({ start: offset, end: offset + part.quiet });
    } else {
      const raw = join(dir, `${spec.name}-${i}-espeak.wav`);
      const words = join(dir, `${spec.name}-${i}.words`);
      const { name, rate, pitch } = spec.voice;
      await runToEnd('python3', { args: [ESPEAK_WORDS, name, String(rate), raw, words, String(pitch)], input: part.say });
      await sox(['-R', '-D', raw, '-r', '16000', '-b', '16', out]);
      for (const o of parseReferenceOnsets(readFileSync(words, 'utf8'))) onsets.push({ word: o.word, onset: offset + o.onset });
      texts.push(part.say);
    }
    pieces.push(out);
    offset += await wavSeconds(out);
  }
  const speech = join(dir, `${spec.name}-speech.wav`);
  await sox([...pieces, speech]);
  const path = join(dir, `${spec.name}.wav`);
  if (spec.bed) {
    const bed = BEDS[spec.bed];
    await runToEnd('ffmpeg', {
      args: [
        '-nostdin',
        '-v',
        'error',
        '-y',
        '-i',
        speech,
        '-f',
        'lavfi',
        '-i',
        bed.lavfi,
        '-filter_complex',
        `[1]volume=${bed.gain}[b];[0][b]amix=inputs=2:duration=first:normalize=0`,
        '-ac',
        '1',
        '-ar',
        '16000',
        '-c:a',
        'pcm_s16le',
        path,
      ],
    });
  } else {
    await sox([speech, path]);
  }
  return { name: spec.name, language: spec.language, path, text: texts.join(' '), onsets, silences, duration: await wavSeconds(path) };
}

/** The shared espeak read (../shared/media/en.wav) as a Clip. */
export async function sharedEnClip(media: string): Promise<Clip> {
  const path = join(media, 'en.wav');
  return {
    name: 'en.wav',
    language: 'en',
    path,
    text: readFileSync(join(media, 'en.txt'), 'utf8'),
    onsets: parseReferenceOnsets(readFileSync(join(media, 'en.words'), 'utf8')),
    silences: [],
    duration: await wavSeconds(path),
  };
}

/** Words whose start lies inside an inserted pause (the last 100 ms count as an early onset, not a word in silence). */
export function wordsInSilence(words: { start: number }[], silences: Clip['silences']): number {
  return words.filter((w) => silences.some((s) => w.start >= s.start && w.start < s.end - 0.1)).length;
}

/**
 * Real clips whose reference word timings PocketSphinx itself made (the pocketsphinx sdist's
 * LibriVox test data, `en_librivox_ps_*`): our English starts come from PocketSphinx, so on these
 * they score their own aligner. Onset goals are judged without them (other aligners, hand labels).
 */
export const timedByPocketsphinx = (name: string): boolean => name.includes('_librivox_ps_');
