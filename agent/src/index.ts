export { createAgent, type Agent, type AgentOptions } from './agent.ts';
export { runPipeline, type Transcriber, type JobChannel, type PipelineDeps } from './pipeline.ts';
export { JobFailure, JobAborted } from './errors.ts';
export { downloadSource } from './ingest.ts';
