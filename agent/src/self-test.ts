import { randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream, existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { getBuiltinTemplate } from '@captionfarm/captions';
import type { LeasedJob } from '@captionfarm/contracts';
import { nvencStatus } from '@captionfarm/renderer';
import { createSafeFetch } from '@captionfarm/net';
import { runToEnd } from '@captionfarm/process';
import { espeakPath, ffmpegPaths, pocketsphinxPaths } from '@captionfarm/process/tools';
import type { HardwarePlan, Hardware } from './hardware.ts';
import { runPipeline, type JobChannel, type Transcriber } from './pipeline.ts';

const REBUILD_HINT = 'rebuild with scripts/build-whisper where nvcc is installed';

export interface WhisperBuild {
  /** Directory of whisper-server, or null when there is no build. */
  binDir: string | null;
  cuda: boolean;
  /** What the build was made with (build-info.json), for the report. */
  detail: string;
}

export interface SelfTestReport {
  whisper: { build: 'CUDA' | 'CPU' | 'missing'; device: string; threads: number; detail: string };
  /** The whisper model the agent would run, and why (chooseModel). */
  model?: { name: string; path: string; why: string };
  nvenc: { available: boolean; reason: string };
  x264Threads: number;
  slots: number;
  slotsWhy: string;
  /** How word starts are timed: English by PocketSphinx where it is installed (its folder), else TTS alignment. */
  englishOnsets: string;
  /** Seconds of media per second of wall time, per stage of the one local job. */
  stages?: { ingest: number; transcribe: number; render: number; upload: number; whole: number; mediaSeconds: number; words: number };
  jobError?: string;
}

/**
 * A speech clip for the local job: the JFK sample that ships inside the `nodejs-whisper` npm
 * package (the whisper.cpp source we build from), else espeak-ng when installed, else a tone
 * (transcription then measures only the VAD pass, and the report says so).
 */
export async function speechSource(dir: string): Promise<{ args: string[]; what: string }> {
  try {
    const pkg = path.dirname(createRequire(import.meta.url).resolve('nodejs-whisper/package.json'));
    for (const f of ['cpp/whisper.cpp/samples/jfk.mp3', 'cpp/whisper.cpp/samples/jfk.wav']) {
      const p = path.join(pkg, f);
      if (existsSync(p)) return { args: ['-stream_loop', '-1', '-i', p], what: 'JFK sample (nodejs-whisper)' };
    }
  } catch {
    /* not installed: next option */
  }
  try {
    const wav = path.join(dir, 'speech.wav');
    await runToEnd(espeakPath(), { args: ['-w', wav, 'This is the captionfarm self test. Every stage of one job is timed against the length of the video.'] });
    return { args: ['-stream_loop', '-1', '-i', wav], what: 'espeak-ng speech' };
  } catch {
    return { args: ['-f', 'lavfi', '-i', 'sine=f=440:r=16000'], what: 'a 440 Hz tone (no speech source found: transcription timing covers only the VAD pass)' };
  }
}

/**
 * ffmpeg args for a 30 fps test clip (default 1080x1920): testsrc2 under `audio` (input args: a speech file
 * looped, or a lavfi source), cut to `seconds`, H.264 + AAC in mp4. The self-test and the benches
 * (bench:gpu, bench:e2e, bench:render) make their clips with it. Default preset ultrafast (the self-test times
 * the job, not the clip); the benches ask for veryfast at CRF 20, closer to a real upload.
 */
export function testClipArgs(o: {
  seconds: number;
  audio: readonly string[];
  output: string;
  size?: { width: number; height: number };
  preset?: string;
  crf?: number;
}): string[] {
  return [
    '-y',
    '-hide_banner',
    '-loglevel',
    'error',
    '-f',
    'lavfi',
    '-i',
    `testsrc2=s=${o.size?.width ?? 1080}x${o.size?.height ?? 1920}:r=30:d=${o.seconds}`,
    ...o.audio,
    '-map',
    '0:v',
    '-map',
    '1:a',
    '-t',
    String(o.seconds),
    '-c:v',
    'libx264',
    '-preset',
    o.preset ?? 'ultrafast',
    ...(o.crf === undefined ? [] : ['-crf', String(o.crf)]),
    '-pix_fmt',
    'yuv420p',
    '-c:a',
    'aac',
    '-b:a',
    '128k',
    o.output,
  ];
}

/** A one-shot local HTTP server: GET serves the source, PUT stores the output (the agent's own ingest/upload code runs). */
async function localStore(source: string, outDir: string): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    if (req.method === 'GET' && req.url === '/source.mp4') {
      res.writeHead(200, { 'content-type': 'video/mp4' });
      createReadStream(source).pipe(res);
    } else if (req.method === 'PUT' && req.url === '/output') {
      pipeline(req, createWriteStream(path.join(outDir, 'output.mp4'))).then(
        () => res.writeHead(200).end(),
        () => res.writeHead(500).end(),
      );
    } else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

/** The self-test's job: the clip at `sourceUrl`, template karaoke, mp4 high, English. */
function selfTestJob(sourceUrl: string, sizeBytes: number): LeasedJob {
  return {
    jobId: randomUUID(),
    leaseId: 'self-test',
    attempt: 1,
    leaseExpiresAt: new Date(Date.now() + 3_600_000).toISOString(),
    deadlineAt: null,
    source: { kind: 'upload', url: sourceUrl, sizeBytes },
    templateId: 'karaoke',
    template: getBuiltinTemplate('karaoke'),
    format: 'mp4',
    quality: 'high',
    overlay: false,
    fonts: [],
    resolution: null,
    language: 'en',
    transcript: null,
    vocabulary: [],
    replacements: [],
    maxInputSeconds: 600,
    frameBudget: 1080 * 1920,
    maxSourceBytes: 2 ** 31,
    edit: null,
    hookTitle: null,
    profanity: 'off',
    profanityWords: [],
    outputs: [],
    safeArea: 'none',
    placement: 'fixed',
    poster: null,
    subtitles: 'burn',
  };
}

/** What this machine will use (whisper build and device, NVENC or why not, x264 threads, slots), printed and reported. */
async function describeMachine(
  o: { hardware: Hardware; plan: HardwarePlan; whisper: WhisperBuild; model?: { name: string; path: string; why: string } | undefined },
  print: (line: string) => void,
): Promise<SelfTestReport> {
  const { hardware: hw, plan, whisper } = o;
  const gpu = hw.gpus[0];
  const build = whisper.binDir === null ? 'missing' : whisper.cuda ? 'CUDA' : 'CPU';
  const device =
    build === 'missing'
      ? 'none (run "bash scripts/build-whisper")'
      : build === 'CUDA'
        ? gpu
          ? `GPU 0: ${gpu.name} (${Math.round(gpu.memoryMiB / 1024)} GiB)`
          : 'CPU: built with CUDA but no NVIDIA GPU answers nvidia-smi, whisper falls back to the CPU'
        : `CPU (${hw.cores} cores)${gpu ? `; ${gpu.name} is present but this build has no CUDA: ${REBUILD_HINT}` : ''}`;
  const nvenc = await nvencStatus();
  const sphinx = pocketsphinxPaths();
  const englishOnsets = sphinx
    ? `PocketSphinx forced alignment (${sphinx.program})`
    : 'TTS alignment: PocketSphinx is not installed (run "bash scripts/build-pocketsphinx" or set POCKETSPHINX_DIR; onsets p90 300 ms instead of 140)';
  const report: SelfTestReport = {
    whisper: { build, device, threads: plan.whisperThreads, detail: whisper.detail },
    nvenc,
    x264Threads: plan.x264Threads,
    slots: plan.slots,
    slotsWhy: plan.why,
    englishOnsets,
    ...(o.model ? { model: o.model } : {}),
  };
  print(
    `machine:   ${hw.cores} cores, ${(hw.memoryBytes / 2 ** 30).toFixed(1)} GiB, ${hw.gpus.length ? hw.gpus.map((g) => g.name).join(', ') : 'no NVIDIA GPU'}`,
  );
  print(`whisper:   ${build} build${whisper.detail ? ` (${whisper.detail})` : ''}`);
  print(`           device ${device}, ${plan.whisperThreads} threads`);
  if (o.model) print(`model:     ${o.model.name} (${o.model.path}): ${o.model.why}`);
  print(`onsets:    English by ${englishOnsets}`);
  print(`nvenc:     ${nvenc.available ? 'available' : `missing: ${nvenc.reason}`}`);
  print(`x264:      ${plan.x264Threads} threads${nvenc.available ? ' (used for webm and when NVENC refuses a session)' : ' (every core: no NVENC)'}`);
  print(`slots:     ${plan.slots} (${plan.why})`);
  print(`stages:    ${plan.overlap ? 'overlapped: the render starts with the first final words' : 'one after the other'} (${plan.overlapWhy})`);
  return report;
}

/**
 * What this machine will use (whisper build and device, NVENC or why not, x264 threads, slots),
 * then one 10 s 1080x1920 job through the agent's real pipeline (download, probe, whisper,
 * caption render, upload) against local files, with each stage's realtime factor.
 */
export async function selfTest(o: {
  hardware: Hardware;
  plan: HardwarePlan;
  whisper: WhisperBuild;
  transcriber: Transcriber | null;
  /** The model chosen for this machine (chooseModel), reported under whisper. */
  model?: { name: string; path: string; why: string };
  seconds?: number;
  workDir?: string;
  print?: (line: string) => void;
}): Promise<SelfTestReport> {
  const print = o.print ?? ((l: string) => process.stdout.write(`${l}\n`));
  const { plan } = o;
  const report = await describeMachine(o, print);
  if (!o.transcriber) {
    report.jobError = 'no whisper.cpp build: the local job was not run';
    print(`job:       skipped, ${report.jobError}`);
    return report;
  }

  const seconds = o.seconds ?? 10;
  const dir = await mkdtemp(path.join(o.workDir ?? os.tmpdir(), 'cf-self-test-'));
  let store: { server: Server; url: string } | undefined;
  try {
    const speech = await speechSource(dir);
    const clip = path.join(dir, 'clip.mp4');
    await runToEnd(ffmpegPaths().ffmpeg, { args: testClipArgs({ seconds, audio: speech.args, output: clip }) });
    print(`job:       ${seconds} s 1080x1920 30 fps clip with ${speech.what}, template karaoke, mp4 high`);
    store = await localStore(clip, dir);
    const marks: [string, number][] = [['start', performance.now()]];
    const mark = (name: string) => marks.push([name, performance.now()]);
    let words = 0;
    const transcriber = o.transcriber;
    const counting: Transcriber = {
      async transcribe(req) {
        const r = await transcriber.transcribe(req);
        words = r.words.length;
        return r;
      },
    };
    const channel: JobChannel = {
      async phase(phase) {
        if (phase !== 'ingesting') mark(phase);
      },
      percent() {},
      async ingested() {
        return { ok: true };
      },
      async transcribed() {
        return { ok: true };
      },
      async outputUploadUrl() {
        mark('upload');
        return `${store!.url}/output`;
      },
      async complete() {
        mark('done');
        return { ok: true };
      },
    };
    const job = selfTestJob(`${store.url}/source.mp4`, (await stat(clip)).size);
    await runPipeline(
      job,
      channel,
      {
        workDir: dir,
        transcriber: counting,
        safeFetch: createSafeFetch(),
        encoder: 'auto',
        x264Threads: plan.x264Threads,
        overlap: plan.overlap,
        whisperThreadsBesideRender: plan.whisperThreadsBesideRender,
      },
      new AbortController().signal,
    );
    const at = new Map(marks);
    const span = (a: string, b: string) => (at.get(b)! - at.get(a)!) / 1000;
    const rtf = (s: number) => seconds / Math.max(s, 1e-3);
    const t = {
      ingest: span('start', 'transcribing'),
      transcribe: span('transcribing', 'rendering'),
      render: span('rendering', 'upload'),
      upload: span('upload', 'done'),
      whole: span('start', 'done'),
    };
    report.stages = {
      ingest: rtf(t.ingest),
      transcribe: rtf(t.transcribe),
      render: rtf(t.render),
      upload: rtf(t.upload),
      whole: rtf(t.whole),
      mediaSeconds: seconds,
      words,
    };
    for (const k of ['ingest', 'transcribe', 'render', 'upload', 'whole'] as const) {
      print(
        `  ${k.padEnd(10)} ${t[k].toFixed(2).padStart(7)} s  ${rtf(t[k]).toFixed(1).padStart(7)}x realtime${k === 'transcribe' ? `  (${words} words)` : ''}`,
      );
    }
  } catch (err) {
    report.jobError = (err as Error).message;
    print(`job:       FAILED: ${report.jobError}`);
  } finally {
    store?.server.close();
    await rm(dir, { recursive: true, force: true });
  }
  return report;
}
