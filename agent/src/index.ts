export { createAgent, type Agent, type AgentOptions } from './agent.ts';
export { runPipeline, type Transcriber, type JobChannel, type PipelineDeps } from './pipeline.ts';
export { JobFailure, JobAborted } from './errors.ts';
export { downloadSource } from './ingest.ts';
export { detectGpus, detectHardware, planHardware, type GpuInfo, type Hardware, type HardwarePlan } from './hardware.ts';
export { defaultWhisperModel, startAgent } from './run-agent.ts';
export { selfTest, speechSource, testClipArgs, type SelfTestReport, type WhisperBuild } from './self-test.ts';
