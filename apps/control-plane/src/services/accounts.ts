import { randomUUID } from 'node:crypto';
import { ApiError, PLANS, PlanIdSchema, type PlanId } from '@captionfarm/contracts';
import { appendLedger, lockAccount, minutesBalance, prepared, type Db } from '@captionfarm/db';
import type { Transaction } from 'kysely';
import type { Database } from '@captionfarm/db';
import { generateWebhookSecret } from '@captionfarm/webhooks';
import { generateApiKey, hashSecret } from '../crypto.ts';

const WEBHOOK_SECRET_OVERLAP_MS = 24 * 60 * 60 * 1000;
/** lastUsedAt of an API key is exact to this much (one write per key and minute at most). */
const LAST_USED_RESOLUTION_MS = 60_000;

// Every request of the public API looks its key up: compiled once (prepared).
const keyByHash = prepared((db, a: { hash: string }) =>
  db
    .selectFrom('api_keys')
    .innerJoin('accounts', 'accounts.id', 'api_keys.account_id')
    .select(['api_keys.id as keyId', 'api_keys.revoked_at', 'api_keys.last_used_at', 'accounts.id', 'accounts.plan'])
    .where('api_keys.hash', '=', a.hash),
);

// Every job create checks it (admission): compiled once (prepared).
const monthlyReset = prepared((db, a: { accountId: string; month: string }) =>
  db.selectFrom('minutes_ledger').select('id').where('account_id', '=', a.accountId).where('kind', '=', 'monthly_reset').where('note', '=', a.month),
);

const monthOf = (d: Date) => d.toISOString().slice(0, 7);

/**
 * Plan minutes are a monthly allowance: at the first activity of a UTC month the balance is
 * topped up to the plan's minutes (admin grants above that are kept). One ledger row per month.
 */
export async function ensureMonthlyAllowance(trx: Transaction<Database>, accountId: string, plan: PlanId, now: Date): Promise<void> {
  const month = monthOf(now);
  await lockAccount(trx, accountId);
  const [done] = await monthlyReset(trx, { accountId, month });
  if (done) return;
  const balance = await minutesBalance(trx, accountId);
  await appendLedger(trx, { accountId, kind: 'monthly_reset', minutes: Math.max(0, PLANS[plan].minutesPerMonth - balance), note: month, now });
}

type AccountsDeps = { db: Db; now: () => Date };

async function getAccount(db: Db, accountId: string) {
  const row = await db.selectFrom('accounts').selectAll().where('id', '=', accountId).executeTakeFirst();
  if (!row) throw new ApiError('not_found', `No account ${accountId}.`);
  return row;
}

export function createAccountsService(deps: AccountsDeps) {
  return {
    get: (accountId: string) => getAccount(deps.db, accountId),
    ...accountsAndMinutes(deps),
    ...apiKeys(deps),
    ...signingSecrets(deps),
  };
}
export type AccountsService = ReturnType<typeof createAccountsService>;

/** Accounts, their plans and minutes. */
function accountsAndMinutes(deps: AccountsDeps) {
  const { db, now } = deps;
  const get = (accountId: string) => getAccount(db, accountId);
  return {
    async create(input: { name: string; plan: PlanId }) {
      const id = randomUUID();
      const t = now();
      await db.transaction().execute(async (trx) => {
        await trx
          .insertInto('accounts')
          .values({
            id,
            name: input.name,
            plan: input.plan,
            webhook_secret: generateWebhookSecret(),
            webhook_secret_prev: null,
            webhook_secret_prev_expires_at: null,
            created_at: t.toISOString(),
          })
          .execute();
        await ensureMonthlyAllowance(trx, id, input.plan, t);
      });
      return { id, name: input.name, plan: input.plan, createdAt: t.toISOString() };
    },
    async list() {
      const rows = await db.selectFrom('accounts').selectAll().orderBy('created_at').execute();
      return Promise.all(
        rows.map(async (a) => ({ id: a.id, name: a.name, plan: a.plan, createdAt: a.created_at, minutesBalance: await minutesBalance(db, a.id) })),
      );
    },
    async setPlan(accountId: string, plan: PlanId) {
      PlanIdSchema.parse(plan);
      await get(accountId);
      await db.updateTable('accounts').set({ plan }).where('id', '=', accountId).execute();
      return { id: accountId, plan };
    },
    async grantMinutes(accountId: string, minutes: number, note: string | null) {
      if (!Number.isInteger(minutes) || minutes === 0 || Math.abs(minutes) > 10_000_000) {
        throw new ApiError('invalid_request', 'minutes must be a non-zero integer.');
      }
      return db.transaction().execute(async (trx) => {
        await lockAccount(trx, accountId);
        const balance = await minutesBalance(trx, accountId);
        if (balance + minutes < 0) throw new ApiError('invalid_request', `Cannot take ${-minutes} minutes: the balance is ${balance}.`);
        await appendLedger(trx, { accountId, kind: 'grant', minutes, note, now: now() });
        return { accountId, balance: balance + minutes };
      });
    },
    async showMinutes(accountId: string) {
      const account = await get(accountId);
      await db.transaction().execute((trx) => ensureMonthlyAllowance(trx, accountId, account.plan, now()));
      const ledger = await db.selectFrom('minutes_ledger').selectAll().where('account_id', '=', accountId).orderBy('id', 'desc').limit(100).execute();
      return {
        accountId,
        plan: account.plan,
        balance: await minutesBalance(db, accountId),
        ledger: ledger.map((l) => ({ id: l.id, kind: l.kind, minutes: l.minutes, jobId: l.job_id, note: l.note, createdAt: l.created_at })),
      };
    },
  };
}

