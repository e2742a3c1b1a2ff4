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
    expect(CreateJobRequestSchema.parse(base)).toEqual({
      ...base,
      format: 'mp4',
      quality: 'high',
      overlay: false,
      profanity: 'off',
      reframe: 'center',
      safeArea: 'none',
      placement: 'fixed',
      poster: false,
      subtitles: 'burn',
    });
  });

  it('refuses what issue 43 names as bad input: 5 outputs, an odd size, reframe on an overlay, an unknown safeArea', () => {
    const out = { resolution: { width: 1080, height: 1920 } };
    expect(issues({ ...base, outputs: [out, { resolution: { width: 1920, height: 1080 } }] })).toEqual([]);
    expect(issues({ ...base, outputs: Array.from({ length: 5 }, (_, i) => ({ resolution: { width: 640 + 2 * i, height: 360 } })) })).toEqual([
      { path: 'outputs', message: 'at most 4 outputs' },
    ]);
    expect(issues({ ...base, outputs: [{ resolution: { width: 1081, height: 1920 } }] }).map((i) => i.path)).toEqual(['outputs.0.resolution.width']);
    expect(issues({ ...base, overlay: true, format: 'webm', reframe: 'subject', resolution: out.resolution }).map((i) => i.path)).toEqual(['reframe']);
    expect(issues({ ...base, safeArea: 'snapchat' }).map((i) => i.path)).toEqual(['safeArea']);
    expect(issues({ ...base, placement: 'left' }).map((i) => i.path)).toEqual(['placement']);
    expect(issues({ ...base, subtitles: 'soft' }).map((i) => i.path)).toEqual(['subtitles']);
    expect(issues({ ...base, outputs: [] }).map((i) => i.path)).toEqual(['outputs']);
  });

  it('refuses framing that cannot mean anything: outputs with a top-level resolution, the same rendition twice, subject with nothing to crop', () => {
    const r = { width: 1080, height: 1920 };
    expect(issues({ ...base, resolution: r, outputs: [{ resolution: r }] }).map((i) => i.path)).toEqual(['resolution']);
    expect(issues({ ...base, outputs: [{ resolution: r }, { resolution: r, format: 'mp4' }] }).map((i) => i.path)).toEqual(['outputs.1']);
    expect(issues({ ...base, outputs: [{ resolution: r }, { resolution: r, reframe: 'subject' }] })).toEqual([]);
    expect(issues({ ...base, reframe: 'subject' }).map((i) => i.path)).toEqual(['reframe']);
    expect(issues({ ...base, outputs: [{ reframe: 'subject' }] }).map((i) => i.path)).toEqual(['outputs.0.reframe']);
    expect(
      issues({ ...base, overlay: true, format: 'webm', poster: true, subtitles: 'track', outputs: [{}] })
        .map((i) => i.path)
        .sort(),
    ).toEqual(['outputs', 'poster', 'subtitles']);
    expect(issues({ ...base, poster: { at: 2.5 } })).toEqual([]);
    expect(issues({ ...base, poster: { at: -1 } }).map((i) => i.path)).toEqual(['poster.at']);
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
