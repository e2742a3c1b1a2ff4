import { existsSync } from 'node:fs';
import path from 'node:path';
import { build } from 'vite';

const dashboard = path.resolve(import.meta.dirname, '..');

/** Builds the dashboard when this checkout has no build yet (scripts/setup normally made it), with Vite's own API. */
export async function ensureDashboardBuilt(): Promise<void> {
  if (existsSync(path.join(dashboard, 'dist/index.html'))) return;
  await build({ root: dashboard, configFile: path.join(dashboard, 'vite.config.ts'), logLevel: 'warn' });
}