/** API keys: create, list, revoke, and the lookup of every public API request. */
function apiKeys(deps: AccountsDeps) {
  const { db, now } = deps;
  const get = (accountId: string) => getAccount(db, accountId);
  return {
    async createKey(accountId: string, name: string | null = null) {
      await get(accountId);
      const key = generateApiKey();
      const id = randomUUID();
      await db
        .insertInto('api_keys')
        .values({
          id,
          account_id: accountId,
          prefix: key.slice(0, 12),
          hash: hashSecret(key),
          created_at: now().toISOString(),
          revoked_at: null,
          last_used_at: null,
          name,
        })
        .execute();
      return { id, accountId, name, key };
    },
    async listKeys(accountId: string) {
      await get(accountId);
      const rows = await db.selectFrom('api_keys').selectAll().where('account_id', '=', accountId).orderBy('created_at').execute();
      return rows.map((k) => ({ id: k.id, name: k.name, prefix: k.prefix, createdAt: k.created_at, revokedAt: k.revoked_at, lastUsedAt: k.last_used_at }));
    },
    /** Revokes a key; with `accountId`, only a key of that account (another's answers 404). */
    async revokeKey(keyId: string, accountId?: string) {
      let q = db.updateTable('api_keys').set({ revoked_at: now().toISOString() }).where('id', '=', keyId).where('revoked_at', 'is', null);
      if (accountId !== undefined) q = q.where('account_id', '=', accountId);
      const res = await q.executeTakeFirst();
      if (Number(res.numUpdatedRows) === 0) {
        let e = db.selectFrom('api_keys').select('id').where('id', '=', keyId);
        if (accountId !== undefined) e = e.where('account_id', '=', accountId);
        const exists = await e.executeTakeFirst();
        if (!exists) throw new ApiError('not_found', `No API key ${keyId}.`);
      }
      return { id: keyId, revoked: true };
    },
    /** The account of a bearer API key, or null (unknown or revoked). */
    async authenticate(key: string) {
      if (!key.startsWith('cf_live_')) return null;
      const [row] = await keyByHash(db, { hash: hashSecret(key) });
      if (!row || row.revoked_at !== null) return null;
      // lastUsedAt lets operators find stale keys; written at most once a minute per key, so a
      // busy key costs one small write a minute, not one per request.
      const t = now();
      if (row.last_used_at === null || t.getTime() - Date.parse(row.last_used_at) >= LAST_USED_RESOLUTION_MS) {
        await db.updateTable('api_keys').set({ last_used_at: t.toISOString() }).where('id', '=', row.keyId).execute();
      }
      return { accountId: row.id, plan: row.plan, keyId: row.keyId };
    },
  };
}

/** The account's webhook signing secrets: show, rotate (the previous one stays valid 24 h). */
function signingSecrets(deps: AccountsDeps) {
  const { db, now } = deps;
  const get = (accountId: string) => getAccount(db, accountId);
  return {
    /** Active signing secrets: the current one, and the previous one during its 24 h overlap. */
    async webhookSecrets(accountId: string): Promise<string[]> {
      const a = await get(accountId);
      const out = [a.webhook_secret];
      if (a.webhook_secret_prev && a.webhook_secret_prev_expires_at && a.webhook_secret_prev_expires_at > now().toISOString()) out.push(a.webhook_secret_prev);
      return out;
    },
    async showWebhookSecret(accountId: string) {
      const a = await get(accountId);
      const prevValid = a.webhook_secret_prev_expires_at !== null && a.webhook_secret_prev_expires_at > now().toISOString();
      return {
        accountId,
        secret: a.webhook_secret,
        previous: prevValid ? a.webhook_secret_prev : null,
        previousExpiresAt: prevValid ? a.webhook_secret_prev_expires_at : null,
      };
    },
    async rotateWebhookSecret(accountId: string) {
      const a = await get(accountId);
      const t = now();
      const secret = generateWebhookSecret();
      await db
        .updateTable('accounts')
        .set({
          webhook_secret: secret,
          webhook_secret_prev: a.webhook_secret,
          webhook_secret_prev_expires_at: new Date(t.getTime() + WEBHOOK_SECRET_OVERLAP_MS).toISOString(),
        })
        .where('id', '=', accountId)
        .execute();
      return { accountId, secret, previous: a.webhook_secret, previousExpiresAt: new Date(t.getTime() + WEBHOOK_SECRET_OVERLAP_MS).toISOString() };
    },
  };
}
