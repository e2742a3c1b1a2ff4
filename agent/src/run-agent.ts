/**
 * What `captionfarm-agent` (and `captionfarm agent`) runs: a standalone agent on this machine's
 * hardware plan, or its self-test; `captionfarm serve` starts its embedded agent with startAgent.
 */
import os from 'node:os';
import path from 'node:path';
import { createLogger } from '@captionfarm/log';
import { createSafeFetch } from '@captionfarm/net';
import { nvencAvailable } from '@captionfarm/renderer';
import { createTranscriber, findInstalledModels, locateModel, readWhisperBuildInfo } from '@captionfarm/transcriber';
import { whisperBinDir } from '@captionfarm/process/tools';
import { createAgent, type Agent } from './agent.ts';
import type { AgentOptions } from './command.ts';
import { CliError, UsageError } from '@captionfarm/process/command-line';
import { onShutdown } from '@captionfarm/process/shutdown';
import { readAgentEnv, type AgentEnv } from './env.ts';
import { startHealthServer } from './health.ts';
import { chooseModel, detectHardware, planHardware } from './hardware.ts';
import { selfTest, type WhisperBuild } from './self-test.ts';

/**
 * The model one-off commands (`captionfarm preview`) use when none is given: base wherever the
 * agent would find it (modelSearchDirs: the models dir, then the test-models cache scripts/setup
 * fills), else 'base' (fails with a message that says to run `captionfarm models pull base`).
 * Agents choose by hardware instead (chooseModel).
 */
export function defaultWhisperModel(): string {
  return findInstalledModels().find((m) => m.name === 'base')?.path ?? 'base';
}

/** The whisper.cpp build this machine has (scripts/build-whisper records CUDA or not). */
export function whisperBuild(): WhisperBuild {
  try {
    const binDir = whisperBinDir();
    const info = readWhisperBuildInfo(binDir);
    return { binDir, cuda: info?.cuda === true, detail: info ? `whisper.cpp ${info.whisperCpp}, ${info.cpu}, ${binDir}` : binDir };
  } catch {
    return { binDir: null, cuda: false, detail: '' };
  }
}

/** Hardware, build and plan: what both the agent and its self-test start from. */
async function machinePlan(o: { concurrency?: number | undefined; threads?: number | undefined; model?: string | undefined }, env: AgentEnv) {
  const [hardware, nvenc] = await Promise.all([detectHardware(), nvencAvailable().catch(() => false)]);
  const whisper = whisperBuild();
  const plan = planHardware(hardware, {
    cudaWhisper: whisper.cuda,
    nvenc,
    slots: o.concurrency,
    whisperThreads: o.threads || undefined,
    overlap: env.overlap,
  });
  const model = chooseModel({
    installed: findInstalledModels(),
    cuda: whisper.cuda,
    threads: plan.overlap ? (plan.whisperThreadsBesideRender ?? plan.whisperThreads) : plan.whisperThreads,
    slots: plan.slots,
    override: o.model,
  });
  // A name (the override, or 'base' when nothing is installed) is looked up where models are installed.
  return { hardware, nvenc, whisper, plan, model, modelPath: locateModel(model.model) };
}

