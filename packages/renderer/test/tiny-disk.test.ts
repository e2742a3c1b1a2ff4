import { describe, expect, it } from 'vitest';
import { mountTinyDisk } from './helpers/tiny-disk.ts';

// The disk-full suites' guard: a tmpfs that cannot be mounted skips them and says why, but on CI
// it fails them (a skipped suite reads as green). An invalid size makes mount fail even as root.
describe('the disk-full suites guard', () => {
  it('fails on CI when no tmpfs can be mounted, naming the cause and what to do', () => {
    expect(() => mountTinyDisk('not-a-size', { CI: 'true' })).toThrow(
      /^CI: cannot mount a not-a-size tmpfs \(.+\): the disk-full tests cannot run; run \.ci\/run as root$/,
    );
  });

  it('elsewhere skips and says why', () => {
    const disk = mountTinyDisk('not-a-size', {});
    expect(disk.path).toBeUndefined();
    expect(disk.missing).toMatch(/cannot mount a not-a-size tmpfs .* the disk-full tests are skipped/);
  });
});
