import path from 'node:path';

/** The CLI's one read of the environment (the server's settings are read by loadConfig). */
export interface CliEnv {
  url: string;
  dataDir: string;
  adminToken: string | undefined;
  apiKey: string | undefined;
  /** Where the user ran the command: `npm run` changes to the repository root, INIT_CWD keeps it. */
  cwd: string;
}

export function readCliEnv(env: Record<string, string | undefined> = process.env): CliEnv {
  const port = env.PORT ?? '8080';
  // `npm run captionfarm -- ...` runs in the repository root; INIT_CWD is where the user was.
  // Only then: any other child of an npm process inherits INIT_CWD too.
  const cwd = env.npm_lifecycle_event === 'captionfarm' && env.INIT_CWD ? env.INIT_CWD : process.cwd();
  return {
    url: (env.CAPTIONFARM_URL ?? `http://127.0.0.1:${port}`).replace(/\/+$/, ''),
    dataDir: path.resolve(env.CAPTIONFARM_DATA_DIR ?? './data'),
    adminToken: env.CAPTIONFARM_ADMIN_TOKEN || undefined,
    apiKey: env.CAPTIONFARM_API_KEY || undefined,
    cwd,
  };
}
