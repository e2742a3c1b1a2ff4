/**
 * bench:gpu — what a GPU machine gives a Captionfarm agent, in three measurements on one machine:
 *   1. whisper.cpp with CUDA against the CPU build: whisper-cli on the same 60 s of speech, same model;
 *   2. encoder throughput on a 60 s 1080x1920 30 fps clip: libx264 veryfast on every core (and on
 *      fewer threads, to show the scaling), h264_nvenc when the GPU has an encoder (else why not);
 *   3. the whole job (upload .. succeeded) for that clip through a real control plane and an agent
 *      planned from this machine's hardware (slots, threads, CUDA whisper, NVENC or x264), with each
 *      stage's seconds as the agent reported them (the control plane's phase histogram on /metrics).
 * Normally started by `npm run bench:gpu` (scripts/bench/gpu builds what is missing first).
 *
 *   tsx scripts/bench/gpu.ts --cpu-whisper DIR [--cuda-whisper DIR] --model ggml-base.bin [--seconds 60] [--runs 3]
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { runToEnd } from '@captionfarm/process';
import { wavArgs, whisperCliArgs } from './baseline.ts';
import { detectHardware, planHardware, speechSource, testClipArgs } from '@captionfarm/agent';
import { nvencStatus } from '@captionfarm/renderer';
import { ffmpegPaths } from '@captionfarm/process/tools';
import { audioEncoderArgs, muxerArgs, videoEncoderArgs } from '../../packages/renderer/src/encoder-args.ts';
import { JOB_STAGES, jobStageSeconds, startFarm, submitUpload, terminal, watchJob } from '../../agent/test/e2e-harness.ts';

/** A tool run to its end through the process module (execa, setpriv prefix); rejects on a non-zero exit. */
const run = (binary: string, args: string[]) => runToEnd(binary, { args });
const { values } = parseArgs({
  options: {
    'cpu-whisper': { type: 'string' },
    'cuda-whisper': { type: 'string' },
    model: { type: 'string' },
    seconds: { type: 'string', default: '60' },
    runs: { type: 'string', default: '3' },
  },
});
if (!values['cpu-whisper'] || !values.model) throw new Error('usage: gpu.ts --cpu-whisper DIR [--cuda-whisper DIR] --model FILE (npm run bench:gpu does this)');
const seconds = Number(values.seconds);
const runs = Number(values.runs);
const ffmpeg = ffmpegPaths().ffmpeg;

async function time(fn: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  await fn();
  return (performance.now() - t0) / 1000;
}
const median = (a: number[]) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)]!;
const spread = (a: number[]) => `median ${median(a).toFixed(2)} s, range ${Math.min(...a).toFixed(2)}-${Math.max(...a).toFixed(2)} s over ${a.length}`;

const hw = await detectHardware();
const nvenc = await nvencStatus();
const plan = planHardware(hw, { cudaWhisper: Boolean(values['cuda-whisper']), nvenc: nvenc.available });
console.log(`bench:gpu on ${hw.cores} cores, ${(hw.memoryBytes / 2 ** 30).toFixed(0)} GiB, ${hw.gpus.map((g) => g.name).join(', ') || 'no NVIDIA GPU'}`);
console.log(
  `  plan: ${plan.slots} slots, x264 ${plan.x264Threads} threads, whisper ${plan.whisperThreads} threads; NVENC ${nvenc.available ? 'available' : `missing: ${nvenc.reason}`}`,
);

