/**
 * Where the agent stands with the control plane. It leases jobs only while `registered` and not
 * drained by an admin (drain/undrain events, the heartbeat's answer); our own drain (SIGTERM,
 * abortAll) and close are for good. `nodeId` comes with registration: a drain or close before it
 * has none until registration answers.
 */
export type AgentState =
  | { kind: 'starting' }
  | { kind: 'registered'; nodeId: string; drainedByAdmin: boolean }
  | { kind: 'draining'; nodeId: string | undefined }
  | { kind: 'closed'; nodeId: string | undefined };

export function nodeIdOf(state: AgentState): string | undefined {
  return state.kind === 'starting' ? undefined : state.nodeId;
}

/** Registration answered: a drain or close that came first stays. */
export function registered(state: AgentState, reg: { nodeId: string; drain: boolean }): AgentState {
  return state.kind === 'starting' || state.kind === 'registered'
    ? { kind: 'registered', nodeId: reg.nodeId, drainedByAdmin: reg.drain }
    : { kind: state.kind, nodeId: reg.nodeId };
}

/** Our own drain: never lease again (a close stays closed). */
export function draining(state: AgentState): AgentState {
  return state.kind === 'closed' || state.kind === 'draining' ? state : { kind: 'draining', nodeId: nodeIdOf(state) };
}

export function closed(state: AgentState): AgentState {
  return { kind: 'closed', nodeId: nodeIdOf(state) };
}

/** The control plane drained (or undrained) this node: only a registered agent's leasing changes. */
export function drainedByAdmin(state: AgentState, drain: boolean): AgentState {
  return state.kind === 'registered' ? { ...state, drainedByAdmin: drain } : state;
}

export function leasing(state: AgentState): state is { kind: 'registered'; nodeId: string; drainedByAdmin: false } {
  return state.kind === 'registered' && !state.drainedByAdmin;
}
