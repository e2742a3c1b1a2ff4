import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { chooseModel, detectGpus, modelFamily, planHardware, WHISPER_CPU_COST } from '../src/hardware.ts';

const GiB = 2 ** 30;
const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

describe('planHardware', () => {
  it('gives this kind of 2-core box two slots sharing every core for x264', () => {
    const plan = planHardware({ cores: 2, memoryBytes: 8 * GiB, gpus: [] }, { cudaWhisper: false, nvenc: false });
    expect(plan).toMatchObject({ slots: 2, x264Threads: 2, whisperThreads: 2, overlap: true, whisperThreadsBesideRender: 1, analysisThreads: 1 });
    expect(plan.why).toMatch(/^auto: /);
  });

  it('gives an H100 box (16 cores, no NVENC, CUDA whisper) 4 slots, x264 on all 16 cores, 4 whisper threads', () => {
    const plan = planHardware(
      { cores: 16, memoryBytes: 128 * GiB, gpus: [{ name: 'NVIDIA H100 80GB HBM3', memoryMiB: 81559 }] },
      { cudaWhisper: true, nvenc: false },
    );
    expect(plan).toMatchObject({ slots: 4, x264Threads: 16, whisperThreads: 4, overlap: true });
    expect(plan.overlapWhy).toMatch(/recognition on the GPU/);
    // The picture's analysis decodes on ffmpeg's own threads: the cores are not whisper's here.
    expect(plan.analysisThreads).toBeUndefined();
  });

  it('overlaps the stages as configured (CAPTIONFARM_OVERLAP), saying what auto would be', () => {
    const hw = { cores: 2, memoryBytes: 8 * GiB, gpus: [] };
    expect(planHardware(hw, { cudaWhisper: false, nvenc: false, overlap: 'on' })).toMatchObject({
      overlap: true,
      overlapWhy: 'set by configuration (auto would be on)',
    });
    // Auto on a CPU-only box: overlapped, whisper on half its threads once the render runs.
    expect(planHardware(hw, { cudaWhisper: false, nvenc: false })).toMatchObject({
      overlap: true,
      whisperThreads: 2,
      whisperThreadsBesideRender: 1,
      overlapWhy: 'auto: recognition and the render share the CPU cores, whisper on 1 of its 2 threads once the render runs',
    });
    expect(planHardware({ cores: 16, memoryBytes: 64 * GiB, gpus: [] }, { cudaWhisper: false, nvenc: false })).toMatchObject({
      whisperThreads: 8,
      whisperThreadsBesideRender: 4,
    });
    expect(planHardware(hw, { cudaWhisper: true, nvenc: false }).whisperThreadsBesideRender).toBeUndefined();
    // --threads sets whisper's threads, and the plan halves those beside the render.
    expect(planHardware(hw, { cudaWhisper: false, nvenc: false, whisperThreads: 6 })).toMatchObject({ whisperThreads: 6, whisperThreadsBesideRender: 3 });
    expect(planHardware(hw, { cudaWhisper: true, nvenc: false, overlap: 'off' })).toMatchObject({
      overlap: false,
      overlapWhy: 'set by configuration (auto would be on)',
    });
  });

  it('lets memory cap the slots', () => {
    expect(planHardware({ cores: 32, memoryBytes: 4 * GiB, gpus: [] }, { cudaWhisper: false, nvenc: false }).slots).toBe(2);
    expect(planHardware({ cores: 32, memoryBytes: 2 * GiB, gpus: [] }, { cudaWhisper: false, nvenc: false }).slots).toBe(1);
  });

  it('keeps a configured concurrency and says what auto would have been', () => {
    const plan = planHardware({ cores: 16, memoryBytes: 64 * GiB, gpus: [] }, { cudaWhisper: false, nvenc: false, slots: 1 });
    expect(plan.slots).toBe(1);
    expect(plan.why).toMatch(/set by configuration \(auto would be 4/);
    expect(plan.whisperThreads).toBe(8);
  });
});

describe('detectGpus', () => {
  it('reads every GPU nvidia-smi lists', async () => {
    // A stand-in for nvidia-smi (no GPU here): prints what the real one prints for these flags.
    const dir = await mkdtemp(path.join(tmpdir(), 'cf-smi-'));
    dirs.push(dir);
    const smi = path.join(dir, 'nvidia-smi');
    await writeFile(smi, '#!/bin/sh\n[ "$1" = "--query-gpu=name,memory.total" ] || exit 9\nprintf "NVIDIA H100 80GB HBM3, 81559\\nNVIDIA L4, 23034\\n"\n');
    await chmod(smi, 0o755);
    expect(await detectGpus(smi)).toEqual([
      { name: 'NVIDIA H100 80GB HBM3', memoryMiB: 81559 },
      { name: 'NVIDIA L4', memoryMiB: 23034 },
    ]);
  });

  it('finds none when nvidia-smi is missing or fails', async () => {
    expect(await detectGpus('/nonexistent/nvidia-smi')).toEqual([]);
    expect(await detectGpus('false')).toEqual([]);
  });
});

describe('chooseModel', () => {
  const at = (...names: string[]) => names.map((name) => ({ name, path: `/m/ggml-${name}.bin` }));
  // Thread-seconds per audio second; a 60 s clip takes 60 x cost / threads seconds.
  const cost = { tiny: { threadSecondsPerAudioSecond: 0.5 }, base: { threadSecondsPerAudioSecond: 1 }, small: { threadSecondsPerAudioSecond: 4 } };
  const deadlineMs = (s: number) => (15 * 60 + 3 * s) * 1000; // 1080 s for 60 s: budget 540 s

  it('keeps the operator override as given, installed or not', () => {
    expect(chooseModel({ installed: at('base', 'small'), cuda: true, threads: 4, slots: 4, override: 'tiny' })).toEqual({
      model: 'tiny',
      name: 'tiny',
      why: 'set by --model',
    });
    expect(chooseModel({ installed: [], cuda: false, threads: 1, slots: 2, override: '/x/ggml-medium.en.bin' })).toMatchObject({
      model: '/x/ggml-medium.en.bin',
      name: 'medium.en',
    });
  });

  it('takes the largest installed multilingual model with CUDA whisper', () => {
    const c = chooseModel({ installed: at('tiny', 'base', 'large-v3-turbo-q5_0', 'large-v3-turbo', 'medium.en', 'small'), cuda: true, threads: 4, slots: 4 });
    expect(c).toMatchObject({ model: '/m/ggml-large-v3-turbo.bin', name: 'large-v3-turbo' });
    expect(c.why).toMatch(/^auto: CUDA/);
  });

  it('on CPU takes the largest model whose 60 s clips, one per slot, fit half the deadline', () => {
    const installed = at('base', 'small');
    // small: 2 slots x 60 s x 4 / 1 thread = 480 s <= 540 s.
    expect(chooseModel({ installed, cuda: false, threads: 1, slots: 2, cost, deadlineMs })).toMatchObject({ name: 'small' });
    // 3 slots: 720 s > 540 s; base: 180 s.
    const c = chooseModel({ installed, cuda: false, threads: 1, slots: 3, cost, deadlineMs });
    expect(c).toMatchObject({ name: 'base', model: '/m/ggml-base.bin' });
    expect(c.why).toMatch(/3 x 60 s clips on 1 thread\(s\) within half the deadline \(540 s\): ~180 s/);
    // More threads buy the bigger model back; past 8 threads no more is counted.
    expect(chooseModel({ installed, cuda: false, threads: 2, slots: 3, cost, deadlineMs })).toMatchObject({ name: 'small' });
    expect(chooseModel({ installed, cuda: false, threads: 64, slots: 20, cost, deadlineMs })).toMatchObject({ name: 'base' });
  });

  it('never picks a model without a cost row on CPU, nor an English-only one by itself', () => {
    expect(chooseModel({ installed: at('base', 'large-v3'), cuda: false, threads: 8, slots: 2, cost, deadlineMs })).toMatchObject({ name: 'base' });
    expect(chooseModel({ installed: at('base', 'small.en', 'small.en-tdrz'), cuda: true, threads: 4, slots: 2 })).toMatchObject({ name: 'base' });
  });

  it('falls back to the smallest when nothing fits, and to base (which says to pull it) when nothing is installed', () => {
    const slow = { small: { threadSecondsPerAudioSecond: 100 } };
    expect(chooseModel({ installed: at('small'), cuda: false, threads: 1, slots: 2, cost: slow, deadlineMs })).toMatchObject({ name: 'small' });
    expect(chooseModel({ installed: at('small', 'base'), cuda: false, threads: 1, slots: 2, cost: slow, deadlineMs }).why).toMatch(/no installed model fits/);
    const none = chooseModel({ installed: at('base.en'), cuda: false, threads: 2, slots: 2 });
    expect(none).toMatchObject({ model: 'base', name: 'base' });
    expect(none.why).toMatch(/captionfarm models pull base/);
  });

  it('names families', () => {
    expect(modelFamily('large-v3-turbo-q5_0')).toEqual({ family: 'large-v3-turbo', multilingual: true, quantized: true });
    expect(modelFamily('small.en-tdrz')).toEqual({ family: 'small', multilingual: false, quantized: false });
    expect(modelFamily('base.en')).toMatchObject({ family: 'base', multilingual: false });
  });

  it('with the measured table, picks small on this kind of 2-core box (1 whisper thread beside the render, 2 slots)', () => {
    expect(Object.keys(WHISPER_CPU_COST)).toEqual(['base', 'small']);
    const c = chooseModel({ installed: at('base', 'small'), cuda: false, threads: 1, slots: 2 });
    expect(c).toMatchObject({ name: 'small', model: '/m/ggml-small.bin' });
    expect(c.why).toMatch(/within half the deadline \(540 s\): ~228 s/);
  });
});
