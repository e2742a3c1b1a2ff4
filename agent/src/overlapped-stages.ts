import type { CustomFontFace, Template } from '@captionfarm/captions';
import { fitWords, replaceFinalWords, type LeasedJob, type Word } from '@captionfarm/contracts';
import { BandOverflow, CaptionsChanged, type RenderResult } from '@captionfarm/renderer';
import { createCaptionFeed } from './caption-feed.ts';
import { firstLine } from './errors.ts';
import type { PipelineDeps } from './pipeline.ts';
import { checkFont, type JobRender } from './render-stage.ts';
import type { SideWork } from './side-work.ts';
import type { Recognize } from './transcribe-stage.ts';

/**
 * Overlapped stages: the render starts now and reads the words as recognition makes them final
 * (caption-feed.ts), waiting where they are not. Returns the final words and the render, under
 * way or ended (`renderWork` stops it and awaits it before the work dir goes).
 */
export async function recognizeBesideRender(o: {
  job: LeasedJob;
  deps: Pick<PipelineDeps, 'whisperThreadsBesideRender' | 'log'>;
  template: Template;
  fonts: ReadonlyMap<string, CustomFontFace>;
  durationSeconds: number;
  render: JobRender;
  renderWork: SideWork;
  recognize: Recognize;
  signal: AbortSignal;
}): Promise<{ words: Word[]; rendered: Promise<RenderResult> }> {
  const { render, renderWork, signal } = o;
  const replacements = o.job.replacements ?? [];
  checkFont(o.template, o.fonts);
  const feed = createCaptionFeed({ template: o.template, fonts: o.fonts, safeArea: o.job.safeArea });
  const rendered = renderWork.keep(render.following((frame) => feed.stream(frame), renderWork.signal));
  // A render that fails for its own reasons stops recognition at once; one whose captions
  // outgrew what was planned (BandOverflow, CaptionsChanged) is redone once the words are in.
  const recognition = new AbortController();
  // The render waits for the first final words; from then on it runs beside recognition, until
  // it ends (one that starts over leaves the cores to recognition until the words are in).
  let renderIs: 'waiting' | 'under-way' | 'ended' = 'waiting';
  rendered.catch((err: unknown) => {
    renderIs = 'ended';
    if (!startsOver(err)) recognition.abort(err);
  });
  let words: Word[];
  try {
    words = await o.recognize({
      onWords: (p) => {
        if (renderIs === 'waiting') renderIs = 'under-way';
        // Replaced as the final list will be: words a several-word replacement could still join are held back.
        const replaced = replaceFinalWords(p.words, p.finalUntil, replacements);
        feed.push(fitWords(replaced.words, o.durationSeconds), replaced.finalUntil);
      },
      signal: AbortSignal.any([signal, recognition.signal]),
      threads: ({ wordsComing }) => (renderIs !== 'ended' && (renderIs === 'under-way' || wordsComing) ? o.deps.whisperThreadsBesideRender : undefined),
    });
  } catch (err) {
    // Read before the render is stopped: stopping it aborts recognition's signal too (the handler
    // above), and that abort is no failure of the render's. Only a render that failed first, and
    // so stopped recognition, fails the job with its own code; else recognition's failure (a
    // JobFailure, a lost lease) does, as without overlap. An abort from outside is the job's.
    const stoppedByRender = recognition.signal.aborted && !signal.aborted;
    feed.fail(err);
    renderWork.stop();
    const renderFailure = await rendered.then(
      () => undefined,
      (e: unknown) => e,
    );
    if (stoppedByRender) throw renderFailure;
    throw err;
  }
  feed.push(words, Infinity);
  o.deps.log?.(`overlapped stages: the words are final with the render at ${render.percent}%`);
  return { words, rendered };
}

/** The overlapped render's result once the words are final: one that must start over is redone with every word known. */
export async function renderedWithEveryWord(o: {
  rendered: Promise<RenderResult>;
  render: JobRender;
  words: Word[];
  log?: ((message: string) => void) | undefined;
}): Promise<RenderResult> {
  try {
    return await o.rendered;
  } catch (err) {
    if (!startsOver(err)) throw err;
    o.log?.(`overlapped render started over after the words were in: ${firstLine((err as Error).message)}`);
    return await o.render.withWords(o.words);
  }
}

/** An overlapped render that failed only because the captions outgrew what it planned for: redone with every word known. */
function startsOver(err: unknown): boolean {
  return err instanceof BandOverflow || err instanceof CaptionsChanged;
}
