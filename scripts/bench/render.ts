/**
 * npm run bench:render [-- --rounds 3 --format mp4|webm --encoder auto|cpu|nvenc --template karaoke --seconds 30]
 * npm run bench:render -- --all [--rounds 5] [--templates neon,impact]   (every (or these) built-in template(s): wall and CPU ratio, median and range)
 * /usr/bin/time -v npm run bench:render -- --only plain|render   (one run of one side, no warm-up)
 * npm run bench:render -- --only transparent   (the render's caption frames, at the same times, painted
 *                                              transparent: its second input and overlay without the captions)
 * npm run bench:render -- --only replay        (the render's ffmpeg alone: its caption stream, painted
 *                                              beforehand into a file, read from there instead of the pipe)
 * npm run bench:render -- --all --floor        (also a replay beside the plain re-encode in each round:
 *                                              the CPU ratio a render would have if Node's work cost nothing)
 *
 *   plain  = reencodeVideo: the same ffmpeg pipeline and encoder settings, no captions
 *   render = renderVideo with the real painter (createBandPainter + a built-in template) and
 *            word timings from espeak-ng (../shared/media/en.words), else a synthetic schedule
 * on a 1080x1920 30 fps clip (testsrc2 at about 6 Mbit/s + speech), and prints wall seconds,
 * CPU-seconds (ffmpeg's from /proc/self/stat cutime+cstime, Node's from process.cpuUsage),
 * x-realtime and the render/plain ratios. Goal on CPU: CPU ratio <= 1.05.
 *
 * One template: plain and render alternate in this process. With --all, each round runs the
 * plain re-encode and the render AT THE SAME TIME, each in a process of its own that warms up and
 * then starts with the other: this VM's host takes up to a fifth of the CPU at times (steal), and
 * the same plain re-encode run alone cost 12.9-14.4 CPU-s from one minute to the next, so
 * one-after-the-other rounds gave ratios spread over +-10% even on an idle guest. Run side by
 * side (both processes warm up, then meet at a barrier and start measuring together), both sides
 * meet the same host: the first row (plain against plain) shows what is left of the noise.
 */
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, open, readdir, rm, writeFile } from 'node:fs/promises';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { testClipArgs } from '@captionfarm/agent';
import { childCpuSeconds } from './cpu.ts';
import { runToEnd } from '@captionfarm/process';
import { builtinTemplates, getBuiltinTemplate } from '@captionfarm/captions';
import type { Word } from '@captionfarm/contracts';
import { createBandPainter, planOutputSize, probeMedia, reencodeVideo, renderVideo, runFf, type BandPainter, type OutputFormat } from '@captionfarm/renderer';
import { bandImages } from '../../packages/renderer/src/band-images.ts';
import { matroskaFramePrefix, matroskaHeader } from '../../packages/renderer/src/matroska-stream.ts';
import { planCaptionFrames } from '../../packages/renderer/src/plan-caption-frames.ts';
import { bandPixelFormat, renderArgs } from '../../packages/renderer/src/render-args.ts';
import { ENCODE_NICE, pickEncoder } from '../../packages/renderer/src/render-video.ts';

const { values: flags } = parseArgs({
  options: {
    rounds: { type: 'string' },
    format: { type: 'string', default: 'mp4' },
    encoder: { type: 'string', default: 'auto' },
    template: { type: 'string', default: 'karaoke' },
    seconds: { type: 'string', default: '30' },
    width: { type: 'string', default: '1080' },
    height: { type: 'string', default: '1920' },
    only: { type: 'string' },
    /** With --only: warm up first (fonts, JIT, page cache), wait at this barrier (a directory) for the other side, print one JSON line. */
    warm: { type: 'boolean', default: false },
    barrier: { type: 'string' },
    json: { type: 'boolean', default: false },
    /** Every built-in template, each against a plain re-encode in the same rounds; a summary table with spreads. */
    all: { type: 'boolean', default: false },
    /** With --all: only these built-in templates (comma-separated ids). */
    templates: { type: 'string' },
    /** With --all: each round also runs a replay (--only replay) beside a plain re-encode. */
    floor: { type: 'boolean', default: false },
  },
});
const rounds = Number(flags.rounds ?? (flags.all ? 3 : 2));
const seconds = Number(flags.seconds);
const format = flags.format as OutputFormat;
const encoder = flags.encoder as 'auto' | 'cpu' | 'nvenc';
const size = { width: Number(flags.width), height: Number(flags.height) };
const template = getBuiltinTemplate(flags.template!);
if (!template) throw new Error(`No built-in template "${flags.template}"`);

const media = join(import.meta.dirname, '../../../shared/media');
const work = join(tmpdir(), 'captionfarm-bench-render');
await mkdir(work, { recursive: true });

