import type { CliEnv } from '../env.ts';
import { CliError } from '../output.ts';

export async function templatesCommand(_argv: string[], _env: CliEnv): Promise<void> {
  throw new CliError('captionfarm templates is not available in this build yet', 2);
}
