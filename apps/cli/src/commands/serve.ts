import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { createControlPlane, loadConfig, SECRETS_FILE, type ControlPlane } from '@captionfarm/control-plane';
import { startAgent } from '@captionfarm/agent';
import { onShutdown } from '@captionfarm/process/shutdown';

const EMBEDDED_TOKEN_FILE = 'embedded-agent.token';

/** The embedded agent's token, made once and kept in the data dir (0600). */
async function embeddedAgentToken(cp: ControlPlane): Promise<string> {
  const file = path.join(cp.config.dataDir, EMBEDDED_TOKEN_FILE);
  if (existsSync(file)) {
    const token = readFileSync(file, 'utf8').trim();
    if (await cp.services.agents.authenticate(token)) return token;
  }
  const { token } = await cp.services.agents.createToken('embedded');
  writeFileSync(file, `${token}\n`, { mode: 0o600 });
  return token;
}

/** `captionfarm serve`: the embedded default (control plane, built-in store, SQLite, one agent). */
export async function serveCommand(): Promise<void> {
  const config = loadConfig(process.env);
  const cp = await createControlPlane(config);
  const url = await cp.listen();
  process.stderr.write(
    `captionfarm control plane listening on ${url}\n` +
      `  node: ${process.version} (${process.execPath})\n` +
      `  data dir: ${config.dataDir}\n` +
      `  admin token: in ${path.join(config.dataDir, SECRETS_FILE)} (captionfarm admin reads it)\n`,
  );
  let agent: Awaited<ReturnType<typeof startAgent>> | undefined;
  if (config.embeddedAgent) {
    const agentLog = cp.logger.child({ component: 'embedded-agent' });
    // The in-process agent connects over loopback with the same protocol as remote agents.
    agent = await startAgent({
      controlPlaneUrl: url,
      token: await embeddedAgentToken(cp),
      name: 'embedded',
      ...(config.whisperModel ? { model: config.whisperModel } : {}),
      workDir: path.join(config.dataDir, 'work'),
      log: (m, fields) => agentLog.info(fields ?? {}, m),
    });
    process.stderr.write(`  embedded agent: node ${agent.agent.nodeId}\n`);
  }
  // SIGINT or SIGTERM stops the farm (exit 0, or 1 when closing failed); another one exits 1 at once.
  onShutdown({
    first: (signal) => {
      process.stderr.write(`${signal}: shutting down\n`);
      (async () => {
        await agent?.agent.abortAll();
        await agent?.close();
        await cp.close();
      })().then(
        () => process.exit(0),
        () => process.exit(1),
      );
    },
    second: () => process.exit(1),
  });
}