const source = join(work, `source-${size.width}x${size.height}-${seconds}s.mp4`);
if (!existsSync(source)) {
  console.log(`making ${source} ...`);
  const speech = join(media, 'en.wav');
  const audio = existsSync(speech) ? ['-i', speech] : ['-f', 'lavfi', '-i', `sine=f=220:d=${seconds}`];
  // Generating the source is set-up, not measured; it is cached between runs.
  await runToEnd('ffmpeg', { args: testClipArgs({ seconds, audio, output: source, size, preset: 'veryfast', crf: 23 }) });
}

const words = loadWords(seconds);
const info = await probeMedia(source);

interface Sample {
  wall: number;
  ffmpegCpu: number;
  nodeCpu: number;
}

async function measure(fn: () => Promise<unknown>): Promise<Sample> {
  const c0 = childCpuSeconds();
  const n0 = process.cpuUsage();
  const t0 = performance.now();
  await fn();
  const wall = (performance.now() - t0) / 1000;
  const n = process.cpuUsage(n0);
  return { wall, ffmpegCpu: childCpuSeconds() - c0, nodeCpu: (n.user + n.system) / 1e6 };
}

let captionFrames = 0;
let usedEncoder = '';
const countingPainter = (frame: { width: number; height: number; fps: number }): BandPainter => {
  const painter = createBandPainter({ words, template, width: frame.width, height: frame.height, fps: frame.fps });
  captionFrames = 0;
  return {
    band: painter.band,
    keyAt: (t) => painter.keyAt(t),
    changed: (from, to) => painter.changed!(from, to),
    paint: (ctx, t) => (flags.only === 'transparent' ? undefined : painter.paint(ctx, t)),
    paintPart: (ctx, t, rect) => {
      captionFrames++;
      if (flags.only === 'transparent') return ctx.clearRect(rect.x, rect.y, rect.width, rect.height);
      return painter.paintPart!(ctx, t, rect);
    },
  };
};

