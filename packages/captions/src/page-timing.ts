// When pages are on screen, and how much of a layout can no longer change while words still come.
import type { Word } from '@captionfarm/contracts';
import type { CaptionLayout, CaptionPage, CaptionUnit } from './layout-types.ts';
import type { Template } from './template.ts';
import { endsSentence } from './text.ts';

/**
 * Page timing (sets each page's start and end): on screen from its first word until shortly after
 * its last word, never across a long silence, and without a blank flash when the next page
 * follows closely.
 */
export function timePages(pages: CaptionPage[], units: readonly CaptionUnit[], template: Template): void {
  pages.forEach((p, i) => {
    const first = units[p.units[0]!]!;
    const last = units[p.units.at(-1)!]!;
    p.start = first.start;
    let end = Math.max(last.end, last.start + 0.05) + template.timing.lingerSeconds;
    const next = pages[i + 1];
    if (next) {
      const nextStart = units[next.units[0]!]!.start;
      end = Math.min(end, nextStart);
      // Close a gap shorter than the linger: the page stays until the next one replaces it.
      if (nextStart - end < template.timing.lingerSeconds) end = nextStart;
    }
    p.end = Math.max(end, p.start + 0.05);
  });
}

/**
 * While words are still coming (recognition runs chunk by chunk), the time before which the
 * captions of `layout` (laid out from `words`) can no longer change, given that no word still to
 * come starts before `finalUntil` seconds. Words to come join the last phrase, unless it ended
 * (a sentence end, or a pause of `pauseSeconds` before `finalUntil`), so only the last phrase's
 * pages can still change (page and line breaks, emphasis, emoji); an ended phrase's last page
 * can still stay up until the next page (its end), and a page before it ends no later than the
 * last phrase's first word. A keyword of several words can reach back over a phrase break, so
 * the pages holding the last words such a keyword could still complete wait too.
 * `finalUntil` Infinity: every word is known.
 */
export function settledUntil(layout: CaptionLayout, template: Template, words: readonly Word[], finalUntil: number): number {
  if (finalUntil === Infinity) return Infinity;
  const pages = layout.pages;
  const last = pages.at(-1);
  if (!last) return finalUntil;
  // Units are laid out in time order: the last one is the latest word's.
  const lastUnit = layout.units.at(-1)!;
  const ended =
    (template.timing.breakOnSentence && endsSentence(words[lastUnit.wordIndex]?.text ?? '')) ||
    finalUntil - Math.max(...last.units.map((u) => layout.units[u]!.end)) >= template.timing.pauseSeconds;
  const longestKeyword = Math.max(1, ...template.keywords.map((k) => k.split(/\s+/).filter(Boolean).length));
  let open = pages.length;
  while (open > 0) {
    const p = pages[open - 1]!;
    const reachable = p.units.some((u) => layout.units[u]!.wordIndex > lastUnit.wordIndex - longestKeyword + 1);
    if ((ended || p.phrase !== last.phrase) && !reachable) break;
    open--;
  }
  if (open < pages.length) return Math.min(finalUntil, pages[open]!.start);
  return Math.min(finalUntil, last.end);
}
