import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { randomBase62 } from './crypto.ts';

const SecretsSchema = z.object({
  adminToken: z.string().min(16),
  cursorKey: z.string().min(16),
  storeAccessKeyId: z.string().min(8),
  storeSecretAccessKey: z.string().min(16),
});
export type Secrets = z.infer<typeof SecretsSchema>;

export const SECRETS_FILE = 'secrets.json';

/** Secrets of the embedded default, made once and kept (mode 0600) in the data dir. */
export function loadOrCreateSecrets(dataDir: string): Secrets {
  const file = path.join(dataDir, SECRETS_FILE);
  try {
    return SecretsSchema.parse(JSON.parse(readFileSync(file, 'utf8')));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw new Error(`${file} is unreadable or corrupt: ${(err as Error).message}`);
  }
  mkdirSync(dataDir, { recursive: true });
  const secrets: Secrets = {
    adminToken: `cf_admin_${randomBase62(43)}`,
    cursorKey: randomBytes(32).toString('base64'),
    storeAccessKeyId: `CF${randomBase62(18).toUpperCase()}`,
    storeSecretAccessKey: randomBase62(40),
  };
  writeFileSync(file, `${JSON.stringify(secrets, null, 2)}\n`, { mode: 0o600, flag: 'wx' });
  return secrets;
}

/** The admin token a local CLI uses: env first, then the data dir's secrets file. */
export function readAdminToken(dataDir: string): string | undefined {
  try {
    return SecretsSchema.parse(JSON.parse(readFileSync(path.join(dataDir, SECRETS_FILE), 'utf8'))).adminToken;
  } catch {
    return undefined;
  }
}
