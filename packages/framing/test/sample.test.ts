import { describe, expect, it } from 'vitest';
import { frameSplitter, parseShotTimes, sampleArgs, sampleSize } from '../src/sample.ts';

describe('sampleSize', () => {
  it.each([
    [
      { width: 1920, height: 1080 },
      { width: 256, height: 144 },
    ],
    [
      { width: 1080, height: 1920 },
      { width: 144, height: 256 },
    ],
    [
      { width: 1280, height: 720 },
      { width: 256, height: 144 },
    ],
    [
      { width: 640, height: 480 },
      { width: 256, height: 192 },
    ],
    // Never upscaled; sides even.
    [
      { width: 200, height: 101 },
      { width: 200, height: 102 },
    ],
  ])('%o samples at %o', (source, want) => {
    expect(sampleSize(source)).toEqual(want);
  });
});

describe('parseShotTimes', () => {
  const printed = [
    'frame:60   pts:30720   pts_time:2',
    'lavfi.scd.time=2',
    'frame:151  pts:77312   pts_time:5.03333',
    'lavfi.scd.time=5.03333',
    'frame:0    pts:0       pts_time:0',
    'lavfi.scd.time=0',
  ].join('\n');

  it('keeps the shot starts on the frame grid, ascending, without 0', () => {
    expect(parseShotTimes(printed, 30)).toEqual([2, 5.033333]);
  });

  it('reads nothing from an empty print (no shot change)', () => {
    expect(parseShotTimes('', 30)).toEqual([]);
  });
});

describe('frameSplitter', () => {
  it('cuts a stream into whole frames whatever the chunks', () => {
    const frames: number[][] = [];
    const feed = frameSplitter(4, (f) => frames.push([...f]));
    feed(Buffer.from([1, 2, 3]));
    feed(Buffer.from([4, 5, 6, 7, 8, 9]));
    feed(Buffer.from([10, 11, 12, 13]));
    expect(frames).toEqual([
      [1, 2, 3, 4],
      [5, 6, 7, 8],
      [9, 10, 11, 12],
    ]);
  });
});

describe('sampleArgs', () => {
  it('decodes once: scale, scdet on every frame, then the samples as raw RGB on stdout', () => {
    const args = sampleArgs({ input: '/in put.mp4', size: { width: 256, height: 144 }, sampleFps: 4, shotsFile: '/tmp/x/shots.txt', threads: 2 });
    expect(args).toContain('/in put.mp4');
    expect(args.slice(-1)).toEqual(['pipe:1']);
    const vf = args[args.indexOf('-vf') + 1]!;
    expect(vf.indexOf('scdet')).toBeLessThan(vf.indexOf('fps=fps=4'));
    expect(vf).toContain('file=/tmp/x/shots.txt');
    expect(args.join(' ')).toContain('-threads 2');
  });

  it('refuses a shot-list path the filtergraph would misread', () => {
    expect(() => sampleArgs({ input: 'a.mp4', size: { width: 256, height: 144 }, sampleFps: 4, shotsFile: "/tmp/a:b'c/shots.txt" })).toThrow(/escaped/);
  });
});
