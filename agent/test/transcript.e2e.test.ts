import { mkdtemp } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { parseSync } from 'subtitle';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TranscriptRecordSchema, type TranscriptInput, type TranscriptRecord } from '@captionfarm/contracts';
import { createClient, type CaptionfarmClient } from '../../packages/sdk/src/index.ts';
import { createTranscriber, type Transcriber } from '@captionfarm/transcriber';
import { createSafeFetch } from '@captionfarm/net';
import { createAgent, type Agent } from '../src/index.ts';
import { makeClip, rawFrame, startFarm, testModelPath, type Farm } from './e2e-harness.ts';
import type { Api } from '../../apps/control-plane/test/harness.ts';

/**
 * The transcript as an output and an input, through the public API with a real agent (whisper.cpp
 * base model, canvas, ffmpeg): a recognized job's words are exported as JSON, SRT and WebVTT (read
 * back with real subtitle parsers); one word is fixed and the job made again with that transcript:
 * recognition is skipped, phase `transcribing` is still passed, and the fixed word is what the
 * video shows (pixels of the active-word colour where it is spoken).
 */
const { WebVTTParser } = createRequire(import.meta.url)('webvtt-parser') as {
  WebVTTParser: new () => { parse(s: string, mode: string): { cues: { startTime: number; endTime: number; text: string }[]; errors: unknown[] } };
};

let farm: Farm;
let agent: Agent;
let transcriber: Transcriber;
let recognitions = 0;
let clip: string;
let api: Api;
let cf: CaptionfarmClient;
const phases = new Map<string, string[]>();
const SPEECH = 'Captions make every video easier to follow, even with the sound off.';
const W = 360;
const H = 640;

beforeAll(async () => {
  farm = await startFarm();
  // A plain dark background, so the template's green active word is the only green in the frame.
  clip = await makeClip(farm.dir, 'talk.mp4', {
    width: W,
    height: H,
    seconds: 6,
    video: `color=c=0x303030:s=${W}x${H}:r=25:d=6`,
    speech: SPEECH,
    speechRate: 140,
  });

  // Every phase an agent reports, per job (the API is polled too coarsely to see a short phase).
  const agents = farm.cp.services.agents;
  const progress = agents.progress.bind(agents);
  agents.progress = async (input) => {
    phases.set(input.jobId, [...(phases.get(input.jobId) ?? []), input.phase]);
    return progress(input);
  };

  // The real transcriber, counting the recognitions it is asked for.
  const real = createTranscriber({ model: testModelPath(), threads: 2 });
  transcriber = {
    ...real,
    transcribe: (req) => {
      recognitions++;
      return real.transcribe(req);
    },
  };
  agent = createAgent({
    controlPlaneUrl: farm.url,
    token: await farm.agentToken(),
    nodeName: 'transcripts',
    workDir: await mkdtemp(path.join(farm.dir, 'agent-')),
    transcriber,
    encoder: 'cpu',
    heartbeatMs: 500,
    pollMs: 500,
    safeFetch: createSafeFetch({ allowLoopbackForTests: true, ca: farm.certs.ca }),
  });
  await agent.start();
  const account = await farm.account('pro', 'editor');
  api = account.api;
  cf = createClient({ baseUrl: farm.url, apiKey: account.key });
}, 240_000);
afterAll(async () => {
  await agent?.close();
  await transcriber?.close();
  await farm?.close();
});

/** Upload, create (with the SDK, as a client would), wait, download. */
async function burn(job: { transcript?: TranscriptInput }): Promise<{ id: string; video: string }> {
  const upload = await cf.uploadFile(clip);
  const created = await cf.createJob({ uploadId: upload.uploadId, templateId: 'word-pop', language: 'en', ...job });
  const done = await cf.waitForJob(created.id, { poll: { initialDelayMs: 200, maxDelayMs: 1000 } });
  expect(done.status, JSON.stringify(done)).toBe('succeeded');
  const video = path.join(farm.dir, `${created.id}.mp4`);
  await cf.downloadOutput(done, video);
  return { id: created.id, video };
}

