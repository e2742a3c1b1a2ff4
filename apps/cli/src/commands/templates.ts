import { writeFile } from 'node:fs/promises';
import type { PreviewRequest, TemplateSummary } from '@captionfarm/sdk';
import type { CliEnv } from '../env.ts';
import { CliError, UsageError, print, table } from '../output.ts';
import { apiClient, toCliError } from './jobs.ts';

async function withErrors(env: CliEnv, fn: () => Promise<void>): Promise<void> {
  try {
    await fn();
  } catch (err) {
    throw toCliError(err, env);
  }
}

/** `captionfarm templates list`: built-in templates and the account's custom ones. */
export function templatesList(opts: { json?: boolean }, env: CliEnv): Promise<void> {
  return withErrors(env, async () => {
    const templates = await apiClient(env).listTemplates();
    print(templates, opts.json === true, (t: TemplateSummary[]) =>
      table(
        t.map((x) => ({ ...x, kind: x.builtin ? 'built-in' : 'custom' })),
        ['id', 'name', 'kind', 'description'],
      ),
    );
  });
}

/** `captionfarm templates show ID`: the definition is JSON either way; --json adds the id/builtin/createdAt envelope. */
export function templatesShow(id: string, opts: { json?: boolean }, env: CliEnv): Promise<void> {
  return withErrors(env, async () => {
    const shown = await apiClient(env).getTemplate(id);
    print(opts.json ? shown : shown.template, true);
  });
}

/** `captionfarm templates preview ID`: one frame rendered by the service, saved as PNG. */
export function templatesPreview(id: string, opts: { output?: string; text?: string; size?: string; at?: string }, env: CliEnv): Promise<void> {
  const req: PreviewRequest = {};
  if (opts.text !== undefined) req.text = opts.text;
  if (opts.size !== undefined) {
    const m = /^(\d+)x(\d+)$/.exec(opts.size);
    if (!m) throw new UsageError('--size must look like 1080x1920');
    req.width = Number(m[1]);
    req.height = Number(m[2]);
  }
  if (opts.at !== undefined) {
    req.at = Number(opts.at);
    if (!Number.isFinite(req.at) || req.at < 0) throw new UsageError('--at must be a number of seconds');
  }
  return withErrors(env, async () => {
    const preview = await apiClient(env).previewTemplate(id, req);
    if (preview.kind !== 'binary') throw new CliError(`the service answered the preview with JSON, not an image: ${JSON.stringify(preview.body)}`);
    const out = opts.output ?? `${id}-preview.png`;
    await writeFile(out, preview.bytes);
    process.stdout.write(`wrote ${out} (${preview.contentType}, ${preview.bytes.byteLength} bytes)\n`);
  });
}
