/**
 * Overlapped stages: the words recognition has made final so far, as the caption stream a
 * render reads while recognition goes on (renderVideo's `captionStream`). Each push lays the
 * words out again; the render paints only the times the layout can no longer change
 * (`settledUntil`), in a band fixed before any word was known (`bandForAnyWords`).
 */
import type { CaptionLayout, CustomFontFace, Template } from '@captionfarm/captions';
import { settledUntil } from '@captionfarm/captions';
import type { SafeAreaName, Word } from '@captionfarm/contracts';
import { bandForAnyWordsOf, CaptionsChanged, createBandPainter, type CaptionStream, type OutputFrame } from '@captionfarm/renderer';

export interface CaptionFeed {
  /** Every word final so far, and the time before which no word still to come starts (Infinity: all of them). */
  push(words: readonly Word[], finalUntil: number): void;
  /** Recognition failed: the render stops and rejects with `err`. */
  fail(err: unknown): void;
  /** The stream for renderVideo's `captionStream` (called once, with the output frame). */
  stream(frame: OutputFrame): CaptionStream;
}

export function createCaptionFeed(o: {
  template: Template;
  fonts: ReadonlyMap<string, CustomFontFace>;
  /** Issue 43: the app whose interface zones the captions keep out of. */
  safeArea?: SafeAreaName | undefined;
}): CaptionFeed {
  let latest: { words: Word[]; finalUntil: number } | null = null;
  let failure: { err: unknown } | null = null;
  let wake: (() => void) | null = null;
  let previous: { layout: CaptionLayout; until: number } | null = null;
  return {
    push(words, finalUntil) {
      // A push the render has not taken yet is replaced: the newer one says more.
      latest = { words: [...words], finalUntil };
      wake?.();
    },
    fail(err) {
      failure = { err };
      wake?.();
    },
    stream(frame) {
      const { template, fonts, safeArea } = o;
      const band = bandForAnyWordsOf({ template, width: frame.width, height: frame.height, fonts, safeArea });
      return {
        band,
        async next() {
          while (latest === null && failure === null) {
            await new Promise<void>((resolve) => (wake = resolve));
            wake = null;
          }
          if (failure !== null) throw failure.err;
          const { words, finalUntil } = latest!;
          latest = null;
          const painter = createBandPainter({ words, template, width: frame.width, height: frame.height, fps: frame.fps, fonts, band, safeArea });
          const layout = painter.layout;
          if (previous) {
            // What was painted already must not move: the pages shown before the last `until`.
            const before = previous;
            const changed = before.layout.pages.findIndex((p, i) => p.start < before.until && !samePage(before.layout, layout, i, before.until));
            if (changed >= 0) throw new CaptionsChanged(`caption page ${changed} changed after it was painted`);
          }
          const until = settledUntil(layout, template, words, finalUntil);
          previous = { layout, until };
          return { painter, until };
        },
      };
    },
  };
}

/**
 * Page i and its units are the same in both layouts (text, place, times) before `until`: the
 * last page of an ended phrase may stay up longer once the next page is known (a page's end is
 * only where it stops showing).
 */
export function samePage(a: CaptionLayout, b: CaptionLayout, i: number, until: number): boolean {
  const seen = (l: CaptionLayout) => {
    const p = l.pages[i];
    return p && JSON.stringify([{ ...p, end: Math.min(p.end, until) }, p.units.map((u) => l.units[u])]);
  };
  const pa = seen(a);
  return pa !== undefined && pa === seen(b);
}
