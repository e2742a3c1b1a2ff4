import type { BlockList } from 'node:net';
import { parseAllowedNetworks, parseListenAddress } from '@captionfarm/net';

/**
 * The agent process's one read of the environment. The media tools' locations (WHISPER_CPP_DIR,
 * FFMPEG_PATH, ESPEAK_NG_PATH, ...) are read by @captionfarm/process/tools.
 */
export interface AgentEnv {
  /** CAPTIONFARM_LOG=silent|info|debug, like the control plane; default info. */
  logLevel: 'silent' | 'info' | 'debug';
  /** CAPTIONFARM_OVERLAP=auto|on|off: render while recognition runs (auto: on; see planHardware). */
  overlap: 'auto' | 'on' | 'off';
  /**
   * CAPTIONFARM_ALLOWED_PRIVATE_NETWORKS: private networks a job's videoUrl may reach (CIDR ranges,
   * comma-separated), the control plane's variable; default none (public addresses only).
   */
  allowedPrivateNetworks: BlockList;
  /**
   * CAPTIONFARM_AGENT_HEALTH_LISTEN=host:port: serve GET /healthz and /readyz there (health.ts);
   * unset: no listener (the images set 0.0.0.0:8081).
   */
  healthListen: { host: string; port: number } | undefined;
}

export function readAgentEnv(env: Record<string, string | undefined> = process.env): AgentEnv {
  const overlap = env.CAPTIONFARM_OVERLAP ?? 'auto';
  if (overlap !== 'auto' && overlap !== 'on' && overlap !== 'off') throw new Error(`CAPTIONFARM_OVERLAP must be auto, on or off, not "${overlap}"`);
  let allowedPrivateNetworks: BlockList;
  try {
    allowedPrivateNetworks = parseAllowedNetworks(env.CAPTIONFARM_ALLOWED_PRIVATE_NETWORKS);
  } catch (err) {
    throw new Error(`CAPTIONFARM_ALLOWED_PRIVATE_NETWORKS: ${(err as Error).message}`);
  }
  const listen = env.CAPTIONFARM_AGENT_HEALTH_LISTEN;
  const healthListen = listen ? (parseListenAddress(listen) ?? undefined) : undefined;
  if (listen && !healthListen) throw new Error(`CAPTIONFARM_AGENT_HEALTH_LISTEN must be host:port, not "${listen}"`);
  return { logLevel: (env.CAPTIONFARM_LOG as AgentEnv['logLevel'] | undefined) ?? 'info', overlap, allowedPrivateNetworks, healthListen };
}
