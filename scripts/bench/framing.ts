/**
 * npm run bench:framing [-- --rounds 3 --seconds 60 --sample-fps 4 --threads 1]
 *
 * Issue 43's cost target: the reframe analysis (analyzeFraming) at most 15% of the plain
 * re-encode's CPU time on a 60 s 1080p clip. Both sides run in this process, one after the other,
 * alternating which goes first from round to round; each side's CPU is ffmpeg's (cutime + cstime
 * from /proc/self/stat, once the child is waited for) plus Node's (process.cpuUsage: the face
 * detector runs on Node's thread). Prints each round and the ratio's median (min-max).
 *
 *   plain    = reencodeVideo (packages/renderer) of the clip at its own size (1920x1080) to mp4,
 *              quality high, CPU encoder (the renderer refuses 1080x1920 from a 1080p source: it never
 *              upscales); with --vertical also the 9:16 centre crop at the source's height (608x1080)
 *   analysis = analyzeFraming of the same clip (default 4 samples a second), ffmpeg decoding on
 *              --threads threads: 1 by default, what an agent with whisper on the CPU uses (the
 *              hardware plan's analysisThreads); 0 for ffmpeg's choice, a CUDA-whisper agent's
 *
 * The clip: 60 s of 1920x1080 at 30 fps built from real photographs (packages/framing/test/clips.ts:
 * the astronaut over a blurred photo, a shot change every 10 s, the face drifting within shots, a
 * camera's grain), x264 veryfast at 12 Mbit/s (a phone records 1080p30 at 12-20), cached in the
 * temp dir. Needs scripts/face-photos.sh.
 */
import { existsSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { analyzeFraming } from '@captionfarm/framing';
import { probeMedia, reencodeVideo } from '@captionfarm/renderer';
import { makeClip, type ShotSpec } from '../../packages/framing/test/clips.ts';
import { childCpuSeconds } from './cpu.ts';

const { values: flags } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    seconds: { type: 'string', default: '60' },
    'sample-fps': { type: 'string', default: '4' },
    threads: { type: 'string', default: '1' },
    vertical: { type: 'boolean', default: false },
    /** One side once (after the warm-up), for a look at its cost alone. */
    only: { type: 'string' },
  },
});
const rounds = Number(flags.rounds);
const seconds = Number(flags.seconds);
const sampleFps = Number(flags['sample-fps']);
const threads = Number(flags.threads) || undefined;

const work = join(tmpdir(), 'captionfarm-bench-framing');
await mkdir(work, { recursive: true });
const name = `faces-1920x1080-${seconds}s.mp4`;
const source = join(work, name);
if (!existsSync(source)) {
  console.log(`making ${source} ...`);
  const shots: ShotSpec[] = [];
  const places = [
    { x: 640, y: 420 },
    { x: 1300, y: 480 },
    { x: 960, y: 400 },
  ];
  for (let i = 0; i * 10 < seconds; i++) {
    const at = places[i % places.length]!;
    shots.push({
      frames: Math.round(Math.min(10, seconds - i * 10) * 30),
      background: i % 2 ? 'rocket.jpg' : 'coffee.png',
      face: { from: at, to: { x: at.x + 80, y: at.y + 30 } },
    });
  }
  // Set-up, not measured; cached between runs.
  await makeClip(work, name, { width: 1920, height: 1080, fps: 30, scale: 1.40625, shots, grain: 4, preset: 'veryfast', kbps: 12_000 });
}
const info = await probeMedia(source);

interface Sample {
  wall: number;
  cpu: number;
  /** Of which Node's own (the face detector, the salient region). */
  node: number;
}

async function measure(fn: () => Promise<unknown>): Promise<Sample> {
  const c0 = childCpuSeconds();
  const n0 = process.cpuUsage();
  const t0 = performance.now();
  await fn();
  const n = process.cpuUsage(n0);
  const node = (n.user + n.system) / 1e6;
  return { wall: (performance.now() - t0) / 1000, cpu: childCpuSeconds() - c0 + node, node };
}

const out = join(work, `out-${process.pid}.mp4`);
const reencode = (resolution?: { width: number; height: number }) => () =>
  reencodeVideo({ input: source, output: out, format: 'mp4', quality: 'high', encoder: 'cpu', resolution, source: info });
const plain = reencode();
const vertical = reencode({ width: 608, height: 1080 });
let faces = 0;
let samples = 0;
let shots = 0;
const analysis = async () => {
  const a = await analyzeFraming({ input: source, source: info, sampleFps, threads });
  samples = a.samples.length;
  faces = a.samples.filter((s) => s.faces.length).length;
  shots = a.shots.length;
};

// Warm-up: the model's load, the JIT, the page cache.
await analyzeFraming({ input: source, source: info, sampleFps: 1 });
if (flags.only) {
  const side = { analysis, plain, vertical }[flags.only];
  if (!side) throw new Error(`--only analysis|plain|vertical, not "${flags.only}"`);
  const s = await measure(side);
  console.log(
    `${flags.only}: ${s.cpu.toFixed(2)} CPU-s (Node ${s.node.toFixed(2)}), wall ${s.wall.toFixed(1)} s; ${samples} samples, ${faces} with a face, ${shots} shot changes`,
  );
  process.exit(0);
}
const ratios: number[] = [];
const verticalRatios: number[] = [];
const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
/** A ratio's median (min-max). */
const spread = (xs: number[]) => {
  const sorted = [...xs].sort((a, b) => a - b);
  return `${pct(sorted[Math.floor(sorted.length / 2)]!)} (${pct(sorted[0]!)}-${pct(sorted.at(-1)!)})`;
};
for (let i = 0; i < rounds; i++) {
  const load = loadavg()[0]!;
  const pair: Sample[] = [];
  if (i % 2 === 0) pair.push(await measure(plain), await measure(analysis));
  else {
    const a = await measure(analysis);
    pair.push(await measure(plain), a);
  }
  const [p, a] = pair as [Sample, Sample];
  ratios.push(a.cpu / p.cpu);
  let v = '';
  if (flags.vertical) {
    const s = await measure(vertical);
    verticalRatios.push(a.cpu / s.cpu);
    v = `; 608x1080 re-encode ${s.cpu.toFixed(2)} CPU-s, ratio ${pct(a.cpu / s.cpu)}`;
  }
  console.log(
    `round ${i + 1}: plain ${p.cpu.toFixed(2)} CPU-s (wall ${p.wall.toFixed(1)} s), analysis ${a.cpu.toFixed(2)} CPU-s (Node ${a.node.toFixed(2)}, wall ${a.wall.toFixed(1)} s), ` +
      `ratio ${pct(a.cpu / p.cpu)}${v}; ${samples} samples, ${faces} with a face, ${shots} shot changes; load ${load.toFixed(2)}`,
  );
}
await rm(out, { force: true });
console.log(
  `analysis (${threads ?? "ffmpeg's choice of"} decoding threads) / plain re-encode (1920x1080) CPU: ${spread(ratios)} over ${rounds} rounds; target <= 15%`,
);
if (flags.vertical) console.log(`analysis / 608x1080 re-encode CPU: ${spread(verticalRatios)}`);
