import { describe, expect, it } from 'vitest';
import { audioEncoderArgs, videoEncoderArgs } from '../src/encoder-args.ts';
import { bandPixelFormat, plainReencodeArgs, renderArgs, runArgs, type RenderArgsInput, type RunArgsInput } from '../src/render-args.ts';

const base: RenderArgsInput = {
  input: '/in/source video.mov',
  output: 'out/a:b.mp4',
  format: 'mp4',
  quality: 'high',
  encoder: 'cpu',
  source: { width: 1920, height: 1080 },
  out: { width: 1280, height: 720 },
  sourceAudioCodec: 'aac',
  band: { x: 100, y: 500, width: 1080, height: 160 },
};

const after = (args: string[], flag: string): string | undefined => args[args.indexOf(flag) + 1];

describe('renderArgs', () => {
  const args = renderArgs(base);

  it('reads the source, then the caption stream from fd 3 without probing it', () => {
    expect(args.filter((_a, i) => args[i - 1] === '-i')).toEqual(['/in/source video.mov', 'pipe:3']);
    const pipeAt = args.indexOf('pipe:3');
    expect(args.slice(pipeAt - 7, pipeAt + 1)).toEqual(['-probesize', '32', '-analyzeduration', '0', '-f', 'matroska', '-i', 'pipe:3']);
  });

  it('scales the video, then overlays the yuva420p band as it comes, with straight alpha, where the painter put it', () => {
    expect(bandPixelFormat(base)).toBe('yuva420p');
    expect(after(args, '-filter_complex')).toBe('[0:v:0]scale=1280:720:flags=bicubic[base];[base][1:v]overlay=x=100:y=500:format=yuv420:eof_action=repeat[v]');
    expect(after(args, '-filter_complex')).not.toContain('premultiplied');
    expect(renderArgs({ ...base, out: base.source })).toContain('[0:v:0]null[base];[base][1:v]overlay=x=100:y=500:format=yuv420:eof_action=repeat[v]');
  });

  it("sends ProRes 4444's overlay an RGBA band, which ffmpeg converts for the 4:4:4 blend", () => {
    const mov = { ...base, format: 'mov' as const, overlay: true };
    expect(bandPixelFormat(mov)).toBe('rgba');
    expect(after(renderArgs(mov), '-filter_complex')).toContain('[base][1:v]overlay=x=100:y=500:format=yuv444:eof_action=repeat[v]');
    expect(bandPixelFormat({ ...base, format: 'webm', overlay: true })).toBe('yuva420p');
  });

  it('maps the overlaid video and the first audio track if any, keeps timestamps, reports progress on stdout', () => {
    expect(args.join(' ')).toContain('-map [v] -map 0:a:0?');
    expect(after(args, '-fps_mode')).toBe('vfr');
    expect(after(args, '-progress')).toBe('pipe:1');
    expect(after(args, '-loglevel')).toBe('error');
  });

  it('writes mp4 with faststart to a path ffmpeg cannot mistake for a protocol', () => {
    expect(args.slice(-6)).toEqual(['-f', 'mp4', '-movflags', '+faststart', '-y', './out/a:b.mp4']);
  });

  it('is the plain re-encode plus only the caption input and overlay', () => {
    const plain = plainReencodeArgs(base);
    expect(after(plain, '-vf')).toBe('scale=1280:720:flags=bicubic');
    expect(plain).not.toContain('pipe:3');
    const tail = (a: string[]) => a.slice(a.indexOf('-c:v'));
    expect(tail(plain)).toEqual(tail(args));
  });
});

