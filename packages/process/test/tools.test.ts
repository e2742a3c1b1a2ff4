import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { captionfarmCacheDir, espeakPath, resolveFfmpegPaths, whisperBinDir } from '../src/tools.ts';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'process-tools-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('resolveFfmpegPaths', () => {
  it.each([
    [{}, { ffmpeg: 'ffmpeg', ffprobe: 'ffprobe' }],
    [{ FFMPEG_PATH: '/opt/ff/ffmpeg' }, { ffmpeg: '/opt/ff/ffmpeg', ffprobe: 'ffprobe' }], // no sibling ffprobe there
    [
      { FFMPEG_PATH: '/opt/ff/ffmpeg', FFPROBE_PATH: '/x/ffprobe' },
      { ffmpeg: '/opt/ff/ffmpeg', ffprobe: '/x/ffprobe' },
    ],
  ])('%o', (env, expected) => {
    expect(resolveFfmpegPaths(env)).toEqual(expected);
  });

  it('uses an ffprobe that sits next to FFMPEG_PATH', () => {
    const other = join(dir, 'static-build');
    mkdirSync(other);
    writeFileSync(join(other, 'ffprobe'), '');
    expect(resolveFfmpegPaths({ FFMPEG_PATH: join(other, 'ffmpeg') }).ffprobe).toBe(join(other, 'ffprobe'));
  });
});

describe('espeakPath / captionfarmCacheDir', () => {
  it('reads ESPEAK_NG_PATH, else espeak-ng on PATH', () => {
    expect(espeakPath({})).toBe('espeak-ng');
    expect(espeakPath({ ESPEAK_NG_PATH: '/opt/espeak/bin/espeak-ng' })).toBe('/opt/espeak/bin/espeak-ng');
  });

  it('caches under XDG_CACHE_HOME, else HOME/.cache', () => {
    expect(captionfarmCacheDir({ XDG_CACHE_HOME: '/c', HOME: '/h' })).toBe('/c/captionfarm');
    expect(captionfarmCacheDir({ HOME: '/h' })).toBe('/h/.cache/captionfarm');
    expect(captionfarmCacheDir({})).toBe(join(homedir(), '.cache', 'captionfarm'));
  });
});

describe('whisperBinDir', () => {
  it('prefers WHISPER_CPP_DIR (the directory or its bin/), then the cache, and says what to run', () => {
    const bin = join(dir, 'build', 'bin');
    mkdirSync(bin, { recursive: true });
    for (const b of ['whisper-server', 'whisper-cli']) writeFileSync(join(bin, b), '');
    expect(whisperBinDir({ WHISPER_CPP_DIR: join(dir, 'build') })).toBe(bin);
    expect(whisperBinDir({ WHISPER_CPP_DIR: bin })).toBe(bin);
    expect(() => whisperBinDir({ WHISPER_CPP_DIR: dir })).toThrow(/has no whisper-server/);
    mkdirSync(join(dir, 'cache', 'captionfarm', 'whisper', 'abc'), { recursive: true });
    symlinkSync(join(dir, 'build'), join(dir, 'cache', 'captionfarm', 'whisper', 'current'));
    expect(whisperBinDir({ XDG_CACHE_HOME: join(dir, 'cache') })).toBe(join(dir, 'cache', 'captionfarm', 'whisper', 'current', 'bin'));
    expect(() => whisperBinDir({ XDG_CACHE_HOME: join(dir, 'nothing') })).toThrow(/run "bash scripts\/build-whisper"/);
  });
});
