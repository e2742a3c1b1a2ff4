/**
 * The agent process's one read of the environment. The whisper.cpp and ffmpeg locations
 * (WHISPER_CPP_DIR, FFMPEG_PATH, ...) are read by the resolvers of the packages that run them.
 */
export interface AgentEnv {
  /** CAPTIONFARM_LOG=silent|info|debug, like the control plane; default info. */
  logLevel: 'silent' | 'info' | 'debug';
}

export function readAgentEnv(env: Record<string, string | undefined> = process.env): AgentEnv {
  return { logLevel: (env.CAPTIONFARM_LOG as AgentEnv['logLevel'] | undefined) ?? 'info' };
}
