import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ffmpegPaths } from '@captionfarm/process/tools';
import { cutVideoFilters, editAudioGraph, editGraph, zoomFilters } from '../src/edit-graph.ts';
import { RenderError } from '../src/errors.ts';
import { renderArgs } from '../src/render-args.ts';
import { ffmpeg, tempDir } from './helpers/media.ts';

// The edit as ffmpeg filters (issue 42), checked on their own: what the graph says, and what
// ffmpeg makes of the pieces that must be exact (the audio to the sample, frames outside zooms
// to the bit).

describe('editGraph', () => {
  it('merges ranges that touch, clamps a frame-aligned end past the source, and sums the output', () => {
    const g = editGraph(
      {
        keep: [
          { start: 0, end: 1 },
          { start: 1, end: 2 },
          { start: 3, end: 6.04 },
          { start: 7, end: 8 },
        ],
        zooms: [],
        bleeps: [],
      },
      6,
    );
    expect(g.keep).toEqual([
      { start: 0, end: 2 },
      { start: 3, end: 6 },
    ]);
    expect(g.outputSeconds).toBe(5);
  });

  it('refuses ranges out of order as a bug, and an edit that keeps nothing of the source as a failed render', () => {
    const keep = [
      { start: 2, end: 3 },
      { start: 1, end: 1.5 },
    ];
    expect(() => editGraph({ keep, zooms: [], bleeps: [] }, 6)).toThrow(TypeError);
    expect(() => editGraph({ keep: [{ start: 7, end: 8 }], zooms: [], bleeps: [] }, 6)).toThrow(RenderError);
  });
});

describe('the audio graph', () => {
  const edit = editGraph(
    {
      keep: [
        { start: 0.2, end: 1 },
        { start: 2, end: 3 },
        { start: 4.4, end: 6 },
      ],
      zooms: [],
      bleeps: [{ start: 0.5, end: 0.9 }],
    },
    6,
  );
  const graph = editAudioGraph(edit, '[0:a:0]', '[a]');

  it('splits the track once at every piece boundary, in source seconds', () => {
    // The bleep (output 0.5..0.9) spans the join at output 0.8: source 0.7..1.0 and 2.0..2.1.
    // The last split (6) leaves whatever of the track runs past the source's duration to a sink.
    expect(graph).toContain("asegment=timestamps='0.2|0.7|1|2|2.1|3|4.4|6'");
  });

  it('fades every join, not the source own end, and puts the tone (phase running on) in place of the bleeped speech', () => {
    const chains = graph.split(';');
    expect(chains.filter((c) => c.endsWith('anullsink'))).toEqual(['[s0]anullsink', '[s3]anullsink', '[s6]anullsink', '[s8]anullsink']);
    // On source timestamps (the output's are numbered after the concat): the bleep at output 0.5 is at source 0.7.
    expect(chains[2]).toBe('[s1]afade=t=in:st=0.2:d=0.008:curve=hsin[p1]');
    expect(chains[3]).toBe("[s2]aeval=exprs='0.2512*sin(2000*PI*(t-0.2))':c=same[p2]");
    expect(chains[5]).toBe("[s4]aeval=exprs='0.2512*sin(2000*PI*(t-1.2))':c=same[p4]");
    expect(chains[6]).toBe('[s5]afade=t=out:st=2.992:d=0.008:curve=hsin[p5]');
    // The last range ends where the source does: it fades in only.
    expect(chains[8]).toBe('[s7]afade=t=in:st=4.4:d=0.008:curve=hsin[p7]');
    expect(chains.at(-1)).toBe('[p1][p2][p4][p5][p7]concat=n=5:v=0:a=1,asetpts=N/SR/TB[a]');
  });
});

