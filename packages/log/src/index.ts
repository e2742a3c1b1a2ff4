/**
 * The one structured logger (pino): JSON lines on stdout by default, pino-pretty when stdout is
 * a terminal. Ids travel as fields (requestId, accountId, jobId, nodeId), never inside messages.
 * Nothing secret reaches a line: fields named like secrets are censored (pino's redact), and
 * every string (message or field) is scrubbed of API keys, webhook secrets, agent tokens and URL
 * query strings (presigned URLs carry their signature there).
 */
import { destination, pino, transport, stdTimeFunctions, type DestinationStream, type Logger, type LoggerOptions } from 'pino';

export type { Logger };
export type LogLevel = 'silent' | 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';

/** Field names whose values are never logged, at the top level or one object down. */
const SECRET_KEYS = [
  'token',
  'key',
  'apiKey',
  'secret',
  'password',
  'authorization',
  'cookie',
  'signature',
  'secretAccessKey',
  'adminToken',
  'uploadUrl',
  'downloadUrl',
];
export const REDACT_PATHS = [...SECRET_KEYS, ...SECRET_KEYS.map((k) => `*.${k}`), 'req.headers.authorization', 'req.headers.cookie'];

const PATTERNS: [RegExp, string][] = [
  // Query strings: presigned S3/built-in store URLs (X-Amz-Signature, X-Amz-Credential), tokens in URLs.
  [/\b(https?:\/\/[^\s?#"'<>]+)\?[^\s#"'<>]*/g, '$1?[redacted]'],
  [/\bcf_live_[A-Za-z0-9]+/g, 'cf_live_[redacted]'],
  [/\bcf_agent_[A-Za-z0-9]+/g, 'cf_agent_[redacted]'],
  [/\bcf_admin_[A-Za-z0-9]+/g, 'cf_admin_[redacted]'],
  [/\bwhsec_[A-Za-z0-9+/=]+/g, 'whsec_[redacted]'],
  [/\b(Bearer)\s+[^\s"']+/gi, '$1 [redacted]'],
  [/(X-Amz-(?:Signature|Credential|Security-Token)=)[^&\s"']+/gi, '$1[redacted]'],
];

/** A string with every secret-looking part replaced. */
export function scrub(s: string): string {
  let out = s;
  for (const [re, to] of PATTERNS) out = out.replace(re, to);
  return out;
}

function scrubDeep(v: unknown, depth = 0): unknown {
  if (typeof v === 'string') return scrub(v);
  if (depth > 4 || v === null || typeof v !== 'object') return v;
  if (v instanceof Error) return { type: v.name, message: scrub(v.message), stack: v.stack ? scrub(v.stack) : undefined, code: (v as { code?: unknown }).code };
  if (Array.isArray(v)) return v.map((x) => scrubDeep(x, depth + 1));
  const o: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) o[k] = scrubDeep(x, depth + 1);
  return o;
}

export interface LoggerConfig {
  level?: LogLevel;
  /** Service name on every line ('control-plane', 'agent'). */
  name?: string;
  /** Where lines go; default stdout. */
  destination?: DestinationStream;
  /** Human-readable lines; default: when stdout is a TTY and no destination is given. */
  pretty?: boolean;
}

export function createLogger(cfg: LoggerConfig = {}): Logger {
  const pretty = cfg.pretty ?? (!cfg.destination && process.stdout.isTTY === true);
  const options: LoggerOptions = {
    level: cfg.level ?? 'info',
    ...(cfg.name ? { base: { service: cfg.name } } : { base: null }),
    timestamp: stdTimeFunctions.isoTime,
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    formatters: {
      level: (label) => ({ level: label }),
      log: (obj) => scrubDeep(obj) as Record<string, unknown>,
    },
    hooks: {
      // Messages are scrubbed too: error texts quote URLs.
      logMethod(args, method) {
        method.apply(this, args.map((a) => (typeof a === 'string' ? scrub(a) : a)) as Parameters<typeof method>);
      },
    },
  };
  if (pretty) return pino(options, transport({ target: 'pino-pretty', options: { colorize: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' } }));
  return pino(options, cfg.destination ?? destination({ fd: 1, sync: false }));
}

/** A logger that writes nothing (tests, `CAPTIONFARM_LOG=silent`). */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
