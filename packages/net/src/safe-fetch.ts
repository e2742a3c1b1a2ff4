import type { LookupAddress as DnsLookupAddress, LookupOptions } from 'node:dns';
import type { BlockList } from 'node:net';
import { Agent, buildConnector, fetch as undiciFetch, Response, type RequestInit } from 'undici';
import { SafeFetchError, toSafeFetchError } from './errors.ts';
import { checkAddress, isIpLiteral } from './ip-address.ts';
import {
  checkAddressWithPolicy,
  checkResolvedAddresses,
  defaultLookup,
  validatePublicHttpsUrl,
  validatePublicHttpsUrlSyntax,
  type AddressPolicy,
  type LookupFn,
  type UrlCheck,
} from './url-policy.ts';

export interface SafeFetchOptions {
  /**
   * TEST ONLY: allow loopback receivers (127.0.0.0/8, ::1, `localhost`). Private, link-local,
   * metadata and all other non-public ranges stay blocked. Never derive this from request
   * input or from an environment variable read outside the config module: the control plane
   * sets it only in its config module's test mode. Emits a process warning when enabled.
   */
  allowLoopbackForTests?: boolean;
  /** The operator's private networks (AddressPolicy.allowedNetworks); default none. */
  allowedNetworks?: BlockList | undefined;
  /** Trusted CA certificates (PEM). Replaces the default roots, as in `tls.connect`. */
  ca?: string | Buffer | Array<string | Buffer>;
  /** Resolver; default: system resolver. Its answers are always checked. */
  lookup?: LookupFn;
  /** TCP + TLS handshake deadline. Default 10 s. */
  connectTimeoutMs?: number;
  /** From request sent to response headers received. Default 30 s. */
  headersTimeoutMs?: number;
  /** Longest silence between two body chunks. Default 30 s. */
  bodyTimeoutMs?: number;
  /** Total deadline when the call gives no `timeoutMs` (covers body reading). Default 30 s. */
  defaultTimeoutMs?: number;
  /** Body cap when the call gives no `maxBytes`. Default 10 MiB. */
  defaultMaxBytes?: number;
}

export type SafeFetchInit = Omit<RequestInit, 'redirect' | 'dispatcher' | 'signal' | 'window'> & {
  /** Abort and throw `too_large` once the (decoded) body exceeds this. `Infinity` disables. */
  maxBytes?: number;
  /** Total deadline in ms, from the call until the body is fully read. `Infinity` disables. */
  timeoutMs?: number;
  signal?: AbortSignal;
};

/** The shape consumers take (deliverWebhook, the agent's ingest): any safeFetch instance. */
export type SafeFetchFn = (url: string | URL, init?: SafeFetchInit) => Promise<Response>;

export interface SafeFetch extends SafeFetchFn {
  /** validatePublicHttpsUrl with this instance's policy and resolver. */
  validateUrl(url: string | URL): Promise<UrlCheck>;
  /** Closes the connection pool. */
  close(): Promise<void>;
  readonly allowsLoopbackForTests: boolean;
}

const DEFAULTS = {
  connectTimeoutMs: 10_000,
  headersTimeoutMs: 30_000,
  bodyTimeoutMs: 30_000,
  defaultTimeoutMs: 30_000,
  defaultMaxBytes: 10 * 1024 * 1024,
};

type NodeLookupCallback = (err: NodeJS.ErrnoException | null, address: string | DnsLookupAddress[], family?: number) => void;

/**
 * The `lookup` undici hands to net/tls.connect. The address checked here is the address the
 * socket connects to, so a name that resolves to a public address at validation time and to
 * 127.0.0.1 now (DNS rebinding) is refused. Handles both `all: true` (autoSelectFamily, the
 * Node 20 default) and single-address calls.
 */
