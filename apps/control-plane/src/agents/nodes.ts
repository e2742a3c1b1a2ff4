import { randomUUID } from 'node:crypto';
import type { AgentCapabilities } from '@captionfarm/contracts';
import type { Db } from '@captionfarm/db';
import { generateAgentToken, hashSecret } from '../crypto.ts';
import type { AgentHub } from './hub.ts';
import type { AgentTimings } from './timings.ts';

/** Agent tokens and nodes: registration, drain, the admin listing. */
export function createAgentNodes(deps: { db: Db; hub: AgentHub; timings: AgentTimings; now: () => Date; onRegistered: (nodeId: string) => void }) {
  const { db, hub, timings, now } = deps;
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
    async nodeOf(tokenId: string, nodeId: string) {
      return db.selectFrom('agent_nodes').selectAll().where('id', '=', nodeId).where('token_id', '=', tokenId).executeTakeFirst();
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
export type AgentNodes = ReturnType<typeof createAgentNodes>;
