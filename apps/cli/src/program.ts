import { Command } from 'commander';
import { defineBurn, burnPlan, type BurnOptions } from './commands/burn-args.ts';
import type { CliEnv } from './env.ts';
import { defineAgentCommand } from '@captionfarm/agent/command';
import { action, configureTree } from '@captionfarm/process/command-line';

// The whole command line of `captionfarm`: every command, argument and option with its help text,
// parsed and documented by commander. Actions load their modules lazily: `burn` need not load the
// control plane (1.3 s of imports), nor `admin` the whole server.

const API_ENV = 'Uses CAPTIONFARM_API_KEY and CAPTIONFARM_URL (default http://127.0.0.1:8080).';
const ADMIN_ENV = `Talks to CAPTIONFARM_URL (default http://127.0.0.1:$PORT) with CAPTIONFARM_ADMIN_TOKEN, or the
token the embedded default keeps in CAPTIONFARM_DATA_DIR (default ./data).`; // addHelpText is not wrapped

/**
 * A command that only groups subcommands. Alone (`captionfarm jobs`) it prints its help on stdout
 * and exits 0; an unknown subcommand is a usage error that names the group.
 */
function group(parent: Command, name: string, summary: string): Command {
  const cmd = parent.command(name).summary(summary).description(summary);
  cmd
    .command('show-help', { isDefault: true, hidden: true })
    .argument('[words...]')
    .allowUnknownOption()
    .action((words: string[]) => {
      if (words.length > 0) cmd.error(`unknown ${name} command "${words[0]}"`, { code: 'commander.unknownCommand' });
      cmd.outputHelp();
    });
  return cmd;
}

function defineAdmin(program: Command, env: CliEnv): void {
  const admin = group(program, 'admin', 'accounts, plans, minutes, keys, agents, nodes, users, queue and webhooks (administrators)');
  admin.addHelpText('after', `\n${ADMIN_ENV}`);
  /** One admin command: `key` is its words after `admin`, the handler's name in admin.ts. */
  const leaf = (parent: Command, name: string, key: string, summary: string) =>
    parent
      .command(name)
      .description(summary)
      .option('--json', 'print the API answer as JSON')
      .option('--url <url>', 'the control plane (default: CAPTIONFARM_URL)')
      .action(
        action(async (values: Record<string, unknown>) => {
          const [{ adminHandlers, runAdmin }, { adminWebhooksHandlers }] = await Promise.all([
            import('./commands/admin.ts'),
            import('./commands/admin-webhooks.ts'),
          ]);
          await runAdmin({ ...adminHandlers, ...adminWebhooksHandlers }[key]!, values, env);
        }),
      );
  const plan = 'free, starter or pro';

  const accounts = group(admin, 'accounts', 'customer accounts and their plans');
  leaf(accounts, 'create', 'accounts create', 'create an account')
    .option('--name <name>', 'its name (required)')
    .option('--plan <plan>', `${plan} (default free)`);
  leaf(accounts, 'list', 'accounts list', 'every account with its plan and minutes balance');
  leaf(accounts, 'set-plan', 'accounts set-plan', "change an account's plan")
    .option('--account <id>', 'the account (required)')
    .option('--plan <plan>', `${plan} (required)`);

  const minutes = group(admin, 'minutes', "an account's minutes balance and ledger");
  leaf(minutes, 'grant', 'minutes grant', 'add (or, negative, remove) minutes')
    .option('--account <id>', 'the account (required)')
    .option('--minutes <n>', 'whole minutes (required)')
    .option('--note <text>', 'why, kept in the ledger');
  leaf(minutes, 'show', 'minutes show', 'the balance and the ledger').option('--account <id>', 'the account (required)');

  const keys = group(admin, 'keys', "an account's API keys");
  leaf(keys, 'create', 'keys create', 'a new API key (the key is shown once)').option('--account <id>', 'the account (required)');
  leaf(keys, 'list', 'keys list', "an account's keys (prefixes only)").option('--account <id>', 'the account (required)');
  leaf(keys, 'revoke', 'keys revoke', 'revoke a key at once').option('--key <id>', 'the key id (required)');

  const secret = group(admin, 'webhook-secret', "an account's webhook signing secret");
  leaf(secret, 'show', 'webhook-secret show', 'the current secret (and the previous one while it still signs)').option(
    '--account <id>',
    'the account (required)',
  );
  leaf(secret, 'rotate', 'webhook-secret rotate', 'a new secret; the previous one keeps signing for a while').option(
    '--account <id>',
    'the account (required)',
  );

  const agents = group(admin, 'agents', 'agent tokens');
  const token = group(agents, 'token', 'the tokens agents connect with');
  leaf(token, 'create', 'agents token', 'a new agent token (the token is shown once)').option('--name <name>', 'a name to recognize it by');
  leaf(token, 'list', 'agents token list', 'every token (prefixes only), revoked or not, with the nodes that use it');
  leaf(token, 'revoke', 'agents token revoke', 'revoke a token at once: its agents are disconnected and their jobs queued again').option(
    '--token <id|prefix>',
    'the token id, or its prefix (required)',
  );

  const nodes = group(admin, 'nodes', 'the agents (nodes) of the farm');
  leaf(nodes, 'list', 'nodes list', 'every node with its state, jobs and last heartbeat');
  leaf(nodes, 'show', 'nodes show', 'one node (JSON)').option('--node <id|name>', 'the node (required)');
  leaf(nodes, 'drain', 'nodes drain', 'finish current jobs, lease no new ones').option('--node <id|name>', 'the node (required)');
  leaf(nodes, 'undrain', 'nodes undrain', 'lease jobs again').option('--node <id|name>', 'the node (required)');

  const users = group(admin, 'users', 'dashboard users');
  leaf(users, 'invite', 'users invite', 'prints a one-time link to set a password, valid 72 h; --admin without --account: an administrator of no account')
    .option('--account <id>', 'the account (required unless --admin)')
    .option('--email <email>', 'their email (required)')
    .option('--admin', 'an administrator');
  leaf(users, 'list', 'users list', "every user, or one account's").option('--account <id>', 'only this account');
  leaf(users, 'remove', 'users remove', 'remove a user; their dashboard sessions end at once').option('--user <id|email>', 'the user (required)');

  const queue = group(admin, 'queue', 'the job queue');
  leaf(queue, 'show', 'queue show', 'jobs per status, oldest waiting job, running per node, webhook backlog');

  const webhooks = group(admin, 'webhooks', 'webhook deliveries');
  leaf(webhooks, 'list', 'webhooks list', "a job's webhook deliveries and every attempt").option('--job <id>', 'the job (required)');
  leaf(webhooks, 'redeliver', 'webhooks redeliver', 'send it again now, with the same webhook-id (give --job or --delivery)')
    .option('--job <id>', "the job's latest delivery")
    .option('--delivery <id>', 'this delivery');

  // A local command: it reads the data dir's SQLite file and writes PostgreSQL, not the admin API.
  admin
    .command('migrate-to-postgres')
    .description("copy an embedded farm's SQLite database into an empty PostgreSQL (stop the control plane first)")
    .option('--to <url>', 'postgres:// URL (default: CAPTIONFARM_DATABASE_URL)')
    .option('--from <file>', 'the SQLite file (default: CAPTIONFARM_DATA_DIR/captionfarm.sqlite)')
    .option('--json', 'print what was copied as JSON')
    .action(
      action(async (values: { to?: string; from?: string; json?: boolean }) => (await import('./commands/admin-migrate.ts')).migrateToPostgres(values, env)),
    );
}