export async function startAgent(o: {
  controlPlaneUrl: string;
  token: string;
  name?: string;
  concurrency?: number;
  model?: string;
  threads?: number;
  workDir?: string;
  log?: (m: string, fields?: Record<string, unknown>) => void;
  /** The agent's environment variables, read once (readAgentEnv); default: read now. */
  env?: AgentEnv;
}): Promise<{ agent: Agent; close(): Promise<void> }> {
  const env = o.env ?? readAgentEnv();
  const { hardware, nvenc, whisper, plan, model, modelPath } = await machinePlan(o, env);
  const transcriber = createTranscriber({ model: modelPath, threads: plan.whisperThreads });
  const cudaWhisper = whisper.cuda;
  o.log?.(`whisper model ${model.name} (${modelPath}): ${model.why}`);
  o.log?.(
    `${hardware.cores} cores, ${hardware.gpus.length} GPU(s); whisper ${cudaWhisper ? 'CUDA' : 'CPU'} ${plan.whisperThreads} threads; ` +
      `${nvenc ? 'NVENC' : `x264 ${plan.x264Threads} threads`}; ${plan.slots} slots (${plan.why}); overlapped stages ${plan.overlap ? 'on' : 'off'} (${plan.overlapWhy})`,
  );
  const agent = createAgent({
    controlPlaneUrl: o.controlPlaneUrl,
    token: o.token,
    nodeName: o.name ?? os.hostname(),
    maxConcurrentJobs: plan.slots,
    x264Threads: plan.x264Threads,
    analysisThreads: plan.analysisThreads,
    overlap: plan.overlap,
    whisperThreadsBesideRender: plan.whisperThreadsBesideRender,
    workDir: o.workDir ?? path.join(os.tmpdir(), 'captionfarm-agent'),
    transcriber,
    safeFetch: createSafeFetch({ allowedNetworks: env.allowedPrivateNetworks }),
    capabilities: { gpu: nvenc || cudaWhisper, nvenc, cudaWhisper, models: [path.basename(modelPath)] },
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

export async function agentCommand(values: AgentOptions): Promise<void> {
  if (values.selfTest) {
    await runSelfTest({
      model: values.model,
      concurrency: values.concurrency ? positive(values.concurrency, '--concurrency') : undefined,
      threads: values.threads ? positive(values.threads, '--threads') : undefined,
      seconds: values.seconds ? positive(values.seconds, '--seconds') : undefined,
      workDir: values.workDir,
    });
    return;
  }
  const url = values.controlPlane;
  const token = values.token;
  if (!url || !token) throw new UsageError('--control-plane and --token are required');
  // JSON lines on stdout (pretty on a terminal); CAPTIONFARM_LOG=silent|info|debug like the control plane.
  const env = readAgentEnv();
  const logger = createLogger({ name: 'agent', level: env.logLevel });
  const log = (m: string, fields: Record<string, unknown> = {}) => logger.info(fields, m);
  // The probes answer from the start (alive, not ready) while the model loads and the agent registers.
  let started: Agent | undefined;
  const probes = env.healthListen
    ? await startHealthServer({
        ...env.healthListen,
        health: () => started?.health() ?? { state: 'starting', connected: false, nodeId: null, jobs: 0, slots: 0 },
      })
    : undefined;
  if (probes) log(`probes on ${probes.url}/healthz and /readyz`);
  const { agent, close } = await startAgent({
    controlPlaneUrl: url,
    token,
    ...(values.name ? { name: values.name } : {}),
    ...(values.concurrency ? { concurrency: Number(values.concurrency) } : {}),
    ...(values.model ? { model: values.model } : {}),
    ...(values.threads ? { threads: Number(values.threads) } : {}),
    ...(values.workDir ? { workDir: values.workDir } : {}),
    log,
    env,
  });
  started = agent;
  log(`node ${agent.nodeId} connected to ${url}`);
  let aborted = false;
  let closing: Promise<void> | undefined;
  // One way out for both signals. Aborting the jobs also ends the first signal's drain (it awaits
  // the same jobs), so the exit code is decided when the process exits, not by whichever chain
  // ran: 143 (128 + SIGTERM) once jobs were aborted, 0 after a clean drain.
  const exit = () => {
    closing ??= close().finally(() => probes?.close());
    closing.then(
      () => process.exit(aborted ? 143 : 0),
      () => process.exit(1),
    );
  };
  onShutdown({
    signals: ['SIGTERM', 'SIGINT'],
    first: (sig) => {
      log(`${sig}: draining (finishing ${agent.activeJobIds().length} job(s), taking no new ones); send it again to abort them`);
      agent.drain().then(exit, () => process.exit(1));
    },
    second: (sig) => {
      aborted = true;
      log(`${sig}: aborting current jobs; they go back to the queue`);
      agent.abortAll().then(exit, () => process.exit(1));
    },
  });
}

function positive(v: string, name: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new UsageError(`${name} must be a positive whole number, not "${v}"`);
  return n;
}

/** `captionfarm-agent --self-test`: the report on stdout; exit 1 when the local job failed. */
export async function runSelfTest(o: {
  model?: string | undefined;
  concurrency?: number | undefined;
  threads?: number | undefined;
  seconds?: number | undefined;
  workDir?: string | undefined;
  print?: (l: string) => void;
}) {
  const { hardware, whisper, plan, model, modelPath } = await machinePlan(o, readAgentEnv());
  const transcriber = whisper.binDir ? createTranscriber({ model: modelPath, threads: plan.whisperThreads }) : null;
  try {
    const report = await selfTest({
      hardware,
      plan,
      whisper,
      transcriber,
      model: { name: model.name, path: modelPath, why: model.why },
      ...(o.seconds ? { seconds: o.seconds } : {}),
      ...(o.workDir ? { workDir: o.workDir } : {}),
      ...(o.print ? { print: o.print } : {}),
    });
    if (report.jobError) throw new CliError(`self-test: the local job failed: ${report.jobError}`, 1);
    return report;
  } finally {
    await transcriber?.close();
  }
}
