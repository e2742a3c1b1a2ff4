import os from 'node:os';
import { processingDeadlineMs } from '@captionfarm/contracts';
import { runToEnd } from '@captionfarm/process';

/** One NVIDIA GPU as nvidia-smi reports it. */
export interface GpuInfo {
  name: string;
  memoryMiB: number;
}

/** What an agent machine has, read once at start. */
export interface Hardware {
  cores: number;
  memoryBytes: number;
  gpus: GpuInfo[];
}

/** How an agent uses that hardware. */
export interface HardwarePlan {
  /** Jobs leased at once. */
  slots: number;
  /** libx264 threads per job (unused by NVENC jobs). */
  x264Threads: number;
  /**
   * Overlapped stages (pipeline.ts): the render starts with the first final words (on unless
   * configured off; on CPU whisper with `whisperThreadsBesideRender`).
   */
  overlap: boolean;
  overlapWhy: string;
  /** whisper.cpp threads of the agent's one whisper-server (CPU work; with CUDA it mostly feeds the GPU). */
  whisperThreads: number;
  /**
   * With overlap on CPU whisper: its threads once the render runs beside it (half, at least 1);
   * undefined with CUDA whisper (the GPU does the work, the threads only feed it).
   */
  whisperThreadsBesideRender: number | undefined;
  /**
   * ffmpeg's decoding threads for the picture's analysis (issue 43; it runs beside recognition):
   * 1 with CPU whisper, which has the other cores (one thread decodes the same frames for 15% less
   * CPU than ffmpeg's frame threads: 10.6 against 12.4 CPU-s on a 60 s 1080p clip, and still ends
   * before recognition does); undefined (ffmpeg's choice, the shortest wall time) with CUDA whisper.
   */
  analysisThreads: number | undefined;
  /** Why the numbers are what they are, for the self-test and the agent's start line. */
  why: string;
}

/**
 * GPUs from `nvidia-smi` (the driver's own tool; absent or failing means none usable). CUDA's
 * runtime would say the same, but linking it into Node is what we keep out of the agent.
 */
export async function detectGpus(nvidiaSmi = 'nvidia-smi'): Promise<GpuInfo[]> {
  try {
    const { stdout } = await runToEnd(nvidiaSmi, {
      args: ['--query-gpu=name,memory.total', '--format=csv,noheader,nounits'],
      signal: AbortSignal.timeout(10_000),
    });
    return stdout
      .split('\n')
      .map((l) => l.trim())
      .filter(Boolean)
      .map((l) => {
        const i = l.lastIndexOf(',');
        return { name: l.slice(0, i).trim(), memoryMiB: Number(l.slice(i + 1)) };
      })
      .filter((g) => g.name && Number.isFinite(g.memoryMiB));
  } catch {
    return [];
  }
}

export async function detectHardware(): Promise<Hardware> {
  return { cores: os.availableParallelism(), memoryBytes: os.totalmem(), gpus: await detectGpus() };
}

/** Memory one job needs at peak: ffmpeg decoding + encoding 1080x1920 (~0.6 GB) and the job's share of whisper. */
const JOB_MEMORY_BYTES = 1.5 * 2 ** 30;
/** Kept for the OS, the agent process and whisper's model. */
const RESERVED_MEMORY_BYTES = 1 * 2 ** 30;

/**
 * The default concurrency and thread counts for this machine.
 *
 * - Slots: at least 2, so one job's serial stretches (download, probe, model-bound transcription
 *   on one whisper-server, upload, the single-threaded caption painter) overlap another job's
 *   encode, which runs at niceness 10 so that it takes only what the transcription leaves
 *   (renderer's ENCODE_NICE: two 20 s jobs on 2 cores, 2 slots / 1 slot median 0.971 over 12
 *   runs with it, 0.998-1.078 without); then one per 4 cores, so each x264 keeps >= 4 threads
 *   where it scales well; capped by memory (1.5 GiB a job) and, without NVENC, never more than
 *   the cores. With CUDA whisper transcription leaves the CPU, so the same rule holds: x264 is
 *   the CPU's whole load.
 * - x264 threads: every core (the datacenter GPUs, A100/H100/H200, have no NVENC, so x264 is
 *   the bottleneck); jobs at once share them through the scheduler, and one job alone gets all.
 * - whisper threads: on CPU up to 8 (whisper.cpp gains little past 8; its one server runs one
 *   request at a time); with CUDA 4 threads feed the GPU.
 * - Overlapped stages: on. With CUDA whisper recognition and the render use different hardware.
 *   On the CPU they share the cores, so whisper drops to half its threads once the render runs
 *   (`whisperThreadsBesideRender`): with all of them, the encode preempting one stalled the rest
 *   at every step, and overlap on/off was 0.995-1.044 on 2 cores; with 1 of 2, 0.925-0.979
 *   (bench:e2e --overlap, 60 s 1080x1920 job).
 */