function defineJobs(program: Command, env: CliEnv): void {
  const jobs = group(program, 'jobs', 'your jobs: list, get, cancel, transcript, edit, outputs (CAPTIONFARM_API_KEY)');
  jobs.addHelpText('after', `\n${API_ENV}`);
  const load = () => import('./commands/jobs.ts');
  jobs
    .command('list')
    .description('your jobs, newest first')
    .option('--limit <n>', 'how many (default 20; 0 for all)')
    .option('--json', 'print JSON')
    .action(action(async (opts: { limit?: string; json?: boolean }) => (await load()).jobsList(opts, env)));
  jobs
    .command('get')
    .description('one job: status, phase, percent, failure code and reason, download link')
    .argument('[ID]', 'the job')
    .option('--json', 'print JSON')
    .action(action(async (id: string | undefined, opts: { json?: boolean }) => (await load()).jobsGet(id, opts, env)));
  jobs
    .command('cancel')
    .description('cancel a queued or running job (its reserved minutes are refunded)')
    .argument('[ID]', 'the job')
    .option('--json', 'print JSON')
    .action(action(async (id: string | undefined, opts: { json?: boolean }) => (await load()).jobsCancel(id, opts, env)));
  jobs
    .command('transcript')
    .description('the words a succeeded job burned: JSON (default; edit it and pass it to burn --transcript-in), or SRT / WebVTT subtitles; to stdout or FILE')
    .argument('[ID]', 'the job')
    .option('--format <format>', 'json, srt or vtt (default json)')
    .option('-o, --output <file>', 'save to this file instead of stdout')
    .action(action(async (id: string | undefined, opts: { format?: string; output?: string }) => (await load()).jobsTranscript(id, opts, env)));
  jobs
    .command('edit')
    .description(
      'what a succeeded edited job cut (--silences, --fillers, --keep): each cut with its reason, and the keep-ranges as burn --keep takes them, to fix a cut and burn again',
    )
    .argument('[ID]', 'the job')
    .option('--json', 'print the JSON of GET /v1/automation-jobs/ID/edit')
    .action(action(async (id: string | undefined, opts: { json?: boolean }) => (await load()).jobsEdit(id, opts, env)));
  jobs
    .command('outputs')
    .description('every rendition of a job (burn --outputs) with its size, download link and expiry, and the poster')
    .argument('[ID]', 'the job')
    .option('--json', 'print the JSON of GET /v1/automation-jobs/ID/outputs')
    .action(action(async (id: string | undefined, opts: { json?: boolean }) => (await load()).jobsOutputs(id, opts, env)));
}

