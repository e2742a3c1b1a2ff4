import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';

const dashboard = path.resolve(import.meta.dirname, '..');

/** Builds the dashboard when this checkout has no build yet (scripts/setup normally made it). */
export async function ensureDashboardBuilt(): Promise<void> {
  if (existsSync(path.join(dashboard, 'dist/index.html'))) return;
  await promisify(execFile)(path.resolve(dashboard, '../../node_modules/.bin/vite'), ['build', '--logLevel', 'warn'], { cwd: dashboard });
}
