import { describe, expect, it } from 'vitest';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseBurnArgs } from '../src/commands/burn-args.ts';
import { cutLines, editSummary, keepArgument } from '../src/commands/edit-summary.ts';
import { outputsText } from '../src/commands/outputs-summary.ts';
import {
  etaSeconds,
  formatBytes,
  formatDuration,
  phaseLine,
  progressBar,
  readReplacements,
  readTranscript,
  readVocabulary,
  renderEta,
  transferLine,
} from '../src/commands/burn.ts';
import { CliError } from '../src/output.ts';

describe('parseBurnArgs', () => {
  const cwd = '/work/videos';
  it('a local file: absolute path, default output next to the current directory, only given options sent', () => {
    expect(parseBurnArgs(['talk.mp4', '--template', 'karaoke'], cwd)).toEqual({
      input: { kind: 'file', path: '/work/videos/talk.mp4' },
      output: '/work/videos/talk.captioned.mp4',
      request: { templateId: 'karaoke', format: 'mp4' },
      subtitles: {},
    });
  });

  it('every option', () => {
    expect(
      parseBurnArgs(
        [
          '../in/clip.final.MOV',
          '-t',
          'pop',
          '--format',
          'webm',
          '--quality',
          'low',
          '--resolution',
          '720X1280',
          '--language',
          'DE',
          '--webhook-url',
          'https://hooks.example.com/cf',
          '-o',
          'out/x.webm',
        ],
        cwd,
      ),
    ).toEqual({
      input: { kind: 'file', path: '/work/in/clip.final.MOV' },
      output: '/work/videos/out/x.webm',
      request: {
        templateId: 'pop',
        format: 'webm',
        quality: 'low',
        resolution: { width: 720, height: 1280 },
        language: 'de',
        webhookUrl: 'https://hooks.example.com/cf',
      },
      subtitles: {},
    });
  });

  it('--srt, --vtt and --transcript-in: paths from the current directory', () => {
    expect(parseBurnArgs(['talk.mp4', '-t', 'k', '--srt', 'subs/talk.srt', '--vtt', '/tmp/talk.vtt', '--transcript-in', 'words.json'], cwd)).toMatchObject({
      subtitles: { srt: '/work/videos/subs/talk.srt', vtt: '/tmp/talk.vtt' },
      transcriptIn: '/work/videos/words.json',
      request: { templateId: 'k', format: 'mp4' },
    });
  });

  it('the format follows -o when --format is not given', () => {
    expect(parseBurnArgs(['a.mp4', '-t', 'k', '-o', 'b.webm'], cwd)?.request.format).toBe('webm');
    expect(parseBurnArgs(['a.mp4', '-t', 'k', '-o', 'b.mkv'], cwd)?.request.format).toBe('mp4');
  });

  it.each([
    [
      'https://cdn.example.com/videos/launch%20talk.mp4?sig=1',
      'https://cdn.example.com/videos/launch%20talk.mp4?sig=1',
      '/work/videos/launch_talk.captioned.mp4',
    ],
    ['https://cdn.example.com/', 'https://cdn.example.com/', '/work/videos/captionfarm-output.captioned.mp4'],
    ['HTTPS://cdn.example.com/a/..', 'https://cdn.example.com/', '/work/videos/captionfarm-output.captioned.mp4'],
  ])('a URL %s: sent as %s, saved as %s', (input, url, output) => {
    expect(parseBurnArgs([input, '-t', 'karaoke'], cwd)).toMatchObject({ input: { kind: 'url', url }, output });
  });

  it('--style inline or from a file, --font as a file or an uploaded font id, --overlay (mov unless -o says webm)', () => {
    expect(parseBurnArgs(['a.mp4', '-t', 'k', '--style', '{"fill":"#FFFFFF","emoji":"auto"}', '--overlay'], cwd)).toMatchObject({
      output: '/work/videos/a.captioned.mov',
      request: { templateId: 'k', format: 'mov', overlay: true, style: { fill: '#FFFFFF', emoji: 'auto' } },
    });
    expect(parseBurnArgs(['a.mp4', '-t', 'k', '--style', 'brand/style.json', '--font', 'brand/Brand.otf', '--overlay', '-o', 'cut.webm'], cwd)).toMatchObject({
      output: '/work/videos/cut.webm',
      styleIn: '/work/videos/brand/style.json',
      font: { kind: 'file', path: '/work/videos/brand/Brand.otf' },
      request: { format: 'webm', overlay: true },
    });
    expect(parseBurnArgs(['a.mp4', '-t', 'k', '--font', '6D7C1F7E-0000-4000-8000-000000000000'], cwd)).toMatchObject({
      font: { kind: 'id', id: '6d7c1f7e-0000-4000-8000-000000000000' },
      request: { format: 'mp4' },
    });
    expect(parseBurnArgs(['a.mp4', '-t', 'k'], cwd)?.request).not.toHaveProperty('overlay');
  });

  it('--replacements inline or from a file, checked as the service does; --vocabulary kept for burn to read', () => {
    const inline = '[{"from":"caption farm","to":"Captionfarm"},{"from":"um","to":""}]';
    expect(parseBurnArgs(['a.mp4', '-t', 'k', '--replacements', inline, '--vocabulary', 'Captionfarm,Kubernetes'], cwd)).toMatchObject({
      request: {
        replacements: [
          { from: 'caption farm', to: 'Captionfarm' },
          { from: 'um', to: '' },
        ],
      },
      vocabularyIn: { value: 'Captionfarm,Kubernetes', path: '/work/videos/Captionfarm,Kubernetes' },
    });
    expect(parseBurnArgs(['a.mp4', '-t', 'k', '--replacements', 'brand/fixes.json', '--vocabulary', 'brand/terms.txt'], cwd)).toMatchObject({
      replacementsIn: '/work/videos/brand/fixes.json',
      vocabularyIn: { value: 'brand/terms.txt', path: '/work/videos/brand/terms.txt' },
      request: { templateId: 'k', format: 'mp4' },
    });
    expect(parseBurnArgs(['a.mp4', '-t', 'k'], cwd)).not.toHaveProperty('vocabularyIn');
    const usage = (args: string[]) => {
      try {
        parseBurnArgs(['a.mp4', '-t', 'k', ...args], cwd);
      } catch (err) {
        expect(err).toBeInstanceOf(CliError);
        expect((err as CliError).exitCode).toBe(2);
        return (err as Error).message.split('\n\n')[0];
      }
      return 'accepted';
    };
    expect(usage(['--replacements', '[{"from":"a"'])).toMatch(/^--replacements is not valid JSON/);
    expect(usage(['--replacements', '[{"from":"um","to":""},{"from":"UM","to":"uh"},{"from":"a","to":"b","x":1}]'])).toBe(
      '--replacements is not a valid list of {"from","to"} replacements:\n  [2].x: unknown field' +
        '\n  [1].from: the same words as replacements[0].from (compared case-insensitively)',
    );
    expect(usage(['--replacements', '[{"from":"um","to":""},{"from":"uh","to":"uh"}]'])).toBe('accepted');
  });

  it('--vocabulary: a file with one term per line when the value names one, else comma-separated terms', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'cf-vocab-'));
    const file = path.join(dir, 'terms.txt');
    await writeFile(file, 'Captionfarm\r\n  Kubernetes operator \n\nwhisper.cpp, the recognizer\n');
    expect(await readVocabulary({ value: file, path: file })).toEqual(['Captionfarm', 'Kubernetes operator', 'whisper.cpp, the recognizer']);
    expect(await readVocabulary({ value: ' Captionfarm, Kubernetes,,', path: path.join(dir, 'no such file') })).toEqual(['Captionfarm', 'Kubernetes']);
    await expect(readVocabulary({ value: 'x'.repeat(51), path: path.join(dir, 'x') })).rejects.toThrow(
      /--vocabulary is not a valid vocabulary:\n {2}\[0\]: a term is at most 50 characters/,
    );
    await writeFile(file, Array.from({ length: 101 }, (_, i) => `term ${i}`).join('\n'));
    await expect(readVocabulary({ value: file, path: file })).rejects.toThrow(/\(list\): at most 100 terms/);
  });

  it('--replacements FILE: a JSON array, checked before anything is uploaded', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'cf-repl-'));
    const file = path.join(dir, 'fixes.json');
    await writeFile(file, JSON.stringify([{ from: ' Caption  farm ', to: 'Captionfarm' }]));
    expect(await readReplacements(file)).toEqual([{ from: 'Caption farm', to: 'Captionfarm' }]);
    await writeFile(file, '{"from":"a","to":"b"}');
    await expect(readReplacements(file)).rejects.toThrow(/is not a valid list of \{"from","to"\} replacements:\n {2}\(list\): /);
    await writeFile(file, 'not json');
    await expect(readReplacements(file)).rejects.toThrow(/is not JSON/);
    await expect(readReplacements(path.join(dir, 'missing.json'))).rejects.toThrow(/cannot read --replacements .*ENOENT/);
  });

  it('--help', () => {
    expect(parseBurnArgs(['--help'], cwd)).toBeNull();
    expect(parseBurnArgs(['-h'], cwd)).toBeNull();
  });

  it.each([
    [[], /INPUT is required/],
    [['a.mp4', 'b.mp4', '-t', 'k'], /one INPUT only \(got 2\)/],
    [['talk.mp4'], /--template is required/],
    [['http://cdn.example.com/a.mp4', '-t', 'k'], /only https:\/\/ URLs can be captioned .*got http:\/\//],
    [['ftp://cdn.example.com/a.mp4', '-t', 'k'], /only https:\/\/ URLs/],
    [['https://exa mple.com/a.mp4', '-t', 'k'], /is not a valid URL/],
    [['talk.mp4', '-t', 'k', '--format', 'mov'], /mov is only an overlay output \(ProRes 4444 with alpha\): add --overlay/],
    [['talk.mp4', '-t', 'k', '--format', 'avi'], /--format must be mp4, webm or mov, not "avi"/],
    [['talk.mp4', '-t', 'k', '--overlay', '--format', 'mp4'], /mp4 has no alpha channel: an overlay is mov/],
    [['talk.mp4', '-t', 'k', '--overlay', '-o', 'x.mp4'], /mp4 has no alpha channel/],
    [['talk.mp4', '-t', 'k', '--style', '{"fill":'], /--style is not valid JSON/],
    [['talk.mp4', '-t', 'k', '--quality', 'ultra'], /--quality must be low, medium or high/],
    [['talk.mp4', '-t', 'k', '--resolution', '1080p'], /--resolution must look like 1080x1920/],
    [['talk.mp4', '-t', 'k', '--resolution', '0x720'], /--resolution must look like 1080x1920/],
    [['talk.mp4', '-t', 'k', '--language', 'eng'], /--language must be a 2-letter code/],
    [['talk.mp4', '-t', 'k', '--format', 'webm', '-o', 'out.mp4'], /-o out\.mp4 does not match --format webm/],
    [['talk.mp4', '-t', 'k', '-o', 'talk.mp4'], /-o must not be the input file/],
    [['talk.mp4', '-t', 'k', '--srt', 'talk.captioned.mp4'], /--srt must not be the video's input or output file/],
    [['talk.mp4', '-t', 'k', '--vtt', 'talk.mp4'], /--vtt must not be the video's input or output file/],
    [['talk.mp4', '-t', 'k', '--srt', 'x.txt', '--vtt', 'x.txt'], /--srt and --vtt must be different files/],
  ])('usage error for %j (exit 2, with the usage)', (args, message) => {
    let err: unknown;
    try {
      parseBurnArgs(args, cwd);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(CliError);
    expect((err as CliError).exitCode).toBe(2);
    expect((err as CliError).message).toMatch(message);
    expect((err as CliError).message).toContain('Exit codes: 0 saved');
  });

  it('the shorts options: only those given are sent, as the API spells them', () => {
    expect(
      parseBurnArgs(
        ['a.mp4', '-t', 'k', '--silences', 'fast', '--fillers', 'safe', '--zoom', '--hook', 'Three tips', '--hook-seconds', '2.5', '--profanity', 'bleep'],
        cwd,
      )?.request,
    ).toEqual({
      templateId: 'k',
      format: 'mp4',
      edit: { silences: 'fast', fillers: 'safe', zoom: 'emphasis' },
      hookTitle: { text: 'Three tips', seconds: 2.5 },
      profanity: 'bleep',
    });
    expect(parseBurnArgs(['a.mp4', '-t', 'k', '--keep', '0-4.2, 5.1-12,12.5-20'], cwd)?.request.edit).toEqual({
      keep: [
        { start: 0, end: 4.2 },
        { start: 5.1, end: 12 },
        { start: 12.5, end: 20 },
      ],
    });
    expect(parseBurnArgs(['a.mp4', '-t', 'k', '--zoom', '--hook', 'Hi'], cwd)?.request).toEqual({
      templateId: 'k',
      format: 'mp4',
      edit: { zoom: 'emphasis' },
      hookTitle: { text: 'Hi' },
    });
    // An overlay may mask words (the captions), not cut, zoom or bleep.
    expect(parseBurnArgs(['a.mp4', '-t', 'k', '--overlay', '--profanity', 'mask'], cwd)?.request).toMatchObject({ overlay: true, profanity: 'mask' });
    expect(parseBurnArgs(['a.mp4', '-t', 'k'], cwd)?.request).toEqual({ templateId: 'k', format: 'mp4' });
  });

  it.each([
    [['--silences', 'slow'], '--silences must be off, natural, fast or extra-fast, not "slow"'],
    [['--fillers', 'all'], '--fillers must be off, safe or aggressive, not "all"'],
    [['--profanity', 'beep'], '--profanity must be off, mask or bleep, not "beep"'],
    [['--keep', '0-4,later'], '--keep takes source seconds as START-END ranges separated by commas, e.g. 0-4.2,5.1-12; "later" is not one'],
    [['--keep', '0-4,3-8'], "--keep is not a valid cut:\n  range 2.start: ranges must be ascending and not overlap: 3 is before the previous range's end 4"],
    [['--keep', '4-2'], '--keep is not a valid cut:\n  range 1.end: end must be greater than start'],
    [['--keep', '0-4', '--fillers', 'safe'], '--keep gives the cut itself: drop --silences and --fillers (or set them to off)'],
    [['--zoom', '--overlay'], '--overlay lays the captions over the untouched source: it cannot cut or zoom (drop --silences, --fillers, --zoom and --keep)'],
    [['--overlay', '--profanity', 'bleep'], 'an --overlay has no audio to bleep: use --profanity mask'],
    [['--hook-seconds', '2'], '--hook-seconds needs --hook "the headline"'],
    [['--hook', 'Hi', '--hook-seconds', 'two'], '--hook-seconds must be a number of seconds, not "two"'],
    [['--hook', 'Hi', '--hook-seconds', '12'], '--hook is not a valid hook title:\n  --hook-seconds: Too big: expected number to be <=10'],
    [['--hook', 'x'.repeat(121)], '--hook is not a valid hook title:\n  --hook: '],
  ])('shorts usage error for %j, before any upload (exit 2)', (args, message) => {
    let err: unknown;
    try {
      parseBurnArgs(['a.mp4', '-t', 'k', ...args], cwd);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(CliError);
    expect((err as CliError).exitCode).toBe(2);
    expect((err as CliError).message.split('\n\ncaptionfarm burn')[0]).toContain(message);
  });

  it('the framing options of issue 43: only those given are sent, as the API spells them; the renditions saved beside -o', () => {
    const plan = parseBurnArgs(
      [
        ...['talk.mp4', '-t', 'k', '--reframe', 'subject', '--safe-area', 'tiktok', '--placement', 'auto'],
        ...['--outputs', '1080x1920, 1920x1080:center,1080x1080:WEBM:subject', '--poster', '--subtitles', 'both'],
      ],
      cwd,
    );
    expect(plan?.request).toEqual({
      templateId: 'k',
      format: 'mp4',
      reframe: 'subject',
      safeArea: 'tiktok',
      placement: 'auto',
      outputs: [
        { resolution: { width: 1080, height: 1920 } },
        { resolution: { width: 1920, height: 1080 }, reframe: 'center' },
        { resolution: { width: 1080, height: 1080 }, format: 'webm', reframe: 'subject' },
      ],
      poster: true,
      subtitles: 'both',
    });
    // The first rendition keeps the name asked for (here the default), the others go beside it.
    expect(plan?.output).toBe('/work/videos/talk.captioned.mp4');
    expect(plan?.files).toEqual({
      renditions: ['/work/videos/talk.captioned.mp4', '/work/videos/talk.captioned.1920x1080.mp4', '/work/videos/talk.captioned.1080x1080.webm'],
      poster: '/work/videos/talk.captioned.poster.jpg',
    });
    // -o names the first; two renditions that differ only in reframe are told apart; the first's format names the default file.
    expect(parseBurnArgs(['talk.mp4', '-t', 'k', '-o', 'out/talk.mp4', '--outputs', '1080x1920,1920x1080,1920x1080:subject'], cwd)?.files).toEqual({
      renditions: ['/work/videos/out/talk.mp4', '/work/videos/out/talk.1920x1080.center.mp4', '/work/videos/out/talk.1920x1080.subject.mp4'],
    });
    expect(parseBurnArgs(['talk.mp4', '-t', 'k', '--outputs', '720x1280:webm'], cwd)?.output).toBe('/work/videos/talk.captioned.webm');
    // A poster alone: the one rendition, and the poster at a time.
    expect(parseBurnArgs(['talk.mp4', '-t', 'k', '-o', 'x.mp4', '--poster-at', '2.5'], cwd)).toMatchObject({
      request: { poster: { at: 2.5 } },
      files: { renditions: ['/work/videos/x.mp4'], poster: '/work/videos/x.poster.jpg' },
    });
    // No framing option: nothing sent, no files.
    expect(parseBurnArgs(['talk.mp4', '-t', 'k'], cwd)).not.toHaveProperty('files');
  });

  it.each([
    [['--reframe', 'face'], '--reframe must be center or subject, not "face"'],
    [['--safe-area', 'snapchat'], '--safe-area must be none, tiktok, reels or shorts, not "snapchat"'],
    [['--placement', 'top'], '--placement must be fixed or auto, not "top"'],
    [['--subtitles', 'soft'], '--subtitles must be burn, track or both, not "soft"'],
    [['--poster-at', 'middle'], '--poster-at must be a number of seconds, not "middle"'],
    [['--outputs', '1080p'], '--outputs takes WxH sizes separated by commas, each optionally :mp4|:webm and :subject|:center'],
    [['--outputs', '1080x1920:mov'], '--outputs: "mov" in "1080x1920:mov" is not mp4, webm, subject or center'],
    [['--outputs', '1080x1920:mp4:webm'], '--outputs: "webm" in "1080x1920:mp4:webm" is not mp4, webm, subject or center (at most one format'],
    // The service's own refusals, with the path and message its error body gives.
    [['--outputs', '640x360,642x360,644x360,646x360,648x360'], 'the framing options are refused as the API would refuse them:\n  outputs: at most 4 outputs'],
    [['--outputs', '1081x1920'], '\n  outputs.0.resolution.width: an even number of pixels (the encoders need even sizes), e.g. 1080'],
    [['--outputs', '1080x1920,1080x1920:mp4'], '\n  outputs.1: the same rendition twice: each output differs in resolution, format or reframe'],
    [['--outputs', '1080x1920', '--resolution', '1080x1920'], '\n  resolution: give each output its own resolution (outputs[].resolution), not both'],
    [['--reframe', 'subject'], '\n  reframe: reframe subject needs a resolution of another aspect ratio to crop to'],
    [
      ['--overlay', '--format', 'webm', '--reframe', 'subject', '--resolution', '1080x1920'],
      '\n  reframe: an overlay is laid over the untouched source: it cannot be reframed',
    ],
    [['--overlay', '--poster'], '\n  poster: an overlay has no picture to make a poster of'],
    [['-o', 'x.mp4', '--outputs', '1080x1920:webm'], "-o x.mp4 does not match the first rendition's format webm (--outputs)"],
    [['-o', 'a.mp4', '--outputs', '1080x1920,1920x1080'], 'a.1920x1080.mp4 would be written twice, or over the input or a subtitle file: choose another -o'],
    [['-o', 'a.mp4', '--poster', '--srt', 'a.poster.jpg'], 'a.poster.jpg would be written twice'],
  ])('framing usage error for %j, before any upload (exit 2)', (args, message) => {
    let err: unknown;
    try {
      parseBurnArgs([args[1] === 'a.mp4' ? 'a.1920x1080.mp4' : 'a.mp4', '-t', 'k', ...args], cwd);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(CliError);
    expect((err as CliError).exitCode).toBe(2);
    expect((err as CliError).message.split('\n\ncaptionfarm burn')[0]).toContain(message);
  });

  it('unknown options are parse errors (exit 2, with the usage)', () => {
    expect(() => parseBurnArgs(['a.mp4', '-t', 'k', '--colour', 'red'], cwd)).toThrow(
      expect.objectContaining({ exitCode: 2, message: expect.stringMatching(/^unknown option '--colour'\n\ncaptionfarm burn INPUT --template ID/) }),
    );
  });
});

describe('readTranscript (--transcript-in)', () => {
  const words = [
    { text: 'Captionfarm', start: 0.2, end: 0.9 },
    { text: 'works', start: 0.9, end: 1.3 },
  ];
  async function file(content: string): Promise<string> {
    const f = path.join(await mkdtemp(path.join(tmpdir(), 'cf-words-')), 'words.json');
    await writeFile(f, content);
    return f;
  }

  it('takes the export of `jobs transcript` unchanged, or a bare array of words', async () => {
    expect(await readTranscript(await file(JSON.stringify({ language: 'EN', languageProbability: 0.9, words })))).toEqual({
      language: 'en',
      languageProbability: 0.9,
      words,
    });
    expect(await readTranscript(await file(JSON.stringify(words)))).toEqual({ words });
  });

  it.each([
    ['{"words": [', /is not JSON/],
    [
      JSON.stringify({ words: [{ text: 'a', start: 1, end: 0.5 }] }),
      /not a valid transcript:\n {2}words\.0\.end: end \(0\.5\) must be greater than start \(1\)/,
    ],
    [JSON.stringify({ text: 'hello' }), /not a valid transcript:[\s\S]*words/],
    [JSON.stringify(Array.from({ length: 30 }, () => ({ text: '', start: 0, end: 1 }))), /\.\.\. and 20 more/],
  ])('refuses %s before anything is uploaded (exit 2)', async (content, message) => {
    const err = await readTranscript(await file(content)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CliError);
    expect((err as CliError).exitCode).toBe(2);
    expect((err as CliError).message).toMatch(message);
  });

  it('a missing file', async () => {
    await expect(readTranscript('/nonexistent/words.json')).rejects.toThrow(/cannot read --transcript-in \/nonexistent\/words\.json: ENOENT/);
  });
});

describe('editSummary: the cut list after an edited burn', () => {
  const base = {
    jobId: '6f1d1c4e-8a55-4a55-9c1e-1d2b3c4d5e6f',
    edit: { silences: 'fast', fillers: 'safe', zoom: 'off', keep: null },
    hookTitle: null,
    profanity: 'off',
  };
  const plan = { sourceSeconds: 12.6, outputSeconds: 9.24, keep: [], zooms: [], bleeps: [] };
  it('counts the cuts by reason, the seconds removed and the output length', () => {
    const cuts = [
      { start: 1, end: 2, reason: 'silence', text: null },
      { start: 3, end: 3.4, reason: 'filler', text: 'um' },
      { start: 5, end: 6, reason: 'silence', text: null },
      { start: 7, end: 7.3, reason: 'repeat', text: 'the' },
    ];
    expect(editSummary({ ...base, plan: { ...plan, cuts } })).toEqual(['4 cuts (2 silence, 1 filler, 1 repeat): 3.4 s removed, 12.6 s -> 9.2 s']);
  });
  it('one cut, no cut; zooms, bleeps and the hook title when there are any', () => {
    expect(editSummary({ ...base, plan: { ...plan, cuts: [{ start: 1, end: 4.36, reason: 'client', text: null }] } })[0]).toBe(
      '1 cut (1 client): 3.4 s removed, 12.6 s -> 9.2 s',
    );
    const range = { start: 1, end: 1.5 };
    expect(
      editSummary({
        ...base,
        hookTitle: { text: 'Three tips', seconds: 3 },
        plan: { ...plan, outputSeconds: 12.6, cuts: [], zooms: [{ ...range, scale: 1.1 }], bleeps: [range, range] },
      }),
    ).toEqual(['no cuts: 12.6 s long', '1 punch-in zoom', '2 words bleeped', 'hook title "Three tips" for the first 3.0 s']);
  });
  it('cutLines and keepArgument: every cut, and the keep-ranges as burn --keep takes them', () => {
    const cuts = [
      { start: 1, end: 2, reason: 'silence', text: null },
      { start: 3, end: 3.4, reason: 'filler', text: 'um,' },
    ];
    expect(cutLines({ ...base, plan: { ...plan, cuts } })).toEqual(['cut  1.000-2.000 s  silence', 'cut  3.000-3.400 s  filler   um,']);
    expect(
      keepArgument([
        { start: 0, end: 1 },
        { start: 2, end: 3.0004 },
        { start: 3.4, end: 12.6 },
      ]),
    ).toBe('0-1,2-3,3.4-12.6');
  });
});

describe('outputsText: captionfarm jobs outputs', () => {
  const rendition = {
    format: 'mp4',
    reframe: 'center',
    requestedResolution: { width: 1080, height: 1920 },
    sizeBytes: null,
    downloadUrl: null,
    outputExpiresAt: null,
  };
  it('before the job succeeded: the sizes asked for, no links, no poster', () => {
    expect(
      outputsText({
        jobId: 'j',
        safeArea: 'tiktok',
        placement: 'auto',
        subtitles: 'both',
        outputs: [
          { ...rendition, index: 0, reframe: 'subject', resolution: null },
          { ...rendition, index: 1, requestedResolution: null, resolution: null },
        ],
        poster: null,
      }),
    ).toBe(
      [
        'safe area tiktok, placement auto, subtitles both',
        'INDEX  FORMAT  REFRAME  RESOLUTION         SIZE  EXPIRES  URL',
        '0      mp4     subject  1080x1920 (asked)  -     -        -',
        '1      mp4     center   source (asked)     -     -        -',
        'poster: none (not asked for, or not made yet)',
      ].join('\n'),
    );
  });
  it('once it succeeded: each rendition with its size, expiry and link, and the poster', () => {
    const expires = '2026-12-05T13:00:00.000Z';
    const text = outputsText({
      jobId: 'j',
      safeArea: 'none',
      placement: 'fixed',
      subtitles: 'burn',
      outputs: [
        { ...rendition, index: 0, resolution: { width: 1080, height: 1920 }, sizeBytes: 1_234_000, downloadUrl: 'http://s/0', outputExpiresAt: expires },
      ],
      poster: { at: 1.5, width: 1080, height: 1920, sizeBytes: 45_000, downloadUrl: 'http://s/p', outputExpiresAt: expires },
    });
    expect(text.split('\n').slice(2)).toEqual([
      `0      mp4     center   1080x1920   1.2 MB  ${expires}  http://s/0`,
      `poster at 1.50 s, 1080x1920, 45.0 kB, expires ${expires}`,
      'http://s/p',
    ]);
  });
});

describe('progress text', () => {
  it.each([
    [0, '0 B'],
    [999, '999 B'],
    [1000, '1.0 kB'],
    [65_536, '65.5 kB'],
    [999_949, '999.9 kB'],
    [999_950, '1.0 MB'],
    [19_234_567, '19.2 MB'],
    [2_000_000_000, '2.0 GB'],
  ])('formatBytes(%d) = %s', (n, s) => expect(formatBytes(n)).toBe(s));

  it.each([
    [0, '0:00'],
    [4.4, '0:04'],
    [59.6, '1:00'],
    [754, '12:34'],
    [3723, '1:02:03'],
    [-5, '0:00'],
  ])('formatDuration(%d) = %s', (sec, s) => expect(formatDuration(sec)).toBe(s));

  it('progressBar clamps and fills', () => {
    expect(progressBar(0, 4)).toBe('[░░░░]');
    expect(progressBar(0.5, 4)).toBe('[██░░]');
    expect(progressBar(1, 4)).toBe('[████]');
    expect(progressBar(7, 4)).toBe('[████]');
    expect(progressBar(Number.NaN, 4)).toBe('[░░░░]');
  });

  it.each([
    [{ done: 0, total: 100, elapsedMs: 5000 }, null], // nothing to go on yet
    [{ done: 10, total: 100, elapsedMs: 100 }, null], // too little history
    [{ done: 25, total: 100, elapsedMs: 10_000 }, 30],
    [{ done: 50, total: 100, elapsedMs: 2_000 }, 2],
    [{ done: 100, total: 100, elapsedMs: 2_000 }, 0],
  ])('etaSeconds(%j) = %s', (args, eta) => expect(etaSeconds(args)).toBe(eta));

  it('transferLine: bar, percent, bytes, rate and ETA', () => {
    expect(transferLine('upload', { bytes: 5_000_000, totalBytes: 20_000_000 }, 2_000, 8)).toBe(
      'upload       [██░░░░░░]  25% 5.0 MB / 20.0 MB  2.5 MB/s  ETA 0:06',
    );
    expect(transferLine('upload', { bytes: 65_536, totalBytes: 20_000_000 }, 100, 8)).toBe('upload       [░░░░░░░░]   0% 65.5 kB / 20.0 MB');
    expect(transferLine('download', { bytes: 3_000_000, totalBytes: null }, 1_000, 8)).toBe('download     3.0 MB  3.0 MB/s');
  });

  it('phaseLine: elapsed time for waiting phases, bar, percent and ETA for rendering', () => {
    expect(phaseLine({ phase: 'queued', percent: null, phaseElapsedMs: 4_200, etaSeconds: null })).toBe('queued       waiting for an agent  0:04');
    expect(phaseLine({ phase: 'ingesting', percent: null, phaseElapsedMs: 1_000, etaSeconds: null })).toBe(
      'ingesting    fetching and probing the source  0:01',
    );
    expect(phaseLine({ phase: 'transcribing', percent: null, phaseElapsedMs: 61_000, etaSeconds: null })).toBe('transcribing speech to words  1:01');
    expect(phaseLine({ phase: 'rendering', percent: 42, phaseElapsedMs: 9_000, etaSeconds: 31, barWidth: 10 })).toBe(
      'rendering    [████░░░░░░]  42%  ETA 0:31',
    );
    expect(phaseLine({ phase: 'rendering', percent: null, phaseElapsedMs: 0, etaSeconds: null, barWidth: 10 })).toBe('rendering    [░░░░░░░░░░]   0%');
  });

  it('renderEta: from the percent moved since the first one seen', () => {
    expect(renderEta(undefined, 10_000, 50)).toBeNull();
    expect(renderEta({ atMs: 0, percent: 20 }, 10_000, 20)).toBeNull();
    // 20% -> 60% in 10 s: 40 more percent take 10 s.
    expect(renderEta({ atMs: 0, percent: 20 }, 10_000, 60)).toBe(10);
    expect(renderEta({ atMs: 0, percent: 0 }, 4_000, 100)).toBe(0);
  });
});
