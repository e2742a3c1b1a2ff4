import { availableParallelism } from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { CREATE_JOB_MAX_JSON_BYTES } from '@captionfarm/contracts';
import { parseAllowedNetworks, parseListenAddress } from '@captionfarm/net';
import { parseTrustedProxies } from './http/client-address.ts';
import { parseAllowedHosts } from './http/allowed-hosts.ts';

/**
 * The one place that reads the environment. Every setting is declared once, here: its variable,
 * its default and meaning. The config's field is the variable's name in camelCase without
 * CAPTIONFARM_ (CAPTIONFARM_MAX_JSON_BYTES -> maxJsonBytes), for the type as for the value;
 * loadConfig only assembles the S3 store from its five variables. Everything else receives the
 * frozen result.
 */
/** A setting its parser accepts: the parser's error is the setting's issue. */
const parsedBy = (parse: (value: string | undefined) => unknown) => (value: string | undefined, ctx: z.RefinementCtx) => {
  try {
    parse(value);
  } catch (err) {
    ctx.addIssue({ code: 'custom', message: (err as Error).message });
  }
};

const EnvSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  HOST: z.string().default('127.0.0.1'),
  /** Everything of the embedded default lives here: SQLite, objects, secrets, admin token. */
  CAPTIONFARM_DATA_DIR: z
    .string()
    .default('./data')
    .transform((p) => path.resolve(p)),
  /**
   * PostgreSQL (postgres://user:password@host:5432/db): several control planes can share it.
   * Unset: SQLite in DATA_DIR (the embedded default, one control plane).
   */
  CAPTIONFARM_DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\/./i, 'a postgres:// URL (unset for the embedded SQLite database)')
    .optional(),
  /** Connections each control plane keeps open to PostgreSQL. */
  CAPTIONFARM_DATABASE_POOL: z.coerce.number().int().min(1).max(200).default(10),
  /** URL clients and agents reach this control plane at (download and upload URLs are built on it). */
  CAPTIONFARM_PUBLIC_URL: z.string().url().optional(),
  /** Admin token; default: generated once into DATA_DIR/secrets.json. */
  CAPTIONFARM_ADMIN_TOKEN: z.string().min(16).optional(),
  /** Run one agent in the same process (the embedded default). */
  CAPTIONFARM_EMBEDDED_AGENT: z
    .enum(['0', '1', 'true', 'false'])
    .default('1')
    .transform((v) => v === '1' || v === 'true'),
  /** Whisper model (ggml name or path) the embedded agent uses. */
  CAPTIONFARM_WHISPER_MODEL: z.string().optional(),
  /** External S3-compatible store; the built-in store is used when the endpoint is unset. */
  CAPTIONFARM_S3_ENDPOINT: z.string().url().optional(),
  CAPTIONFARM_S3_REGION: z.string().default('us-east-1'),
  CAPTIONFARM_S3_BUCKET: z.string().default('captionfarm'),
  CAPTIONFARM_S3_ACCESS_KEY_ID: z.string().optional(),
  CAPTIONFARM_S3_SECRET_ACCESS_KEY: z.string().optional(),
  /** Largest JSON request body. */
  CAPTIONFARM_MAX_JSON_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .default(64 * 1024),
  /** Largest body of POST /v1/automation-jobs, which may carry a transcript of up to 20,000 words. */
  CAPTIONFARM_MAX_JOB_JSON_BYTES: z.coerce.number().int().positive().default(CREATE_JOB_MAX_JSON_BYTES),
  /** Seconds between sweeps (expired uploads and outputs, leases, deadlines). */
  CAPTIONFARM_SWEEP_SECONDS: z.coerce.number().positive().default(30),
  /** An agent's lease lasts this long without a heartbeat; then the job is queued again. */
  CAPTIONFARM_LEASE_SECONDS: z.coerce.number().positive().default(30),
  /** An agent whose websocket closed and did not reconnect within this loses its jobs to the queue (before its lease ends). */
  CAPTIONFARM_AGENT_GRACE_SECONDS: z.coerce.number().nonnegative().default(5),
  /** Processing deadline = this + 3 x the input duration (ARCHITECTURE.md: 15 min). */
  CAPTIONFARM_DEADLINE_BASE_SECONDS: z.coerce.number().positive().default(900),
  CAPTIONFARM_LOG: z.enum(['silent', 'info', 'debug']).default('info'),
  /** host:port for a second listener serving only GET /metrics without the admin token (for a scraper on a private network). */
  CAPTIONFARM_METRICS_LISTEN: z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (!v) return undefined;
      const address = parseListenAddress(v);
      if (!address) ctx.addIssue({ code: 'custom', message: 'host:port (port 0-65535)' });
      return address ?? z.NEVER;
    }),
  /** A connection must send its request headers within this many seconds (the first request too). */
  CAPTIONFARM_HEADERS_TIMEOUT_SECONDS: z.coerce.number().positive().default(20),
  /** A JSON request body must arrive within this many seconds in all (else 408 and the connection closes). */
  CAPTIONFARM_BODY_TOTAL_SECONDS: z.coerce.number().positive().default(30),
  /** ... and never stall longer than this between bytes. */
  CAPTIONFARM_BODY_IDLE_SECONDS: z.coerce.number().positive().default(10),
  /** A PUT to the built-in store that sends no byte for this long is cut (S3 answers RequestTimeout after 20 s too). */
  CAPTIONFARM_UPLOAD_IDLE_SECONDS: z.coerce.number().positive().default(20),
  /** Built-in store: concurrent requests per client address (503 SlowDown above). */
  CAPTIONFARM_STORE_MAX_CONNECTIONS_PER_IP: z.coerce.number().int().positive().default(64),
  /** Built-in store: concurrent PUTs to one object (one upload URL); 503 SlowDown above. */
  CAPTIONFARM_STORE_MAX_PUTS_PER_OBJECT: z.coerce.number().int().positive().default(4),
  /**
   * Reverse proxies whose X-Forwarded-For is believed (comma-separated addresses or CIDR ranges, or
   * `loopback`): behind them the per-client limits key on the forwarded client address. Unset: the
   * TCP peer, which behind a proxy is the proxy for everyone.
   */
  CAPTIONFARM_TRUSTED_PROXIES: z.string().optional().superRefine(parsedBy(parseTrustedProxies)),
  /**
   * Host names the dashboard's API answers besides CAPTIONFARM_PUBLIC_URL's, localhost and IP
   * literals (comma-separated): any other Host is refused, so a DNS-rebinding page cannot use it.
   */
  CAPTIONFARM_ALLOWED_HOSTS: z
    .string()
    .optional()
    .superRefine(parsedBy(parseAllowedHosts))
    .transform((v) => parseAllowedHosts(v) as readonly string[]),
  /**
   * Private networks a webhookUrl or videoUrl may reach (comma-separated CIDR ranges, like
   * `10.20.0.0/16,fd00::/8`): for a farm whose receivers live on its own network. Unset: public
   * addresses only. The agents read the same variable for the video URLs they fetch.
   */
  CAPTIONFARM_ALLOWED_PRIVATE_NETWORKS: z
    .string()
    .optional()
    .superRefine(parsedBy(parseAllowedNetworks))
    .transform((v) => parseAllowedNetworks(v)),
  /** Failed authentications per client address and minute before its wrong credentials get 429 (a valid one is always answered). */
  CAPTIONFARM_AUTH_FAILURES_PER_MINUTE: z.coerce.number().int().positive().default(20),
  /** An agent websocket that has not authenticated within this many seconds is closed. */
  CAPTIONFARM_AGENT_AUTH_SECONDS: z.coerce.number().positive().default(5),
  /** Open agent websockets at most (authenticated or not); the upgrade gets 503 above. */
  CAPTIONFARM_MAX_AGENT_CONNECTIONS: z.coerce.number().int().positive().default(256),
  /** Worker threads that render template previews (default: CPU cores - 1, 1 to 4). */
  CAPTIONFARM_PREVIEW_THREADS: z.coerce
    .number()
    .int()
    .min(1)
    .max(64)
    .optional()
    .transform((v) => v ?? Math.max(1, Math.min(4, availableParallelism() - 1))),
});

