import { randomBytes, randomUUID } from 'node:crypto';
import { ApiError } from '@captionfarm/contracts';
import type { Db, Session, User } from '@captionfarm/db';
import { hashSecret } from '../crypto.ts';
import type { Passwords } from './passwords.ts';

const INVITE_TTL_MS = 72 * 3600_000;
/** A session ends after this long without a request... */
const SESSION_IDLE_MS = 2 * 3600_000;
/** ...and this long after sign-in, whatever happens. */
export const SESSION_ABSOLUTE_MS = 24 * 3600_000;
/** last_seen_at is written at most this often (one write per minute per session, not per request). */
const TOUCH_EVERY_MS = 60_000;
const MIN_PASSWORD_LENGTH = 10;
const MAX_PASSWORD_LENGTH = 200;

/**
 * Passwords chosen first by people (and by password crackers first), of 10 characters or more:
 * refused outright, as NIST SP 800-63B asks ("commonly used, expected, or compromised").
 */
const COMMON_PASSWORDS = new Set([
  '1234567890',
  '12345678910',
  '0123456789',
  '0987654321',
  '1q2w3e4r5t',
  '1qaz2wsx3edc',
  'qwertyuiop',
  'asdfghjkl;',
  'password123',
  'password1234',
  'passw0rd123',
  'iloveyou123',
  'qwerty12345',
  'qwerty123456',
  'abcdefghij',
  'abc1234567',
  'letmein1234',
  'welcome123',
  'administrator',
  'changeme123',
  'captionfarm',
  'captionfarm1',
  'captionfarm123',
]);

/** Why a password cannot be used, or null: at least 10 characters, not blank or one repeated, more than the email, not a common one. */
function passwordProblem(password: string, email: string): string | null {
  if (password.length < MIN_PASSWORD_LENGTH || password.length > MAX_PASSWORD_LENGTH) return `${MIN_PASSWORD_LENGTH} to ${MAX_PASSWORD_LENGTH} characters`;
  const folded = password.normalize('NFKC').toLowerCase();
  const visible = folded.replace(/[\s\p{Cc}\p{Cf}]/gu, '');
  if (visible.length < MIN_PASSWORD_LENGTH / 2) return 'mostly spaces or invisible characters';
  if (new Set(visible).size < 4) return 'at least 4 different characters';
  // What is left once the email (or its name) is taken out must be a password of its own.
  const local = email.split('@')[0] ?? '';
  const rest = visible.replaceAll(email, '').replaceAll(local.length >= 3 ? local : email, '');
  if (rest.length < MIN_PASSWORD_LENGTH / 2) return 'more than your email address or its name';
  if (COMMON_PASSWORDS.has(folded) || COMMON_PASSWORDS.has(visible)) return 'not one of the most common passwords';
  return null;
}

export interface UserView {
  id: string;
  email: string;
  accountId: string | null;
  admin: boolean;
  /** false until the invite is accepted. */
  active: boolean;
  createdAt: string;
  lastSignInAt: string | null;
}

export function toUserView(u: User): UserView {
  return {
    id: u.id,
    email: u.email,
    accountId: u.account_id,
    admin: u.is_admin === 1,
    active: u.password_hash !== null,
    createdAt: u.created_at,
    lastSignInAt: u.last_sign_in_at,
  };
}

const EMAIL_RE = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

type UsersDeps = { db: Db; now: () => Date; passwords: Passwords };

/** Users, invites and sessions of the dashboard. Passwords never leave this module. */
export function createUsersService(deps: UsersDeps) {
  const { db, now } = deps;
  return {
    /** Creates the user (or re-invites a pending one) and a one-time token valid 72 h (inviteUser). */
    invite: (input: { email: string; accountId: string | null; admin: boolean }) => inviteUser(deps, input),

    async list(filter: { accountId?: string } = {}): Promise<UserView[]> {
      let q = db.selectFrom('users').selectAll().orderBy('created_at');
      if (filter.accountId) q = q.where('account_id', '=', filter.accountId);
      return (await q.execute()).map(toUserView);
    },

    /** Removes a user by id or email: their sessions end at once. */
    async remove(idOrEmail: string, filter: { accountId?: string } = {}): Promise<UserView> {
      let q = db
        .selectFrom('users')
        .selectAll()
        .where((eb) => eb.or([eb('id', '=', idOrEmail), eb('email', '=', idOrEmail.trim().toLowerCase())]));
      if (filter.accountId) q = q.where('account_id', '=', filter.accountId);
      const u = await q.executeTakeFirst();
      if (!u) throw new ApiError('not_found', `No user ${idOrEmail}.`);
      await db.transaction().execute(async (trx) => {
        await trx.deleteFrom('sessions').where('user_id', '=', u.id).execute();
        await trx.deleteFrom('user_invites').where('user_id', '=', u.id).execute();
        await trx.deleteFrom('users').where('id', '=', u.id).execute();
      });
      return toUserView(u);
    },

    /** What the invite page shows before a password is chosen; null when unusable. */
    async inviteInfo(token: string): Promise<{ email: string; expiresAt: string } | null> {
      const row = await db
        .selectFrom('user_invites')
        .innerJoin('users', 'users.id', 'user_invites.user_id')
        .select(['users.email', 'user_invites.expires_at', 'user_invites.used_at'])
        .where('user_invites.token_hash', '=', hashSecret(token))
        .executeTakeFirst();
      if (!row || row.used_at !== null || row.expires_at <= now().toISOString()) return null;
      return { email: row.email, expiresAt: row.expires_at };
    },

    /** Sets the password of an invite's user (once) and returns the user (acceptUserInvite). */
    acceptInvite: (token: string, password: string, client: string) => acceptUserInvite(deps, token, password, client),
    ...sessions(deps),
  };
}
export type UsersService = ReturnType<typeof createUsersService>;