async function transcript(id: string, format: 'json' | 'srt' | 'vtt' = 'json'): Promise<{ status: number; type: string | null; body: any }> {
  const res = await api('GET', `/v1/automation-jobs/${id}/transcript?format=${format}`);
  return { status: res.status, type: res.headers.get('content-type'), body: res.body };
}

/** The green of word-pop's active word (#3CFF6B) in the frame at `t` seconds: pixel count and bounding-box width. */
async function activeGreen(video: string, t: number): Promise<{ count: number; width: number }> {
  const stdout = await rawFrame(video, t, 'rgb24');
  let count = 0;
  let minX = W;
  let maxX = -1;
  for (let i = 0; i + 2 < stdout.length; i += 3) {
    const [r, g, b] = [stdout[i]!, stdout[i + 1]!, stdout[i + 2]!];
    if (g > 170 && r < 150 && b < 180 && g - r > 60) {
      count++;
      const x = (i / 3) % W;
      minX = Math.min(minX, x);
      maxX = Math.max(maxX, x);
    }
  }
  return { count, width: maxX >= minX ? maxX - minX + 1 : 0 };
}

/** Cue texts must be the words, in order: each cue takes the next words; returns the index of each cue's first word. */
function matchCues(cues: { start: number; end: number; text: string }[], words: TranscriptRecord['words']): number[] {
  const firsts: number[] = [];
  let i = 0;
  for (const cue of cues) {
    firsts.push(i);
    const tokens = cue.text.split(/\s+/).filter(Boolean);
    for (const tok of tokens) {
      expect(tok, `cue "${cue.text}" vs word ${i}`).toBe(words[i]?.text);
      i++;
    }
  }
  expect(i).toBe(words.length);
  return firsts;
}

function expectCuesAgree(cues: { start: number; end: number; text: string }[], words: TranscriptRecord['words']): void {
  expect(cues.length).toBeGreaterThan(0);
  const firsts = matchCues(cues, words);
  cues.forEach((cue, c) => {
    const first = words[firsts[c]!]!;
    const last = words[(firsts[c + 1] ?? words.length) - 1]!;
    expect(cue.start).toBeCloseTo(first.start, 3);
    expect(cue.end).toBeGreaterThan(cue.start);
    expect(cue.end).toBeLessThanOrEqual(last.end + 0.0005);
    if (c > 0) expect(cue.start).toBeGreaterThanOrEqual(cues[c - 1]!.end - 0.0005);
    for (const line of cue.text.split('\n')) expect(line.length).toBeLessThanOrEqual(42);
    expect(cue.text.split('\n').length).toBeLessThanOrEqual(2);
  });
}

