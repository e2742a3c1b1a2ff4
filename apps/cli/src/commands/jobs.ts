import type { CliEnv } from '../env.ts';
import { CliError } from '../output.ts';

export async function jobsCommand(_argv: string[], _env: CliEnv): Promise<void> {
  throw new CliError('captionfarm jobs is not available in this build yet', 2);
}