/** CAPTIONFARM_MAX_JOB_JSON_BYTES -> maxJobJsonBytes, PORT -> port. */
type Camel<S extends string> = S extends `${infer A}_${infer B}` ? `${A}${Capitalize<Camel<B>>}` : S;
type FieldOf<K extends string> = K extends `CAPTIONFARM_${infer R}` ? Camel<Lowercase<R>> : Camel<Lowercase<K>>;
type Settings = z.output<typeof EnvSchema>;
type Fields = { [K in keyof Settings as FieldOf<K & string>]: Settings[K] };
const fieldOf = (variable: string) =>
  variable
    .replace(/^CAPTIONFARM_/, '')
    .toLowerCase()
    .replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());

type S3Fields = 's3Endpoint' | 's3Region' | 's3Bucket' | 's3AccessKeyId' | 's3SecretAccessKey';

export type ControlPlaneConfig = Omit<Fields, S3Fields | 'maxJobJsonBytes'> & {
  /** The external S3-compatible store of the five CAPTIONFARM_S3_* variables, or the built-in store. */
  s3: { kind: 'builtin' } | { kind: 'external'; endpoint: string; region: string; bucket: string; accessKeyId: string; secretAccessKey: string };
  bucket: string;
  /** POST /v1/automation-jobs only (a transcript can be large); never below maxJsonBytes. */
  maxJobJsonBytes: number;
  /**
   * Test-only: lets outbound requests (webhooks, video ingest) reach HTTPS servers on loopback that
   * present a certificate of this CA. Never read from the environment, so no deployment and no API
   * call can turn it on; only code that builds a control plane in a test passes it.
   */
  unsafeTestNetwork?: { allowLoopback: true; ca: string } | undefined;
};

export function loadConfig(env: Record<string, string | undefined> = process.env): Readonly<ControlPlaneConfig> {
  const parsed = EnvSchema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`).join('\n');
    throw new Error(`invalid configuration:\n${lines}`);
  }
  const fields = Object.fromEntries(Object.entries(parsed.data).map(([k, v]) => [fieldOf(k), v])) as Fields;
  const { s3Endpoint, s3Region, s3Bucket, s3AccessKeyId, s3SecretAccessKey, ...rest } = fields;
  let s3: ControlPlaneConfig['s3'] = { kind: 'builtin' };
  if (s3Endpoint) {
    if (!s3AccessKeyId || !s3SecretAccessKey) {
      throw new Error('invalid configuration: CAPTIONFARM_S3_ENDPOINT needs CAPTIONFARM_S3_ACCESS_KEY_ID and CAPTIONFARM_S3_SECRET_ACCESS_KEY');
    }
    s3 = { kind: 'external', endpoint: s3Endpoint, region: s3Region, bucket: s3Bucket, accessKeyId: s3AccessKeyId, secretAccessKey: s3SecretAccessKey };
  }
  return Object.freeze({ ...rest, s3, bucket: s3Bucket, maxJobJsonBytes: Math.max(rest.maxJobJsonBytes, rest.maxJsonBytes) });
}
