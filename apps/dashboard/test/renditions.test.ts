import { CreateJobRequestSchema, issuesToDetails, JobOutputsSchema, MAX_OUTPUTS, type JobOutputs } from '@captionfarm/contracts';
import { describe, expect, it } from 'vitest';
import { FRAMING_START, framingFieldsOf, framingOptions, rowErrorPath, withRowAdded, type FramingFields, type RenditionRow } from '../src/renditions.ts';

// The new-job form's framing and renditions (issue 43): what the form sends must be a request the
// API takes, with exactly what the user set, and the API's messages must land on the row they are about.

const row = (patch: Partial<RenditionRow>): RenditionRow => ({ size: '', width: '', height: '', format: 'mp4', reframe: '', ...patch });
const request = (f: FramingFields, overlay = false) => ({ videoUrl: 'https://v.example.com/a.mp4', templateId: 'karaoke', ...framingOptions(f, { overlay }) });

describe('framingOptions', () => {
  it('sends nothing of issue 43 when left alone: the format only', () => {
    expect(framingOptions(FRAMING_START, { overlay: false })).toEqual({ format: 'mp4' });
  });

  it("one rendition is the job's own format and resolution, its reframe the job's", () => {
    const f = { ...FRAMING_START, renditions: [row({ size: '1080x1920', format: 'webm', reframe: 'subject' })] };
    const sent = request(f);
    expect(sent).toMatchObject({ format: 'webm', resolution: { width: 1080, height: 1920 }, reframe: 'subject' });
    expect(sent).not.toHaveProperty('outputs');
    expect(CreateJobRequestSchema.safeParse(sent).success).toBe(true);
  });

  it('three renditions and a poster: outputs in order, no top-level resolution, a request the API takes as sent', () => {
    const f: FramingFields = {
      ...FRAMING_START,
      reframe: 'subject',
      safeArea: 'tiktok',
      placement: 'auto',
      subtitles: 'both',
      poster: 'chosen',
      renditions: [
        row({ size: '1080x1920' }),
        row({ size: '1920x1080', reframe: 'center' }),
        row({ size: 'custom', width: '720', height: '900', format: 'webm' }),
      ],
    };
    const sent = request(f);
    expect(sent).toEqual({
      videoUrl: 'https://v.example.com/a.mp4',
      templateId: 'karaoke',
      format: 'mp4',
      reframe: 'subject',
      safeArea: 'tiktok',
      placement: 'auto',
      subtitles: 'both',
      poster: true,
      outputs: [
        { format: 'mp4', resolution: { width: 1080, height: 1920 } },
        { format: 'mp4', resolution: { width: 1920, height: 1080 }, reframe: 'center' },
        { format: 'webm', resolution: { width: 720, height: 900 } },
      ],
    });
    const parsed = CreateJobRequestSchema.safeParse(sent);
    expect(parsed.success, JSON.stringify(parsed.error?.issues)).toBe(true);
    expect(parsed.data?.outputs).toEqual((sent as { outputs?: unknown }).outputs);
  });

  it('a poster at a time goes as { at }', () => {
    expect(framingOptions({ ...FRAMING_START, poster: 'at', posterAt: '2.5' }, { overlay: false }).poster).toEqual({ at: 2.5 });
  });

  it('an overlay sends no reframe, renditions, poster or subtitle track, whatever the disabled fields hold', () => {
    const f: FramingFields = {
      ...FRAMING_START,
      reframe: 'subject',
      poster: 'chosen',
      subtitles: 'track',
      safeArea: 'reels',
      renditions: [row({ size: '1080x1920', format: 'mov' }), row({ size: '1920x1080' })],
    };
    const sent = { ...request(f, true), overlay: true };
    expect(sent).toEqual({
      videoUrl: 'https://v.example.com/a.mp4',
      templateId: 'karaoke',
      overlay: true,
      format: 'mov',
      safeArea: 'reels',
      resolution: { width: 1080, height: 1920 },
    });
    expect(CreateJobRequestSchema.safeParse(sent).success).toBe(true);
  });
});

