import type { JobRecord, JobStatus } from '@captionfarm/contracts';

// The answers' types, from the code that writes them (type-only: nothing of the server is bundled).
export type { JobRecord, JobStatus };
export type {
  AccountSummary,
  AgentTokenView,
  DashboardOverview,
  DashboardSession,
  KeyView,
  NodeView,
  QueueStats,
  TemplateSummary,
  UserView,
  WebhookDeliveryView,
  WebhookSecretView,
} from '@captionfarm/control-plane/views';

/**
 * The one client of the dashboard's JSON routes (/app/api). The session lives in an HttpOnly
 * cookie; the CSRF token is kept in memory only (never localStorage), refreshed from /session.
 */
let csrfToken = '';

export function setCsrfToken(token: string): void {
  csrfToken = token;
}

export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: { path: string; message: string }[] = [],
  ) {
    super(message);
  }
  /** The message for one field, as the API reported it. */
  field(path: string): string | undefined {
    return this.details.find((d) => d.path === path || d.path.startsWith(`${path}.`))?.message;
  }
}

async function failureOf(res: Response): Promise<ApiFailure> {
  const body = (await res.json().catch(() => null)) as { error?: { code?: string; message?: string; details?: unknown } } | null;
  const details = Array.isArray(body?.error?.details) ? (body.error.details as { path: string; message: string }[]) : [];
  return new ApiFailure(res.status, body?.error?.code ?? 'internal', body?.error?.message ?? `The server answered ${res.status}.`, details);
}

function headers(method: string, json: boolean): Record<string, string> {
  const h: Record<string, string> = { accept: 'application/json' };
  if (json) h['content-type'] = 'application/json';
  if (method !== 'GET') h['x-csrf-token'] = csrfToken;
  return h;
}

export async function api<T>(method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, body?: unknown): Promise<T> {
  const res = await fetch(`/app/api${path}`, {
    method,
    headers: headers(method, body !== undefined),
    body: body === undefined ? undefined : JSON.stringify(body),
    credentials: 'same-origin',
  });
  if (!res.ok) throw await failureOf(res);
  if (res.status === 204) return undefined as T;
  return (await res.json()) as T;
}

// Previews render on the control plane's worker pool, which caps each account's previews in
// flight (1 on the free plan): the page sends them one at a time instead of collecting 429s.
let previewChain: Promise<unknown> = Promise.resolve();

/** A PNG from a preview route, as an object URL (the caller revokes it). Previews run one at a time. */
export function apiImage(path: string, body: unknown): Promise<string> {
  const run = async () => {
    const res = await fetch(`/app/api${path}`, {
      method: 'POST',
      headers: { ...headers('POST', true), accept: 'image/png' },
      body: JSON.stringify(body),
      credentials: 'same-origin',
    });
    if (!res.ok) throw await failureOf(res);
    return URL.createObjectURL(await res.blob());
  };
  const next = previewChain.then(run, run);
  previewChain = next.catch(() => undefined);
  return next;
}

/** PUT a file to a presigned upload URL, reporting progress (0..1). */
export function putWithProgress(url: string, file: File, onProgress: (fraction: number) => void, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('PUT', url);
    xhr.upload.onprogress = (e) => {
      if (e.lengthComputable) onProgress(e.loaded / e.total);
    };
    xhr.onload = () => (xhr.status >= 200 && xhr.status < 300 ? resolve() : reject(new Error(`The store refused the upload (HTTP ${xhr.status}).`)));
    xhr.onerror = () => reject(new Error('The upload failed: check the connection and try again.'));
    xhr.onabort = () => reject(new Error('The upload was cancelled.'));
    signal?.addEventListener('abort', () => xhr.abort());
    xhr.send(file);
  });
}
