import { defaultModelsDir, modelSearchDirs, modelsList, modelsPull } from '@captionfarm/transcriber';
import { CliError, print, table } from '../output.ts';

interface ModelsOptions {
  dir?: string;
  json?: boolean;
}

/**
 * `captionfarm models list`: what is installed where agents look (modelSearchDirs: the models
 * dir, then the test-models cache), or in `--dir` only; `verify` checks each SHA1 against
 * whisper.cpp's table or, for our PyPI conversions, against ours.
 */
export async function modelsListCommand(opts: ModelsOptions & { verify?: boolean }): Promise<void> {
  const entries = await modelsList({ modelsDirs: opts.dir ? [opts.dir] : modelSearchDirs(), verify: opts.verify === true });
  print(entries, opts.json === true, (e: typeof entries) =>
    table(
      e.map((m) => ({
        ...m,
        size: m.bytes === null ? null : `${(m.bytes / 1e6).toFixed(0)} MB`,
        ok: m.verified === undefined ? '' : m.verified ? (m.matched === 'converted' ? 'sha1 ok (our conversion)' : 'sha1 ok') : 'SHA1 MISMATCH',
      })),
      ['name', 'installed', 'size', 'ok', 'path'],
    ),
  );
}

/** `captionfarm models pull NAME`: download, keep only on a SHA1 match, progress on a terminal. */
export async function modelsPullCommand(name: string, opts: ModelsOptions & { baseUrl?: string }): Promise<void> {
  const tty = process.stderr.isTTY;
  let last = 0;
  const result = await modelsPull({
    name,
    modelsDir: opts.dir ?? defaultModelsDir(),
    ...(opts.baseUrl ? { baseUrl: opts.baseUrl } : {}),
    onProgress: (received, total) => {
      if (!tty || Date.now() - last < 200) return;
      last = Date.now();
      process.stderr.write(`\r${name}: ${(received / 1e6).toFixed(1)}${total ? ` / ${(total / 1e6).toFixed(1)}` : ''} MB`);
    },
  }).catch((err: unknown) => {
    throw new CliError((err as Error).message);
  });
  if (tty) process.stderr.write('\n');
  print(result, opts.json === true, (r: typeof result) =>
    r.downloaded ? `downloaded ${r.name} to ${r.path} (sha1 ${r.sha1} verified)` : `${r.name} is already at ${r.path} (sha1 verified)`,
  );
}
