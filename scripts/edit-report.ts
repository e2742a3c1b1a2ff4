/**
 * edit-report (issue 42): one edited job through a local control plane and an in-process agent
 * (the e2e harness: a fresh database, whisper.cpp base, ffmpeg), on a clip of yours; prints every
 * cut of its plan (source start and end, reason, the words it removed) and, for each join of the
 * output, the largest sample step within 5 ms of it against the clip's own steps, so that each join
 * can be listened to and checked for a click. With reference word times beside the clip (NAME.words,
 * as three clips of ../shared/media/real have), each cut lists the reference words it overlaps.
 *
 *   npx tsx scripts/edit-report.ts <wav-or-video> [--fillers safe] [--silences fast] [--zoom emphasis] [--language en] [--keep-output out.mp4]
 *
 * A WAV (or any file without a picture) is put under a plain 360x640 25 fps picture first. A join is
 * marked "click?" when its step is above the source's own 99.9th-percentile step (where there is
 * sound): a hard cut through a waveform jumps by about its amplitude, a crossfaded join by no more
 * than speech itself does.
 */
import { copyFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { runToEnd } from '@captionfarm/process';
import { JobEditSchema, type EditPlan } from '@captionfarm/contracts';
import { decodePcm, maxStepNear, stepQuantile } from '../agent/test/edit-media.ts';
import { startFarm, submitUpload, terminal, watchJob } from '../agent/test/e2e-harness.ts';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    fillers: { type: 'string', default: 'safe' },
    silences: { type: 'string', default: 'off' },
    zoom: { type: 'string', default: 'off' },
    language: { type: 'string' },
    'keep-output': { type: 'string' },
  },
});
const input = positionals[0];
if (!input) {
  console.error('usage: npx tsx scripts/edit-report.ts <wav-or-video> [--fillers safe] [--silences fast] [--zoom emphasis] [--language en]');
  process.exit(2);
}
const STEP_RATE = 48_000;

/** The input as an mp4 with a picture: itself when it has a video stream, else its audio under a plain picture. */
async function asVideo(file: string, dir: string): Promise<string> {
  const probe = JSON.parse(
    (await runToEnd('ffprobe', { args: ['-v', 'error', '-show_entries', 'stream=codec_type:format=duration', '-of', 'json', file] })).stdout,
  ) as { streams: { codec_type: string }[]; format: { duration: string } };
  if (probe.streams.some((s) => s.codec_type === 'video')) return file;
  const out = path.join(dir, 'clip.mp4');
  const seconds = Number(probe.format.duration);
  const picture = `color=c=0x303030:s=360x640:r=25:d=${seconds}`;
  await runToEnd('ffmpeg', {
    args: [
      ...['-y', '-v', 'error', '-f', 'lavfi', '-i', picture, '-i', file, '-map', '0:v', '-map', '1:a'],
      ...['-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-b:a', '160k', '-t', String(seconds), out],
    ],
  });
  return out;
}

const pad = (s: string, n: number) => s.padEnd(n);
const num = (x: number, n = 7, d = 3) => x.toFixed(d).padStart(n);

interface RefWord {
  start: number;
  end: number;
  text: string;
}

/** Reference word times beside the clip (NAME.words: start, end, word, tab-separated, as ../shared/media/real has for three clips), or null. */
async function referenceWords(file: string): Promise<RefWord[] | null> {
  const text = await readFile(file.replace(/\.[^.]+$/, '.words'), 'utf8').catch(() => null);
  if (text === null) return null;
  return text
    .trim()
    .split('\n')
    .map((line) => line.split('\t'))
    .map(([start, end, word]) => ({ start: Number(start), end: Number(end), text: word ?? '' }));
}

/** The reference words a cut overlaps, each with how much of it (ms) the cut removed. */
function overlapped(c: { start: number; end: number }, ref: RefWord[]): string {
  return ref
    .filter((w) => w.end > c.start && w.start < c.end)
    .map((w) => `${w.text} ${Math.round((Math.min(w.end, c.end) - Math.max(w.start, c.start)) * 1000)}/${Math.round((w.end - w.start) * 1000)} ms`)
    .join(', ');
}

