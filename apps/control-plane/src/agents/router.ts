import { TRPCError, initTRPC, tracked } from '@trpc/server';
import {
  AgentEventsInputSchema,
  AgentHeartbeatInputSchema,
  AgentLeaseInputSchema,
  AgentNodeCompleteInputSchema,
  AgentNodeFailInputSchema,
  AgentNodeIngestedInputSchema,
  AgentNodeProgressInputSchema,
  AgentNodeRefSchema,
  AgentNodeTranscribedInputSchema,
  AgentOutputUploadUrlInputSchema,
  AgentRegisterInputSchema,
  AgentReleaseInputSchema,
  type AgentCompleteInput,
  type AgentTranscribedInput,
  type AgentContext,
  type AgentEvent,
  type AgentRouter,
} from '@captionfarm/contracts';
import type { AgentHub } from './hub.ts';
import type { AgentPresence } from './presence.ts';
import type { AgentsService } from './service.ts';

// Production mode always (NODE_ENV is unset under tsx, and tRPC's default would then put server
// stack traces with install paths into every error frame, for unauthenticated clients too).
// Unexpected errors keep only a generic message; the server logs the real one (onError).
const t = initTRPC.context<AgentContext>().create({
  isDev: false,
  errorFormatter: ({ shape, error }) => (error.code === 'INTERNAL_SERVER_ERROR' ? { ...shape, message: 'internal error' } : shape),
});

/**
 * The internal agent protocol (its type, AgentRouter, is in @captionfarm/contracts). Every mutation
 * is idempotent: wsLink re-sends after a reconnect.
 */
export function createAgentRouter(deps: {
  agents: AgentsService;
  hub: AgentHub;
  presence?: AgentPresence;
  onCompleted?: (input: AgentCompleteInput & { nodeId: string }) => void;
  /** A lease holder's recognized words were kept (once per call that was taken). */
  onTranscribed?: (input: AgentTranscribedInput & { nodeId: string }) => void;
}): AgentRouter {
  const { agents, hub, presence } = deps;
  const seen = (conn: object | undefined, nodeId: string) => {
    if (conn) presence?.seen(conn, nodeId);
  };
  // The token was checked when the socket connected; a revoke since then (agents.revokeToken)
  // must refuse the socket's next call too, before the server has closed it: each call asks again.
  const revoked = () => new TRPCError({ code: 'UNAUTHORIZED', message: 'unknown or revoked agent token' });
  const authed = t.procedure.use(({ ctx, next }) => {
    if (!ctx.tokenId) throw revoked();
    return next({ ctx: { tokenId: ctx.tokenId } });
  });
  const nodeProc = authed.input(AgentNodeRefSchema).use(async ({ ctx, input, next }) => {
    const node = await agents.nodeOf(ctx.tokenId, (input as { nodeId: string }).nodeId);
    if (!node) throw new TRPCError({ code: 'FORBIDDEN', message: 'this node is not registered with this token' });
    if (node.token_revoked_at !== null) throw revoked();
    seen(ctx.conn, node.id);
    return next({ ctx: { ...ctx, nodeId: node.id } });
  });
  return t.router({
    register: authed.input(AgentRegisterInputSchema).mutation(async ({ ctx, input }) => {
      if (!(await agents.tokenActive(ctx.tokenId))) throw revoked();
      const reg = await agents.register(ctx.tokenId, input.nodeName, input.capabilities);
      seen(ctx.conn, reg.nodeId);
      return reg;
    }),
    lease: nodeProc.input(AgentLeaseInputSchema).mutation(({ ctx, input }) => agents.lease(ctx.nodeId, input.slots, input.requestId)),
    heartbeat: nodeProc.input(AgentHeartbeatInputSchema).mutation(({ ctx, input }) => agents.heartbeat(ctx.nodeId, input.leases)),
    progress: nodeProc.input(AgentNodeProgressInputSchema).mutation(({ input }) => agents.progress(input)),
    ingested: nodeProc.input(AgentNodeIngestedInputSchema).mutation(({ input }) => agents.ingested(input)),
    transcribed: nodeProc.input(AgentNodeTranscribedInputSchema).mutation(async ({ input }) => {
      const r = await agents.transcribed(input);
      if (r.ok) deps.onTranscribed?.(input);
      return r;
    }),
    outputUploadUrl: nodeProc.input(AgentOutputUploadUrlInputSchema).mutation(({ input }) => agents.outputUploadUrl(input)),
    complete: nodeProc.input(AgentNodeCompleteInputSchema).mutation(async ({ input }) => {
      const r = await agents.complete(input);
      if (r.ok) deps.onCompleted?.(input);
      return r;
    }),
    fail: nodeProc.input(AgentNodeFailInputSchema).mutation(({ input }) => agents.fail(input)),
    release: nodeProc.input(AgentReleaseInputSchema).mutation(({ ctx, input }) => agents.release(ctx.nodeId, input)),
    /** cancel / drain / undrain / work-available, each tracked so a reconnect resumes after the last one seen. */
    events: nodeProc.input(AgentEventsInputSchema).subscription(async function* ({ ctx, input, signal }) {
      let last = input.lastEventId ? Number(input.lastEventId) || 0 : hub.latest(ctx.nodeId);
      while (!signal?.aborted) {
        const batch = await hub.next(ctx.nodeId, last, signal);
        for (const { id, event } of batch) {
          last = id;
          yield tracked(String(id), event as AgentEvent);
        }
      }
    }),
  });
}
export type { AgentRouter } from '@captionfarm/contracts';
