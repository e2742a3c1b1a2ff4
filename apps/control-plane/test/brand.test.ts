import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadImage, createCanvas } from '@napi-rs/canvas';
import { JobRecordSchema, MAX_FONTS_PER_ACCOUNT } from '@captionfarm/contracts';
import { checkSfnt } from '@captionfarm/renderer';
import {
  BRAND_FAMILY,
  BRAND_OTF,
  BRAND_OTF_FAMILY,
  BRAND_TTF,
  hostileFontCorpus,
  toWoff2,
  type HostileFont,
} from '../../../packages/renderer/test/helpers/fonts.ts';
import { startHarness, type Api, type Harness } from './harness.ts';

// Issue 16 at the API: per-job style, uploaded fonts, overlay formats.

let h: Harness;
let api: Api;
let other: Api;
let accountId: string;
let mainKey: string;
let brand: Buffer;
let brandWoff2: Buffer;
let corpus: HostileFont[];
/** Moves the control plane's clock (the pending-upload sweep); 0 for every other test. */
let clockOffsetMs = 0;
beforeAll(async () => {
  brand = await readFile(BRAND_TTF);
  // Before any request: the encoder blocks the event loop, and a kept-alive connection the server
  // closed meanwhile would reset the next request.
  brandWoff2 = await toWoff2(brand);
  corpus = await hostileFontCorpus({ mutants: 12 });
  h = await startHarness({}, { now: () => new Date(Date.now() + clockOffsetMs) });
  ({ api, accountId, key: mainKey } = await h.account('pro'));
  ({ api: other } = await h.account('pro', 'other'));
});
afterAll(() => h.close());

/** POST /v1/fonts, PUT the bytes, POST complete: the SDK's three steps. */
async function uploadFont(a: Api, bytes: Uint8Array, fileName: string) {
  const created = await a('POST', '/v1/fonts', { fileName, sizeBytes: bytes.length });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const put = await fetch(created.body.uploadUrl, { method: 'PUT', body: bytes, headers: { 'content-type': created.body.contentType } });
  expect(put.status).toBe(200);
  return { fontId: created.body.fontId as string, complete: await a('POST', `/v1/fonts/${created.body.fontId}/complete`) };
}

const job = (extra: Record<string, unknown>) => ({ videoUrl: 'https://v.example.com/a.mp4', templateId: 'karaoke', ...extra });