describe('in ffmpeg', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  beforeAll(async () => ({ dir, cleanup } = await tempDir()));
  afterAll(() => cleanup());

  /** The samples `graph` keeps of a ramp (each sample's value its own index) that starts `late` s into the timeline. */
  async function keptSamples(graph: string, late: number): Promise<number[]> {
    const ramp = join(dir, `ramp-${late}.mkv`);
    await ffmpeg([
      ...['-v', 'error', '-f', 'lavfi', '-i', 'color=c=black:s=64x48:r=25:d=6'],
      ...['-itsoffset', String(late), '-f', 'lavfi', '-i', `aevalsrc=n/480000:s=48000:d=${6 - late}`],
      ...['-c:v', 'libx264', '-preset', 'ultrafast', '-c:a', 'pcm_f32le', ramp],
    ]);
    const { stdout } = await execa(ffmpegPaths().ffmpeg, ['-v', 'error', '-i', ramp, '-filter_complex', graph, '-map', '[a]', '-f', 'f32le', '-'], {
      encoding: 'buffer',
    });
    const pcm = Buffer.from(stdout);
    return Array.from({ length: pcm.length / 4 }, (_v, i) => Math.round(pcm.readFloatLE(i * 4) * 480000));
  }
  const keep = [
    { start: 0.2, end: 1 },
    { start: 2, end: 3 },
    { start: 4.4, end: 5.6 },
  ];
  // Without the fades (anull in their place), so each sample comes out as it went in.
  const graph = editAudioGraph(editGraph({ keep, zooms: [], bleeps: [] }, 6), '[0:a]', '[a]').replace(/afade=[^[]*/g, 'anull');

  it('keeps exactly the samples of each range, each once, in order', async () => {
    const expected = keep.flatMap((r) => Array.from({ length: Math.round((r.end - r.start) * 48000) }, (_v, i) => Math.round(r.start * 48000) + i));
    const samples = await keptSamples(graph, 0);
    expect(samples.length).toBe(144000);
    expect(samples).toEqual(expected);
  });

  it('cuts a track that starts late on the timeline, not on the count of its samples', async () => {
    // The track's first sample is at 0.1 s: the range from 0.2 s starts with its sample 4,800, the
    // one from 2 s with 91,200 (asegment alone counted samples: 5,120 and no jump at all).
    const samples = await keptSamples(graph, 0.1);
    const expected = keep.flatMap((r) => Array.from({ length: Math.round((r.end - r.start) * 48000) }, (_v, i) => Math.round((r.start - 0.1) * 48000) + i));
    expect(samples.length).toBe(144000);
    expect(samples).toEqual(expected);
  });

  it('leaves every frame outside the zooms bit-identical, and zooms the centre inside them', async () => {
    const frames = async (filters: string[]): Promise<Buffer[]> => {
      const { stdout } = await execa(
        ffmpegPaths().ffmpeg,
        ['-v', 'error', '-f', 'lavfi', '-i', 'testsrc2=s=320x240:r=25:d=3', '-vf', filters.join(','), '-f', 'rawvideo', '-pix_fmt', 'yuv420p', '-'],
        { encoding: 'buffer' },
      );
      const all = Buffer.from(stdout);
      const size = (320 * 240 * 3) / 2;
      return Array.from({ length: all.length / size }, (_v, i) => all.subarray(i * size, (i + 1) * size));
    };
    const cut = cutVideoFilters([
      { start: 0.2, end: 1 },
      { start: 1.4, end: 3 },
    ]);
    const plain = await frames(cut);
    const zoomed = await frames([...cut, ...zoomFilters([{ start: 0.6, end: 1.4, scale: 1.15 }], { width: 320, height: 240 })]);
    expect(zoomed.length).toBe(60);
    expect(plain.length).toBe(60);
    const differing = zoomed.flatMap((f, i) => (f.equals(plain[i]!) ? [] : [i]));
    // Output 0.6..1.4 s is frames 15..34; at 0.6 and 1.4 the scale is exactly 1.
    expect(differing).toEqual(Array.from({ length: 19 }, (_v, i) => 16 + i));
    // Mid-zoom the centre pixel stays where it was (the crop is centred), the corners move.
    const mid = 25;
    const y = (f: Buffer, x: number, yy: number) => f[yy * 320 + x]!;
    expect(Math.abs(y(zoomed[mid]!, 160, 120) - y(plain[mid]!, 160, 120))).toBeLessThan(40);
    let moved = 0;
    for (let x = 0; x < 320; x += 4) moved += Math.abs(y(zoomed[mid]!, x, 2) - y(plain[mid]!, x, 2));
    expect(moved / 80).toBeGreaterThan(10);
  });

  it('gives NVENC the same graph as the CPU encoder', () => {
    const input = {
      input: 'in.mp4',
      output: 'out.mp4',
      format: 'mp4' as const,
      quality: 'high' as const,
      source: { width: 320, height: 240 },
      out: { width: 320, height: 240 },
      sourceAudioCodec: 'aac',
      band: { x: 0, y: 144, width: 320, height: 72 },
      edit: editGraph({ keep: [{ start: 0.2, end: 1 }], zooms: [{ start: 0.2, end: 0.6, scale: 1.1 }], bleeps: [{ start: 0.1, end: 0.2 }] }, 2),
    };
    const graphOf = (args: string[]) => args[args.indexOf('-filter_complex') + 1];
    const cpu = renderArgs({ ...input, encoder: 'cpu' });
    const nvenc = renderArgs({ ...input, encoder: 'nvenc' });
    expect(nvenc).toContain('h264_nvenc');
    expect(graphOf(nvenc)).toBe(graphOf(cpu));
    expect(graphOf(cpu)).toContain('eval=frame');
  });

  it('reads a graph too long for an argument from a file', () => {
    const args = renderArgs({
      input: 'in.mp4',
      output: 'out.mp4',
      format: 'mp4',
      quality: 'high',
      encoder: 'cpu',
      source: { width: 320, height: 240 },
      out: { width: 320, height: 240 },
      sourceAudioCodec: 'aac',
      band: { x: 0, y: 144, width: 320, height: 72 },
      edit: editGraph({ keep: [{ start: 0, end: 1 }], zooms: [], bleeps: [] }, 2),
      graphScript: '/tmp/x.graph',
    });
    expect(args).toContain('-filter_complex_script');
    expect(args).not.toContain('-filter_complex');
    // The cut audio is encoded (a copy cannot be filtered), and mapped from the graph.
    expect(args.join(' ')).toContain('-map [v] -map [a] -c:v libx264');
    expect(args.join(' ')).toContain('-c:a aac -b:a 160k');
  });
});
