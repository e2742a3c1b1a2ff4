import os from 'node:os';
import { runToEnd } from '@captionfarm/transcriber/process';

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
  return { slots, x264Threads: cores, whisperThreads, whisperThreadsBesideRender, why, overlap, overlapWhy };
}