/**
 * Creates the user (or re-invites a pending one) and a one-time token valid 72 h. Earlier
 * unused invites of the same user stop working. An active user cannot be invited again.
 */
async function inviteUser(
  deps: UsersDeps,
  input: { email: string; accountId: string | null; admin: boolean },
): Promise<{ user: UserView; token: string; expiresAt: string }> {
  const { db, now } = deps;
  const email = input.email.trim().toLowerCase();
  if (!EMAIL_RE.test(email) || email.length > 254)
    throw new ApiError('invalid_request', `"${input.email}" is not an email address.`, { details: [{ path: 'email', message: 'not an email address' }] });
  if (!input.accountId && !input.admin)
    throw new ApiError('invalid_request', 'A member needs an account: pass the account id (only administrators may have none).', {
      details: [{ path: 'accountId', message: 'required for members' }],
    });
  if (input.accountId) {
    const acc = await db.selectFrom('accounts').select('id').where('id', '=', input.accountId).executeTakeFirst();
    if (!acc) throw new ApiError('not_found', `No account ${input.accountId}.`);
  }
  const t = now();
  const token = `cfi_${randomBytes(32).toString('base64url')}`;
  const expiresAt = new Date(t.getTime() + INVITE_TTL_MS).toISOString();
  const user = await db.transaction().execute(async (trx) => {
    let u = await trx.selectFrom('users').selectAll().where('email', '=', email).executeTakeFirst();
    if (u?.password_hash) throw new ApiError('conflict', `${email} already has a password; remove the user first to invite again.`);
    if (u) {
      await trx
        .updateTable('users')
        .set({ account_id: input.accountId, is_admin: input.admin ? 1 : 0 })
        .where('id', '=', u.id)
        .execute();
      await trx.updateTable('user_invites').set({ used_at: t.toISOString() }).where('user_id', '=', u.id).where('used_at', 'is', null).execute();
    } else {
      await trx
        .insertInto('users')
        .values({
          id: randomUUID(),
          account_id: input.accountId,
          email,
          is_admin: input.admin ? 1 : 0,
          password_hash: null,
          created_at: t.toISOString(),
          last_sign_in_at: null,
        })
        .execute();
    }
    u = await trx.selectFrom('users').selectAll().where('email', '=', email).executeTakeFirstOrThrow();
    await trx
      .insertInto('user_invites')
      .values({ id: randomUUID(), user_id: u.id, token_hash: hashSecret(token), created_at: t.toISOString(), expires_at: expiresAt, used_at: null })
      .execute();
    return u;
  });
  return { user: toUserView(user), token, expiresAt };
}

/**
 * Sets the password of an invite's user (once) and returns the user. The invite is looked up
 * before the password is hashed: a made-up token costs a hash of the token and one read, not
 * a password hash. `client` is the caller's address (passwords.ts shares hashing by address).
 */
