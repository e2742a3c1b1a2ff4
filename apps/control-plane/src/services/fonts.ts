import { createHash, randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  ApiError,
  CreateFontRequestSchema,
  FONT_CONTENT_TYPES,
  MAX_FONTS_PER_ACCOUNT,
  MAX_FONT_BYTES,
  fontContentTypeForFileName,
  issuesToDetails,
  type FontRecord,
  type FontUploadRecord,
  type LeasedFont,
} from '@captionfarm/contracts';
import type { Db, FontRow } from '@captionfarm/db';
import type { ObjectStore } from '@captionfarm/storage';
import { FONT_CHECKS_IN_PARALLEL, FontRejectedError, inspectFont } from '@captionfarm/renderer';
import { createFairShare, type FairShare } from '../fair-share.ts';
import type { Caller } from '../jobs/service.ts';

const FONT_UPLOAD_URL_TTL_SECONDS = 15 * 60;
/**
 * A font upload never completed is removed this long after its URL expired: it counts against the
 * account's 20 fonts, so it must not linger for a day like a video upload; the hour leaves time to
 * call complete after a PUT that finished just before the URL expired.
 */
const PENDING_FONT_GRACE_MS = 60 * 60 * 1000;
/**
 * Font checks one account may have waiting behind its one running check; past them its next
 * complete is 429 at once. Checks take turns between accounts (fair-share.ts), and an account runs
 * one at a time, so another account's font starts at once on the other slot.
 */
const FONT_CHECKS_WAITING_PER_ACCOUNT = 2;
/**
 * The font checker's CPU time an account may spend on refused fonts in an hour; past it, its next
 * complete is 429 until enough of the hour has passed. A sound font is never refused, so only
 * hostile or broken files use this: 12 tiny hostile fonts at their 5 s budget, or 3 large ones at
 * 20 s (renderer cpuBudgetMs), then the account waits. Counted in this process, like the checker's
 * slots it protects: each control plane of a farm checks fonts with its own CPU.
 */
const REFUSED_FONT_CPU_MS_PER_HOUR = 60_000;
const REFUSAL_WINDOW_MS = 60 * 60 * 1000;

