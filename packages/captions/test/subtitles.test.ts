import { describe, expect, it } from 'vitest';
import { displayWidth, formatSubtitleTime, subtitleCues, toSrt, toVtt, type SubtitleWord } from '../src/index.ts';

/** Words of `text` (split on spaces), one every `step` seconds, each `len` long. */
function words(text: string, o: { start?: number; step?: number; len?: number } = {}): SubtitleWord[] {
  const step = o.step ?? 0.3;
  return text.split(' ').map((t, i) => ({ text: t, start: (o.start ?? 0) + i * step, end: (o.start ?? 0) + i * step + (o.len ?? 0.25) }));
}

const LONG = 'the quick brown fox jumps over the lazy dog while seven wizards quietly judge the boxing match from a very tall wooden tower near the river bank';

describe('subtitleCues', () => {
  it('keeps every line within 42 columns and every cue within 2 lines, losing no word and keeping their order', () => {
    const cues = subtitleCues(words(LONG));
    expect(cues.length).toBeGreaterThan(1);
    for (const c of cues) {
      expect(c.lines.length).toBeGreaterThanOrEqual(1);
      expect(c.lines.length).toBeLessThanOrEqual(2);
      for (const l of c.lines) expect(l.length, l).toBeLessThanOrEqual(42);
    }
    expect(cues.flatMap((c) => c.lines).join(' ')).toBe(LONG);
    // Full cues are used: a cue only ends when the next word would not fit on 2 lines.
    expect(cues[0]!.lines.join(' ').length).toBeGreaterThan(42);
  });

  it('balances two lines rather than filling the first', () => {
    const [cue] = subtitleCues(words('one two three four five six seven eight nine ten eleven twelve'));
    expect(cue!.lines).toHaveLength(2);
    const [a, b] = cue!.lines.map((l) => l.length);
    expect(Math.abs(a! - b!)).toBeLessThanOrEqual(6);
  });

  it('a short sentence is one line', () => {
    expect(subtitleCues(words('Hello there world')).map((c) => c.lines)).toEqual([['Hello there world']]);
  });

  it('starts a new cue after a sentence, at a pause of 1 s, and before a cue would last over 7 s', () => {
    expect(subtitleCues(words('Hi. How are you?')).map((c) => c.lines.join(' '))).toEqual(['Hi.', 'How are you?']);
    const paused = [...words('before the pause'), ...words('after it', { start: 2.5 })];
    expect(subtitleCues(paused).map((c) => c.lines.join(' '))).toEqual(['before the pause', 'after it']);
    const slow = subtitleCues(words('a b c d e f g h i j', { step: 1, len: 0.9 }));
    for (const c of slow) expect(c.end - c.start).toBeLessThanOrEqual(7);
    expect(slow.length).toBe(2);
  });

  it('measures CJK by display width: a wide character counts 2, so 21 of them fill a line', () => {
    expect(displayWidth('日本語')).toBe(6);
    expect(displayWidth('한국어')).toBe(6);
    expect(displayWidth('abc')).toBe(3);
    // 60 one-character Chinese words: no spaces between them, 21 to a line.
    const han = '我们今天讨论字幕的显示宽度问题每个汉字占两个字符的位置所以一行最多二十一个汉字这句话一共有六十个汉字用来测试分行是否正确处理宽字符的情况好';
    const chars = [...han].slice(0, 60);
    const cues = subtitleCues(
      chars.map((t, i) => ({ text: t, start: i * 0.1, end: i * 0.1 + 0.08 })),
      { maxCueSeconds: 60 },
    );
    for (const c of cues) for (const l of c.lines) expect(displayWidth(l), l).toBeLessThanOrEqual(42);
    expect(cues[0]!.lines[0]).not.toContain(' ');
    expect(displayWidth(cues[0]!.lines[0]!)).toBeGreaterThan(36);
    expect(cues.flatMap((c) => c.lines).join('')).toBe(chars.join(''));
  });

  it('cuts a word wider than a line (a 30-character Japanese phrase) between characters, sharing its time', () => {
    const phrase = 'これは三十文字の日本語の文章で一つの単語として送られてきました';
    const cues = subtitleCues([{ text: phrase, start: 1, end: 4 }]);
    const lines = cues.flatMap((c) => c.lines);
    expect(lines.join('')).toBe(phrase);
    for (const l of lines) expect(displayWidth(l)).toBeLessThanOrEqual(42);
    expect(cues[0]!.start).toBe(1);
    expect(cues.at(-1)!.end).toBe(4);
  });

  it('keeps right-to-left text in logical order (never reversed for display)', () => {
    const hebrew = 'שלום לכולם וברוכים הבאים לתוכנית החדשה שלנו היום נדבר על כתוביות';
    const cues = subtitleCues(words(hebrew));
    const joined = cues.flatMap((c) => c.lines).join(' ');
    expect(joined).toBe(hebrew);
    // The first spoken word is the first word of the first line (in memory, i.e. logical order).
    expect(cues[0]!.lines[0]!.startsWith('שלום')).toBe(true);
    const arabic = words('مرحبا بكم في البرنامج');
    expect(toSrt(arabic)).toContain('مرحبا بكم في البرنامج');
  });

  it('cue times: first word start to last word end, cut at the next cue start', () => {
    const ws = [
      { text: 'One.', start: 0.5, end: 1.4 },
      { text: 'Two', start: 1.2, end: 1.6 },
    ];
    expect(subtitleCues(ws)).toEqual([
      { start: 0.5, end: 1.2, lines: ['One.'] },
      { start: 1.2, end: 1.6, lines: ['Two'] },
    ]);
  });

  it('no words, no cues', () => {
    expect(subtitleCues([])).toEqual([]);
    expect(toSrt([])).toBe('');
    expect(toVtt([])).toBe('WEBVTT\n\n');
  });
});