export function createGuardedLookup(lookup: LookupFn, policy: AddressPolicy) {
  return (hostname: string, options: LookupOptions, callback: NodeLookupCallback): void => {
    lookup(hostname).then(
      (addresses) => {
        const problem = checkResolvedAddresses(hostname, addresses, policy);
        if (problem) {
          callback(problem, '');
          return;
        }
        const family = options.family === 'IPv4' ? 4 : options.family === 'IPv6' ? 6 : options.family;
        const usable = family === 4 || family === 6 ? addresses.filter((a) => a.family === family) : addresses;
        const first = usable[0];
        if (first === undefined) {
          const err: NodeJS.ErrnoException = new Error(`${hostname} has no IPv${family} address`);
          err.code = 'ENOTFOUND';
          callback(err, '');
          return;
        }
        if (options.all === true) callback(null, usable);
        else callback(null, first.address, first.family);
      },
      (err: unknown) => callback(err as NodeJS.ErrnoException, ''),
    );
  };
}

/**
 * Wraps undici's connector with the two checks a lookup-only guard misses: net.connect skips
 * `lookup` for IP literals, so the literal is judged here; and, defence in depth, the socket's
 * remote address is judged after connecting, whatever path led there.
 */
export function guardConnector(base: buildConnector.connector, policy: AddressPolicy): buildConnector.connector {
  return (opts, callback) => {
    if (isIpLiteral(opts.hostname)) {
      const literal = checkAddressWithPolicy(opts.hostname, policy);
      if (!literal.ok) {
        callback(new SafeFetchError('blocked_address', `${literal.reason}; use a public address.`), null);
        return;
      }
    }
    base(opts, (err, socket) => {
      if (err !== null) {
        callback(err, null);
        return;
      }
      const remote = socket.remoteAddress;
      const check = remote === undefined ? checkAddress('') : checkAddressWithPolicy(remote, policy);
      if (!check.ok) {
        socket.destroy();
        callback(new SafeFetchError('blocked_address', `Connected to ${check.reason}; refused.`), null);
        return;
      }
      callback(null, socket);
    });
  };
}

let warnedTestMode = false;

/**
 * Creates THE outbound HTTP client: https only, public addresses only (checked on the address
 * connected to), redirects returned not followed, connect/headers/body/total timeouts, a body
 * size cap. Everything that fetches a user-supplied URL goes through an instance of this.
 */
export function createSafeFetch(options: SafeFetchOptions = {}): SafeFetch {
  const policy: AddressPolicy = Object.freeze({
    allowLoopbackForTests: options.allowLoopbackForTests === true,
    allowedNetworks: options.allowedNetworks,
  });
  if (policy.allowLoopbackForTests && !warnedTestMode) {
    warnedTestMode = true;
    process.emitWarning('safeFetch: allowLoopbackForTests is enabled; loopback receivers are reachable. Never enable this outside tests.', {
      code: 'CAPTIONFARM_SAFEFETCH_TEST_MODE',
    });
  }
  const lookup = options.lookup ?? defaultLookup;
  const cfg = { ...DEFAULTS, ...definedOnly(options) };

  const base = buildConnector({
    timeout: cfg.connectTimeoutMs,
    lookup: createGuardedLookup(lookup, policy),
    ...(options.ca !== undefined ? { ca: options.ca } : {}),
  });
  const agent = new Agent({
    connect: guardConnector(base, policy),
    headersTimeout: cfg.headersTimeoutMs,
    bodyTimeout: cfg.bodyTimeoutMs,
  });

  const s: FetchState = { policy, cfg, agent };
  const call = (input: string | URL, init: SafeFetchInit = {}): Promise<Response> => fetchOnce(s, input, init);

  return Object.assign(call, {
    validateUrl: (url: string | URL) => validatePublicHttpsUrl(url, { ...policy, lookup }),
    close: () => agent.close(),
    allowsLoopbackForTests: policy.allowLoopbackForTests === true,
  });
}

/** What every call of one safeFetch instance shares. */
interface FetchState {
  readonly policy: AddressPolicy;
  readonly cfg: typeof DEFAULTS;
  readonly agent: Agent;
}

