import { randomUUID } from 'node:crypto';
import { ApiError, type AgentCapabilities } from '@captionfarm/contracts';
import type { Db } from '@captionfarm/db';
import { generateAgentToken, hashSecret } from '../crypto.ts';
import type { AgentHub } from './hub.ts';
import type { AgentTimings } from './timings.ts';

type AgentNodesDeps = { db: Db; hub: AgentHub; timings: AgentTimings; now: () => Date; onRegistered: (nodeId: string) => void };

/** Agent tokens and nodes: registration, drain, the admin listing. */
export function createAgentNodes(deps: AgentNodesDeps) {
  return { ...agentTokens(deps), ...nodeRegistry(deps) };
}
export type AgentNodes = ReturnType<typeof createAgentNodes>;

/** Agent tokens: create, authenticate, list, revoke. */
function agentTokens(deps: Pick<AgentNodesDeps, 'db' | 'now'>) {
  const { db, now } = deps;
  return {
    async createToken(name: string | null) {
      const token = generateAgentToken();
      const id = randomUUID();
      await db
        .insertInto('agent_tokens')
        .values({ id, hash: hashSecret(token), prefix: token.slice(0, 13), name, created_at: now().toISOString(), revoked_at: null })
        .execute();
      return { id, token, name };
    },
    async authenticate(token: string): Promise<{ tokenId: string } | null> {
      const row = await db.selectFrom('agent_tokens').select(['id', 'revoked_at']).where('hash', '=', hashSecret(token)).executeTakeFirst();
      return row && row.revoked_at === null ? { tokenId: row.id } : null;
    },
    /** Whether the token is still good (a socket authenticated once, at connect: each call asks again). */
    async tokenActive(tokenId: string): Promise<boolean> {
      const row = await db.selectFrom('agent_tokens').select('revoked_at').where('id', '=', tokenId).executeTakeFirst();
      return row !== undefined && row.revoked_at === null;
    },
    /** Of these token ids, the revoked ones. */
    async revokedAmong(tokenIds: string[]): Promise<string[]> {
      if (tokenIds.length === 0) return [];
      const rows = await db.selectFrom('agent_tokens').select('id').where('id', 'in', tokenIds).where('revoked_at', 'is not', null).execute();
      return rows.map((r) => r.id);
    },
    /** The tokens (never the secret: its first 13 characters), each with the nodes registered with it. */
    async listTokens(): Promise<AgentTokenView[]> {
      const tokens = await db.selectFrom('agent_tokens').select(['id', 'name', 'prefix', 'created_at', 'revoked_at']).orderBy('created_at').execute();
      const nodes = await db.selectFrom('agent_nodes').select(['id', 'name', 'state', 'token_id']).orderBy('created_at').execute();
      return tokens.map((t) => tokenView(t, nodes));
    },
    /**
     * Sets revoked_at on the token named by its id or its prefix, once (a second revoke keeps the
     * first time). Returns the token and the ids of its nodes; 404 for no such token, 409 for a
     * prefix that more than one token has.
     */
    async revokeToken(idOrPrefix: string): Promise<{ token: AgentTokenView; nodeIds: string[] }> {
      const found = await db
        .selectFrom('agent_tokens')
        .select('id')
        .where((eb) => eb.or([eb('id', '=', idOrPrefix), eb('prefix', '=', idOrPrefix)]))
        .limit(2)
        .execute();
      if (found.length === 0) throw new ApiError('not_found', `No agent token ${idOrPrefix}: give its id or prefix (captionfarm admin agents token list).`);
      if (found.length > 1) throw new ApiError('conflict', `More than one agent token has the prefix ${idOrPrefix}: give the token's id.`);
      const id = found[0]!.id;
      await db.updateTable('agent_tokens').set({ revoked_at: now().toISOString() }).where('id', '=', id).where('revoked_at', 'is', null).execute();
      const row = await db
        .selectFrom('agent_tokens')
        .select(['id', 'name', 'prefix', 'created_at', 'revoked_at'])
        .where('id', '=', id)
        .executeTakeFirstOrThrow();
      const nodes = await db.selectFrom('agent_nodes').select(['id', 'name', 'state', 'token_id']).where('token_id', '=', id).orderBy('created_at').execute();
      return { token: tokenView(row, nodes), nodeIds: nodes.map((n) => n.id) };
    },
  };
}

