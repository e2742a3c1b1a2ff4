import type { Server } from 'node:http';
import type { AgentCompleteInput } from '@captionfarm/contracts';
import type { Db } from '@captionfarm/db';
import type { Logger } from '@captionfarm/log';
import { createLocalBus, createPostgresBus, type ClusterBus } from '../cluster-bus.ts';
import type { ControlPlaneConfig } from '../config.ts';
import type { AuthFailureLimiter } from '../http/auth-failures.ts';
import type { ClientAddress } from '../http/client-address.ts';
import type { Metrics } from '../metrics.ts';
import { createAgentHub, type AgentHub } from './hub.ts';
import { createAgentPresence } from './presence.ts';
import { createAgentRouter } from './router.ts';
import type { AgentsService } from './service.ts';
import { attachAgentSocketServer } from './socket-server.ts';
import { createAgentSockets } from './sockets.ts';
import { DEFAULT_AGENT_TIMINGS, type AgentTimings } from './timings.ts';

type Log = (msg: string, extra?: unknown) => void;

/** The lease, deadline and disconnect-grace timings the config sets; `overrides` (tests) last. */
export function agentTimingsOf(config: Readonly<ControlPlaneConfig>, overrides?: Partial<AgentTimings>): AgentTimings {
  return {
    ...DEFAULT_AGENT_TIMINGS,
    leaseMs: config.leaseSeconds * 1000,
    deadlineBaseMs: config.deadlineBaseSeconds * 1000,
    disconnectGraceMs: config.agentGraceSeconds * 1000,
    ...overrides,
  };
}

export interface AgentLink {
  /** Agent events and revoked tokens between the control planes of a farm (cluster-bus.ts); local on SQLite. */
  readonly bus: ClusterBus;
  /** The agents' event queues, per node (hub.ts). */
  readonly hub: AgentHub;
  /** The nodes registered here and not gone: `work-available` goes to them. */
  readonly onlineNodes: Set<string>;
}

/** What the agents service needs before it exists: how events reach the agents. */
export function createAgentLink(d: { databaseUrl: string | undefined; db: Db; log: Log }): AgentLink {
  // Agent events reach agents connected to any control plane of the farm (cluster-bus.ts).
  const bus = d.databaseUrl ? createPostgresBus({ db: d.db, url: d.databaseUrl, log: d.log }) : createLocalBus();
  const onlineNodes = new Set<string>();
  return { bus, hub: createAgentHub({ bus, onlineNodes: () => onlineNodes }), onlineNodes };
}

export interface AgentsAttachDeps {
  config: Readonly<ControlPlaneConfig>;
  link: AgentLink;
  agents: AgentsService;
  /** The HTTP server the agents' websockets upgrade on (`/agent`). */
  server: Server;
  /** A node whose last socket closed is gone after this (AgentTimings.disconnectGraceMs). */
  graceMs: number;
  db: Db;
  metrics: Metrics;
  logger: Logger;
  log: Log;
  authFailures: AuthFailureLimiter;
  clientAddress: ClientAddress;
}

/**
 * The agents' side of the HTTP server: their presence (a node gone past the grace has its jobs
 * queued again), the tRPC router (completions and recognition checks go to the metrics), the
 * sockets by token (a revoked token's close on every control plane) and the websocket server.
 * `close` stops presence first, so our own shutdown does not count as agents leaving.
 */
export function attachAgents(d: AgentsAttachDeps): { close(): void } {
  const { link, agents, log } = d;
  const presence = createAgentPresence({
    graceMs: d.graceMs,
    onGone: (nodeId) => {
      link.onlineNodes.delete(nodeId);
      agents.nodeGone(nodeId).catch((err: unknown) => log(`requeueing the jobs of gone node ${nodeId} failed`, err));
    },
  });
  const router = createAgentRouter({
    agents,
    hub: link.hub,
    presence,
    onCompleted: completionReporter(d),
    onTranscribed: (input) => {
      if (input.checks) d.metrics.recognitionChecks(input.checks);
    },
  });
  agents.onRegistered = (nodeId: string) => link.onlineNodes.add(nodeId);
  // A revoked token's sockets close on every control plane (agents/sockets.ts).
  const sockets = createAgentSockets({ bus: link.bus, revokedAmong: agents.revokedAmong, log });
  agents.onTokenRevoked = (tokenId: string) => sockets.revoked(tokenId);
  const socketServer = attachAgentSocketServer({
    server: d.server,
    router,
    authenticate: (token) => agents.authenticate(token),
    presence,
    sockets,
    authFailures: d.authFailures,
    clientAddress: d.clientAddress,
    maxConnections: d.config.maxAgentConnections,
    authSeconds: d.config.agentAuthSeconds,
    log,
  });
  return {
    close() {
      presence.close();
      socketServer.close();
    },
  };
}

/** A completion: its phase seconds to the metrics, and a log line that names the node. */
function completionReporter(d: { db: Db; metrics: Metrics; logger: Logger; log: Log }): (input: AgentCompleteInput & { nodeId: string }) => void {
  const { db, metrics, logger, log } = d;
  return (input) => {
    const phaseSeconds = input.phaseSeconds;
    void Promise.all([
      db.selectFrom('agent_nodes').select('name').where('id', '=', input.nodeId).executeTakeFirst(),
      db.selectFrom('jobs').select(['quoted_seconds', 'account_id']).where('id', '=', input.jobId).executeTakeFirst(),
    ]).then(
      ([node, job]) => {
        if (phaseSeconds) metrics.jobCompleted({ node: node?.name ?? input.nodeId, phaseSeconds, mediaSeconds: job?.quoted_seconds ?? null });
        // The end-of-job line has no node (the lease is cleared by then): this one ties the job to it.
        logger.info({ jobId: input.jobId, accountId: job?.account_id, nodeId: input.nodeId, node: node?.name, phaseSeconds }, 'job completed by agent');
      },
      (err: unknown) => log('metrics: job completion lookup failed', err),
    );
  };
}