export function planHardware(
  hw: Hardware,
  o: {
    cudaWhisper: boolean;
    nvenc: boolean;
    slots?: number | undefined;
    /** whisper.cpp threads set by configuration (`--threads`); default from the cores. */
    whisperThreads?: number | undefined;
    overlap?: 'auto' | 'on' | 'off' | undefined;
  },
): HardwarePlan {
  const cores = Math.max(1, hw.cores);
  const bySlotsRule = Math.max(2, Math.floor(cores / 4));
  const byMemory = Math.max(1, Math.floor((hw.memoryBytes - RESERVED_MEMORY_BYTES) / JOB_MEMORY_BYTES));
  const byCores = o.nvenc ? Infinity : Math.max(2, cores);
  const auto = Math.max(1, Math.min(bySlotsRule, byMemory, byCores));
  const slots = o.slots ?? auto;
  const whisperThreads = o.whisperThreads ?? Math.min(o.cudaWhisper ? 4 : 8, cores);
  const limits = [`${bySlotsRule} by cores (max(2, ${cores}/4))`, `${byMemory} by memory (${(hw.memoryBytes / 2 ** 30).toFixed(1)} GiB at 1.5 GiB a job)`];
  const why = o.slots !== undefined ? `set by configuration (auto would be ${auto}: ${limits.join(', ')})` : `auto: min of ${limits.join(', ')}`;
  const whisperThreadsBesideRender = o.cudaWhisper ? undefined : Math.max(1, Math.floor(whisperThreads / 2));
  const overlapWhy =
    o.overlap === 'on' || o.overlap === 'off'
      ? `set by configuration (auto would be on)`
      : o.cudaWhisper
        ? 'auto: recognition on the GPU, the render on the CPU'
        : `auto: recognition and the render share the CPU cores, whisper on ${whisperThreadsBesideRender} of its ${whisperThreads} threads once the render runs`;
  const overlap = o.overlap !== 'off';
  const analysisThreads = o.cudaWhisper ? undefined : 1;
  return { slots, x264Threads: cores, whisperThreads, whisperThreadsBesideRender, analysisThreads, why, overlap, overlapWhy };
}

/**
 * CPU cost of whisper.cpp per model family, in thread-seconds per audio second (real-time
 * factor x threads), with our decoding flags (`-bs 5 -bo 5 -tp 0 -tpi 0.2 -nth 0.6 -sns -nfa
 * -dtw`), whisper-cli on 2 threads of the 2-core dev box (portable AVX2 build), en.wav looped to
 * 60 s, load average ~2 (the run's own threads):
 * - base, measured: 16.8-17.5 s for 60 s (RTF 0.29 on 2 threads).
 * - small, estimated: no real small weights could be had here (packages/transcriber README,
 *   "Test weights"), so small's weights were random of small's shape (our converter, timing only):
 *   per call its encoder took 8.16 s vs 1.96 s for base's shape made the same way (real base
 *   2.20 s), a beam-decoder step 15.5 vs 4.9 ms. base's real run (3 encoder calls, 1,270 decoder
 *   steps, 580 prompt steps) at those ratios: ~56 s for 60 s (RTF ~0.94), assuming small decodes
 *   as many tokens as base.
 * Families without a row (tiny, medium, large) are never picked on CPU by chooseModel.
 */
export const WHISPER_CPU_COST: Readonly<Record<string, { threadSecondsPerAudioSecond: number; how: string }>> = Object.freeze({
  base: { threadSecondsPerAudioSecond: 0.58, how: 'measured: 17.5 s for 60 s on 2 threads' },
  small: { threadSecondsPerAudioSecond: 1.9, how: "estimated: ~56 s for 60 s on 2 threads (random weights of small's shape)" },
});

/** Size order of whisper's families, smallest first: "largest installed" follows it. */
const FAMILY_ORDER = ['tiny', 'base', 'small', 'medium', 'large-v3-turbo', 'large-v1', 'large-v2', 'large-v3'];

