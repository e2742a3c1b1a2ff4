import { ApiError, type EditPlan, type JobEdit } from '@captionfarm/contracts';
import { prepared, type Db } from '@captionfarm/db';
import { editOfJob } from '../jobs/record.ts';
import type { Caller, JobsService } from '../jobs/service.ts';

// The job's edit columns and its agent's plan (one row: a job has at most one transcript row).
const editRow = prepared((db, a: { id: string; accountId: string }) =>
  db
    .selectFrom('jobs')
    .leftJoin('job_transcripts', 'job_transcripts.job_id', 'jobs.id')
    .select(['jobs.edit_json', 'jobs.hook_title_json', 'jobs.profanity', 'jobs.profanity_words_json', 'job_transcripts.edit_json as plan_json'])
    .where('jobs.id', '=', a.id)
    .where('jobs.account_id', '=', a.accountId),
);

/** What GET .../edit answers for a job created without an edit: nothing cut, nothing zoomed. */
const NO_EDIT: JobEdit['edit'] = { silences: 'off', fillers: 'off', zoom: 'off', keep: null };

/**
 * GET /v1/automation-jobs/:id/edit (issue 42): the edit the job asked for (defaults filled), and
 * the plan its agent rendered: the keep-ranges in source seconds, every cut with its reason, the
 * zooms and bleeps on the output timeline. Served once the job succeeded, like its transcript: a
 * client fixes a cut in `plan.keep` and creates the job again with it as `edit.keep`.
 */
export function createEditsService(deps: { db: Db; jobs: Pick<JobsService, 'get'> }) {
  const { db, jobs } = deps;
  return {
    async get(caller: Caller, id: string): Promise<JobEdit> {
      // Ownership first: another account's job, or a malformed id, is 404.
      const job = await jobs.get(caller, id);
      if (job.status !== 'succeeded') {
        const when = job.status === 'queued' || job.status === 'running' ? 'once it has succeeded; poll the job until then' : 'only for succeeded jobs';
        throw new ApiError('edit_not_available', `Job ${job.id} is ${job.status} (phase ${job.phase}); its edit is available ${when}.`, {
          details: [{ path: 'status', message: job.status }],
        });
      }
      const [row] = await editRow(db, { id: job.id, accountId: caller.accountId });
      if (!row?.plan_json) {
        throw new ApiError(
          'edit_not_available',
          `Job ${job.id} has no edit plan: it was created without edit, hookTitle or profanity. ` +
            'Create the job with one (e.g. "edit": {"silences": "fast"}) to have its video cut and get the plan here.',
        );
      }
      const asked = editOfJob(row);
      return {
        jobId: job.id,
        edit: asked.edit ?? NO_EDIT,
        hookTitle: asked.hookTitle ? { text: asked.hookTitle.text, seconds: asked.hookTitle.seconds } : null,
        profanity: asked.profanity,
        plan: JSON.parse(row.plan_json) as EditPlan,
      };
    },
  };
}
export type EditsService = ReturnType<typeof createEditsService>;