async function acceptUserInvite(deps: UsersDeps, token: string, password: string, client: string): Promise<User> {
  const { db, now, passwords } = deps;
  const unusable = () => new ApiError('not_found', 'This invite link is unknown, used or expired; ask an administrator for a new one.');
  const found = await db
    .selectFrom('user_invites')
    .innerJoin('users', 'users.id', 'user_invites.user_id')
    .select(['user_invites.id', 'user_invites.used_at', 'user_invites.expires_at', 'users.email'])
    .where('user_invites.token_hash', '=', hashSecret(token))
    .executeTakeFirst();
  if (!found || found.used_at !== null || found.expires_at <= now().toISOString()) throw unusable();
  const problem = passwordProblem(password, found.email);
  if (problem) {
    throw new ApiError('invalid_request', `Choose another password: ${problem}.`, { details: [{ path: 'password', message: problem }] });
  }
  const hash = await passwords.hash(password, client);
  const t = now().toISOString();
  return db.transaction().execute(async (trx) => {
    const inv = await trx.selectFrom('user_invites').selectAll().where('id', '=', found.id).executeTakeFirst();
    if (!inv || inv.used_at !== null || inv.expires_at <= t) throw unusable();
    const used = await trx.updateTable('user_invites').set({ used_at: t }).where('id', '=', inv.id).where('used_at', 'is', null).executeTakeFirst();
    if (Number(used.numUpdatedRows) !== 1) throw new ApiError('not_found', 'This invite link was already used; ask an administrator for a new one.');
    await trx.updateTable('users').set({ password_hash: hash }).where('id', '=', inv.user_id).execute();
    return trx.selectFrom('users').selectAll().where('id', '=', inv.user_id).executeTakeFirstOrThrow();
  });
}

/** Passwords and sessions: sign-in's check, a session's start, lookup, end, and a user's revocation. */
function sessions(deps: UsersDeps) {
  const { db, now, passwords } = deps;
  /** A hash nobody's password matches, verified when the email is unknown so timing does not tell. */
  let dummyHash: Promise<string> | undefined;

  async function revokeSessionsOf(userId: string): Promise<void> {
    await db.updateTable('sessions').set({ revoked_at: now().toISOString() }).where('user_id', '=', userId).where('revoked_at', 'is', null).execute();
  }

  return {
    /** The user whose email and password match, or null (same work either way). */
    async checkPassword(email: string, password: string, client: string): Promise<User | null> {
      const u = await db.selectFrom('users').selectAll().where('email', '=', email.trim().toLowerCase()).executeTakeFirst();
      if (!u?.password_hash) {
        dummyHash ??= passwords.hash(randomBytes(16).toString('hex'), 'dummy');
        await passwords.verify(password, await dummyHash, client);
        return null;
      }
      return (await passwords.verify(password, u.password_hash, client)) ? u : null;
    },

    /** A new session for the user; returns the cookie token (only its hash is stored). */
    async createSession(userId: string): Promise<{ token: string; csrfToken: string; expiresAt: string }> {
      const t = now();
      const token = randomBytes(32).toString('base64url');
      const csrfToken = randomBytes(32).toString('base64url');
      const expiresAt = new Date(t.getTime() + SESSION_ABSOLUTE_MS).toISOString();
      await db
        .insertInto('sessions')
        .values({
          id: hashSecret(token),
          user_id: userId,
          csrf_token: csrfToken,
          created_at: t.toISOString(),
          last_seen_at: t.toISOString(),
          expires_at: expiresAt,
          revoked_at: null,
        })
        .execute();
      await db.updateTable('users').set({ last_sign_in_at: t.toISOString() }).where('id', '=', userId).execute();
      // Expired and revoked sessions of this user go now, so the table does not grow.
      await db
        .deleteFrom('sessions')
        .where('user_id', '=', userId)
        .where((eb) =>
          eb.or([
            eb('revoked_at', 'is not', null),
            eb('expires_at', '<=', t.toISOString()),
            eb('last_seen_at', '<=', new Date(t.getTime() - SESSION_IDLE_MS).toISOString()),
          ]),
        )
        .execute();
      return { token, csrfToken, expiresAt };
    },

    /** The live session of a cookie token and its user, or null (unknown, revoked, idle or past its end). */
    async session(token: string): Promise<{ session: Session; user: User } | null> {
      const s = await db.selectFrom('sessions').selectAll().where('id', '=', hashSecret(token)).executeTakeFirst();
      if (!s || s.revoked_at !== null) return null;
      const t = now();
      if (s.expires_at <= t.toISOString() || new Date(s.last_seen_at).getTime() + SESSION_IDLE_MS <= t.getTime()) return null;
      const user = await db.selectFrom('users').selectAll().where('id', '=', s.user_id).executeTakeFirst();
      if (!user) return null;
      if (t.getTime() - new Date(s.last_seen_at).getTime() >= TOUCH_EVERY_MS) {
        await db.updateTable('sessions').set({ last_seen_at: t.toISOString() }).where('id', '=', s.id).execute();
      }
      return { session: s, user };
    },

    async endSession(token: string): Promise<void> {
      await db.updateTable('sessions').set({ revoked_at: now().toISOString() }).where('id', '=', hashSecret(token)).where('revoked_at', 'is', null).execute();
    },
    revokeSessionsOf,
  };
}

/** The invite link: the token travels in the fragment, so it is never sent in a request line or a Referer. */
export function inviteLink(baseUrl: string, token: string): string {
  return `${baseUrl.replace(/\/+$/, '')}/invite#${token}`;
}