function printCuts(plan: EditPlan, ref: RefWord[] | null): void {
  console.log(`\ncuts (${plan.cuts.length}), source seconds${ref ? '; the reference words (NAME.words) each overlaps, ms cut of the word' : ''}:`);
  console.log(`  ${pad('start', 8)} ${pad('end', 8)} ${pad('length', 7)} ${pad('reason', 11)} ${pad('text', 30)}${ref ? ' reference words cut' : ''}`);
  for (const c of plan.cuts) {
    const line = `  ${num(c.start, 8)} ${num(c.end, 8)} ${num(c.end - c.start, 7)} ${pad(c.reason, 11)} ${pad(c.text ?? '', 30)}`;
    console.log(ref ? `${line} ${overlapped(c, ref)}` : line);
  }
  if (!ref) return;
  // A reference word partly kept next to a cut: how much of it is gone (a filler's tail left, a word's onset cut).
  const partly = ref.filter((w) => plan.cuts.some((c) => c.end > w.start && c.start < w.end) && !plan.cuts.some((c) => c.start <= w.start && c.end >= w.end));
  console.log(`  reference words cut in part: ${partly.map((w) => `${w.text} ${w.start.toFixed(2)}-${w.end.toFixed(2)}`).join(', ') || 'none'}`);
}

/** Each join's output time, the source times it joins, and the largest steps there in the output and in the source. */
function printJoins(plan: EditPlan, out: Float32Array, source: Float32Array): void {
  const typical = stepQuantile(source, 0.99);
  const limit = stepQuantile(source, 0.999);
  console.log(`\njoins (${Math.max(0, plan.keep.length - 1)}): largest sample step within 5 ms, at ${STEP_RATE} Hz`);
  console.log(`  the source's own steps where there is sound: 99th percentile ${typical.toFixed(4)}, 99.9th ${limit.toFixed(4)} (the click threshold)`);
  console.log(`  ${pad('output s', 9)} ${pad('joins source', 19)} ${pad('step', 7)} ${pad('x typical', 9)} ${pad('source steps there', 19)} verdict`);
  let at = 0;
  let clicks = 0;
  for (let i = 0; i < plan.keep.length - 1; i++) {
    const [a, b] = [plan.keep[i]!, plan.keep[i + 1]!];
    at += a.end - a.start;
    const step = maxStepNear(out, STEP_RATE, at);
    const around = `${maxStepNear(source, STEP_RATE, a.end).toFixed(4)} / ${maxStepNear(source, STEP_RATE, b.start).toFixed(4)}`;
    const click = step > limit;
    if (click) clicks++;
    console.log(
      `  ${num(at, 9)} ${num(a.end, 8)}->${num(b.start, 8)} ${step.toFixed(4)} ${num(typical > 0 ? step / typical : 0, 9, 2)} ${pad(around, 19)} ${click ? 'click?' : 'ok'}`,
    );
  }
  console.log(`\n${clicks} of ${Math.max(0, plan.keep.length - 1)} joins over the threshold`);
}

const dir = await mkdtemp(path.join(tmpdir(), 'cf-edit-report-'));
const farm = await startFarm();
try {
  const clip = await asVideo(path.resolve(input), dir);
  await farm.startAgent();
  const { api } = await farm.account('pro', 'report');
  const edit = { silences: values.silences, fillers: values.fillers, zoom: values.zoom };
  const created = await submitUpload(api, await readFile(clip), { edit, ...(values.language ? { language: values.language } : {}) }, path.basename(clip));
  const { job } = await watchJob(api, created.id, terminal, 1_800_000);
  if (job.status !== 'succeeded') throw new Error(`the job ended ${job.status}: ${job.failureCode} ${job.failureReason}`);
  const { plan } = JobEditSchema.parse((await api('GET', `/v1/automation-jobs/${created.id}/edit`)).body);
  const video = path.join(dir, 'out.mp4');
  await writeFile(video, Buffer.from(await (await fetch(job.downloadUrl)).arrayBuffer()));
  console.log(`${path.basename(input)}: edit ${JSON.stringify(edit)}; source ${plan.sourceSeconds.toFixed(2)} s, output ${plan.outputSeconds.toFixed(2)} s`);
  printCuts(plan, await referenceWords(path.resolve(input)));
  printJoins(plan, await decodePcm(video, STEP_RATE), await decodePcm(clip, STEP_RATE));
  if (values['keep-output']) await copyFile(video, values['keep-output']);
} finally {
  await farm.close();
  await rm(dir, { recursive: true, force: true });
}