describe('/v1/fonts', () => {
  let fontId: string;

  it('uploads through a presigned URL, is checked at completion, and is listed with what the file says', async () => {
    const up = await uploadFont(api, brand, 'Brand.ttf');
    fontId = up.fontId;
    expect(up.complete.status, JSON.stringify(up.complete.body)).toBe(200);
    expect(up.complete.body).toMatchObject({
      id: fontId,
      status: 'ready',
      fileName: 'Brand.ttf',
      format: 'ttf',
      family: BRAND_FAMILY,
      weight: 400,
      italic: false,
      sizeBytes: brand.length,
    });
    expect(up.complete.body.sha256).toBe(createHash('sha256').update(brand).digest('hex'));
    expect((await api('POST', `/v1/fonts/${fontId}/complete`)).body.status).toBe('ready'); // idempotent
    const list = await api('GET', '/v1/fonts');
    expect(list.body.fonts.map((f: { id: string }) => f.id)).toEqual([fontId]);
    expect((await api('GET', `/v1/fonts/${fontId}`)).body.family).toBe(BRAND_FAMILY);
  });

  it('a WOFF2 is decoded once at completion; agents get the TTF', async () => {
    const up = await uploadFont(api, brandWoff2, 'brand.woff2');
    expect(up.complete.status, JSON.stringify(up.complete.body)).toBe(200);
    expect(up.complete.body).toMatchObject({ status: 'ready', format: 'woff2', family: BRAND_FAMILY });
    const leased = await h.cp.services.fonts.leasedFonts(accountId, [up.fontId]);
    const sfnt = Buffer.from(await (await fetch(leased[0]!.url)).arrayBuffer());
    expect(checkSfnt(sfnt).flavor).toBe('truetype');
    expect(createHash('sha256').update(sfnt).digest('hex')).toBe(up.complete.body.sha256);
    expect((await api('DELETE', `/v1/fonts/${up.fontId}`)).status).toBe(204);
  });

  it('an OTF (CFF outlines) is accepted as it is; agents get the same bytes', async () => {
    const otf = await readFile(BRAND_OTF);
    const up = await uploadFont(api, otf, 'Libertine.otf');
    expect(up.complete.status, JSON.stringify(up.complete.body)).toBe(200);
    expect(up.complete.body).toMatchObject({ status: 'ready', format: 'otf', family: BRAND_OTF_FAMILY, weight: 400, sizeBytes: otf.length });
    const leased = await h.cp.services.fonts.leasedFonts(accountId, [up.fontId]);
    const sfnt = Buffer.from(await (await fetch(leased[0]!.url)).arrayBuffer());
    expect(sfnt.equals(otf)).toBe(true);
    expect(checkSfnt(sfnt).flavor).toBe('cff');
    expect((await api('POST', '/v1/automation-jobs', job({ style: { font: { fontId: up.fontId } } }))).status).toBe(202);
    expect((await api('DELETE', `/v1/fonts/${up.fontId}`)).status).toBe(204);
  });

  it('a preview with the font as style draws with it', async () => {
    const png = async (body: unknown) => {
      const res = await fetch(`${h.url}/v1/templates/karaoke/preview`, {
        method: 'POST',
        headers: { authorization: `Bearer ${mainKey}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      expect(res.status).toBe(200);
      const img = await loadImage(Buffer.from(await res.arrayBuffer()));
      const c = createCanvas(img.width, img.height).getContext('2d');
      c.drawImage(img, 0, 0);
      return c.getImageData(0, 0, img.width, img.height).data;
    };
    const base = { width: 360, height: 640, text: 'Brand fonts everywhere' };
    const a = await png(base);
    const b = await png({ ...base, style: { font: { fontId } } });
    const again = await png({ ...base, style: { font: { fontId } } });
    let differ = 0;
    for (let i = 0; i < a.length; i += 4) if (Math.abs(a[i]! - b[i]!) + Math.abs(a[i + 1]! - b[i + 1]!) > 60) differ++;
    expect(differ).toBeGreaterThan(500);
    expect(Buffer.from(again).equals(Buffer.from(b))).toBe(true);
  });

  it("another account's font is 404 everywhere, and unusable", async () => {
    expect((await other('GET', `/v1/fonts/${fontId}`)).status).toBe(404);
    expect((await other('POST', `/v1/fonts/${fontId}/complete`)).status).toBe(404);
    expect((await other('DELETE', `/v1/fonts/${fontId}`)).status).toBe(404);
    const res = await other('POST', '/v1/automation-jobs', job({ style: { font: { fontId } } }));
    expect(res.status).toBe(400);
    expect(res.body.error.details).toEqual([{ path: 'style.font.fontId', message: 'unknown font' }]);
    expect((await other('GET', '/v1/fonts')).body.fonts).toEqual([]);
  });

  it('refuses other files, oversized fonts, completion before the upload, and more than 20 fonts', async () => {
    expect((await api('POST', '/v1/fonts', { fileName: 'brand.woff', sizeBytes: 100 })).status).toBe(415);
    expect((await api('POST', '/v1/fonts', { fileName: 'brand.txt', sizeBytes: 100 })).status).toBe(415);
    const big = await api('POST', '/v1/fonts', { fileName: 'big.ttf', sizeBytes: 10 * 1024 * 1024 + 1 });
    expect(big.status).toBe(422);
    expect(big.body.error.code).toBe('limit_exceeded');
    expect((await api('POST', '/v1/fonts', { fileName: 'x.ttf' })).status).toBe(400);
    const pending = await api('POST', '/v1/fonts', { fileName: 'later.ttf', sizeBytes: brand.length });
    const early = await api('POST', `/v1/fonts/${pending.body.fontId}/complete`);
    expect(early.status).toBe(409);
    expect(early.body.error.code).toBe('upload_not_completed');
    const { api: fresh } = await h.account('pro', 'many-fonts');
    for (let i = 0; i < MAX_FONTS_PER_ACCOUNT; i++) expect((await fresh('POST', '/v1/fonts', { fileName: `f${i}.ttf`, sizeBytes: 1000 })).status).toBe(201);
    const over = await fresh('POST', '/v1/fonts', { fileName: 'f20.ttf', sizeBytes: 1000 });
    expect(over.status).toBe(422);
    expect(over.body.error.message).toMatch(/at most 20 fonts/);
  });

  it('a custom template can name the font; an unknown font id is a 400', async () => {
    const ok = await api('POST', '/v1/templates', { id: 'brand', name: 'Brand', font: { fontId } });
    expect(ok.status, JSON.stringify(ok.body)).toBe(201);
    const bad = await api('POST', '/v1/templates', { id: 'brand-2', name: 'Brand 2', font: { fontId: '6d7c1f7e-0000-4000-8000-000000000000' } });
    expect(bad.status).toBe(400);
    expect((await api('POST', '/v1/automation-jobs', job({ templateId: 'brand' }))).status).toBe(202);
  });

  it('the hostile-font corpus is refused at upload with 422 invalid_font, deleted, and can reach no job', async () => {
    const refused: string[] = [];
    const { api: victim, accountId: victimId } = await h.account('pro', 'hostile');
    for (const c of corpus) {
      if (c.bytes.length === 0 || c.bytes.equals(brand)) continue; // an empty PUT is not an upload
      const up = await uploadFont(victim, c.bytes, `hostile.${c.ext}`);
      expect(up.complete.status, `${c.name}: ${JSON.stringify(up.complete.body)}`).toBe(422);
      expect(up.complete.body.error.code, c.name).toBe('invalid_font');
      expect(up.complete.body.error.message, c.name).toMatch(/^The font was refused: /);
      expect((await victim('GET', `/v1/fonts/${up.fontId}`)).status, c.name).toBe(404);
      refused.push(up.fontId);
      expect((await victim('POST', '/v1/automation-jobs', job({ style: { font: { fontId: up.fontId } } }))).status, c.name).toBe(400);
    }
    expect((await victim('GET', '/v1/fonts')).body.fonts).toEqual([]);
    expect((await victim('GET', '/v1/automation-jobs')).body.jobs).toEqual([]);
    // What a lease would carry for these ids: nothing.
    expect(refused.length).toBeGreaterThan(30);
    expect(await h.cp.services.fonts.leasedFonts(victimId, refused)).toEqual([]);
  }, 300_000);

  it('deletes', async () => {
    const up = await uploadFont(api, brand, 'gone.ttf');
    expect((await api('DELETE', `/v1/fonts/${up.fontId}`)).status).toBe(204);
    expect((await api('GET', `/v1/fonts/${up.fontId}`)).status).toBe(404);
    expect((await api('POST', '/v1/automation-jobs', job({ style: { font: { fontId: up.fontId } } }))).status).toBe(400);
  });
});

describe('a font upload never completed', () => {
  it('is swept an hour after its URL expired, object and all; a completed one stays', async () => {
    const { api: a } = await h.account('pro', 'pending-fonts');
    const kept = await uploadFont(a, brand, 'kept.ttf');
    expect(kept.complete.status).toBe(200);
    const abandoned = await a('POST', '/v1/fonts', { fileName: 'abandoned.ttf', sizeBytes: brand.length });
    const uploadedOnly = await a('POST', '/v1/fonts', { fileName: 'uploaded-only.ttf', sizeBytes: brand.length });
    expect((await fetch(uploadedOnly.body.uploadUrl, { method: 'PUT', body: brand })).status).toBe(200);
    const keyOf = async (id: string) => (await h.cp.db.selectFrom('fonts').select('object_key').where('id', '=', id).executeTakeFirstOrThrow()).object_key;
    const uploadedKey = await keyOf(uploadedOnly.body.fontId);
    try {
      // Still inside the grace: nothing goes.
      clockOffsetMs = 30 * 60_000;
      await h.cp.sweep();
      expect((await a('GET', '/v1/fonts')).body.fonts).toHaveLength(3);
      clockOffsetMs = 15 * 60_000 + 61 * 60_000;
      await h.cp.sweep();
    } finally {
      clockOffsetMs = 0;
    }
    const left = (await a('GET', '/v1/fonts')).body.fonts;
    expect(left.map((f: { id: string }) => f.id)).toEqual([kept.fontId]);
    expect(await h.cp.store.head(uploadedKey)).toBeNull();
    for (const id of [abandoned.body.fontId, uploadedOnly.body.fontId]) expect((await a('POST', `/v1/fonts/${id}/complete`)).status).toBe(404);
  });
});

describe('per-job style', () => {
  it('is applied over the template; the job record keeps exactly the spec keys; GET /style shows the effective style', async () => {
    const style = { font: { size: 9, family: 'Inter' }, active: { color: '#FF0000' }, text: { case: 'upper' }, emoji: 'auto', keywords: ['launch'] };
    const created = await api('POST', '/v1/automation-jobs', job({ style }));
    expect(created.status, JSON.stringify(created.body)).toBe(202);
    expect(Object.keys(created.body).sort()).toEqual(Object.keys(JobRecordSchema.shape).sort());
    expect(JobRecordSchema.safeParse(created.body).success).toBe(true);
    const s = await api('GET', `/v1/automation-jobs/${created.body.id}/style`);
    expect(s.status).toBe(200);
    expect(s.body).toMatchObject({ jobId: created.body.id, templateId: 'karaoke', overlay: false, override: style });
    expect(s.body.style.font).toMatchObject({ size: 9, family: 'Inter', weight: 800 });
    expect(s.body.style.active.color).toBe('#FF0000');
    expect(s.body.style.spoken.color).toBe('#FFD400'); // karaoke's, untouched
    expect(s.body.style).toMatchObject({ emoji: 'auto', keywords: ['launch'], text: { case: 'upper' } });
    expect((await other('GET', `/v1/automation-jobs/${created.body.id}/style`)).status).toBe(404);
    const plain = await api('POST', '/v1/automation-jobs', job({}));
    expect((await api('GET', `/v1/automation-jobs/${plain.body.id}/style`)).body).toMatchObject({ override: null, style: { id: 'karaoke' } });
  });

  it('is validated by the template schema: 400 with the path of each problem', async () => {
    const res = await api('POST', '/v1/automation-jobs', job({ style: { font: { size: 99 }, colour: '#fff', fill: 'red' } }));
    expect(res.status).toBe(400);
    const paths = res.body.error.details.map((d: { path: string }) => d.path);
    expect(paths).toEqual(expect.arrayContaining(['style.colour']));
    expect((await api('POST', '/v1/automation-jobs', job({ style: { font: { size: 99 } } }))).body.error.details[0].path).toBe('style.font.size');
    expect((await api('POST', '/v1/automation-jobs', job({ style: 'big' }))).status).toBe(400);
  });
});

describe('overlay formats', () => {
  it('mov only with overlay: true; an overlay is webm or mov', async () => {
    const mov = await api('POST', '/v1/automation-jobs', job({ format: 'mov' }));
    expect(mov.status).toBe(400);
    expect(mov.body.error.details[0].path).toBe('format');
    expect((await api('POST', '/v1/automation-jobs', job({ overlay: true }))).status).toBe(400); // mp4 default
    const ok = await api('POST', '/v1/automation-jobs', job({ format: 'mov', overlay: true }));
    expect(ok.status).toBe(202);
    expect(ok.body.format).toBe('mov');
    expect((await api('GET', `/v1/automation-jobs/${ok.body.id}/style`)).body.overlay).toBe(true);
    expect((await api('POST', '/v1/automation-jobs', job({ format: 'webm', overlay: true }))).status).toBe(202);
  });
});

describe('POST /v1/templates/:id/preview with a style', () => {
  async function redPixels(png: Buffer): Promise<number> {
    const img = await loadImage(png);
    const c = createCanvas(img.width, img.height).getContext('2d');
    c.drawImage(img, 0, 0);
    const d = c.getImageData(0, 0, img.width, img.height).data;
    let n = 0;
    for (let i = 0; i < d.length; i += 4) if (d[i]! > 200 && d[i + 1]! < 60 && d[i + 2]! < 60) n++;
    return n;
  }
  const preview = async (body: unknown) => {
    const res = await fetch(`${h.url}/v1/templates/clean-subtitle/preview`, {
      method: 'POST',
      headers: { authorization: `Bearer ${await keyOf()}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: Buffer.from(await res.arrayBuffer()) };
  };
  let key: string | undefined;
  const keyOf = async () => (key ??= (await h.account('pro', 'previewer')).key);

  it('renders the style over the template', async () => {
    const plain = await preview({ width: 360, height: 640 });
    const red = await preview({ width: 360, height: 640, style: { fill: '#FF0000' } });
    expect(plain.status).toBe(200);
    expect(red.status).toBe(200);
    expect(await redPixels(plain.body)).toBe(0);
    expect(await redPixels(red.body)).toBeGreaterThan(200);
  });

  it('400 for an invalid style', async () => {
    const res = await preview({ style: { fill: 'red' } });
    expect(res.status).toBe(400);
    expect(JSON.parse(res.body.toString()).error.details[0].path).toBe('style.fill');
  });
});