describe('SRT and WebVTT text', () => {
  it('timestamps: HH:MM:SS,mmm for SRT and HH:MM:SS.mmm for WebVTT, rounded to the millisecond', () => {
    expect(formatSubtitleTime(0, ',')).toBe('00:00:00,000');
    expect(formatSubtitleTime(3723.5, ',')).toBe('01:02:03,500');
    expect(formatSubtitleTime(59.9996, '.')).toBe('00:01:00.000');
    expect(formatSubtitleTime(12.3454, '.')).toBe('00:00:12.345');
  });

  it('SRT: numbered cues, a blank line after each', () => {
    const srt = toSrt([
      { text: 'Hello', start: 0, end: 0.5 },
      { text: 'world.', start: 0.5, end: 1.25 },
      { text: 'Again', start: 3, end: 3.5 },
    ]);
    expect(srt).toBe('1\n00:00:00,000 --> 00:00:01,250\nHello world.\n\n2\n00:00:03,000 --> 00:00:03,500\nAgain\n\n');
  });

  it('WebVTT: header, cues, and markup characters escaped', () => {
    const vtt = toVtt([
      { text: 'a<b>', start: 0, end: 0.5 },
      { text: 'R&D', start: 0.5, end: 1 },
      { text: '-->', start: 1, end: 1.5 },
    ]);
    expect(vtt).toBe('WEBVTT\n\n00:00:00.000 --> 00:00:01.500\na&lt;b&gt; R&amp;D --&gt;\n\n');
  });

  it('SRT: cue syntax in the words is neutralised: no "-->" line, no line break or blank line inside a word, no formatting tag (issue 40 item 15)', () => {
    const words = [
      { text: '-->', start: 0, end: 0.5 },
      { text: 'a\u0085\u0085b', start: 0.5, end: 1 },
      { text: 'c\u001c\u001dd', start: 1, end: 1.5 },
      { text: '<i>x', start: 1.5, end: 2 },
      { text: '{\\an8}y', start: 2, end: 2.5 },
    ];
    const srt = toSrt(words);
    // One cue, its timing line the only "-->"; every text line reads as the words (the U+200B is invisible).
    expect(srt).toBe('1\n00:00:00,000 --> 00:00:02,500\n--\u200b> a b c d <\u200bi>x {\u200b\\an8}y\n\n');
    const lines = srt.split(/\r\n|[\n\r\u0085\u001c-\u001e\u2028\u2029]/);
    expect(lines.filter((l) => l.includes('-->'))).toEqual(['00:00:00,000 --> 00:00:02,500']);
    expect(lines.slice(0, -2).filter((l) => l.trim() === '')).toEqual([]);
    // WebVTT has its own escapes, and the same line rule.
    expect(toVtt(words)).toBe('WEBVTT\n\n00:00:00.000 --> 00:00:02.500\n--&gt; a b c d &lt;i&gt;x {\\an8}y\n\n');
  });
});
