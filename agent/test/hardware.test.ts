import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { detectGpus, planHardware } from '../src/hardware.ts';

const GiB = 2 ** 30;
const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

describe('planHardware', () => {
  it('gives this kind of 2-core box two slots sharing every core for x264', () => {
    const plan = planHardware({ cores: 2, memoryBytes: 8 * GiB, gpus: [] }, { cudaWhisper: false, nvenc: false });
    expect(plan).toMatchObject({ slots: 2, x264Threads: 2, whisperThreads: 2, overlap: true, whisperThreadsBesideRender: 1 });
    expect(plan.why).toMatch(/^auto: /);
  });

  it('gives an H100 box (16 cores, no NVENC, CUDA whisper) 4 slots, x264 on all 16 cores, 4 whisper threads', () => {
    const plan = planHardware(
      { cores: 16, memoryBytes: 128 * GiB, gpus: [{ name: 'NVIDIA H100 80GB HBM3', memoryMiB: 81559 }] },
      { cudaWhisper: true, nvenc: false },
    );
    expect(plan).toMatchObject({ slots: 4, x264Threads: 16, whisperThreads: 4, overlap: true });
    expect(plan.overlapWhy).toMatch(/recognition on the GPU/);
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