function defineTemplates(program: Command, env: CliEnv): void {
  const templates = group(program, 'templates', 'caption templates: list, show, preview (CAPTIONFARM_API_KEY)');
  templates.addHelpText('after', `\n${API_ENV}`);
  const load = () => import('./commands/templates.ts');
  templates
    .command('list')
    .description("built-in templates and your account's custom ones")
    .option('--json', 'print JSON')
    .action(action(async (opts: { json?: boolean }) => (await load()).templatesList(opts, env)));
  templates
    .command('show')
    .description("a template's full definition (JSON)")
    .argument('<ID>', 'the template (captionfarm templates list shows them)')
    .option('--json', 'with the id/builtin/createdAt envelope')
    .action(action(async (id: string, opts: { json?: boolean }) => (await load()).templatesShow(id, opts, env)));
  templates
    .command('preview')
    .description('one frame rendered by the service')
    .argument('<ID>', 'the template')
    .option('-o, --output <file>', 'the PNG to write (default ID-preview.png)')
    .option('--text <text>', 'the words to lay out')
    .option('--size <WxH>', 'the frame size, e.g. 1080x1920')
    .option('--at <seconds>', 'the moment of the animation')
    .action(action(async (id: string, opts: { output?: string; text?: string; size?: string; at?: string }) => (await load()).templatesPreview(id, opts, env)));
}

/** The `captionfarm` program. */
export function createProgram(env: CliEnv): Command {
  const program = new Command('captionfarm')
    .description('Captionfarm: burn animated, styled captions into videos')
    .addHelpText('after', '\nEnvironment: PORT, HOST, CAPTIONFARM_DATA_DIR, CAPTIONFARM_URL, CAPTIONFARM_ADMIN_TOKEN, CAPTIONFARM_API_KEY (see README).');

  program
    .command('serve')
    .description('start the control plane (embedded default: SQLite, built-in store, in-process agent)')
    .action(action(async () => (await import('./commands/serve.ts')).serveCommand()));

  const models = group(program, 'models', 'whisper models: list, pull');
  models.addHelpText(
    'after',
    "\nWhisper models (ggml) for the agents. pull keeps the file only if its SHA1 matches whisper.cpp's published table; list --verify also knows our PyPI conversions.",
  );
  models
    .command('list')
    .description('the models and where they are installed (where agents look)')
    .option('--dir <dir>', 'look only here (default: ~/.cache/captionfarm/models, then ~/.cache/captionfarm/test-models)')
    .option('--verify', 'check the SHA1 of every installed model')
    .option('--json', 'print JSON')
    .action(action(async (opts: { dir?: string; verify?: boolean; json?: boolean }) => (await import('./commands/models.ts')).modelsListCommand(opts)));
  models
    .command('pull')
    .description("download a model from whisper.cpp's Hugging Face repository, SHA1-verified")
    .argument('<NAME>', 'e.g. base, small, large-v3-turbo')
    .option('--dir <dir>', 'the models directory (default: ~/.cache/captionfarm/models)')
    .option('--base-url <url>', 'download from this mirror instead')
    .option('--json', 'print JSON')
    .action(
      action(async (name: string, opts: { dir?: string; baseUrl?: string; json?: boolean }) =>
        (await import('./commands/models.ts')).modelsPullCommand(name, opts),
      ),
    );

  program
    .command('preview')
    .description(
      'one rendered frame of a template, to judge it before a job. With --video, the frame at --at is taken from the video ' +
        'and its speech is transcribed (or --text is laid out around --at); without it, a neutral background is used.',
    )
    .summary('one rendered frame of a template')
    .option('--template <id|file.json>', 'a built-in template or a custom one as a .json file (required)')
    .option('-o, --output <file>', 'the PNG to write (required)')
    .option('--video <file>', 'take the frame and the speech from this video')
    .option('--at <seconds>', 'the moment of the frame', '2')
    .option('--text <text>', 'lay out these words instead of transcribing')
    .option('--size <WxH>', 'the frame size without --video (default 1080x1920)')
    .option('--model <name|path>', 'the whisper model for --video')
    .action(
      action(async (opts: { template?: string; video?: string; at: string; text?: string; size?: string; model?: string; output?: string }) =>
        (await import('./commands/preview.ts')).previewCommand(opts),
      ),
    );

  defineAgentCommand(program.command('agent'));

  defineAdmin(program, env);

  defineBurn(program.command('burn')).action(
    action(async (inputs: string[], opts: BurnOptions) => (await import('./commands/burn.ts')).burnCommand(burnPlan(inputs, opts, env.cwd), env)),
  );
  defineJobs(program, env);
  defineTemplates(program, env);
  return configureTree(program);
}
