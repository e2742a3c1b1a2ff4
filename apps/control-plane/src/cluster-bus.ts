import { randomUUID } from 'node:crypto';
import { AgentEventSchema, exponentialBackoffMs, type AgentEvent } from '@captionfarm/contracts';
import { sql } from 'kysely';
import pg from 'pg';
import type { Db } from '@captionfarm/db';

/**
 * An event for one agent node, or (nodeId null) for every node online on a control plane; or an
 * agent token that was revoked (each control plane closes its sockets: agents/sockets.ts).
 */
type BusMessage = { nodeId: string | null; event: AgentEvent } | { revokedTokenId: string };

/**
 * Carries agent events between the control planes of a farm: an agent hears a cancel, a drain or
 * new work whichever control plane it is connected to, and a revoked token's sockets are closed
 * wherever they are. On PostgreSQL it is LISTEN/NOTIFY on one
 * channel; each process skips its own messages (it delivered them locally already). On SQLite
 * there is one control plane, and nothing to carry: agents' heartbeats (drain, lost leases) and
 * their lease polling are the fallback a lost message falls back on anyway.
 */
export interface ClusterBus {
  publish(message: BusMessage): void;
  /** Called with every other process's message; and with `{ reconnected: true }` after the listener was down (messages may be lost). */
  onMessage(handler: (message: BusMessage | { reconnected: true }) => void): void;
  close(): Promise<void>;
}

const CHANNEL = 'captionfarm_agent_events';
/** The wait before reconnect `failures` (from 0): 0.25, 0.5, 1, 2, 4, then 5 s (the agent's reconnect schedule, report.ts). */
const RETRY = { baseMs: 250, maxMs: 5_000 };

export function createLocalBus(): ClusterBus {
  return { publish: () => undefined, onMessage: () => undefined, close: async () => undefined };
}

export function createPostgresBus(opts: { db: Db; url: string; log: (msg: string, err?: unknown) => void }): ClusterBus {
  const self = randomUUID();
  const handlers: ((m: BusMessage | { reconnected: true }) => void)[] = [];
  let client: pg.Client | undefined;
  let closed = false;
  let failures = 0;
  let timer: NodeJS.Timeout | undefined;

  const dispatch = (m: BusMessage | { reconnected: true }) => {
    for (const h of handlers) h(m);
  };

  async function connect(): Promise<void> {
    const c = new pg.Client({ connectionString: opts.url, connectionTimeoutMillis: 10_000 });
    // A restarted or unreachable server: reconnect with backoff; the messages in between are lost,
    // so the listeners are told to catch up (agents re-check their work).
    c.on('error', (err) => opts.log('cluster bus: PostgreSQL connection error', err));
    c.on('end', () => {
      if (client === c) client = undefined;
      if (!closed) retry();
    });
    c.on('notification', (n) => {
      if (n.channel !== CHANNEL || !n.payload) return;
      let parsed: { from?: string; nodeId?: unknown; event?: unknown; revokedTokenId?: unknown };
      try {
        parsed = JSON.parse(n.payload) as typeof parsed;
      } catch {
        return;
      }
      if (parsed.from === self) return;
      if (typeof parsed.revokedTokenId === 'string') {
        dispatch({ revokedTokenId: parsed.revokedTokenId });
        return;
      }
      const event = AgentEventSchema.safeParse(parsed.event);
      if (!event.success) return;
      dispatch({ nodeId: typeof parsed.nodeId === 'string' ? parsed.nodeId : null, event: event.data });
    });
    try {
      await c.connect();
      await c.query(`listen ${CHANNEL}`);
    } catch (err) {
      c.removeAllListeners('end');
      await c.end().catch(() => undefined);
      throw err;
    }
    if (closed) {
      await c.end().catch(() => undefined);
      return;
    }
    const wasDown = failures > 0;
    failures = 0;
    client = c;
    if (wasDown) dispatch({ reconnected: true });
  }

  function retry(): void {
    if (closed || timer) return;
    const delay = exponentialBackoffMs(failures, RETRY);
    failures++;
    timer = setTimeout(() => {
      timer = undefined;
      connect().catch((err: unknown) => {
        opts.log('cluster bus: reconnecting to PostgreSQL failed', err);
        retry();
      });
    }, delay);
    timer.unref();
  }

  const started = connect().catch((err: unknown) => {
    opts.log('cluster bus: connecting to PostgreSQL failed', err);
    retry();
  });

  return {
    publish(message) {
      // NOTIFY through the pool: it is delivered when (and only if) the statement commits.
      const payload = JSON.stringify({ from: self, ...message });
      void sql`select pg_notify(${CHANNEL}, ${payload})`.execute(opts.db).catch((err: unknown) => opts.log('cluster bus: publishing failed', err));
    },
    onMessage(handler) {
      handlers.push(handler);
    },
    async close() {
      closed = true;
      clearTimeout(timer);
      await started;
      const c = client;
      client = undefined;
      await c?.end().catch(() => undefined);
    },
  };
}
