import { createHash, createHmac, randomInt, timingSafeEqual } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** n random base62 characters (rejection-free: randomInt is uniform). */
export function randomBase62(n: number): string {
  let s = '';
  for (let i = 0; i < n; i++) s += BASE62[randomInt(62)];
  return s;
}

/** `cf_live_` + 32 random bytes in base62 (43 characters carry 256 bits). */
export function generateApiKey(): string {
  return `cf_live_${randomBase62(43)}`;
}

export function generateAgentToken(): string {
  return `cf_agent_${randomBase62(43)}`;
}

/** Keys are stored as sha256: they carry 256 random bits, so a slow hash adds nothing. */
export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

export function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** An opaque, signed token: base64url(JSON) + '.' + base64url(HMAC). */
export function signToken(value: unknown, key: string): string {
  const body = Buffer.from(JSON.stringify(value)).toString('base64url');
  const mac = createHmac('sha256', key).update(body).digest('base64url').slice(0, 22);
  return `${body}.${mac}`;
}

export function verifyToken(token: string, key: string): unknown | undefined {
  const dot = token.indexOf('.');
  if (dot < 1) return undefined;
  const body = token.slice(0, dot);
  const mac = createHmac('sha256', key).update(body).digest('base64url').slice(0, 22);
  if (!safeEqual(mac, token.slice(dot + 1))) return undefined;
  try {
    return JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
}
