import type { Kysely } from 'kysely';
import type { Database } from '../schema.ts';

/** What a lease by (node, request id) answered, as stored by saveLeaseReply; undefined if none. */
export async function findLeaseReply(db: Kysely<Database>, nodeId: string, requestId: string): Promise<string | undefined> {
  const row = await db.selectFrom('lease_replies').select('reply_json').where('node_id', '=', nodeId).where('request_id', '=', requestId).executeTakeFirst();
  return row?.reply_json;
}

/** Keeps a lease's answer so that the same request, re-sent to any control plane, gets it again. */
export async function saveLeaseReply(db: Kysely<Database>, args: { nodeId: string; requestId: string; replyJson: string; now: string }): Promise<void> {
  await db
    .insertInto('lease_replies')
    .values({ node_id: args.nodeId, request_id: args.requestId, reply_json: args.replyJson, created_at: args.now })
    .onConflict((oc) => oc.columns(['node_id', 'request_id']).doNothing())
    .execute();
}

/** Forgets the answers older than `before` (the sweeper; an agent re-sends a lease within seconds). */
export async function deleteLeaseReplies(db: Kysely<Database>, before: string): Promise<void> {
  await db.deleteFrom('lease_replies').where('created_at', '<', before).execute();
}
