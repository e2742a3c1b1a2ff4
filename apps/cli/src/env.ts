import path from 'node:path';

/** The CLI's one read of the environment (the server's settings are read by loadConfig). */
export interface CliEnv {
  url: string;
  dataDir: string;
  adminToken: string | undefined;
  apiKey: string | undefined;
}

export function readCliEnv(env: Record<string, string | undefined> = process.env): CliEnv {
  const port = env.PORT ?? '8080';
  return {
    url: (env.CAPTIONFARM_URL ?? `http://127.0.0.1:${port}`).replace(/\/+$/, ''),
    dataDir: path.resolve(env.CAPTIONFARM_DATA_DIR ?? './data'),
    adminToken: env.CAPTIONFARM_ADMIN_TOKEN || undefined,
    apiKey: env.CAPTIONFARM_API_KEY || undefined,
  };
}
