import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

export type PresignCheck =
  | { ok: true; accessKeyId: string; signedHeaders: string[] }
  | {
      ok: false;
      status: 400 | 403;
      code: 'AccessDenied' | 'SignatureDoesNotMatch' | 'AuthorizationQueryParametersError' | 'RequestExpired' | 'InvalidAccessKeyId';
      message: string;
    };

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');
const hmac = (key: Buffer | string, s: string) => createHmac('sha256', key).update(s).digest();

/** RFC 3986 encoding, as SigV4 requires (encodeURIComponent leaves !'()* alone). */
function uriEncode(s: string): string {
  return encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

function canonicalPath(rawPath: string): string {
  // S3 signs the path as sent, segment by segment, without double encoding.
  return rawPath
    .split('/')
    .map((seg) => uriEncode(decodeURIComponent(seg)))
    .join('/');
}

/**
 * Verifies an AWS SigV4 presigned (query-string) request the way S3 does: algorithm, credential
 * scope, expiry, the signed headers as received (so a different Content-Length fails), and the
 * signature over UNSIGNED-PAYLOAD.
 */
export function verifyPresignedRequest(req: {
  method: string;
  /** Path and query exactly as received, e.g. /s3/bucket/key?X-Amz-... */
  rawUrl: string;
  headers: Record<string, string | string[] | undefined>;
  secretFor: (accessKeyId: string) => string | undefined;
  now: Date;
  /** Longest lifetime accepted, as S3 (7 days). */
  maxExpiresSeconds?: number;
}): PresignCheck {
  const q = req.rawUrl.indexOf('?');
  const rawPath = q < 0 ? req.rawUrl : req.rawUrl.slice(0, q);
  const params = new URLSearchParams(q < 0 ? '' : req.rawUrl.slice(q + 1));
  const get = (k: string) => params.get(k) ?? undefined;
  const algorithm = get('X-Amz-Algorithm');
  const credential = get('X-Amz-Credential');
  const amzDate = get('X-Amz-Date');
  const expires = get('X-Amz-Expires');
  const signedHeadersParam = get('X-Amz-SignedHeaders');
  const signature = get('X-Amz-Signature');
  if (!algorithm || !credential || !amzDate || !expires || !signedHeadersParam || !signature) {
    return { ok: false, status: 403, code: 'AccessDenied', message: 'the request is not presigned: X-Amz-* query parameters are missing' };
  }
  if (algorithm !== 'AWS4-HMAC-SHA256') {
    return { ok: false, status: 400, code: 'AuthorizationQueryParametersError', message: 'only AWS4-HMAC-SHA256 is supported' };
  }
  const [accessKeyId, date, region, service, terminator, ...rest] = credential.split('/');
  if (!accessKeyId || !date || !region || !service || terminator !== 'aws4_request' || rest.length > 0 || !amzDate.startsWith(date)) {
    return { ok: false, status: 400, code: 'AuthorizationQueryParametersError', message: 'malformed X-Amz-Credential' };
  }
  const secret = req.secretFor(accessKeyId);
  if (!secret) return { ok: false, status: 403, code: 'InvalidAccessKeyId', message: 'unknown access key' };

  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(amzDate);
  const expiresSeconds = Number(expires);
  if (!m || !Number.isInteger(expiresSeconds) || expiresSeconds < 1 || expiresSeconds > (req.maxExpiresSeconds ?? 604_800)) {
    return { ok: false, status: 400, code: 'AuthorizationQueryParametersError', message: 'malformed X-Amz-Date or X-Amz-Expires' };
  }
  const signedAt = Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!);
  if (req.now.getTime() > signedAt + expiresSeconds * 1000) {
    return { ok: false, status: 403, code: 'RequestExpired', message: 'the presigned URL has expired' };
  }
  if (signedAt > req.now.getTime() + 15 * 60 * 1000) {
    return { ok: false, status: 403, code: 'AccessDenied', message: 'the presigned URL is dated in the future' };
  }

  const signedHeaders = signedHeadersParam.split(';');
  if (!signedHeaders.includes('host')) {
    return { ok: false, status: 400, code: 'AuthorizationQueryParametersError', message: 'host must be a signed header' };
  }
  const headerLines: string[] = [];
  for (const name of signedHeaders) {
    const v = req.headers[name];
    if (v === undefined) return { ok: false, status: 403, code: 'SignatureDoesNotMatch', message: `signed header ${name} is missing` };
    const value = (Array.isArray(v) ? v.join(',') : v).trim().replace(/\s+/g, ' ');
    headerLines.push(`${name}:${value}\n`);
  }
  const query = [...params.entries()]
    .filter(([k]) => k !== 'X-Amz-Signature')
    .map(([k, v]) => [uriEncode(k), uriEncode(v)] as const)
    .sort(([a, av], [b, bv]) => (a < b ? -1 : a > b ? 1 : av < bv ? -1 : av > bv ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`)
    .join('&');
  const canonicalRequest = [req.method.toUpperCase(), canonicalPath(rawPath), query, headerLines.join(''), signedHeadersParam, 'UNSIGNED-PAYLOAD'].join('\n');
  const scope = `${date}/${region}/${service}/aws4_request`;
  const stringToSign = ['AWS4-HMAC-SHA256', amzDate, scope, sha256(canonicalRequest)].join('\n');
  const kSigning = hmac(hmac(hmac(hmac(`AWS4${secret}`, date), region), service), 'aws4_request');
  const expected = createHmac('sha256', kSigning).update(stringToSign).digest();
  const given = Buffer.from(signature, 'hex');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    return {
      ok: false,
      status: 403,
      code: 'SignatureDoesNotMatch',
      message: 'the request signature does not match (tampered URL, other key, or a different Content-Length)',
    };
  }
  return { ok: true, accessKeyId, signedHeaders };
}
