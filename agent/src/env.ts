/**
 * The agent process's one read of the environment. The media tools' locations (WHISPER_CPP_DIR,
 * FFMPEG_PATH, ESPEAK_NG_PATH, ...) are read by @captionfarm/process/tools.
 */
export interface AgentEnv {
  /** CAPTIONFARM_LOG=silent|info|debug, like the control plane; default info. */
  logLevel: 'silent' | 'info' | 'debug';
  /** CAPTIONFARM_OVERLAP=auto|on|off: render while recognition runs (auto: on; see planHardware). */
  overlap: 'auto' | 'on' | 'off';
}

export function readAgentEnv(env: Record<string, string | undefined> = process.env): AgentEnv {
  const overlap = env.CAPTIONFARM_OVERLAP ?? 'auto';
  if (overlap !== 'auto' && overlap !== 'on' && overlap !== 'off') throw new Error(`CAPTIONFARM_OVERLAP must be auto, on or off, not "${overlap}"`);
  return { logLevel: (env.CAPTIONFARM_LOG as AgentEnv['logLevel'] | undefined) ?? 'info', overlap };
}