/** Agent nodes: registration, heartbeats, drain, the admin listing, the silent-node sweep. */
function nodeRegistry(deps: AgentNodesDeps) {
  const { db, hub, timings, now } = deps;
  return {
    async register(tokenId: string, nodeName: string, capabilities: AgentCapabilities) {
      const t = now().toISOString();
      const existing = await db.selectFrom('agent_nodes').selectAll().where('token_id', '=', tokenId).where('name', '=', nodeName).executeTakeFirst();
      if (existing) {
        await db
          .updateTable('agent_nodes')
          .set({ capabilities: JSON.stringify(capabilities), state: 'online', connected_at: t, last_heartbeat_at: t })
          .where('id', '=', existing.id)
          .execute();
        deps.onRegistered(existing.id);
        return { nodeId: existing.id, drain: existing.drain === 1, leaseMs: timings.leaseMs };
      }
      const id = randomUUID();
      await db
        .insertInto('agent_nodes')
        .values({
          id,
          name: nodeName,
          token_id: tokenId,
          capabilities: JSON.stringify(capabilities),
          state: 'online',
          connected_at: t,
          last_heartbeat_at: t,
          created_at: t,
        })
        .execute();
      deps.onRegistered(id);
      return { nodeId: id, drain: false, leaseMs: timings.leaseMs };
    },
    /** The node if it was registered with this token, with whether the token has been revoked since (one query per agent call). */
    async nodeOf(tokenId: string, nodeId: string) {
      return db
        .selectFrom('agent_nodes')
        .innerJoin('agent_tokens', 'agent_tokens.id', 'agent_nodes.token_id')
        .select(['agent_nodes.id', 'agent_tokens.revoked_at as token_revoked_at'])
        .where('agent_nodes.id', '=', nodeId)
        .where('agent_nodes.token_id', '=', tokenId)
        .executeTakeFirst();
    },
    /** Marks the node alive (a heartbeat) and answers whether it is drained. */
    async touch(nodeId: string): Promise<{ drain: boolean }> {
      const row = await db
        .updateTable('agent_nodes')
        .set({ last_heartbeat_at: now().toISOString(), state: 'online' })
        .where('id', '=', nodeId)
        .returning('drain')
        .executeTakeFirst();
      return { drain: row?.drain === 1 };
    },
    async isDrained(nodeId: string): Promise<boolean> {
      const node = await db.selectFrom('agent_nodes').select(['drain']).where('id', '=', nodeId).executeTakeFirst();
      return !node || node.drain === 1;
    },

    async setDrain(nodeId: string, drain: boolean) {
      const res = await db
        .updateTable('agent_nodes')
        .set({ drain: drain ? 1 : 0 })
        .where('id', '=', nodeId)
        .executeTakeFirst();
      if (Number(res.numUpdatedRows) === 0) return false;
      hub.push(nodeId, { type: drain ? 'drain' : 'undrain' });
      return true;
    },
    async listNodes() {
      const nodes = await db.selectFrom('agent_nodes').selectAll().orderBy('created_at').execute();
      const running = await db.selectFrom('jobs').select(['id', 'lease_owner', 'phase', 'percent']).where('status', '=', 'running').execute();
      return nodes.map((n) => ({
        id: n.id,
        name: n.name,
        state: n.drain === 1 ? (n.state === 'online' ? 'draining' : 'offline (drained)') : n.state,
        drain: n.drain === 1,
        capabilities: JSON.parse(n.capabilities) as AgentCapabilities,
        currentJobs: running.filter((j) => j.lease_owner === n.id).map((j) => ({ id: j.id, phase: j.phase, percent: j.percent })),
        lastHeartbeatAt: n.last_heartbeat_at,
        connectedAt: n.connected_at,
      }));
    },
    /** Nodes silent for two leases are offline (one UPDATE). */
    async sweepSilent(): Promise<void> {
      const silentBefore = new Date(now().getTime() - 2 * timings.leaseMs).toISOString();
      await db.updateTable('agent_nodes').set({ state: 'offline' }).where('state', '=', 'online').where('last_heartbeat_at', '<', silentBefore).execute();
    },
  };
}

/** An agent token as the admin API lists it. */
export interface AgentTokenView {
  id: string;
  name: string | null;
  prefix: string;
  createdAt: string;
  revokedAt: string | null;
  nodes: { id: string; name: string; state: string }[];
}

function tokenView(
  t: { id: string; name: string | null; prefix: string; created_at: string; revoked_at: string | null },
  nodes: { id: string; name: string; state: string; token_id: string }[],
): AgentTokenView {
  return {
    id: t.id,
    name: t.name,
    prefix: t.prefix,
    createdAt: t.created_at,
    revokedAt: t.revoked_at,
    nodes: nodes.filter((n) => n.token_id === t.id).map((n) => ({ id: n.id, name: n.name, state: n.state })),
  };
}