/** What refused font checks cost each account in the last `windowMs` (in memory, this process). */
export function createRefusalLedger(o: { limitMs: number; windowMs: number; now: () => Date }) {
  const spent = new Map<string, { at: number; cpuMs: number }[]>();
  const live = (key: string, t: number) => {
    const list = spent.get(key) ?? [];
    while (list.length > 0 && list[0]!.at <= t - o.windowMs) list.shift();
    if (list.length === 0) spent.delete(key);
    return list;
  };
  const sum = (list: { cpuMs: number }[]) => list.reduce((n, e) => n + e.cpuMs, 0);
  return {
    charge(key: string, cpuMs: number): void {
      const t = o.now().getTime();
      const list = live(key, t);
      list.push({ at: t, cpuMs: Math.max(0, cpuMs) });
      spent.set(key, list);
      if (spent.size > 1024) for (const k of [...spent.keys()]) live(k, t);
    },
    spentMs(key: string): number {
      return sum(live(key, o.now().getTime()));
    },
    /** 429 rate_limited while the key's refused checks used the limit, with Retry-After to when they drop under it. */
    refusal(key: string): ApiError | undefined {
      const t = o.now().getTime();
      const list = live(key, t);
      let total = sum(list);
      if (total < o.limitMs) return undefined;
      let i = 0;
      while (total >= o.limitMs && i < list.length) total -= list[i++]!.cpuMs;
      const until = list[i - 1]!.at + o.windowMs;
      return new ApiError(
        'rate_limited',
        `Fonts this account uploaded were refused after ${Math.round(sum(list) / 1000)} s of the font checker's time in the last hour (at most ${o.limitMs / 1000} s an hour); retry after the Retry-After delay.`,
        { retryAfterSeconds: Math.max(1, Math.ceil((until - t) / 1000)) },
      );
    },
  };
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function toFontRecord(row: FontRow): FontRecord {
  return {
    id: row.id,
    status: row.status,
    fileName: row.file_name,
    sizeBytes: row.size_bytes,
    format: row.format,
    family: row.family,
    subfamily: row.subfamily,
    weight: row.weight,
    italic: row.italic === null ? null : row.italic === 1,
    glyphs: row.glyphs,
    sha256: row.sha256,
    createdAt: row.created_at,
    completedAt: row.completed_at,
  };
}

/** A checked font on this machine's disk, for the preview workers to register. */
export interface LocalFont {
  id: string;
  sha256: string;
  weight: number;
  path: string;
}

type FontsDeps = {
  db: Db;
  store: ObjectStore;
  now: () => Date;
  /** Where checked fonts are cached for previews, by sha256. */
  cacheDir: string;
};

/** The service's state: its dependencies, the checker's slots and the refusal ledger. */
interface FontsState extends FontsDeps {
  checks: FairShare;
  refusals: ReturnType<typeof createRefusalLedger>;
}

/**
 * Uploaded fonts: a presigned upload like a video's, then `complete`, which reads the file in the
 * sandboxed font checker (packages/renderer inspectFont) and keeps it only if it passes. Only
 * 'ready' fonts can be named by a style or template, so no unchecked font reaches an agent.
 */
export function createFontsService(deps: FontsDeps) {
  const s: FontsState = {
    ...deps,
    /** The font checker's slots, in turns between accounts; the renderer's own bound never queues behind it. */
    checks: createFairShare({
      slots: FONT_CHECKS_IN_PARALLEL,
      perKey: 1,
      queuePerKey: FONT_CHECKS_WAITING_PER_ACCOUNT,
      full: () =>
        new ApiError(
          'rate_limited',
          `This account already has ${1 + FONT_CHECKS_WAITING_PER_ACCOUNT} fonts being checked or waiting; complete this one when one of them is done.`,
          { retryAfterSeconds: 5 },
        ),
    }),
    refusals: createRefusalLedger({ limitMs: REFUSED_FONT_CPU_MS_PER_HOUR, windowMs: REFUSAL_WINDOW_MS, now: deps.now }),
  };
  const { db, store } = s;
  return {
    create: (caller: Caller, body: unknown): Promise<FontUploadRecord> => createFontUpload(s, caller, body),
    /** Checks the uploaded file; a refused font is deleted and answered with 422 invalid_font. */
    complete: (caller: Caller, id: string): Promise<FontRecord> => completeFont(s, caller, id),
    /** The font checker's CPU time this account's refused fonts used in the last hour (ms). */
    refusedCpuMs: (accountId: string): number => s.refusals.spentMs(accountId),
    async list(caller: Caller): Promise<FontRecord[]> {
      const rows = await db.selectFrom('fonts').selectAll().where('account_id', '=', caller.accountId).orderBy('created_at').orderBy('id').execute();
      return rows.map(toFontRecord);
    },
    async get(caller: Caller, id: string): Promise<FontRecord> {
      return toFontRecord(await getOwned(db, caller.accountId, id));
    },
    async remove(caller: Caller, id: string): Promise<void> {
      const row = await getOwned(db, caller.accountId, id);
      await db.deleteFrom('fonts').where('id', '=', row.id).execute();
      await removeObjects(store, row);
    },
    sweepPending: (): Promise<number> => sweepPendingFonts(s),
    requireReady: (accountId: string, fontIds: readonly string[], path: string): Promise<void> => requireReadyFonts(db, accountId, fontIds, path),
    leasedFonts: (accountId: string, fontIds: readonly string[]): Promise<LeasedFont[]> => leasedFontsOf(s, accountId, fontIds),
    files: (accountId: string, fontIds: readonly string[]): Promise<LocalFont[]> => localFontFiles(s, accountId, fontIds),
  };
}
export type FontsService = ReturnType<typeof createFontsService>;

async function getOwned(db: Db, accountId: string, id: string): Promise<FontRow> {
  const row = UUID_RE.test(id)
    ? await db.selectFrom('fonts').selectAll().where('id', '=', id.toLowerCase()).where('account_id', '=', accountId).executeTakeFirst()
    : undefined;
  if (!row) throw new ApiError('not_found', `No font ${id} in this account: list them with GET /v1/fonts.`);
  return row;
}

async function fetchObject(store: ObjectStore, key: string, maxBytes: number): Promise<Buffer> {
  const res = await fetch(await store.presignGet({ key, expiresInSeconds: 300 }));
  if (!res.ok) throw new Error(`object store answered ${res.status} for ${key}`);
  const bytes = Buffer.from(await res.arrayBuffer());
  if (bytes.length > maxBytes) throw new Error(`object ${key} is larger than expected`);
  return bytes;
}

async function removeObjects(store: ObjectStore, row: FontRow): Promise<void> {
  await store.delete(row.object_key);
  if (row.sfnt_key && row.sfnt_key !== row.object_key) await store.delete(row.sfnt_key);
}

/** Step 1 of a font upload: a presigned PUT URL for exactly sizeBytes, within the size and count limits. */
async function createFontUpload(s: FontsState, caller: Caller, body: unknown): Promise<FontUploadRecord> {
  const { db, store, now } = s;
  const parsed = CreateFontRequestSchema.safeParse(body);
  if (!parsed.success)
    throw new ApiError('invalid_request', 'The request body is not a valid font upload request: see details.', {
      details: issuesToDetails(parsed.error.issues),
    });
  const { fileName, sizeBytes } = parsed.data;
  const contentType = fontContentTypeForFileName(fileName);
  if (!contentType)
    throw new ApiError(
      'unsupported_media_type',
      `"${fileName}" is not an accepted font file; accepted extensions: ${Object.keys(FONT_CONTENT_TYPES).join(', ')}.`,
    );
  if (sizeBytes > MAX_FONT_BYTES) {
    throw new ApiError('limit_exceeded', `A font file may be at most ${MAX_FONT_BYTES} bytes; this one is ${sizeBytes} bytes.`, {
      details: [{ path: 'sizeBytes', message: `at most ${MAX_FONT_BYTES}` }],
    });
  }
  const id = randomUUID();
  const ext = fileName.slice(fileName.lastIndexOf('.') + 1).toLowerCase();
  const key = `fonts/${id}.${ext}`;
  const t = now();
  const expiresAt = new Date(t.getTime() + FONT_UPLOAD_URL_TTL_SECONDS * 1000);
  await db.transaction().execute(async (trx) => {
    const n = await trx
      .selectFrom('fonts')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('account_id', '=', caller.accountId)
      .executeTakeFirstOrThrow();
    if (Number(n.n) >= MAX_FONTS_PER_ACCOUNT)
      throw new ApiError('limit_exceeded', `An account can keep at most ${MAX_FONTS_PER_ACCOUNT} fonts; delete some with DELETE /v1/fonts/:id first.`);
    await trx
      .insertInto('fonts')
      .values({
        id,
        account_id: caller.accountId,
        file_name: fileName,
        object_key: key,
        content_type: contentType,
        size_bytes: sizeBytes,
        status: 'pending',
        created_at: t.toISOString(),
        url_expires_at: expiresAt.toISOString(),
      })
      .execute();
  });
  const uploadUrl = await store.presignPut({ key, contentLength: sizeBytes, contentType, expiresInSeconds: FONT_UPLOAD_URL_TTL_SECONDS });
  return { fontId: id, uploadUrl, contentType, sizeBytes, expiresAt: expiresAt.toISOString() };
}

/** Checks the uploaded file; a refused font is deleted and answered with 422 invalid_font. */
async function completeFont(s: FontsState, caller: Caller, id: string): Promise<FontRecord> {
  const { db, store, now, checks, refusals } = s;
  const row = await getOwned(db, caller.accountId, id);
  if (row.status === 'ready') return toFontRecord(row);
  const overBudget = refusals.refusal(caller.accountId);
  if (overBudget) throw overBudget;
  const head = await store.head(row.object_key);
  if (!head || head.sizeBytes !== row.size_bytes) {
    throw new ApiError('upload_not_completed', `Font ${row.id} has not been uploaded: PUT the ${row.size_bytes} bytes to its uploadUrl first.`);
  }
  const dir = await mkdtemp(join(tmpdir(), 'captionfarm-font-'));
  try {
    const input = join(dir, 'upload');
    const output = join(dir, 'checked');
    await writeFile(input, await fetchObject(store, row.object_key, MAX_FONT_BYTES));
    let report;
    try {
      report = await checks.run(caller.accountId, () => inspectFont({ input, output }));
    } catch (err) {
      if (!(err instanceof FontRejectedError)) throw err;
      refusals.charge(caller.accountId, err.cpuMs);
      await db.deleteFrom('fonts').where('id', '=', row.id).execute();
      await removeObjects(store, row);
      throw new ApiError('invalid_font', `The font was refused: ${err.message}. Upload a TTF, OTF or WOFF2 file exported by a font tool.`, {
        details: [{ path: 'file', message: err.message }],
      });
    }
    // The checked bytes go to a key of their own, which no upload URL can write (upload keys are
    // fonts/<id>.<ext>): a PUT to the upload URL while it is still valid changes nothing that
    // agents or previews read. A WOFF2 is stored decoded (the checker decoded it once, here).
    const sfntKey = `fonts/checked/${row.id}.${report.outline === 'cff' ? 'otf' : 'ttf'}`;
    const url = await store.presignPut({ key: sfntKey, contentLength: report.sfntBytes, contentType: 'font/sfnt', expiresInSeconds: 300 });
    const put = await fetch(url, { method: 'PUT', body: await readFile(output), headers: { 'content-type': 'font/sfnt' } });
    if (!put.ok) throw new Error(`storing the checked font failed: HTTP ${put.status}`);
    await db
      .updateTable('fonts')
      .set({
        status: 'ready',
        format: report.format,
        family: report.family,
        subfamily: report.subfamily,
        weight: report.weight,
        italic: report.italic ? 1 : 0,
        glyphs: report.glyphs,
        sfnt_key: sfntKey,
        sfnt_bytes: report.sfntBytes,
        sha256: report.sha256,
        completed_at: now().toISOString(),
      })
      .where('id', '=', row.id)
      .where('status', '=', 'pending')
      .execute();
    // The upload is no longer read; what a later PUT leaves there, the sweeper removes once the URL expired.
    await store.delete(row.object_key);
    return toFontRecord(await getOwned(db, caller.accountId, row.id));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * Removes font uploads never completed (row and object), and what a PUT to a ready font's upload
 * URL left after its check, once that URL has expired. Returns how many pending uploads were removed.
 */
async function sweepPendingFonts(s: FontsState): Promise<number> {
  const { db, store, now } = s;
  const expired = await db
    .selectFrom('fonts')
    .select(['id', 'object_key', 'sfnt_key'])
    .where('status', '=', 'ready')
    .where('url_expires_at', '<', now().toISOString())
    .where((eb) => eb('sfnt_key', 'is not', null).and('object_key', '!=', eb.ref('sfnt_key')))
    .execute();
  for (const f of expired) {
    await store.delete(f.object_key);
    // Done once: the upload key is forgotten (no URL can write it any more).
    await db.updateTable('fonts').set({ object_key: f.sfnt_key! }).where('id', '=', f.id).execute();
  }
  const cutoff = new Date(now().getTime() - PENDING_FONT_GRACE_MS).toISOString();
  const stale = await db.selectFrom('fonts').selectAll().where('status', '=', 'pending').where('url_expires_at', '<', cutoff).execute();
  let removed = 0;
  for (const row of stale) {
    // Guarded: a completion that won the race keeps its font.
    const res = await db.deleteFrom('fonts').where('id', '=', row.id).where('status', '=', 'pending').executeTakeFirst();
    if (Number(res.numDeletedRows) !== 1) continue;
    await removeObjects(store, row);
    removed++;
  }
  return removed;
}

/**
 * Refuses a template or style naming a font that is not a ready font of this account.
 * `path` is where the font id sits in the request, for the error's details.
 */
async function requireReadyFonts(db: Db, accountId: string, fontIds: readonly string[], path: string): Promise<void> {
  for (const id of fontIds) {
    const row = UUID_RE.test(id)
      ? await db.selectFrom('fonts').select(['status']).where('id', '=', id).where('account_id', '=', accountId).executeTakeFirst()
      : undefined;
    if (!row)
      throw new ApiError('invalid_request', `Unknown font ${id}: upload it with POST /v1/fonts, or list yours with GET /v1/fonts.`, {
        details: [{ path, message: 'unknown font' }],
      });
    if (row.status !== 'ready')
      throw new ApiError('invalid_request', `Font ${id} is not ready: complete its upload with POST /v1/fonts/${id}/complete.`, {
        details: [{ path, message: 'font not ready' }],
      });
  }
}

/** What an agent needs to fetch a job's fonts (fonts deleted since the job was created are left out). */
async function leasedFontsOf(s: FontsState, accountId: string, fontIds: readonly string[]): Promise<LeasedFont[]> {
  const { db, store } = s;
  const out: LeasedFont[] = [];
  for (const id of fontIds) {
    const row = await db
      .selectFrom('fonts')
      .selectAll()
      .where('id', '=', id)
      .where('account_id', '=', accountId)
      .where('status', '=', 'ready')
      .executeTakeFirst();
    if (!row?.sfnt_key || !row.sha256 || !row.sfnt_bytes) continue;
    out.push({
      id: row.id,
      sha256: row.sha256,
      sizeBytes: row.sfnt_bytes,
      weight: row.weight ?? 400,
      url: await store.presignGet({ key: row.sfnt_key, expiresInSeconds: 6 * 3600 }),
    });
  }
  return out;
}

/** An account's ready fonts as local files (fetched once per content hash), for template previews. */
async function localFontFiles(s: FontsState, accountId: string, fontIds: readonly string[]): Promise<LocalFont[]> {
  const out: LocalFont[] = [];
  for (const f of await leasedFontsOf(s, accountId, fontIds)) {
    const file = join(s.cacheDir, `${f.sha256}.sfnt`);
    const cached = await stat(file).then(
      (st) => st.size === f.sizeBytes,
      () => false,
    );
    if (!cached) {
      const res = await fetch(f.url);
      if (!res.ok) throw new Error(`font ${f.id}: object store answered ${res.status}`);
      const bytes = Buffer.from(await res.arrayBuffer());
      if (createHash('sha256').update(bytes).digest('hex') !== f.sha256) throw new Error(`font ${f.id}: stored bytes do not match their hash`);
      await mkdir(s.cacheDir, { recursive: true });
      const tmp = `${file}.${randomUUID().slice(0, 8)}.partial`;
      await writeFile(tmp, bytes);
      await rename(tmp, file);
    }
    out.push({ id: f.id, sha256: f.sha256, weight: f.weight, path: file });
  }
  return out;
}

/** The uploaded font ids a template (or effective style) names. */
export function fontIdsOf(template: unknown): string[] {
  const id = (template as { font?: { fontId?: unknown } } | null)?.font?.fontId;
  return typeof id === 'string' ? [id] : [];
}
