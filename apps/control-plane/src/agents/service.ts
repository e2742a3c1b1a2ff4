import type { LeasedJob } from '@captionfarm/contracts';
import type { Db, Job } from '@captionfarm/db';
import type { ObjectStore } from '@captionfarm/storage';
import type { JobsService } from '../jobs/service.ts';
import type { AgentHub } from './hub.ts';
import { createAgentLeases } from './leases.ts';
import { createAgentNodes } from './nodes.ts';
import { createAgentReports } from './reports.ts';
import { createAgentSweeper } from './sweeper.ts';
import type { AgentTimings } from './timings.ts';

export { DEFAULT_AGENT_TIMINGS, type AgentTimings } from './timings.ts';

/**
 * The agents' side of the control plane, by concern: nodes (tokens, registration, drain),
 * leases (lease, heartbeat, release), reports (progress .. complete/fail) and the sweeper. The
 * job-queue statements themselves are in packages/db/src/sql/jobs/.
 */
export function createAgentsService(deps: {
  db: Db;
  store: ObjectStore;
  hub: AgentHub;
  jobs: JobsService;
  timings: AgentTimings;
  now: () => Date;
  onEnded: (job: Job) => void;
  /** Minutes came back to an account (a true-up below the reservation): its waiting jobs may run. */
  onMinutesFreed?: (accountId: string) => void;
  /** Presigned GETs of the uploaded fonts a job's template names (FontsService.leasedFonts). */
  leasedFonts: (accountId: string, template: unknown) => Promise<LeasedJob['fonts']>;
}) {
  const nodes = createAgentNodes({ ...deps, onRegistered: (nodeId) => service.onRegistered(nodeId) });
  const leases = createAgentLeases({ ...deps, nodes });
  const reports = createAgentReports(deps);
  const sweeper = createAgentSweeper({ ...deps, nodes });
  const service = {
    /** Called with each node that registers (the server tells online nodes about new work). */
    onRegistered: (_nodeId: string): void => undefined,
    /** Called with each revoked token: the server closes its open sockets, here and on the other control planes. */
    onTokenRevoked: (_tokenId: string): void => undefined,
    createToken: nodes.createToken,
    authenticate: nodes.authenticate,
    tokenActive: nodes.tokenActive,
    revokedAmong: nodes.revokedAmong,
    listTokens: nodes.listTokens,
    /**
     * Revokes a token (by id or prefix; again is a no-op that answers the same): every call made
     * with it is refused from now on, its sockets are closed, and its nodes are gone at once, so
     * their leased jobs go back to the queue (the same path as a node whose socket closed).
     */
    async revokeToken(idOrPrefix: string) {
      const { token, nodeIds } = await nodes.revokeToken(idOrPrefix);
      service.onTokenRevoked(token.id);
      for (const nodeId of nodeIds) await sweeper.nodeGone(nodeId);
      return { ...token, nodes: token.nodes.map((n) => ({ ...n, state: 'offline' })) };
    },
    register: nodes.register,
    nodeOf: nodes.nodeOf,
    setDrain: nodes.setDrain,
    listNodes: nodes.listNodes,
    lease: leases.lease,
    heartbeat: leases.heartbeat,
    release: leases.release,
    progress: reports.progress,
    ingested: reports.ingested,
    transcribed: reports.transcribed,
    outputUploadUrl: reports.outputUploadUrl,
    complete: reports.complete,
    fail: reports.fail,
    sweep: sweeper.sweep,
    nodeGone: sweeper.nodeGone,
  };
  return service;
}
export type AgentsService = ReturnType<typeof createAgentsService>;