const dir = await mkdtemp(path.join(os.tmpdir(), 'cf-bench-gpu-'));
try {
  const speech = await speechSource(dir);
  const clip = path.join(dir, 'clip.mp4');
  await run(ffmpeg, testClipArgs({ seconds, audio: speech.args, output: clip, preset: 'veryfast', crf: 20 }));
  const wav = path.join(dir, 'audio.wav');
  await run(ffmpeg, wavArgs(clip, wav));
  console.log(`  clip: ${seconds} s 1080x1920 30 fps, ${speech.what}, model ${path.basename(values.model)}\n`);

  // 1. whisper: the same whisper-cli arguments as bench:e2e's hand-made baseline (beam 5, word timestamps).
  const whisper = (bin: string, threads: number) =>
    run(path.join(bin, 'whisper-cli'), whisperCliArgs({ model: values.model!, wav, threads, outBase: path.join(dir, 'words') }));
  console.log('1. whisper.cpp, whisper-cli, same audio and model');
  const cpuThreads = Math.min(8, hw.cores);
  const cpu: number[] = [];
  for (let i = 0; i < runs; i++) cpu.push(await time(() => whisper(values['cpu-whisper']!, cpuThreads)));
  console.log(`   CPU  build, ${cpuThreads} threads: ${spread(cpu)}  -> ${(seconds / median(cpu)).toFixed(1)}x realtime`);
  if (values['cuda-whisper']) {
    await whisper(values['cuda-whisper'], 4); // first CUDA context and kernel load, not counted
    const cuda: number[] = [];
    for (let i = 0; i < runs; i++) cuda.push(await time(() => whisper(values['cuda-whisper']!, 4)));
    console.log(
      `   CUDA build, 4 threads:  ${spread(cuda)}  -> ${(seconds / median(cuda)).toFixed(1)}x realtime; ` +
        `CUDA is ${(median(cpu) / median(cuda)).toFixed(1)}x the CPU build`,
    );
  } else {
    console.log('   CUDA build: none (no nvcc on this machine): CPU path only');
  }

  // 2. encoders: the agent's own x264 arguments at every core, then fewer threads; NVENC when it works.
  console.log(`\n2. encoder throughput, 1080x1920 ${seconds} s re-encode (the agent's encoder arguments)`);
  const encode = (encoder: 'cpu' | 'nvenc', threads?: number) =>
    run(ffmpeg, [
      '-y',
      '-loglevel',
      'error',
      '-i',
      clip,
      ...videoEncoderArgs({ format: 'mp4', quality: 'high', encoder, threads }),
      ...audioEncoderArgs({ format: 'mp4', sourceAudioCodec: 'aac' }),
      ...muxerArgs('mp4'),
      path.join(dir, 'plain.mp4'),
    ]);
  const threadCounts = [...new Set([hw.cores, Math.max(1, hw.cores >> 1), Math.max(1, hw.cores >> 2)])];
  for (const threads of threadCounts) {
    const t: number[] = [];
    for (let i = 0; i < runs; i++) t.push(await time(() => encode('cpu', threads)));
    console.log(`   libx264 veryfast, ${String(threads).padStart(2)} threads: ${spread(t)}  -> ${((seconds * 30) / median(t)).toFixed(0)} fps`);
  }
  if (nvenc.available) {
    const t: number[] = [];
    for (let i = 0; i < runs; i++) t.push(await time(() => encode('nvenc')));
    console.log(`   h264_nvenc p4:              ${spread(t)}  -> ${((seconds * 30) / median(t)).toFixed(0)} fps`);
  } else {
    console.log(`   h264_nvenc: missing (${nvenc.reason}); the agent uses x264 on all ${hw.cores} cores`);
  }

  // 3. the whole job, the agent planned from this machine (CUDA whisper when built: `current` points at it).
  console.log(
    `\n3. whole job (upload .. succeeded), karaoke, mp4 high, agent: ${plan.slots} slots, x264 ` +
      `${plan.x264Threads} threads, whisper ${plan.whisperThreads} threads`,
  );
  const bytes = await readFile(clip);
  const whole: number[] = [];
  const stages = new Map<string, number[]>(JOB_STAGES.map((k) => [k, []]));
  // The agent's transcriber finds whisper.cpp through WHISPER_CPP_DIR: the CUDA build when there is one.
  process.env.WHISPER_CPP_DIR = values['cuda-whisper'] ?? values['cpu-whisper'];
  for (let i = 0; i < runs; i++) {
    const farm = await startFarm();
    try {
      await farm.startAgent({ model: values.model, concurrency: plan.slots, threads: plan.whisperThreads, encoder: 'auto', x264Threads: plan.x264Threads });
      const { api } = await farm.account('pro', 'bench');
      let status = '';
      whole.push(
        await time(async () => {
          const created = await submitUpload(api, bytes, { language: 'en', templateId: 'karaoke' });
          const r = await watchJob(api, created.id, terminal, 1_800_000);
          status = `${r.job.status}${r.job.failureReason ? `: ${r.job.failureReason}` : ''}`;
        }),
      );
      if (!status.startsWith('succeeded')) throw new Error(`bench job ended ${status}`);
      const t = await jobStageSeconds(farm);
      for (const k of JOB_STAGES) stages.get(k)!.push(t[k]);
    } finally {
      await farm.close();
    }
  }
  console.log(`   ${spread(whole)}  -> ${(seconds / median(whole)).toFixed(1)}x realtime`);
  // The agent overlaps stages (audio extraction during the download), so the stages can add up to more than the whole.
  for (const k of JOB_STAGES) {
    const t = stages.get(k)!;
    console.log(`   ${k.padEnd(10)} ${spread(t)}  -> ${(seconds / Math.max(median(t), 1e-3)).toFixed(1)}x realtime`);
  }
} finally {
  await rm(dir, { recursive: true, force: true });
}