const plain: Sample[] = [];
const render: Sample[] = [];
// Per process: --all runs two of these processes at once.
const out = join(work, `out-${process.pid}.${format}`);
if (flags.only) {
  // For an outside measurement (/usr/bin/time -v): just this one run. --all runs two of these at once.
  if (flags.warm) await warmUp();
  captionFrames = 0;
  // Painting the stream is set-up here: only ffmpeg is measured.
  const replay = flags.only === 'replay' ? await captionStreamFile() : null;
  if (flags.barrier) {
    // Both sides of an --all round begin measuring at the same instant, whatever their start-up took.
    await writeFile(join(flags.barrier, String(process.pid)), '');
    while ((await readdir(flags.barrier)).length < 2) await new Promise((r) => setTimeout(r, 2));
  }
  const s = await measure(() =>
    flags.only === 'plain'
      ? reencodeVideo({ input: source, output: out, format, quality: 'medium', encoder, source: info })
      : replay
        ? replayRender(replay.args)
        : renderVideo({ input: source, output: out, painter: countingPainter, format, quality: 'medium', encoder, source: info }),
  );
  await rm(out, { force: true });
  if (replay) await rm(replay.file, { force: true });
  if (flags.json) console.log(JSON.stringify({ ...s, images: captionFrames }));
  else {
    console.log(
      `${flags.only}: wall ${s.wall.toFixed(2)} s, CPU ffmpeg ${s.ffmpegCpu.toFixed(2)} s + node ` +
        `${s.nodeCpu.toFixed(2)} s, ${captionFrames} caption images`,
    );
  }
  process.exit(0);
}
const cpuOf = (x: Sample): number => x.ffmpegCpu + x.nodeCpu;
if (flags.all) {
  const table: string[] = [];
  const loads: number[] = [];
  const spread = (xs: number[]): { median: number; lo: number; hi: number } => {
    const sorted = [...xs].sort((a, b) => a - b);
    return { median: sorted[Math.floor(sorted.length / 2)]!, lo: sorted[0]!, hi: sorted.at(-1)! };
  };
  /** A ratio's median (min-max). */
  const fmt = (x: { median: number; lo: number; hi: number }): string => `${x.median.toFixed(3)} (${x.lo.toFixed(3)}-${x.hi.toFixed(3)})`;
  /** One side in a process of its own: warmed up, measuring from the barrier on; its Sample and image count. */
  const side = async (kind: 'plain' | 'render' | 'replay', templateId: string, barrier: string): Promise<Sample & { images: number }> => {
    const args = ['--only', kind, '--warm', '--json', '--barrier', barrier, '--template', templateId];
    for (const k of ['seconds', 'format', 'encoder', 'width', 'height'] as const) args.push(`--${k}`, String(flags[k]));
    const { stdout } = await runToEnd(process.execPath, { args: ['--import', 'tsx', import.meta.filename, ...args] });
    return JSON.parse(stdout.trim().split('\n').at(-1)!);
  };
  /** A plain re-encode and `kind` side by side: both processes start (tsx, warm-up) at once and begin measuring together, at a barrier. */
  const besidePlain = async (kind: 'plain' | 'render' | 'replay', templateId: string): Promise<[Sample, Sample & { images: number }]> => {
    const barrier = await mkdtemp(join(work, 'barrier-'));
    try {
      return await Promise.all([side('plain', template.id, barrier), side(kind, templateId, barrier)]);
    } finally {
      await rm(barrier, { recursive: true, force: true });
    }
  };
  const pct = (x: number): string => `${(x * 100).toFixed(1)}%`;
  const sign = (x: number): string => (x < 0 ? `-${pct(-x)}` : `+${pct(x)}`);
  const chosen = flags.templates ? flags.templates.split(',').map((id) => getBuiltinTemplate(id) ?? raise(`No built-in template "${id}"`)) : builtinTemplates;
  // The control: a plain re-encode against a plain re-encode, measured the same way.
  for (const t of [null, ...chosen]) {
    const cpuRatios: number[] = [];
    const wallRatios: number[] = [];
    const walls: number[] = [];
    const nodeShares: number[] = [];
    const ffmpegShares: number[] = [];
    const floorRatios: number[] = [];
    let frames = 0;
    for (let i = 0; i < rounds; i++) {
      loads.push(loadavg()[0]!);
      const [q, r] = await besidePlain(t ? 'render' : 'plain', t?.id ?? template.id);
      frames = r.images;
      cpuRatios.push(cpuOf(r) / cpuOf(q));
      // Where the render's extra CPU went, as shares of the plain re-encode's: Node (painting,
      // reading back, the pipe) and ffmpeg (conversion, overlay, x264 on the captions).
      nodeShares.push(r.nodeCpu / cpuOf(q));
      ffmpegShares.push((r.ffmpegCpu - q.ffmpegCpu) / cpuOf(q));
      wallRatios.push(r.wall / q.wall);
      walls.push(r.wall);
      if (t && flags.floor) {
        const [q2, f] = await besidePlain('replay', t.id);
        floorRatios.push(cpuOf(f) / cpuOf(q2));
      }
    }
    const c = spread(cpuRatios);
    const w = spread(wallRatios);
    const name = t ? t.id : 'plain (control)';
    const line =
      `${name.padEnd(17)} wall ${spread(walls).median.toFixed(1).padStart(5)} s  wall ratio ${fmt(w)}` +
      `  CPU ratio ${fmt(c)}  ${String(frames).padStart(4)} images` +
      `  node +${pct(spread(nodeShares).median)} ffmpeg ${sign(spread(ffmpegShares).median)}  ${t ? (c.median <= 1.05 ? 'ok' : 'over 1.05') : ''}` +
      (floorRatios.length ? `  floor ${fmt(spread(floorRatios))}` : '');
    console.log(line);
    table.push(line);
  }
  const l = spread(loads);
  console.log(
    `\nbench:render --all: ${size.width}x${size.height} ${info.durationSeconds.toFixed(0)} s, ${format}, ` +
      `${rounds} rounds per template, plain and render side by side in each round,`,
  );
  console.log(
    `render / plain re-encode of the same clip in the same round, median (min-max), and the medians of the ` +
      `render's Node CPU and of its extra ffmpeg CPU, as shares of the plain re-encode's; goal: CPU ratio <= 1.05. Load average ${l.lo.toFixed(1)}-${l.hi.toFixed(1)} on ${availableParallelism()} cores`,
  );
  if (flags.floor) {
    console.log(
      `floor: the render's ffmpeg alone (its caption stream painted beforehand and read from a file) against a plain re-encode beside it: ` +
        `overlaying and encoding the captions, with nothing of Node's painting, reading back, converting or sending`,
    );
  }
  for (const line of table) console.log(`  ${line}`);
  process.exit(0);
}
await warmUp();
for (let i = 0; i < rounds; i++) {
  plain.push(await measure(() => reencodeVideo({ input: source, output: out, format, quality: 'medium', encoder, source: info })));
  render.push(
    await measure(async () => {
      const r = await renderVideo({ input: source, output: out, painter: countingPainter, format, quality: 'medium', encoder, source: info });
      usedEncoder = r.encoder;
    }),
  );
}
await rm(out, { force: true });