describe('encoder arguments', () => {
  it.each([
    ['mp4', 'high', 'cpu', ['-c:v', 'libx264', '-preset', 'veryfast', '-crf', '20']],
    ['mp4', 'low', 'cpu', ['-c:v', 'libx264', '-preset', 'veryfast', '-crf', '28']],
    ['mp4', 'medium', 'nvenc', ['-c:v', 'h264_nvenc', '-preset', 'p4', '-rc', 'vbr', '-cq', '25', '-b:v', '0']],
    ['webm', 'high', 'cpu', ['-c:v', 'libvpx-vp9', '-deadline', 'realtime', '-cpu-used', '8', '-row-mt', '1', '-crf', '30', '-b:v', '0']],
    ['webm', 'low', 'nvenc', ['-c:v', 'libvpx-vp9', '-deadline', 'realtime', '-cpu-used', '8', '-row-mt', '1', '-crf', '40', '-b:v', '0']],
  ] as const)('%s %s %s', (format, quality, encoder, expected) => {
    const args = videoEncoderArgs({ format, quality, encoder });
    expect(args.slice(0, expected.length)).toEqual(expected);
    expect(args.slice(-2)).toEqual(['-pix_fmt', 'yuv420p']);
  });

  it.each([
    ['mp4', 'aac', ['-c:a', 'copy']],
    ['mp4', 'opus', ['-c:a', 'aac', '-b:a', '160k']],
    ['mp4', 'pcm_s16le', ['-c:a', 'aac', '-b:a', '160k']],
    ['webm', 'opus', ['-c:a', 'copy']],
    ['webm', 'aac', ['-c:a', 'libopus', '-b:a', '128k']],
    ['webm', null, []],
  ] as const)('audio for %s from %s', (format, sourceAudioCodec, expected) => {
    expect(audioEncoderArgs({ format, sourceAudioCodec })).toEqual(expected);
  });
});

describe('runArgs: several outputs from one run', () => {
  const run: RunArgsInput = {
    input: '/in/source.mp4',
    source: { width: 1920, height: 1080 },
    sourceAudioCodec: 'aac',
    edit: {
      keep: [
        { start: 0, end: 1 },
        { start: 2, end: 3 },
      ],
      zooms: [],
      bleeps: [],
      sourceSeconds: 4,
      outputSeconds: 2,
    },
    outputs: [
      { output: 'a.mp4', format: 'mp4', quality: 'high', encoder: 'cpu', out: { width: 608, height: 1080 }, band: { x: 0, y: 600, width: 608, height: 200 } },
      {
        output: 'b.webm',
        format: 'webm',
        quality: 'high',
        encoder: 'cpu',
        out: { width: 1280, height: 720 },
        band: null,
        subtitles: { path: '/s/c.vtt', language: 'ger' },
      },
      {
        output: 'c.mp4',
        format: 'mp4',
        quality: 'high',
        encoder: 'cpu',
        out: { width: 540, height: 540 },
        band: { x: 0, y: 300, width: 540, height: 200 },
        crop: { width: 1080, height: 1080, keyframes: [{ t: 0, x: 100, y: 0 }] },
      },
    ],
  };
  const args = runArgs(run);
  const graph = after(args, '-filter_complex')!;

  it('reads each caption stream from its own pipe and the subtitle file as WebVTT', () => {
    expect(args.filter((_a, i) => args[i - 1] === '-i')).toEqual(['/in/source.mp4', 'pipe:3', '/s/c.vtt', 'pipe:4']);
  });

  it('cuts once, splits, and gives each output its own chain; the edited audio is made once and split', () => {
    expect(graph.match(/select=/g)).toHaveLength(1);
    expect(graph).toMatch(/^\[0:v:0\]select=.*,setpts=.*,split=3\[c0\]\[c1\]\[c2\];/);
    expect(graph).toContain('[c0]crop=608:1080[base0];[base0][1:v]overlay=x=0:y=600:format=yuv420:eof_action=repeat[v0]');
    expect(graph).toContain('[c1]scale=1280:720:flags=bicubic[v1]');
    expect(graph).toContain("[c2]crop=w=1080:h=1080:x='round(100)':y='round(0)':exact=1,scale=540:540:flags=bicubic[base2];[base2][3:v]overlay");
    expect(graph.match(/asegment/g)).toHaveLength(1);
    expect(graph).toContain('[edited]asplit=3[a0][a1][a2]');
  });

  it('maps each output its video, audio and subtitles, with its own encoder and file', () => {
    const at = (file: string) => args.indexOf(file);
    const second = args.slice(at('./a.mp4') + 1, at('./b.webm') + 1);
    expect(second.slice(0, 6)).toEqual(['-map', '[v1]', '-map', '[a1]', '-map', '2:0']);
    expect(second.join(' ')).toContain('-c:v libvpx-vp9');
    expect(second.join(' ')).toContain('-c:s webvtt -metadata:s:s:0 language=ger');
    const third = args.slice(at('./b.webm') + 1);
    expect(third.slice(0, 4)).toEqual(['-map', '[v2]', '-map', '[a2]']);
    expect(third).not.toContain('-c:s');
  });
});
