import { parseArgs } from 'node:util';
import { defaultModelsDir, modelsList, modelsPull } from '@captionfarm/transcriber';
import { CliError, print, table } from '../output.ts';

export const MODELS_USAGE = `captionfarm models list [--dir DIR] [--verify] [--json]
captionfarm models pull NAME [--dir DIR] [--json]

Whisper models (ggml) for the agents. pull downloads from whisper.cpp's Hugging Face repository
and keeps the file only if its SHA1 matches whisper.cpp's published table. Default DIR:
${defaultModelsDir()}`;

export async function modelsCommand(argv: string[]): Promise<void> {
  const [sub, ...rest] = argv;
  const { values, positionals } = parseArgs({
    args: rest,
    options: { dir: { type: 'string' }, verify: { type: 'boolean', default: false }, json: { type: 'boolean', default: false }, 'base-url': { type: 'string' } },
    allowPositionals: true,
    strict: true,
  });
  const modelsDir = values.dir ?? defaultModelsDir();
  if (sub === 'list') {
    const entries = await modelsList({ modelsDir, verify: values.verify === true });
    print(entries, values.json === true, (e: typeof entries) =>
      table(
        e.map((m) => ({ ...m, size: m.bytes === null ? null : `${(m.bytes / 1e6).toFixed(0)} MB`, ok: m.verified === undefined ? '' : m.verified ? 'sha1 ok' : 'SHA1 MISMATCH' })),
        ['name', 'installed', 'size', 'ok', 'path'],
      ),
    );
    return;
  }
  if (sub === 'pull') {
    const name = positionals[0];
    if (!name) throw new CliError(`models pull needs a model name\n\n${MODELS_USAGE}`, 2);
    const tty = process.stderr.isTTY;
    let last = 0;
    const result = await modelsPull({
      name,
      modelsDir,
      ...(values['base-url'] ? { baseUrl: values['base-url'] } : {}),
      onProgress: (received, total) => {
        if (!tty || Date.now() - last < 200) return;
        last = Date.now();
        process.stderr.write(`\r${name}: ${(received / 1e6).toFixed(1)}${total ? ` / ${(total / 1e6).toFixed(1)}` : ''} MB`);
      },
    }).catch((err: unknown) => {
      throw new CliError((err as Error).message);
    });
    if (tty) process.stderr.write('\n');
    print(result, values.json === true, (r: typeof result) => (r.downloaded ? `downloaded ${r.name} to ${r.path} (sha1 ${r.sha1} verified)` : `${r.name} is already at ${r.path} (sha1 verified)`));
    return;
  }
  throw new CliError(MODELS_USAGE, 2);
}
