import type { AgentCompleteInput } from '@captionfarm/contracts';
import type { Job } from '@captionfarm/db';
import type { ObjectStore } from '@captionfarm/storage';
import { posterKey, posterOf, renditionKey, renditionsOf, type MadePoster, type MadeRendition } from '../jobs/renditions.ts';
import { OUTPUT_TTL_SECONDS } from './timings.ts';

/** A rendition or the poster the agent reported, checked against the job and found in the store. */
interface Checked {
  renditions: { index: number; key: string; downloadName: string; width: number; height: number; bytes: number }[];
  poster: { at: number; width: number; height: number; bytes: number } | null;
}

/**
 * Checks an agent's completion against what the job asked for (issue 43): every rendition once,
 * none past the job's, rendition 0 the one of the top-level `resolution`/`outputBytes`, the poster
 * exactly when the job asked for one. An agent from before issue 43 sends no `outputs`: its one
 * output is rendition 0, which is all a one-rendition job has. Returns what is wrong (the job's
 * failure reason: an agent's bug must not become a silent success), or what to look for in the store.
 */
export function checkCompletion(job: Job, input: AgentCompleteInput): string | Checked {
  const asked = renditionsOf(job);
  const reported = input.outputs ?? [{ index: 0, resolution: input.resolution, outputBytes: input.outputBytes }];
  const byIndex = new Map<number, (typeof reported)[number]>();
  for (const o of reported) {
    if (o.index >= asked.length) return `The agent reported rendition ${o.index}; the job has ${asked.length}. Retry the job.`;
    if (byIndex.has(o.index)) return `The agent reported rendition ${o.index} twice. Retry the job.`;
    byIndex.set(o.index, o);
  }
  const missing = asked.findIndex((_, i) => !byIndex.has(i));
  if (missing !== -1) {
    return `The agent completed without rendition ${missing} of the ${asked.length} asked for: retry the job (an agent older than the control plane makes only one; update it).`;
  }
  const first = byIndex.get(0)!;
  if (first.outputBytes !== input.outputBytes || first.resolution.width !== input.resolution.width || first.resolution.height !== input.resolution.height) {
    return 'The agent reported rendition 0 differently from its output. Retry the job.';
  }
  const poster = posterOf(job);
  if (poster && !input.poster) return 'The agent completed without the poster the job asked for. Retry the job.';
  if (!poster && input.poster) return 'The agent reported a poster the job did not ask for. Retry the job.';
  return {
    renditions: asked.map((r, index) => {
      const o = byIndex.get(index)!;
      return {
        index,
        key: renditionKey(job.id, index, r.format),
        downloadName: index === 0 ? `captioned-${job.id}.${r.format}` : `captioned-${job.id}-${index}.${r.format}`,
        width: o.resolution.width,
        height: o.resolution.height,
        bytes: o.outputBytes,
      };
    }),
    poster: input.poster ?? null,
  };
}

/** True when every reported object is in the store at its reported size. */
export async function allStored(store: ObjectStore, jobId: string, checked: Checked): Promise<boolean> {
  const expected = checked.renditions.map((r) => ({ key: r.key, bytes: r.bytes }));
  if (checked.poster) expected.push({ key: posterKey(jobId), bytes: checked.poster.bytes });
  const heads = await Promise.all(expected.map((e) => store.head(e.key)));
  return heads.every((head, i) => head !== null && head.sizeBytes === expected[i]!.bytes);
}

/** Each rendition's and the poster's download link (the output's 7 days), as the job keeps them. */
export async function presignMade(store: ObjectStore, jobId: string, checked: Checked): Promise<{ renditions: MadeRendition[]; poster: MadePoster | null }> {
  const get = (key: string, downloadName: string) => store.presignGet({ key, expiresInSeconds: OUTPUT_TTL_SECONDS, downloadName });
  const renditions = await Promise.all(
    checked.renditions.map(async (r) => ({ index: r.index, width: r.width, height: r.height, bytes: r.bytes, downloadUrl: await get(r.key, r.downloadName) })),
  );
  const p = checked.poster;
  const poster = p ? { at: p.at, width: p.width, height: p.height, bytes: p.bytes, downloadUrl: await get(posterKey(jobId), `poster-${jobId}.jpg`) } : null;
  return { renditions, poster };
}