/**
 * A model name's family (`small` for small, small.en, small-q5_1) and whether an agent may pick
 * it by itself: English-only (`.en`) and speaker-turn (`-tdrz`) models would caption other
 * languages wrong, so only an operator's --model selects them.
 */
export function modelFamily(name: string): { family: string; multilingual: boolean; quantized: boolean } {
  const quantized = /-q\d/.test(name);
  const base = name.replace(/-q\d(_\d)?$/, '');
  const multilingual = !/\.en\b/.test(base) && !base.includes('tdrz');
  return { family: base.replace(/\.en(-tdrz)?$/, ''), multilingual, quantized };
}

export interface ModelChoice {
  /** What the transcriber is given: the chosen file's path, or the operator's name/path as given. */
  model: string;
  /** The model's name (ggml-NAME.bin), for the log and the agent's capabilities. */
  name: string;
  why: string;
}

/**
 * The whisper model an agent runs, as a pure function of what is installed and the machine:
 *
 * - `override` (the agent's --model): always, as given.
 * - CUDA whisper: the largest installed multilingual model (the GPU runs even large-v3 faster
 *   than real time).
 * - CPU: the largest installed multilingual model whose cost table row keeps the worst case
 *   within half the job deadline: `slots` 60 s clips queued on the agent's one whisper-server,
 *   each taking 60 x cost / min(threads, 8) seconds, where `threads` are whisper's threads
 *   while the render runs beside it; half, because ingest, render and upload share the rest.
 *   Families without a cost row are not picked on CPU. None fits: the smallest installed.
 * - Nothing installed: 'base', whose jobs fail saying to run `captionfarm models pull base`.
 */
export function chooseModel(o: {
  installed: ReadonlyArray<{ name: string; path: string }>;
  cuda: boolean;
  /** whisper.cpp threads while the render runs beside it (the plan's worst case). */
  threads: number;
  /** Jobs leased at once, queued on one whisper-server. */
  slots: number;
  override?: string | undefined;
  /** The job deadline for an input of this many seconds (control plane's: 15 min + 3 x input). */
  deadlineMs?: (inputSeconds: number) => number;
  cost?: Readonly<Record<string, { threadSecondsPerAudioSecond: number }>>;
}): ModelChoice {
  if (o.override) {
    const name = /ggml-(.+)\.bin$/.exec(o.override.split(/[\\/]/).pop() ?? '')?.[1] ?? o.override;
    return { model: o.override, name, why: 'set by --model' };
  }
  const rank = (name: string) => {
    const f = modelFamily(name);
    // f16 before its quantized copy: same cost here, better words.
    return FAMILY_ORDER.indexOf(f.family) * 2 + (f.quantized ? 0 : 1);
  };
  const candidates = o.installed
    .filter((m) => modelFamily(m.name).multilingual && FAMILY_ORDER.includes(modelFamily(m.name).family))
    .sort((a, b) => rank(b.name) - rank(a.name));
  const installedNames = o.installed.map((m) => m.name).join(', ') || 'none';
  if (candidates.length === 0)
    return { model: 'base', name: 'base', why: `no multilingual model installed (found: ${installedNames}): run "captionfarm models pull base"` };
  if (o.cuda) {
    const m = candidates[0]!;
    return { model: m.path, name: m.name, why: `auto: CUDA whisper, the largest installed multilingual model (installed: ${installedNames})` };
  }
  const cost = o.cost ?? WHISPER_CPU_COST;
  const clip = 60;
  const budget = (o.deadlineMs ?? processingDeadlineMs)(clip) / 1000 / 2;
  const threads = Math.min(Math.max(1, o.threads), 8);
  const slots = Math.max(1, o.slots);
  const seconds = (name: string) => {
    const row = cost[modelFamily(name).family];
    return row ? (slots * clip * row.threadSecondsPerAudioSecond) / threads : Infinity;
  };
  const fits = candidates.find((m) => seconds(m.name) <= budget);
  const rule = `${slots} x ${clip} s clips on ${threads} thread(s) within half the deadline (${budget.toFixed(0)} s)`;
  if (fits) {
    return {
      model: fits.path,
      name: fits.name,
      why: `auto: CPU, the largest installed model for ${rule}: ~${seconds(fits.name).toFixed(0)} s (installed: ${installedNames})`,
    };
  }
  const smallest = candidates.at(-1)!;
  return { model: smallest.path, name: smallest.name, why: `auto: CPU, no installed model fits ${rule}; the smallest (installed: ${installedNames})` };
}
