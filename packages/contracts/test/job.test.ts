import { describe, expect, it } from 'vitest';
import { CreateJobRequestSchema, JOB_PHASES, statusForPhase } from '../src/index.ts';

// The create-job body as the API validates it (the control plane answers 400 with these issues as
// `details`): what a client may send, the defaults it gets, and the requests that could never succeed.

const base = { videoUrl: 'https://v.example.com/talk.mp4', templateId: 'karaoke' };
const issues = (body: unknown) => {
  const r = CreateJobRequestSchema.safeParse(body);
  return r.success ? [] : r.error.issues.map((i) => ({ path: i.path.join('.'), message: i.message }));
};

describe('CreateJobRequestSchema', () => {
  it('fills the documented defaults: mp4, high quality, no overlay', () => {
    expect(CreateJobRequestSchema.parse(base)).toEqual({ ...base, format: 'mp4', quality: 'high', overlay: false, profanity: 'off' });
  });

  it('wants exactly one source: videoUrl or uploadId', () => {
    expect(issues({ templateId: 'karaoke' })).toEqual([{ path: 'videoUrl', message: 'give exactly one of videoUrl and uploadId (neither was given)' }]);
    expect(issues({ ...base, uploadId: '6d7c1f7e-0000-4000-8000-000000000000' })).toEqual([
      { path: 'uploadId', message: 'give exactly one of videoUrl and uploadId, not both' },
    ]);
    expect(issues({ uploadId: '6d7c1f7e-0000-4000-8000-000000000000', templateId: 'karaoke' })).toEqual([]);
  });

  it('refuses unknown fields instead of ignoring them (a misspelt option is not silently dropped)', () => {
    expect(
      issues({ ...base, webhookURL: 'https://h.example.com' })
        .map((i) => i.message)
        .join(),
    ).toMatch(/webhookURL/);
  });

  it('mov exists only as an overlay, and an overlay cannot be mp4', () => {
    expect(issues({ ...base, format: 'mov' }).map((i) => i.path)).toEqual(['format']);
    expect(issues({ ...base, format: 'mov', overlay: true })).toEqual([]);
    expect(issues({ ...base, format: 'webm', overlay: true })).toEqual([]);
    expect(issues({ ...base, overlay: true }).map((i) => i.path)).toEqual(['overlay']);
  });

  it('refuses resolutions that could never render: odd, tiny, or wider than 4:1', () => {
    expect(issues({ ...base, resolution: { width: 1080, height: 1920 } })).toEqual([]);
    expect(issues({ ...base, resolution: { width: 1081, height: 1920 } })).toEqual([
      { path: 'resolution.width', message: 'an even number of pixels (the encoders need even sizes), e.g. 1080' },
    ]);
    expect(issues({ ...base, resolution: { width: 1, height: 1 } }).map((i) => i.path)).toEqual(['resolution.width', 'resolution.height']);
    expect(issues({ ...base, resolution: { width: 2000, height: 400 } })).toEqual([{ path: 'resolution', message: 'an aspect ratio of at most 4:1' }]);
    expect(issues({ ...base, resolution: { width: 1600, height: 400 } })).toEqual([]);
  });

  it('takes a language the recognizer knows, in any case, and refuses one it does not', () => {
    expect(CreateJobRequestSchema.parse({ ...base, language: 'DE' }).language).toBe('de');
    expect(issues({ ...base, language: 'zz' }).map((i) => i.path)).toEqual(['language']);
    expect(issues({ ...base, language: 'eng' }).map((i) => i.path)).toEqual(['language']);
  });
});

describe('statusForPhase', () => {
  it('maps every phase to the status of the spec', () => {
    expect(Object.fromEntries(JOB_PHASES.map((p) => [p, statusForPhase(p)]))).toEqual({
      queued: 'queued',
      ingesting: 'running',
      transcribing: 'running',
      rendering: 'running',
      succeeded: 'succeeded',
      failed: 'failed',
      cancelled: 'cancelled',
    });
  });
});