describe('the rows', () => {
  it('an added row takes a size no row has yet, so it is never refused as a repeat; no more than MAX_OUTPUTS', () => {
    let rows = [row({ size: '1920x1080' })];
    for (let i = 0; i < 6; i++) rows = withRowAdded(rows);
    expect(rows).toHaveLength(MAX_OUTPUTS);
    expect(rows.map((r) => r.size)).toEqual(['1920x1080', '1080x1920', '1080x1080', '1080x1350']);
    expect(CreateJobRequestSchema.safeParse(request({ ...FRAMING_START, renditions: rows })).success).toBe(true);
  });

  it("the API's message about a row's odd width, or a repeated row, is found at that row's path", () => {
    const rows = [row({ size: '1080x1920' }), row({ size: 'custom', width: '1081', height: '1920' }), row({ size: '1080x1920' })];
    const parsed = CreateJobRequestSchema.safeParse(request({ ...FRAMING_START, renditions: rows }));
    const details = issuesToDetails(parsed.error?.issues ?? []);
    const at = (i: number) => details.filter((d) => d.path === rowErrorPath(rows.length, i) || d.path.startsWith(`${rowErrorPath(rows.length, i)}.`));
    expect(at(0)).toEqual([]);
    expect(
      at(1)
        .map((d) => d.message)
        .join(),
    ).toMatch(/even/);
    expect(
      at(2)
        .map((d) => d.message)
        .join(),
    ).toMatch(/same rendition twice/);

    const one = [row({ size: 'custom', width: '1081', height: '1920' })];
    const single = issuesToDetails(CreateJobRequestSchema.safeParse(request({ ...FRAMING_START, renditions: one })).error?.issues ?? []);
    expect(single.some((d) => d.path.startsWith(`${rowErrorPath(1, 0)}.`) && /even/.test(d.message))).toBe(true);
  });
});

describe('framingFieldsOf ("Render again" frames the new job as the old one)', () => {
  const made = (index: number, format: 'mp4' | 'webm', reframe: 'center' | 'subject', r: { width: number; height: number } | null) => ({
    index,
    format,
    reframe,
    requestedResolution: r,
    resolution: r ?? { width: 1280, height: 720 },
    sizeBytes: 1000,
    downloadUrl: `https://store.example.com/o${index}`,
    outputExpiresAt: '2026-12-05T00:00:00.000Z',
  });
  const jobOutputs = (o: Partial<JobOutputs>): JobOutputs =>
    JobOutputsSchema.parse({ jobId: '8d0f3f3e-2f4b-4d44-9f53-2d3c1a1e9b10', safeArea: 'none', placement: 'fixed', subtitles: 'burn', poster: null, ...o });

  it("sends back the job's renditions (presets and a custom size), each with its reframe, the safe area, placement, subtitles and a poster", () => {
    const before = jobOutputs({
      safeArea: 'tiktok',
      placement: 'auto',
      subtitles: 'both',
      outputs: [
        made(0, 'mp4', 'subject', { width: 1080, height: 1920 }),
        made(1, 'mp4', 'center', { width: 1920, height: 1080 }),
        made(2, 'webm', 'subject', { width: 720, height: 900 }),
      ],
      poster: { at: 1.2, width: 1080, height: 1920, sizeBytes: 2000, downloadUrl: 'https://store.example.com/p', outputExpiresAt: '2026-12-05T00:00:00.000Z' },
    });
    const fields = framingFieldsOf(before);
    expect(fields.renditions.map((r) => [r.size, r.width, r.height, r.format, r.reframe])).toEqual([
      ['1080x1920', '', '', 'mp4', 'subject'],
      ['1920x1080', '', '', 'mp4', 'center'],
      ['custom', '720', '900', 'webm', 'subject'],
    ]);
    const sent = request(fields);
    expect(sent).toMatchObject({ format: 'mp4', safeArea: 'tiktok', placement: 'auto', subtitles: 'both', poster: true });
    // The API takes it, and asks the agent for the same renditions the first job had.
    const parsed = CreateJobRequestSchema.safeParse(sent);
    expect(parsed.success, JSON.stringify(parsed.error?.issues)).toBe(true);
    expect(parsed.data?.outputs?.map((o) => [o.resolution, o.format, o.reframe])).toEqual(
      before.outputs.map((o) => [o.requestedResolution, o.format, o.reframe]),
    );
  });

  it("one rendition at the source's size: the format alone, as the first job sent it", () => {
    const fields = framingFieldsOf(jobOutputs({ outputs: [made(0, 'webm', 'center', null)] }));
    expect(framingOptions(fields, { overlay: false })).toEqual({ format: 'webm' });
  });
});
