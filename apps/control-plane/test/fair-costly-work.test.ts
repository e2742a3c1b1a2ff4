import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BRAND_TTF, compositeBombTtf } from '../../../packages/renderer/test/helpers/fonts.ts';
import { createRefusalLedger } from '../src/services/fonts.ts';
import { startHarness, until, type Api, type Harness } from './harness.ts';

// Issue 40 (second round) items 5, 7 and 8: font checks and previews are shared fairly between
// accounts, and a checked font cannot be changed through its upload URL.

let h: Harness;
let brand: Buffer;
/** Moves the control plane's clock (the sweeper); 0 for every other test. */
let clockOffsetMs = 0;
beforeAll(async () => {
  brand = await readFile(BRAND_TTF);
  h = await startHarness({ CAPTIONFARM_PREVIEW_THREADS: '2' }, { now: () => new Date(Date.now() + clockOffsetMs) });
});
afterAll(() => h.close());

/** POST /v1/fonts and PUT the bytes; complete is the caller's. */
async function uploaded(a: Api, bytes: Uint8Array, fileName: string) {
  const created = await a('POST', '/v1/fonts', { fileName, sizeBytes: bytes.length });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const put = await fetch(created.body.uploadUrl, { method: 'PUT', body: bytes, headers: { 'content-type': created.body.contentType } });
  expect(put.status).toBe(200);
  return { fontId: created.body.fontId as string, uploadUrl: created.body.uploadUrl as string, contentType: created.body.contentType as string };
}

describe('font checks between accounts (item 5)', () => {
  it("one account's hostile fonts fill only its share of the checker: another account's font is checked at once, and the extra is 429 at once", async () => {
    const a = await h.account('pro', 'hostile-fonts');
    const b = await h.account('pro', 'normal-fonts');
    // 1.5 KB of doubling composite glyphs: refused only when its CPU budget runs out.
    const bomb = compositeBombTtf({ depth: 16, copies: 20 });
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) ids.push((await uploaded(a.api, bomb, `bomb-${i}.ttf`)).fontId);
    const normal = await uploaded(b.api, brand, 'Brand.ttf');

    const answered: string[] = [];
    const started = Date.now();
    const hostile = ids.map((id, i) =>
      a.api('POST', `/v1/fonts/${id}/complete`).then((r) => {
        answered.push(`A${i}:${r.status}`);
        return { ...r, ms: Date.now() - started };
      }),
    );
    // One account runs one check and has two waiting: its fourth is refused at once.
    const first = await Promise.race(hostile);
    expect(first.status, JSON.stringify(first.body)).toBe(429);
    expect(first.body.error.code).toBe('rate_limited');
    expect(Number(first.headers.get('retry-after'))).toBeGreaterThan(0);

    const bStarted = Date.now();
    const b1 = await b.api('POST', `/v1/fonts/${normal.fontId}/complete`);
    const bMs = Date.now() - bStarted;
    answered.push(`B:${b1.status}`);
    expect(b1.status, JSON.stringify(b1.body)).toBe(200);
    expect(b1.body.status).toBe('ready');

    const results = await Promise.all(hostile);
    const refused = results.filter((r) => r.status === 422);
    expect(results.filter((r) => r.status === 429)).toHaveLength(1);
    expect(refused).toHaveLength(3);
    for (const r of refused) expect(r.body.error.message).toMatch(/took too long to read/);
    // B was answered before A's queue drained: after the 429, B's font went ahead of A's waiting two.
    const bAt = answered.indexOf('B:200');
    expect(answered.slice(bAt + 1).filter((s) => s.endsWith(':422')).length, answered.join(' ')).toBeGreaterThanOrEqual(2);
    // Each refusal cost A its checker time (about 5 CPU-s for a 1.5 KB file, renderer cpuBudgetMs).
    expect(h.cp.services.fonts.refusedCpuMs(a.accountId)).toBeGreaterThanOrEqual(3 * 5_000);
    expect(h.cp.services.fonts.refusedCpuMs(b.accountId)).toBe(0);
    console.log(`item 5: B's font checked in ${bMs} ms; A's answers at ${results.map((r) => r.ms).join(', ')} ms; order ${answered.join(' ')}`);
  }, 180_000);

  it('refused fonts cost their account: past 60 s of checker time in an hour, its next complete is 429 until the hour has passed', () => {
    let t = Date.parse('2025-01-01T00:00:00Z');
    const ledger = createRefusalLedger({ limitMs: 60_000, windowMs: 3_600_000, now: () => new Date(t) });
    for (let i = 0; i < 11; i++) ledger.charge('a', 5_000);
    expect(ledger.refusal('a')).toBeUndefined();
    t += 10 * 60_000;
    ledger.charge('a', 5_000);
    const over = ledger.refusal('a');
    expect(over).toMatchObject({ code: 'rate_limited' });
    // The first eleven charges leave the window 50 minutes on: then the account is under its limit again.
    expect(over!.retryAfterSeconds).toBe(50 * 60);
    expect(ledger.refusal('b')).toBeUndefined();
    t += 50 * 60_000;
    expect(ledger.refusal('a')).toBeUndefined();
    expect(ledger.spentMs('a')).toBe(5_000);
  });
});