const sum = (xs: Sample[], k: keyof Sample): number => xs.reduce((a, s) => a + s[k], 0);
const row = (name: string, xs: Sample[]): string => {
  const wall = sum(xs, 'wall') / xs.length;
  const ff = sum(xs, 'ffmpegCpu') / xs.length;
  const node = sum(xs, 'nodeCpu') / xs.length;
  return (
    `${name.padEnd(8)} wall ${wall.toFixed(2).padStart(6)} s   CPU ${(ff + node).toFixed(2).padStart(6)} ` +
    `s (ffmpeg ${ff.toFixed(2)}, node ${node.toFixed(2)})   ${(info.durationSeconds / wall).toFixed(2)}x ` +
    `realtime`
  );
};
const cpu = (xs: Sample[]): number => sum(xs, 'ffmpegCpu') + sum(xs, 'nodeCpu');
console.log(
  `\n${size.width}x${size.height} ${info.fps} fps ${info.durationSeconds.toFixed(1)} s, ` +
    `${format}/${usedEncoder}, template ${template.id}, ${words.length} words, ${captionFrames} caption ` +
    `images sent, ${rounds} rounds (mean)`,
);
console.log(row('plain', plain));
console.log(row('render', render));
console.log(`ratio    CPU ${(cpu(render) / cpu(plain)).toFixed(3)}   wall ${(sum(render, 'wall') / sum(plain, 'wall')).toFixed(3)}   (goal on CPU: <= 1.05)`);
console.log(`rounds   CPU ratios ${render.map((r, i) => ((r.ffmpegCpu + r.nodeCpu) / (plain[i]!.ffmpegCpu + plain[i]!.nodeCpu)).toFixed(3)).join(' ')}`);

/** Font registration, NVENC detection, JIT and page cache: a small render before measuring. */
async function warmUp(): Promise<void> {
  const scratch = join(work, `warm-${process.pid}.${format}`);
  await renderVideo({
    input: source,
    output: scratch,
    painter: countingPainter,
    format,
    quality: 'medium',
    encoder,
    source: info,
    resolution: { width: 320, height: 568 },
  });
  await rm(scratch, { force: true });
}

/**
 * --only replay: the caption stream renderVideo would send ffmpeg (the same painter, images and
 * Matroska framing), written to a file, and the render's ffmpeg arguments with that file in
 * place of the pipe. Writing it counts the images (captionFrames).
 */
async function captionStreamFile(): Promise<{ file: string; args: string[] }> {
  const size = planOutputSize({ source: info });
  const painter = countingPainter({ ...size, fps: info.fps });
  const frames = planCaptionFrames({ keyAt: (t) => painter.keyAt(t), durationSeconds: info.durationSeconds, fps: info.fps });
  const pixelFormat = bandPixelFormat({ format });
  const { width, height } = painter.band;
  const file = join(work, `captions-${process.pid}.mkv`);
  const images = bandImages(painter, frames, pixelFormat);
  const fh = await open(file, 'w');
  try {
    await fh.write(matroskaHeader({ width, height, pixelFormat }));
    for (const frame of frames) {
      const image = images.next().value!;
      await fh.writev([matroskaFramePrefix(Math.floor(frame.start * 1e6), image.length), image]);
    }
  } finally {
    await fh.close();
  }
  const args = renderArgs({
    input: source,
    output: out,
    format,
    quality: 'medium',
    encoder: await pickEncoder(format, encoder, false),
    source: info,
    out: size,
    sourceAudioCodec: info.hasAudio ? info.audioCodec : null,
    band: painter.band,
  });
  return { file, args: args.map((a) => (a === 'pipe:3' ? file : a)) };
}

/** The render's ffmpeg run on a caption stream file, as renderVideo runs it (niceness, malloc settings), and its output probed as renderVideo does. */
async function replayRender(args: string[]): Promise<void> {
  const { exitCode, stderrTail } = await runFf({ bin: 'ffmpeg', args, nice: ENCODE_NICE }).done;
  if (exitCode !== 0) throw new Error(`replay: ffmpeg exit ${exitCode}: ${stderrTail}`);
  await probeMedia(out);
}

/** espeak-ng word onsets (ms) from en.words; a word ends at the next onset. Synthetic 0.35 s words when absent. */
function loadWords(limit: number): Word[] {
  const file = join(media, 'en.words');
  if (!existsSync(file)) {
    return Array.from({ length: Math.floor(limit / 0.35) }, (_, i) => ({ text: `word${i}`, start: i * 0.35, end: i * 0.35 + 0.3, confidence: 1 }));
  }
  const rows = readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .map((l) => l.split('\t'))
    // The last row is the reading's end (onset, length, pitch), with no word.
    .filter((r) => r[3] !== undefined);
  return rows
    .map(([onset, , , text], i) => {
      const start = Number(onset) / 1000;
      const next = rows[i + 1] ? Number(rows[i + 1]![0]) / 1000 : start + 0.4;
      return { text: text!, start, end: Math.max(start + 0.05, next - 0.02), confidence: 1 };
    })
    .filter((w) => w.end <= limit);
}

function raise(message: string): never {
  throw new Error(message);
}
