import path from 'node:path';
import { createControlPlane, loadConfig, SECRETS_FILE } from '@captionfarm/control-plane';

/** `captionfarm serve`: the embedded default (control plane, built-in store, SQLite). */
export async function serveCommand(_argv: string[]): Promise<void> {
  const config = loadConfig(process.env);
  const cp = await createControlPlane(config);
  const url = await cp.listen();
  process.stderr.write(
    `captionfarm control plane listening on ${url}\n` +
      `  data dir: ${config.dataDir}\n` +
      `  admin token: in ${path.join(config.dataDir, SECRETS_FILE)} (captionfarm admin reads it)\n`,
  );
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) process.exit(1);
    stopping = true;
    process.stderr.write(`${signal}: shutting down\n`);
    cp.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
}
