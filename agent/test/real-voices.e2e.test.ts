import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { wordErrorRate } from '@captionfarm/transcriber';
import { makeClip, parseMetrics, startFarm, submitUpload, terminal, watchJob, type Farm } from './e2e-harness.ts';

/**
 * Real voices through the public API with real agents (whisper.cpp base, ffmpeg): the spontaneous
 * monologue that once came back with no words at all is captioned, and a chunk that fails every
 * check is retried, dropped, logged and counted in /metrics, and fails its job: speech recognized
 * and then left out is never a silent success.
 */
const REAL = new URL('../../../shared/media/real/', import.meta.url).pathname;
let farm: Farm;

beforeAll(async () => {
  farm = await startFarm();
}, 240_000);
afterAll(async () => {
  await farm?.close();
});

/** A 360x640 video of `seconds` with the real recording as its sound. */
async function videoOf(name: string, seconds: number): Promise<Buffer> {
  const wav = path.join(REAL, `${name}.wav`);
  return readFile(
    await makeClip(farm.dir, `${name}.mp4`, { width: 360, height: 640, seconds, video: `color=c=0x303030:s=360x640:r=25:d=${seconds}`, audioFile: wav }),
  );
}

describe('real voices through the public API', () => {
  it('en_mfa_acoustic_corpus (26.7 s, um/uh, "words words words words"): WER <= 6%, language detected', async () => {
    const agent = await farm.startAgent({ name: 'real-voices' });
    try {
      const { api } = await farm.account('pro', 'real-voices');
      const job = await submitUpload(api, await videoOf('en_mfa_acoustic_corpus', 27), {});
      expect((await watchJob(api, job.id, terminal, 600_000)).job.status).toBe('succeeded');
      const transcript = (await api('GET', `/v1/automation-jobs/${job.id}/transcript`)).body as { language: string; words: { text: string }[] };
      const text = transcript.words.map((w) => w.text).join(' ');
      const wer = wordErrorRate(await readFile(path.join(REAL, 'en_mfa_acoustic_corpus.txt'), 'utf8'), text, 'en');
      console.log(`en_mfa_acoustic_corpus through the API: ${transcript.words.length} words, WER ${(wer * 100).toFixed(1)}%: ${text}`);
      expect(transcript.language).toBe('en');
      expect(wer).toBeLessThanOrEqual(0.06);
    } finally {
      await agent.close();
    }
  });

  it('a chunk that fails every check is retried, dropped, logged and counted, and its job fails', async () => {
    const logged: string[] = [];
    // A budget of nothing: the plain decode and the greedy retry both run out at the first check.
    const agent = await farm.startAgent({ name: 'no-budget', transcriber: { budget: { fixedSeconds: 0, perAudioSecond: 0 }, log: (m) => logged.push(m) } });
    try {
      const { api } = await farm.account('pro', 'no-budget');
      const job = await submitUpload(api, await videoOf('en_librivox_ps_0870', 7), { language: 'en' });
      const { job: ended } = await watchJob(api, job.id, terminal, 600_000);
      expect(ended).toMatchObject({ status: 'failed', failureCode: 'transcription-failed' });
      expect(ended.failureReason).toMatch(/left out by our checks \(no answer within [\d.]+ s of \d threads; then no answer within/);
      expect(logged.join('\n')).toMatch(/dropped [\d.]+-[\d.]+ s, no captions there \(no answer within .* then no answer within/);
      const m = parseMetrics(await (await fetch(`${farm.url}/metrics`, { headers: { authorization: `Bearer ${farm.cp.adminToken}` } })).text());
      expect(m.get('captionfarm_recognition_retries_total{check="budget"}')).toBe(2);
      expect(m.get('captionfarm_recognition_drops_total{check="budget"}')).toBe(1);
      expect(m.get('captionfarm_recognition_dropped_seconds_total{check="budget"}')).toBeGreaterThan(5);
      expect(m.get('captionfarm_jobs_finished_total{status="failed",failure_code="transcription-failed"}')).toBe(1);
    } finally {
      await agent.close();
    }
  });
});
