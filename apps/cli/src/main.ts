#!/usr/bin/env -S npx tsx
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
    // Commands load lazily: an API client's `burn` need not load the control plane (1.3 s of imports).
    case 'serve':
      return (await import('./commands/serve.ts')).serveCommand(rest);
    case 'admin': {
      // A local command: it reads the data dir's SQLite file, not the admin API.
      if (rest[0] === 'migrate-to-postgres') return (await import('./commands/admin-migrate.ts')).migrateToPostgresCommand(rest.slice(1), env);
      const [{ adminCommand }, { adminWebhooksHandlers }] = await Promise.all([import('./commands/admin.ts'), import('./commands/admin-webhooks.ts')]);
      return adminCommand(rest, env, { ...adminWebhooksHandlers });
    }
    case 'agent':
      return (await import('./commands/agent.ts')).agentCommand(rest);
    case 'models':
      return (await import('./commands/models.ts')).modelsCommand(rest);
    case 'preview':
      return (await import('./commands/preview.ts')).previewCommand(rest);
    case 'burn':
      return (await import('./commands/burn.ts')).burnCommand(rest, env);
    case 'jobs':
      return (await import('./commands/jobs.ts')).jobsCommand(rest, env);
    case 'templates':
      return (await import('./commands/templates.ts')).templatesCommand(rest, env);
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
