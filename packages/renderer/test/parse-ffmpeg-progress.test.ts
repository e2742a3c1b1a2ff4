import { describe, expect, it } from 'vitest';
import { createProgressReporter, parseFfmpegProgress } from '../src/parse-ffmpeg-progress.ts';

describe('parseFfmpegProgress', () => {
  it.each([
    ['out_time_us=5000000', 10, 50],
    ['out_time_ms=2500000', 10, 25], // microseconds despite the name (ffmpeg 5.x)
    ['out_time_us=12000000', 10, 100], // audio can run past the video: capped
    ['  out_time_us=1000000  ', 4, 25],
    ['progress=end', 10, 100],
  ])('%s of %d s -> %d', (line, duration, percent) => {
    expect(parseFfmpegProgress(line, duration)).toBeCloseTo(percent, 6);
  });

  it.each([
    ['out_time_us=N/A', 10],
    ['out_time_us=-23220', 10], // negative at the start (audio priming)
    ['out_time=00:00:01.000000', 10], // the human-readable twin: out_time_us says the same
    ['progress=continue', 10],
    ['frame=12', 10],
    ['fps=0.00', 10],
    ['garbage', 10],
    ['out_time_us=', 10],
    ['out_time_us=5000000', 0], // unknown duration
  ])('%s -> null', (line, duration) => {
    expect(parseFfmpegProgress(line, duration)).toBeNull();
  });
});

describe('createProgressReporter', () => {
  it('reads lines split across chunks and reports whole percents that only grow, at most 99', () => {
    const seen: number[] = [];
    const feed = createProgressReporter(10, (p) => seen.push(p));
    feed('frame=1\nout_time_us=10');
    feed('00000\nprogress=continue\nout_time_us=1000000\nout_time_us=1500000\n');
    feed('out_time_us=500000\n'); // backwards (a retry after an NVENC failure): ignored
    feed('out_time_us=9990000\nprogress=end\n');
    expect(seen).toEqual([10, 15, 99]);
  });
});