describe('a checked font and its upload URL (item 8)', () => {
  it('a PUT to the upload URL after complete changes nothing served: same bytes to agents, previews 200, and the sweeper removes what the PUT left', async () => {
    const a = await h.account('pro', 'replaced-font');
    const up = await uploaded(a.api, brand, 'Brand.ttf');
    const done = await a.api('POST', `/v1/fonts/${up.fontId}/complete`);
    expect(done.status, JSON.stringify(done.body)).toBe(200);
    const row = await h.cp.db.selectFrom('fonts').selectAll().where('id', '=', up.fontId).executeTakeFirstOrThrow();
    // The checked bytes live under a key no upload URL names; the upload itself is gone.
    expect(row.sfnt_key).toBe(`fonts/checked/${up.fontId}.ttf`);
    expect(await h.cp.store.head(row.object_key)).toBeNull();

    // The URL is still valid: another font of the same size goes in (the store accepts it).
    const other = Buffer.from(brand);
    other[other.length - 1] = other[other.length - 1]! ^ 0xff;
    const put = await fetch(up.uploadUrl, { method: 'PUT', body: other, headers: { 'content-type': up.contentType } });
    expect(put.status).toBe(200);

    const [leased] = await h.cp.services.fonts.leasedFonts(a.accountId, [up.fontId]);
    expect(Buffer.from(await (await fetch(leased!.url)).arrayBuffer()).equals(brand)).toBe(true);
    expect((await a.api('GET', `/v1/fonts/${up.fontId}`)).body.sha256).toBe(done.body.sha256);
    const preview = await fetch(`${h.url}/v1/templates/karaoke/preview`, {
      method: 'POST',
      headers: { authorization: `Bearer ${a.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ width: 360, height: 640, text: 'Brand fonts', style: { font: { fontId: up.fontId } } }),
    });
    expect(preview.status).toBe(200);

    // Once the URL expired, the sweeper deletes what the PUT left, and forgets the upload key.
    expect(await h.cp.store.head(row.object_key)).not.toBeNull();
    clockOffsetMs = 16 * 60_000;
    try {
      await h.cp.sweep();
    } finally {
      clockOffsetMs = 0;
    }
    expect(await h.cp.store.head(row.object_key)).toBeNull();
    const after = await h.cp.db.selectFrom('fonts').selectAll().where('id', '=', up.fontId).executeTakeFirstOrThrow();
    expect(after.object_key).toBe(after.sfnt_key);
    expect(after.status).toBe('ready');
    expect((await a.api('DELETE', `/v1/fonts/${up.fontId}`)).status).toBe(204);
    expect(await h.cp.store.head(row.sfnt_key!)).toBeNull();
  }, 120_000);
});

describe('previews between accounts (item 7)', () => {
  it("another account's 4 heavy previews make a preview wait for one of them, not all four", async () => {
    const a = await h.account('pro', 'heavy-previews');
    const b = await h.account('pro', 'light-previews');
    // Accepted by the checker, but every character is 2^11 triangles for the renderer to draw.
    const heavy = compositeBombTtf({ depth: 10, copies: 20, family: 'Heavy' });
    const up = await uploaded(a.api, heavy, 'heavy.ttf');
    const done = await a.api('POST', `/v1/fonts/${up.fontId}/complete`);
    expect(done.status, JSON.stringify(done.body)).toBe(200);
    const text = String.fromCodePoint(...Array.from({ length: 20 }, (_, i) => 0x4e00 + i)).replace(/(.{4})/gu, '$1 ');
    const preview = (who: { key: string }, body: unknown) =>
      fetch(`${h.url}/v1/templates/karaoke/preview`, {
        method: 'POST',
        headers: { authorization: `Bearer ${who.key}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      }).then(async (r) => ({ status: r.status, body: await r.arrayBuffer() }));

    const answered: string[] = [];
    const started = Date.now();
    const heavies = [0, 1, 2, 3].map((i) =>
      preview(a, { width: 1080, height: 1920, text, style: { font: { fontId: up.fontId, size: 20 } } }).then((r) => {
        answered.push(`A${i}:${r.status}`);
        return { ...r, ms: Date.now() - started };
      }),
    );
    // Two of A's render (both threads), two wait.
    await until(async () => h.cp.services.previews.stats().waiting === 2, 30_000, "A's previews waiting");
    const bStarted = Date.now();
    const light = await preview(b, { width: 360, height: 640, text: 'Hello there' });
    const bMs = Date.now() - bStarted;
    answered.push(`B:${light.status}`);
    expect(light.status).toBe(200);
    const results = await Promise.all(heavies);
    for (const r of results) expect(r.status).toBe(200);
    // B went ahead of A's waiting two: it waited for one of A's renders at most.
    const bAt = answered.indexOf('B:200');
    expect(answered.slice(bAt + 1).length, answered.join(' ')).toBeGreaterThanOrEqual(2);
    console.log(`item 7: B's preview answered in ${bMs} ms; A's at ${results.map((r) => r.ms).join(', ')} ms; order ${answered.join(' ')}`);
  }, 180_000);
});
