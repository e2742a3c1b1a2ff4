#!/usr/bin/env -S npx tsx
import { adminCommand } from './commands/admin.ts';
import { adminWebhooksHandlers } from './commands/admin-webhooks.ts';
import { agentCommand } from './commands/agent.ts';
import { modelsCommand } from './commands/models.ts';
import { previewCommand } from './commands/preview.ts';
import { burnCommand } from './commands/burn.ts';
import { jobsCommand } from './commands/jobs.ts';
import { serveCommand } from './commands/serve.ts';
import { templatesCommand } from './commands/templates.ts';
import { readCliEnv } from './env.ts';
import { CliError } from './output.ts';

const USAGE = `captionfarm <command>

  serve                  start the control plane (embedded default: SQLite, built-in store, in-process agent)
  models list|pull NAME  whisper models (captionfarm models --help)
  preview --template ID --video FILE --at S -o frame.png   one rendered frame of a template
  agent --control-plane URL --token T   run a standalone agent (captionfarm agent --help)
  admin ...              accounts, plans, minutes, keys, webhook secrets (captionfarm admin --help)
  burn INPUT --template ID [-o OUT]   caption a local file or https URL and download the result
  jobs list|get|cancel   your jobs (CAPTIONFARM_API_KEY)
  templates list|show|preview

Environment: PORT, HOST, CAPTIONFARM_DATA_DIR, CAPTIONFARM_URL, CAPTIONFARM_ADMIN_TOKEN (see README).`;

export async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  const env = readCliEnv();
  switch (command) {
    case 'serve':
      return serveCommand(rest);
    case 'admin':
      return adminCommand(rest, env, { ...adminWebhooksHandlers });
    case 'agent':
      return agentCommand(rest);
    case 'models':
      return modelsCommand(rest);
    case 'preview':
      return previewCommand(rest);
    case 'burn':
      return burnCommand(rest, env);
    case 'jobs':
      return jobsCommand(rest, env);
    case 'templates':
      return templatesCommand(rest, env);
    case undefined:
    case '--help':
    case 'help':
      process.stdout.write(`${USAGE}\n`);
      return;
    default:
      throw new CliError(`unknown command "${command}"\n\n${USAGE}`, 2);
  }
}

main(process.argv.slice(2)).catch((err: unknown) => {
  if (err instanceof CliError) {
    process.stderr.write(`captionfarm: ${err.message}\n`);
    process.exit(err.exitCode);
  }
  if ((err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
    process.stderr.write(`captionfarm: ${(err as Error).message}\n`);
    process.exit(2);
  }
  process.stderr.write(`captionfarm: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
