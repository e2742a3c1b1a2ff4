/**
 * Transcription benchmark, one run: our path (createTranscriber: whisper-server with the model
 * loaded once + Silero VAD gate + word conversion) against whisper.cpp's own command-line tool
 * (whisper-cli, a process per file that loads the model each time), same files, same decoding
 * flags, in one run. Also word error rate and word onset error.
 *
 * Order: all of ours, then all of whisper-cli (default), or --interleave. On the dev VM a
 * whisper-cli run that loads the same weights slows the already-running whisper-server for good
 * (en.wav 5.43 s -> 6.55 s; a whisper-cli run with other weights: 5.60 s; touching 800 MB of
 * other memory: no change): the host apparently merges identical pages. Interleaving measures
 * that artifact, not our path; it is kept as an option for loaded machines.
 *
 *   npx tsx scripts/bench/transcribe.ts [--model PATH] [--threads 2] [--runs 3] [--beam 1] [--timing token|dtw] [--interleave]
 *
 * Defaults: the test model from scripts/fetch-test-model, 2 threads, 3 runs, beam 5 (as createTranscriber).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { runToEnd } from '@captionfarm/process';
import { whisperBinDir } from '@captionfarm/process/tools';
import {
  testModelPath,
  createTranscriber,
  onsetErrorsMs,
  parseReferenceOnsets,
  percentile,
  wordErrorRate,
  type WordTiming,
} from '../../packages/transcriber/src/index.ts';

const { values } = parseArgs({
  options: {
    model: { type: 'string', default: testModelPath() },
    threads: { type: 'string', default: '2' },
    runs: { type: 'string', default: '3' },
    beam: { type: 'string', default: '5' },
    timing: { type: 'string', default: 'token' },
    media: { type: 'string', default: new URL('../../../shared/media/', import.meta.url).pathname },
    interleave: { type: 'boolean', default: false },
  },
});
const threads = Number(values.threads);
const runs = Number(values.runs);
const beam = Number(values.beam);
const timing = values.timing as WordTiming;
const binDir = whisperBinDir();
const files = [
  { name: 'jfk.wav', seconds: 11, text: readFileSync(join(values.media, 'jfk.txt'), 'utf8') },
  {
    name: 'en.wav',
    seconds: 33.6,
    text: readFileSync(join(values.media, 'en.txt'), 'utf8'),
    onsets: parseReferenceOnsets(readFileSync(join(values.media, 'en.words'), 'utf8')),
  },
];
// Same environment for both paths (OMP_WAIT_POLICY included: see transcriber.ts).
const env = { ...process.env };

/** whisper-cli with the flags our server requests use (inferenceFields) and JSON token output. */
async function cli(file: string, outBase: string): Promise<number> {
  const args = [
    '-m',
    values.model,
    '-f',
    file,
    '-t',
    String(threads),
    '-l',
    'auto',
    '-bs',
    String(Math.max(beam, 1)),
    '-bo',
    String(beam > 1 ? beam : 5),
    '-tp',
    '0',
    '-tpi',
    '0.2',
    '-nth',
    '0.6',
    '-sns',
    '-ojf',
    '-of',
    outBase,
    '-np',
    ...(timing === 'dtw' ? ['-dtw', 'base', '-nfa'] : []),
  ];
  const started = performance.now();
  await runToEnd(join(binDir, 'whisper-cli'), { args, env });
  return performance.now() - started;
}

const work = mkdtempSync(join(tmpdir(), 'bench-transcribe-'));
const transcriber = createTranscriber({ model: values.model, threads, binDir, beamSize: beam, timing, env });
const loadStarted = performance.now();
await transcriber.warmUp();
const loadMs = performance.now() - loadStarted;

const ours: Record<string, number[]> = {};
const theirs: Record<string, number[]> = {};
const quality: Record<string, { wer: number; language: string; onsets?: number[] }> = {};
async function runOurs(f: (typeof files)[number]): Promise<void> {
  const started = performance.now();
  const result = await transcriber.transcribe({ audioPath: join(values.media, f.name) });
  ours[f.name] ??= [];
  ours[f.name]!.push(performance.now() - started);
  quality[f.name] = {
    wer: wordErrorRate(f.text, result.words.map((w) => w.text).join(' ')),
    language: result.language,
    ...(f.onsets ? { onsets: onsetErrorsMs(f.onsets, result.words) } : {}),
  };
}
async function runCli(f: (typeof files)[number], run: number): Promise<void> {
  theirs[f.name] ??= [];
  theirs[f.name]!.push(await cli(join(values.media, f.name), join(work, `${f.name}-${run}`)));
}
if (values.interleave) {
  for (let run = 0; run < runs; run++) {
    for (const f of files) {
      // Alternate which goes first, so neither always runs on a warmer cache.
      if (run % 2 === 0) await runOurs(f).then(() => runCli(f, run));
      else await runCli(f, run).then(() => runOurs(f));
    }
  }
} else {
  for (let run = 0; run < runs; run++) for (const f of files) await runOurs(f);
  for (let run = 0; run < runs; run++) for (const f of files) await runCli(f, run);
}
await transcriber.close();
rmSync(work, { recursive: true, force: true });

const median = (xs: number[]) => percentile(xs, 50);
console.log(
  `model ${values.model}, ${threads} threads, ${beam > 1 ? `beam ${beam}` : 'greedy (best of 5)'}, timing ${timing}, ${runs} runs ${values.interleave ? 'interleaved' : 'ours then whisper-cli'}, OMP_WAIT_POLICY=${env.OMP_WAIT_POLICY ?? '(unset)'}`,
);
console.log(`model load (once per agent): ${loadMs.toFixed(0)} ms`);
console.log('file      ours ms (median)  whisper-cli ms (median)  ratio   RTF ours  WER    language  onset median/p90 ms');
let oursTotal = 0;
let theirsTotal = 0;
for (const f of files) {
  const o = median(ours[f.name]!);
  const t = median(theirs[f.name]!);
  oursTotal += o;
  theirsTotal += t;
  const q = quality[f.name]!;
  const onset = q.onsets ? `${percentile(q.onsets, 50).toFixed(0)}/${percentile(q.onsets, 90).toFixed(0)} (n=${q.onsets.length})` : '-';
  console.log(
    `${f.name.padEnd(9)} ${o.toFixed(0).padStart(16)}  ${t.toFixed(0).padStart(23)}  ` +
      `${(o / t).toFixed(3).padStart(5)}  ${(o / 1000 / f.seconds).toFixed(3).padStart(8)}  ` +
      `${(q.wer * 100).toFixed(1).padStart(4)}%  ${q.language.padEnd(8)}  ${onset}`,
  );
  console.log(`          runs ours ${ours[f.name]!.map((x) => x.toFixed(0)).join(', ')} | cli ${theirs[f.name]!.map((x) => x.toFixed(0)).join(', ')}`);
}
console.log(`ratio ours / whisper-cli (sum of medians): ${(oursTotal / theirsTotal).toFixed(3)}`);