/** One call of a safeFetch instance: the URL checked, the request sent with a deadline, the body capped as it is read. */
async function fetchOnce(s: FetchState, input: string | URL, init: SafeFetchInit): Promise<Response> {
  const check = validatePublicHttpsUrlSyntax(input, s.policy);
  if (!check.ok) throw new SafeFetchError(check.code, check.reason);
  const { maxBytes = s.cfg.defaultMaxBytes, timeoutMs = s.cfg.defaultTimeoutMs, signal, ...rest } = init;
  if (!(maxBytes > 0)) throw new TypeError('maxBytes must be a positive number or Infinity');
  if (!(timeoutMs > 0)) throw new TypeError('timeoutMs must be a positive number or Infinity');
  if (signal?.aborted) {
    throw new SafeFetchError('aborted', 'The request was cancelled.', { cause: signal.reason });
  }

  const controller = new AbortController();
  let timedOut = false;
  const timer = Number.isFinite(timeoutMs)
    ? setTimeout(() => {
        timedOut = true;
        controller.abort(new SafeFetchError('timeout', `No complete response within ${timeoutMs} ms.`));
      }, timeoutMs)
    : undefined;
  timer?.unref();
  const onAbort = (): void => controller.abort(signal?.reason);
  signal?.addEventListener('abort', onAbort, { once: true });
  const cleanup = (): void => {
    clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort);
  };
  const mapError = (err: unknown): SafeFetchError => {
    if (err instanceof SafeFetchError) return err;
    if (timedOut) return new SafeFetchError('timeout', `No complete response within ${timeoutMs} ms.`, { cause: err });
    if (signal?.aborted) return new SafeFetchError('aborted', 'The request was cancelled.', { cause: signal.reason });
    return toSafeFetchError(err);
  };

  let res: Response;
  try {
    res = await undiciFetch(check.url.href, {
      ...rest,
      redirect: 'manual',
      dispatcher: s.agent,
      signal: controller.signal,
    });
  } catch (err) {
    cleanup();
    throw mapError(err);
  }
  return cappedBody(res, { maxBytes, controller, cleanup, mapError });
}

/**
 * `res` with a body that fails with `too_large` past `maxBytes` (declared or received), aborting
 * the request through `controller`; `cleanup` runs once the body is read, failed or cancelled.
 */
function cappedBody(
  res: Response,
  o: { maxBytes: number; controller: AbortController; cleanup: () => void; mapError: (err: unknown) => SafeFetchError },
): Response {
  const { maxBytes, controller, cleanup, mapError } = o;
  const tooLarge = (): SafeFetchError => new SafeFetchError('too_large', `The response body exceeds the ${maxBytes}-byte limit.`);
  const declared = res.headers.get('content-length');
  if (declared !== null && Number(declared) > maxBytes) {
    const err = tooLarge();
    controller.abort(err);
    cleanup();
    throw err;
  }
  const source = res.body;
  if (source === null) {
    cleanup();
    return res;
  }
  const reader = source.getReader();
  let received = 0;
  const body = new ReadableStream<Uint8Array>(
    {
      async pull(ctrl) {
        try {
          const chunk = await reader.read();
          if (chunk.done) {
            cleanup();
            ctrl.close();
            return;
          }
          received += chunk.value.byteLength;
          if (received > maxBytes) {
            const err = tooLarge();
            controller.abort(err); // closes the connection: the rest is never downloaded
            cleanup();
            ctrl.error(err);
            return;
          }
          ctrl.enqueue(chunk.value);
        } catch (err) {
          cleanup();
          ctrl.error(mapError(err));
        }
      },
      async cancel(reason) {
        cleanup();
        await reader.cancel(reason);
      },
    },
    { highWaterMark: 0 },
  );
  // As the Response's body: the DOM lib (a browser project type-checking this file, the dashboard's
  // tests) types its BodyInit stream as Uint8Array<ArrayBuffer>, Node's as any Uint8Array.
  const wrapped = new Response(body as unknown as ConstructorParameters<typeof Response>[0], {
    status: res.status,
    statusText: res.statusText,
    headers: res.headers,
  });
  Object.defineProperty(wrapped, 'url', { value: res.url });
  return wrapped;
}

function definedOnly<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

let defaultInstance: SafeFetch | undefined;

/**
 * The production instance (system resolver, system CAs, loopback refused), created on first
 * use. Prefer passing an instance from `createSafeFetch` down explicitly; this exists for
 * callers that have no configuration to hand.
 */
export const safeFetch: SafeFetchFn = (url, init) => {
  defaultInstance ??= createSafeFetch();
  return defaultInstance(url, init);
};
