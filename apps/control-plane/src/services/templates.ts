import { ApiError, issuesToDetails } from '@captionfarm/contracts';
import type { Db } from '@captionfarm/db';

/** What the control plane needs of the caption engine's templates (built-ins and validation). */
export interface TemplateCatalog {
  builtins(): readonly { id: string; name: string; description: string }[];
  builtin(id: string): unknown | undefined;
  /** `style` applied over `base` and validated by the template schema, or the issues. */
  applyStyle(
    base: unknown,
    style: unknown,
  ): { ok: true; template: Record<string, unknown> } | { ok: false; issues: { path: readonly PropertyKey[]; message: string }[] };
  /** Validates a custom template body (defaults applied) or returns the issues. */
  validate(
    body: unknown,
  ):
    | { ok: true; template: { id: string; name: string; description?: string } & Record<string, unknown> }
    | { ok: false; issues: { path: readonly PropertyKey[]; message: string }[] };
}

export interface TemplateSummary {
  id: string;
  name: string;
  description: string;
  builtin: boolean;
  createdAt: string | null;
}

const MAX_CUSTOM_TEMPLATES = 200;

export function createTemplatesService(deps: {
  db: Db;
  catalog: TemplateCatalog;
  now: () => Date;
  /** Refuses font ids that are not ready fonts of the account (FontsService.requireReady). */
  requireFonts: (accountId: string, template: unknown, path: string) => Promise<void>;
}) {
  const { db, catalog, now } = deps;
  return {
    catalog,
    /** A template by id for this account: a built-in, or one of the account's own; null if none. */
    async resolve(accountId: string, id: string): Promise<unknown | null> {
      const builtin = catalog.builtin(id);
      if (builtin) return builtin;
      const row = await db.selectFrom('templates').select('body').where('id', '=', id).where('account_id', '=', accountId).executeTakeFirst();
      return row ? (JSON.parse(row.body) as unknown) : null;
    },
    async list(accountId: string): Promise<TemplateSummary[]> {
      const own = await db.selectFrom('templates').selectAll().where('account_id', '=', accountId).orderBy('created_at').execute();
      return [
        ...catalog.builtins().map((t) => ({ id: t.id, name: t.name, description: t.description, builtin: true, createdAt: null })),
        ...own.map((r) => {
          const body = JSON.parse(r.body) as { description?: string };
          return { id: r.id, name: r.name, description: body.description ?? '', builtin: false, createdAt: r.created_at };
        }),
      ];
    },
    async get(accountId: string, id: string) {
      const builtin = catalog.builtin(id);
      if (builtin) return { id, builtin: true, createdAt: null, template: builtin };
      const row = await db.selectFrom('templates').selectAll().where('id', '=', id).where('account_id', '=', accountId).executeTakeFirst();
      if (!row) throw new ApiError('not_found', `No template ${id}: list the available ones with GET /v1/templates.`);
      return { id: row.id, builtin: false, createdAt: row.created_at, template: JSON.parse(row.body) as unknown };
    },
    async create(accountId: string, body: unknown) {
      const checked = catalog.validate(body);
      if (!checked.ok) throw new ApiError('invalid_request', 'The template is not valid: see details.', { details: issuesToDetails(checked.issues) });
      const count = await db
        .selectFrom('templates')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('account_id', '=', accountId)
        .executeTakeFirstOrThrow();
      if (Number(count.n) >= MAX_CUSTOM_TEMPLATES)
        throw new ApiError('limit_exceeded', `An account can keep at most ${MAX_CUSTOM_TEMPLATES} custom templates; delete some first.`);
      const id = String(checked.template.id);
      if (catalog.builtin(id)) throw new ApiError('conflict', `"${id}" is a built-in template id; choose another id.`);
      const taken = await db.selectFrom('templates').select('id').where('account_id', '=', accountId).where('id', '=', id).executeTakeFirst();
      if (taken) throw new ApiError('conflict', `This account already has a template "${id}"; delete it first or choose another id.`);
      await deps.requireFonts(accountId, checked.template, 'font.fontId');
      const createdAt = now().toISOString();
      await db
        .insertInto('templates')
        .values({ id, account_id: accountId, name: checked.template.name, body: JSON.stringify(checked.template), created_at: createdAt })
        .execute();
      return { id, builtin: false, createdAt, template: checked.template };
    },
    /** Replaces a custom template's body (its id stays; a new `name` renames it). */
    async update(accountId: string, id: string, body: unknown) {
      if (catalog.builtin(id)) throw new ApiError('forbidden', `Template ${id} is built in and cannot be changed; save a copy under another id.`);
      const checked = catalog.validate(body);
      if (!checked.ok) throw new ApiError('invalid_request', 'The template is not valid: see details.', { details: issuesToDetails(checked.issues) });
      if (checked.template.id !== id)
        throw new ApiError('invalid_request', `The body's id "${checked.template.id}" differs from ${id}; a template's id cannot change.`, {
          details: [{ path: 'id', message: 'must equal the template being updated' }],
        });
      // Like a create: only a ready font of this account can be named.
      await deps.requireFonts(accountId, checked.template, 'font.fontId');
      const res = await db
        .updateTable('templates')
        .set({ name: checked.template.name, body: JSON.stringify(checked.template) })
        .where('id', '=', id)
        .where('account_id', '=', accountId)
        .executeTakeFirst();
      if (Number(res.numUpdatedRows) === 0) throw new ApiError('not_found', `No template ${id} in this account.`);
      const row = await db.selectFrom('templates').select('created_at').where('id', '=', id).where('account_id', '=', accountId).executeTakeFirstOrThrow();
      return { id, builtin: false, createdAt: row.created_at, template: checked.template };
    },
    async remove(accountId: string, id: string) {
      if (catalog.builtin(id)) throw new ApiError('forbidden', `Template ${id} is built in and cannot be deleted.`);
      const res = await db.deleteFrom('templates').where('id', '=', id).where('account_id', '=', accountId).executeTakeFirst();
      if (Number(res.numDeletedRows) === 0) throw new ApiError('not_found', `No template ${id} in this account.`);
    },
  };
}
export type TemplatesService = ReturnType<typeof createTemplatesService>;
