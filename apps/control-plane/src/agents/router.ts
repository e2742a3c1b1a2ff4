import { TRPCError, initTRPC, tracked } from '@trpc/server';
import { z } from 'zod';
import {
  AgentCompleteInputSchema,
  AgentFailInputSchema,
  AgentIngestedInputSchema,
  AgentProgressInputSchema,
  AgentRegisterInputSchema,
  AgentTranscribedInputSchema,
  type AgentCompleteInput,
  type AgentEvent,
} from '@captionfarm/contracts';
import type { AgentHub } from './hub.ts';
import type { AgentPresence } from './presence.ts';
import type { AgentsService } from './service.ts';

export interface AgentContext {
  tokenId: string | null;
  /** The websocket the call came on (presence: a node whose last one closes is gone). */
  conn?: object | undefined;
}

// Production mode always (NODE_ENV is unset under tsx, and tRPC's default would then put server
// stack traces with install paths into every error frame, for unauthenticated clients too).
// Unexpected errors keep only a generic message; the server logs the real one (onError).
const t = initTRPC.context<AgentContext>().create({
  isDev: false,
  errorFormatter: ({ shape, error }) => (error.code === 'INTERNAL_SERVER_ERROR' ? { ...shape, message: 'internal error' } : shape),
});

/** The internal agent protocol. Every mutation is idempotent: wsLink re-sends after a reconnect. */
export function createAgentRouter(deps: { agents: AgentsService; hub: AgentHub; presence?: AgentPresence; onCompleted?: (input: AgentCompleteInput & { nodeId: string }) => void }) {
  const { agents, hub, presence } = deps;
  const seen = (conn: object | undefined, nodeId: string) => {
    if (conn) presence?.seen(conn, nodeId);
  };
  const authed = t.procedure.use(({ ctx, next }) => {
    if (!ctx.tokenId) throw new TRPCError({ code: 'UNAUTHORIZED', message: 'unknown or revoked agent token' });
    return next({ ctx: { tokenId: ctx.tokenId } });
  });
  const nodeProc = authed.input(z.object({ nodeId: z.uuid() }).loose()).use(async ({ ctx, input, next }) => {
    const node = await agents.nodeOf(ctx.tokenId, (input as { nodeId: string }).nodeId);
    if (!node) throw new TRPCError({ code: 'FORBIDDEN', message: 'this node is not registered with this token' });
    seen(ctx.conn, node.id);
    return next({ ctx: { ...ctx, nodeId: node.id } });
  });
  const leaseRef = { nodeId: z.uuid() };

  return t.router({
    register: authed.input(AgentRegisterInputSchema).mutation(async ({ ctx, input }) => {
      const reg = await agents.register(ctx.tokenId, input.nodeName, input.capabilities);
      seen(ctx.conn, reg.nodeId);
      return reg;
    }),
    lease: nodeProc
      .input(z.strictObject({ ...leaseRef, slots: z.number().int().min(1).max(64), requestId: z.string().min(8).max(64) }))
      .mutation(({ ctx, input }) => agents.lease(ctx.nodeId, input.slots, input.requestId)),
    heartbeat: nodeProc
      .input(z.strictObject({ ...leaseRef, leases: z.array(z.strictObject({ jobId: z.uuid(), leaseId: z.string() })).max(64) }))
      .mutation(({ ctx, input }) => agents.heartbeat(ctx.nodeId, input.leases)),
    progress: nodeProc.input(AgentProgressInputSchema.extend(leaseRef)).mutation(({ input }) => agents.progress(input)),
    ingested: nodeProc.input(AgentIngestedInputSchema.extend(leaseRef)).mutation(({ input }) => agents.ingested(input)),
    transcribed: nodeProc.input(AgentTranscribedInputSchema.extend(leaseRef)).mutation(({ input }) => agents.transcribed(input)),
    outputUploadUrl: nodeProc
      .input(z.strictObject({ ...leaseRef, jobId: z.uuid(), leaseId: z.string(), sizeBytes: z.number().int().positive() }))
      .mutation(({ input }) => agents.outputUploadUrl(input)),
    complete: nodeProc.input(AgentCompleteInputSchema.extend(leaseRef)).mutation(async ({ input }) => {
      const r = await agents.complete(input);
      if (r.ok) deps.onCompleted?.(input);
      return r;
    }),
    fail: nodeProc.input(AgentFailInputSchema.extend(leaseRef)).mutation(({ input }) => agents.fail(input)),
    release: nodeProc.input(z.strictObject({ ...leaseRef, jobId: z.uuid(), leaseId: z.string() })).mutation(({ input }) => agents.release(input)),
    /** cancel / drain / undrain / work-available, each tracked so a reconnect resumes after the last one seen. */
    events: nodeProc.input(z.strictObject({ ...leaseRef, lastEventId: z.string().nullish() })).subscription(async function* ({ ctx, input, signal }) {
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
export type AgentRouter = ReturnType<typeof createAgentRouter>;
