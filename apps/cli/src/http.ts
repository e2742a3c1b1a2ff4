import { CliError } from './output.ts';

/** A JSON request to the control plane; the error body's code and message become a CliError. */
export async function requestJson(opts: { url: string; method: string; path: string; token: string; body?: unknown }): Promise<unknown> {
  let res: Response;
  try {
    res = await fetch(`${opts.url}${opts.path}`, {
      method: opts.method,
      headers: { authorization: `Bearer ${opts.token}`, ...(opts.body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(opts.body !== undefined ? { body: JSON.stringify(opts.body) } : {}),
    });
  } catch (err) {
    const cause = (err as Error).cause instanceof Error ? ((err as Error).cause as Error).message : (err as Error).message;
    throw new CliError(`cannot reach the control plane at ${opts.url} (${cause}); is it running (npm start)? Set CAPTIONFARM_URL otherwise.`);
  }
  const text = await res.text();
  let body: unknown;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    /* not JSON */
  }
  if (!res.ok) {
    const e = (body as { error?: { code?: string; message?: string } } | undefined)?.error;
    throw new CliError(e ? `${e.code}: ${e.message}` : `HTTP ${res.status} from ${opts.path}`);
  }
  return body;
}
