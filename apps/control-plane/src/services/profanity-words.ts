import { ApiError, issuesToDetails, ProfanityWordsSchema, type ProfanityWords } from '@captionfarm/contracts';
import type { Db } from '@captionfarm/db';

/**
 * GET and PUT /v1/profanity-words (issue 42): the account's own profane words, added to the
 * language's list when a job masks or bleeps. A job takes the words the account has when it is
 * created (jobs/create.ts): a PUT later changes no queued or running job.
 */
export function createProfanityWordsService(deps: { db: Db }) {
  const { db } = deps;
  return {
    async get(accountId: string): Promise<ProfanityWords> {
      const row = await db.selectFrom('accounts').select('profanity_words_json').where('id', '=', accountId).executeTakeFirst();
      return { words: row?.profanity_words_json ? (JSON.parse(row.profanity_words_json) as string[]) : [] };
    },
    /** Replaces the account's words with the body's (an empty list removes them all). */
    async put(accountId: string, body: unknown): Promise<ProfanityWords> {
      const parsed = ProfanityWordsSchema.safeParse(body ?? {});
      if (!parsed.success) {
        throw new ApiError('invalid_request', 'The body is not a valid list of profane words: see details.', { details: issuesToDetails(parsed.error.issues) });
      }
      const { words } = parsed.data;
      await db
        .updateTable('accounts')
        .set({ profanity_words_json: words.length > 0 ? JSON.stringify(words) : null })
        .where('id', '=', accountId)
        .execute();
      return { words };
    },
  };
}
export type ProfanityWordsService = ReturnType<typeof createProfanityWordsService>;
