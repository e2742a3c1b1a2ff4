import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { createAgent, type Agent } from '@captionfarm/agent';
import { nvencAvailable } from '@captionfarm/renderer';
import { captionfarmCacheDir, createTranscriber, defaultModelsDir, readWhisperBuildInfo, resolveModelPath, resolveWhisperBinDir } from '@captionfarm/transcriber';
import { CliError } from '../output.ts';

export const AGENT_USAGE = `captionfarm agent --control-plane URL --token TOKEN [--name NAME] [--concurrency N] [--model NAME|PATH] [--threads N] [--work-dir DIR]

Leases jobs from a control plane over websockets and runs them (whisper.cpp + ffmpeg, NVENC when a
GPU is present). SIGTERM drains (finishes the current jobs, takes no new ones); a second SIGTERM
aborts them and gives them back to the queue. Tokens: captionfarm admin agents token create.`;

/**
 * The model an agent uses when none is configured: ggml-base.bin from the models dir, else the
 * one scripts/setup fetched into the cache (test-models), else 'base' (fails jobs with a message
 * that says to run `captionfarm models pull base`).
 */
export function defaultWhisperModel(): string {
  for (const candidate of [path.join(defaultModelsDir(), 'ggml-base.bin'), path.join(captionfarmCacheDir(), 'test-models', 'ggml-base.bin')]) {
    if (existsSync(candidate)) return candidate;
  }
  return 'base';
}

export async function startAgent(o: { controlPlaneUrl: string; token: string; name?: string; concurrency?: number; model?: string; threads?: number; workDir?: string; log?: (m: string) => void }): Promise<{ agent: Agent; close(): Promise<void> }> {
  const model = o.model ?? defaultWhisperModel();
  const transcriber = createTranscriber({ model, ...(o.threads ? { threads: o.threads } : {}) });
  const nvenc = await nvencAvailable().catch(() => false);
  // whisper.cpp was built with CUDA when nvcc was present at setup (scripts/build-whisper).
  let cudaWhisper = false;
  try {
    cudaWhisper = readWhisperBuildInfo(resolveWhisperBinDir())?.cuda === true;
  } catch {
    /* no build: jobs fail with a clear transcription-failed message */
  }
  const agent = createAgent({
    controlPlaneUrl: o.controlPlaneUrl,
    token: o.token,
    nodeName: o.name ?? os.hostname(),
    maxConcurrentJobs: o.concurrency ?? 1,
    workDir: o.workDir ?? path.join(os.tmpdir(), 'captionfarm-agent'),
    transcriber,
    capabilities: { gpu: nvenc || cudaWhisper, nvenc, cudaWhisper, models: [path.basename(resolveModelPath(model, defaultModelsDir()))] },
    ...(o.log ? { log: o.log } : {}),
  });
  await agent.start();
  return {
    agent,
    async close() {
      await agent.close();
      await transcriber.close();
    },
  };
}

export async function agentCommand(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      'control-plane': { type: 'string' },
      token: { type: 'string' },
      name: { type: 'string' },
      concurrency: { type: 'string' },
      model: { type: 'string' },
      threads: { type: 'string' },
      'work-dir': { type: 'string' },
      help: { type: 'boolean' },
    },
    strict: true,
  });
  if (values.help) {
    process.stdout.write(`${AGENT_USAGE}\n`);
    return;
  }
  const url = values['control-plane'];
  const token = values.token;
  if (!url || !token) throw new CliError(`--control-plane and --token are required\n\n${AGENT_USAGE}`, 2);
  const log = (m: string) => process.stderr.write(`[agent] ${m}\n`);
  const { agent, close } = await startAgent({
    controlPlaneUrl: url,
    token,
    ...(values.name ? { name: values.name } : {}),
    ...(values.concurrency ? { concurrency: Number(values.concurrency) } : {}),
    ...(values.model ? { model: values.model } : {}),
    ...(values.threads ? { threads: Number(values.threads) } : {}),
    ...(values['work-dir'] ? { workDir: values['work-dir'] } : {}),
    log,
  });
  log(`node ${agent.nodeId} connected to ${url}`);
  let signals = 0;
  const onSignal = (sig: string) => {
    signals++;
    if (signals === 1) {
      log(`${sig}: draining (finishing ${agent.activeJobIds().length} job(s), taking no new ones); send it again to abort them`);
      agent
        .drain()
        .then(() => close())
        .then(() => process.exit(0), () => process.exit(1));
    } else {
      log(`${sig}: aborting current jobs; they go back to the queue`);
      agent
        .abortAll()
        .then(() => close())
        .then(() => process.exit(143), () => process.exit(1));
    }
  };
  process.on('SIGTERM', () => onSignal('SIGTERM'));
  process.on('SIGINT', () => onSignal('SIGINT'));
}