describe('the transcript, end to end', () => {
  let recognized: { id: string; video: string };
  let words: TranscriptRecord['words'];

  it('a recognized job exports its words, and its SRT and WebVTT parse with real subtitle parsers and agree with the words', async () => {
    recognized = await burn({});
    expect(recognitions).toBe(1);
    const json = await transcript(recognized.id);
    expect(json.status).toBe(200);
    const record = TranscriptRecordSchema.parse(json.body);
    words = record.words;
    expect(record.language).toBe('en');
    expect(words.length).toBeGreaterThanOrEqual(8);
    expect(words.map((w) => w.text.toLowerCase().replace(/[^a-z]/g, '')).join(' ')).toMatch(/captions make every video/);
    for (const [i, w] of words.entries()) {
      expect(w.end).toBeGreaterThan(w.start);
      if (i > 0) expect(w.start).toBeGreaterThanOrEqual(words[i - 1]!.start);
    }

    const srt = await transcript(recognized.id, 'srt');
    expect(srt.type).toBe('application/x-subrip; charset=utf-8');
    const srtCues = parseSync(srt.body as string).flatMap((n) =>
      n.type === 'cue' ? [{ start: n.data.start / 1000, end: n.data.end / 1000, text: n.data.text }] : [],
    );
    expectCuesAgree(srtCues, words);

    const vtt = await transcript(recognized.id, 'vtt');
    expect(vtt.type).toBe('text/vtt; charset=utf-8');
    const tree = new WebVTTParser().parse(vtt.body as string, 'metadata');
    expect(tree.errors).toEqual([]);
    expectCuesAgree(
      tree.cues.map((c) => ({ start: c.startTime, end: c.endTime, text: c.text })),
      words,
    );
    // The other parser reads the same cues from the WebVTT file.
    const again = parseSync(vtt.body as string).flatMap((n) =>
      n.type === 'cue' ? [{ start: n.data.start / 1000, end: n.data.end / 1000, text: n.data.text }] : [],
    );
    expect(again).toEqual(srtCues);
  });

  it('a fixed word, sent back as the transcript, is burned as given: no recognition, phase transcribing passed, the export and the pixels show it', async () => {
    // Fix the longest-lasting short word: "CAPTIONFARM" in place of, say, "video".
    const candidates = words.map((w, i) => ({ i, w })).filter(({ w }) => w.text.replace(/[^\p{L}]/gu, '').length <= 5 && w.end - w.start >= 0.3);
    expect(candidates.length).toBeGreaterThan(0);
    const { i: edited } = candidates.sort((a, b) => b.w.end - b.w.start - (a.w.end - a.w.start))[0]!;
    const fixed = words.map((w, i) => (i === edited ? { ...w, text: 'Captionfarm' } : w));
    const exported = await cf.getTranscript(recognized.id);
    const before = recognitions;
    const remade = await burn({ transcript: { ...exported, words: fixed } });
    expect(recognitions).toBe(before);
    expect(phases.get(remade.id)).toEqual(expect.arrayContaining(['ingesting', 'transcribing', 'rendering']));
    expect(phases.get(remade.id)!.indexOf('transcribing')).toBeLessThan(phases.get(remade.id)!.indexOf('rendering'));

    // The export returns exactly the given words.
    expect(await cf.getTranscript(remade.id)).toEqual({ language: 'en', languageProbability: null, words: fixed });
    const srt = await cf.getTranscript(remade.id, { format: 'srt' });
    const vtt = await cf.getTranscript(remade.id, { format: 'vtt' });
    for (const text of [srt, vtt]) expect(text).toContain('Captionfarm');
    expectCuesAgree(
      new WebVTTParser().parse(vtt, 'metadata').cues.map((c) => ({ start: c.startTime, end: c.endTime, text: c.text })),
      fixed,
    );

    // Pixels: while the edited word is spoken, its green is about twice as wide as the recognized
    // word's in the first video; while an unedited word is spoken, both videos show the same.
    const w = fixed[edited]!;
    const at = w.start + Math.min(0.5 * (w.end - w.start), 0.25);
    const [mine, theirs, source] = await Promise.all([
      activeGreen(remade.video, at),
      activeGreen(recognized.video, at),
      activeGreen(path.join(farm.dir, 'talk.mp4'), at),
    ]);
    expect(source.count).toBe(0);
    expect(theirs.count).toBeGreaterThan(50);
    expect(mine.width / theirs.width, JSON.stringify({ mine, theirs, word: words[edited] })).toBeGreaterThan(1.6);
    expect(mine.count / theirs.count).toBeGreaterThan(1.5);
    const other = words.findIndex((x, i) => Math.abs(i - edited) > 3 && x.end - x.start >= 0.2);
    if (other !== -1) {
      const t2 = words[other]!.start + Math.min(0.5 * (words[other]!.end - words[other]!.start), 0.25);
      const [a, b] = await Promise.all([activeGreen(remade.video, t2), activeGreen(recognized.video, t2)]);
      expect(b.count).toBeGreaterThan(50);
      expect(a.count / b.count).toBeGreaterThan(0.8);
      expect(a.count / b.count).toBeLessThan(1.25);
    }
  });
});
