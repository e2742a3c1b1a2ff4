import { writeFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import type { PreviewRequest, TemplateSummary } from '@captionfarm/sdk';
import type { CliEnv } from '../env.ts';
import { CliError, print, table } from '../output.ts';
import { apiClient, toCliError } from './jobs.ts';

export const TEMPLATES_USAGE = `captionfarm templates <command>

  list [--json]                      built-in templates and your account's custom ones
  show ID [--json]                   a template's full definition (JSON)
  preview ID [-o FILE.png] [--text "..."] [--size WxH] [--at SECONDS]
                                     one frame rendered by the service (default ID-preview.png)

Uses CAPTIONFARM_API_KEY and CAPTIONFARM_URL (default http://127.0.0.1:8080).`;

export async function templatesCommand(argv: string[], env: CliEnv): Promise<void> {
  const [command, ...rest] = argv;
  if (!command || command === '--help' || command === 'help') {
    process.stdout.write(`${TEMPLATES_USAGE}\n`);
    return;
  }
  const { values, positionals } = parseArgs({
    args: rest,
    options: {
      json: { type: 'boolean', default: false },
      output: { type: 'string', short: 'o' },
      text: { type: 'string' },
      size: { type: 'string' },
      at: { type: 'string' },
    },
    strict: true,
    allowPositionals: true,
  });
  const json = values.json === true;
  const id = (): string => {
    if (positionals.length !== 1) throw new CliError(`give exactly one template ID (captionfarm templates list shows them)\n\n${TEMPLATES_USAGE}`, 2);
    return positionals[0]!;
  };
  try {
    switch (command) {
      case 'list': {
        const templates = await apiClient(env).listTemplates();
        return print(templates, json, (t: TemplateSummary[]) => table(t.map((x) => ({ ...x, kind: x.builtin ? 'built-in' : 'custom' })), ['id', 'name', 'kind', 'description']));
      }
      case 'show': {
        const shown = await apiClient(env).getTemplate(id());
        // The definition is JSON either way; --json adds the id/builtin/createdAt envelope.
        return print(json ? shown : shown.template, true);
      }
      case 'preview': {
        const templateId = id();
        const req: PreviewRequest = {};
        if (values.text !== undefined) req.text = values.text;
        if (values.size !== undefined) {
          const m = /^(\d+)x(\d+)$/.exec(values.size);
          if (!m) throw new CliError('--size must look like 1080x1920', 2);
          req.width = Number(m[1]);
          req.height = Number(m[2]);
        }
        if (values.at !== undefined) {
          req.at = Number(values.at);
          if (!Number.isFinite(req.at) || req.at < 0) throw new CliError('--at must be a number of seconds', 2);
        }
        const preview = await apiClient(env).previewTemplate(templateId, req);
        if (preview.kind !== 'binary') throw new CliError(`the service answered the preview with JSON, not an image: ${JSON.stringify(preview.body)}`);
        const out = values.output ?? `${templateId}-preview.png`;
        await writeFile(out, preview.bytes);
        process.stdout.write(`wrote ${out} (${preview.contentType}, ${preview.bytes.byteLength} bytes)\n`);
        return;
      }
      default:
        throw new CliError(`unknown templates command "${command}"\n\n${TEMPLATES_USAGE}`, 2);
    }
  } catch (err) {
    throw toCliError(err, env);
  }
}
