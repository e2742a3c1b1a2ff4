import type { Command } from 'commander';
import { action } from '@captionfarm/process/command-line';

/** What commander parsed for `captionfarm agent` / `captionfarm-agent`. */
export interface AgentOptions {
  controlPlane?: string;
  token?: string;
  name?: string;
  concurrency?: string;
  model?: string;
  threads?: string;
  workDir?: string;
  selfTest?: boolean;
  seconds?: string;
}

/**
 * The agent's command line, on `cmd`: `captionfarm agent` in the CLI, the whole program in this
 * package's `captionfarm-agent` bin. The action loads the agent (whisper, ffmpeg, canvas) only when
 * it runs, so `captionfarm burn` and `--help` do not.
 */
export function defineAgentCommand(cmd: Command): Command {
  return cmd
    .summary('run a standalone agent, or --self-test this machine')
    .description(
      'Leases jobs from a control plane over websockets and runs them (whisper.cpp + ffmpeg, NVENC when a GPU is present). ' +
        'SIGTERM drains (finishes the current jobs, takes no new ones); a second SIGTERM aborts them and gives them back ' +
        'to the queue. Tokens: captionfarm admin agents token create.\n\n' +
        '--self-test prints what this machine will use (whisper build and device, NVENC or why not, x264 threads, slots), ' +
        "then runs one job locally (10 s of video, --seconds to change) and prints each stage's realtime factor; it exits 1 " +
        'when the job fails.',
    )
    .option('--control-plane <url>', 'the control plane (required unless --self-test)')
    .option('--token <token>', 'an agent token (required unless --self-test)')
    .option('--name <name>', 'the node name (default: the host name)')
    .option('--concurrency <n>', "job slots (default: what this machine's cores, memory and GPUs afford)")
    .option('--model <name|path>', 'the whisper model')
    .option('--threads <n>', 'whisper threads (default: from the hardware plan)')
    .option('--work-dir <dir>', 'where jobs keep their files')
    .option('--self-test', 'report this machine and run one job locally')
    .option('--seconds <n>', 'the self-test video length (default 10)')
    .action(action(async (opts: AgentOptions) => (await import('./run-agent.ts')).agentCommand(opts)));
}
