import type { TRPCBuiltRouter, TRPCDefaultErrorShape, TRPCMutationProcedure, TRPCSubscriptionProcedure } from '@trpc/server';
import { z } from 'zod';
import { MAX_OUTPUTS } from './framing.ts';
import {
  AgentCompleteInputSchema,
  AgentFailInputSchema,
  AgentIngestedInputSchema,
  AgentProgressInputSchema,
  type AgentRegisterInputSchema,
  AgentTranscribedInputSchema,
  type AgentEvent,
  type LeasedJob,
} from './agent.ts';

/**
 * The internal agent protocol (tRPC over websockets) as a type: what each call takes and answers.
 * It lives here, not in the control plane, so an agent machine installs the protocol and not the
 * server (express, SQLite, the AWS SDK). The control plane's router is declared to return this
 * type, so tsc fails there when the two drift apart.
 */

/** Every call after register names the registered node. */
const nodeRef = { nodeId: z.uuid() };
const leaseRef = { jobId: z.uuid(), leaseId: z.string() };

export const AgentNodeRefSchema = z.object(nodeRef).loose();
export const AgentLeaseInputSchema = z.strictObject({ ...nodeRef, slots: z.number().int().min(1).max(64), requestId: z.string().min(8).max(64) });
export const AgentHeartbeatInputSchema = z.strictObject({ ...nodeRef, leases: z.array(z.strictObject(leaseRef)).max(64) });
export const AgentNodeProgressInputSchema = AgentProgressInputSchema.extend(nodeRef);
export const AgentNodeIngestedInputSchema = AgentIngestedInputSchema.extend(nodeRef);
export const AgentNodeTranscribedInputSchema = AgentTranscribedInputSchema.extend(nodeRef);
export const AgentOutputUploadUrlInputSchema = z.strictObject({
  ...nodeRef,
  ...leaseRef,
  sizeBytes: z.number().int().positive(),
  /** Issue 43: which rendition (0: the job's output) or the poster; agents from before omit both. */
  output: z
    .number()
    .int()
    .min(0)
    .max(MAX_OUTPUTS - 1)
    .default(0),
  target: z.enum(['video', 'poster']).default('video'),
});
export const AgentNodeCompleteInputSchema = AgentCompleteInputSchema.extend(nodeRef);
export const AgentNodeFailInputSchema = AgentFailInputSchema.extend(nodeRef);
export const AgentReleaseInputSchema = z.strictObject({ ...nodeRef, ...leaseRef });
export const AgentEventsInputSchema = z.strictObject({ ...nodeRef, lastEventId: z.string().nullish() });

/** Whether the caller still holds the job's lease. */
export type LeaseCheck = { ok: true } | { ok: false; reason: 'lease-lost' | 'job-ended' };
export interface AgentRegistration {
  nodeId: string;
  drain: boolean;
  leaseMs: number;
}
export interface AgentHeartbeatAnswer {
  /** Jobs whose lease is no longer this node's: the agent aborts them. */
  lost: string[];
  drain: boolean;
}
export type AgentOutputUploadUrlAnswer = { ok: true; url: string } | Exclude<LeaseCheck, { ok: true }>;

/** What the control plane knows of the caller (set from the websocket's connection params). */
export interface AgentContext {
  tokenId: string | null;
  /** The websocket the call came on (presence: a node whose last one closes is gone). */
  conn?: object | undefined;
}

type In<S extends z.ZodType> = z.input<typeof AgentNodeRefSchema> & z.input<S>;
type Mutation<Input, Output> = TRPCMutationProcedure<{ input: Input; output: Output; meta: object }>;

export type AgentRouter = TRPCBuiltRouter<
  { ctx: AgentContext; meta: object; errorShape: TRPCDefaultErrorShape; transformer: false },
  {
    register: Mutation<z.input<typeof AgentRegisterInputSchema>, AgentRegistration>;
    lease: Mutation<In<typeof AgentLeaseInputSchema>, LeasedJob[]>;
    heartbeat: Mutation<In<typeof AgentHeartbeatInputSchema>, AgentHeartbeatAnswer>;
    progress: Mutation<In<typeof AgentNodeProgressInputSchema>, LeaseCheck>;
    ingested: Mutation<In<typeof AgentNodeIngestedInputSchema>, LeaseCheck>;
    transcribed: Mutation<In<typeof AgentNodeTranscribedInputSchema>, LeaseCheck>;
    outputUploadUrl: Mutation<In<typeof AgentOutputUploadUrlInputSchema>, AgentOutputUploadUrlAnswer>;
    complete: Mutation<In<typeof AgentNodeCompleteInputSchema>, LeaseCheck>;
    fail: Mutation<In<typeof AgentNodeFailInputSchema>, LeaseCheck>;
    release: Mutation<In<typeof AgentReleaseInputSchema>, LeaseCheck>;
    /** cancel / drain / undrain / work-available, each tracked so a reconnect resumes after the last one seen. */
    events: TRPCSubscriptionProcedure<{
      input: In<typeof AgentEventsInputSchema>;
      /** As tRPC hands a `tracked(id, event)` to the client. */
      output: AsyncIterable<{ id: string; data: AgentEvent }, void, unknown>;
      meta: object;
    }>;
  }
>;
