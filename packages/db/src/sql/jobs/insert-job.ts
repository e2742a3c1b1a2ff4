import type { Insertable } from 'kysely';
import { prepared } from '../../prepared.ts';
import type { JobsTable } from '../../schema.ts';

/** Every column of a new job (`attempts` keeps its default). */
export type NewJobRow = Required<Omit<Insertable<JobsTable>, 'attempts'>>;

/** Inserts a new job, in its create's transaction. Every create runs it: compiled once (prepared.ts). */
export const insertJob = prepared((db, a: NewJobRow) => db.insertInto('jobs').values(a));
