// Where each page finally goes, in output pixels: clear of an app's interface zones (`safeArea`)
// and, with `placement: 'auto'`, above or below a face it would cover, without jumping back and
// forth. Runs on the scaled layout, before the band (the union of where pages paint) is computed,
// so the band holds every place a page was moved to.
import type { Placement, SafeAreaName, TimedBox } from '@captionfarm/contracts';
import { pageInks, type InkInput } from './band.ts';
import { captionArea, type Rect } from './safe-area.ts';

export interface PositionInput extends InkInput {
  width: number;
  height: number;
  app: SafeAreaName;
  placement: Placement;
  avoid: readonly TimedBox[];
}

/**
 * Kept between a page and a face it moved away from, share of the frame's shorter side (22 px at
 * 1080): a caption touching a chin reads as covering it.
 */
const FACE_GAP = 0.02;
/**
 * A face this close to where the template puts a page (share of the shorter side, 108 px at
 * 1080) still holds a page that moved away from it where it is: a face hovering at the edge of the
 * captions' place would otherwise send them back and forth phrase after phrase.
 */
const FACE_NEAR = 0.1;
/**
 * A page's time widened by this much (seconds) when looking for faces: a frame shows a page up to
 * one animation step (1/30 s) after its end, and faces are sampled a few times a second.
 */
const TIME_SLACK = 0.1;

/** Moves the pages (and their lines, units and emoji) of `a` in place. */
export function positionPages(a: PositionInput): void {
  const keepClear = a.app !== 'none';
  const auto = a.placement === 'auto' && a.avoid.length > 0;
  if (!keepClear && !auto) return;
  // Symmetric about the frame's centre and inside the zones (see captionArea).
  const area = captionArea(a.width, a.height, a.app);
  const inks = pageInks(a);
  if (keepClear) {
    inks.forEach((ink, i) => {
      if (!ink) return;
      // Lines are no wider than the area allows (textAreaFor): a page whose ends grew unevenly shifts sideways by a few pixels.
      const dx = ink.width <= area.width ? fit(ink.x, ink.width, area.x, area.width) : 0;
      const dy = fit(ink.y, ink.height, area.y, area.height);
      if (dx === 0 && dy === 0) return;
      movePage(a, i, dx, dy);
      inks[i] = { ...ink, x: ink.x + dx, y: ink.y + dy };
    });
  }
  if (!auto) return;
  const side = Math.min(a.width, a.height);
  const dys = avoidFaces({
    pages: a.pages,
    inks,
    area,
    avoid: a.avoid,
    preferDown: a.template.position.y >= 0.5,
    gap: FACE_GAP * side,
    near: FACE_NEAR * side,
  });
  dys.forEach((dy, i) => {
    if (dy !== 0) movePage(a, i, 0, dy);
  });
}

/** How far to move a span [pos, pos + size) into [lo, lo + len); centred on it when it cannot fit. */
function fit(pos: number, size: number, lo: number, len: number): number {
  if (size > len) return lo + len / 2 - (pos + size / 2);
  if (pos < lo) return lo - pos;
  if (pos + size > lo + len) return lo + len - (pos + size);
  return 0;
}

function movePage(a: { pages: InkInput['pages']; units: InkInput['units'] }, i: number, dx: number, dy: number): void {
  const page = a.pages[i]!;
  const move = (r: Rect): Rect => ({ x: r.x + dx, y: r.y + dy, width: r.width, height: r.height });
  page.box = move(page.box);
  for (const line of page.lines) {
    line.box = move(line.box);
    line.baseline += dy;
  }
  for (const ui of page.units) {
    const u = a.units[ui]!;
    u.x += dx;
    u.baseline += dy;
    u.ink = move(u.ink);
  }
  if (page.emoji) page.emoji = { ...page.emoji, x: page.emoji.x + dx, baseline: page.emoji.baseline + dy, ink: move(page.emoji.ink) };
}

/** One page as face avoidance sees it: where it may paint, the faces on screen with it, and how far up and down it may go. */
interface Item {
  index: number;
  ink: Rect;
  faces: Rect[];
  /** The top of its ink may go up to `lo`, the bottom down to `hi` (the caption area, or wider where the template's place already is). */
  lo: number;
  hi: number;
}

interface AvoidInput {
  pages: InkInput['pages'];
  inks: (Rect | null)[];
  area: Rect;
  avoid: readonly TimedBox[];
  preferDown: boolean;
  gap: number;
  near: number;
}

/**
 * The vertical move of each page. A phrase (pages between hard breaks) takes one place when one
 * is clear for all its pages: the template's when it is clear (unless a face is still near it and
 * the previous phrase's place is clear too: that place is kept), else the previous phrase's, else
 * the nearest clear place on the template's side of the face, else on the other side. A phrase
 * with no such place goes page by page, each keeping the place before it while that is clear,
 * else moving to a clear place, else to the one covering the least of the faces.
 */
function avoidFaces(o: AvoidInput): number[] {
  const dys = o.pages.map(() => 0);
  // Each face grown by the gap once: the pages of a phrase share these objects (candidates() groups by them).
  const grown = o.avoid.map((f) => ({ start: f.start, end: f.end, box: grow(f.box, o.gap) }));
  let prev = 0;
  for (const phrase of phrasesOf(o.pages)) {
    const items: Item[] = [];
    for (const i of phrase) {
      const ink = o.inks[i];
      if (!ink) continue;
      const p = o.pages[i]!;
      const faces = grown.filter((f) => f.start < p.end + TIME_SLACK && f.end > p.start - TIME_SLACK).map((f) => f.box);
      items.push({ index: i, ink, faces, lo: Math.min(o.area.y, ink.y), hi: Math.max(o.area.y + o.area.height, ink.y + ink.height) });
    }
    const whole = placeForPhrase(items, prev, o);
    if (whole !== null) {
      for (const it of items) dys[it.index] = whole;
      prev = whole;
      continue;
    }
    let cur = prev;
    for (const it of items) {
      if (!clearAt(it, cur)) cur = bestPlace([it], cur, o.preferDown) ?? leastCovered(it, cur);
      dys[it.index] = cur;
    }
    prev = cur;
  }
  return dys;
}

/** The one place for all of a phrase's pages (see avoidFaces), or null when none is clear for all. */
function placeForPhrase(items: Item[], prev: number, o: AvoidInput): number | null {
  if (items.every((it) => it.faces.length === 0)) return 0;
  const homeClear = items.every((it) => clearAt(it, 0));
  if (prev !== 0 && items.every((it) => clearAt(it, prev))) {
    const near = items.some((it) => it.faces.some((f) => overlaps(grow(it.ink, o.near), f)));
    if (!homeClear || near) return prev;
  }
  if (homeClear) return 0;
  return bestPlace(items, prev, o.preferDown);
}

/** The clear place for all `items` nearest the template's, on its side of the faces first; null when none is. */
function bestPlace(items: Item[], prev: number, preferDown: boolean): number | null {
  const clear = candidates(items, prev).filter((dy) => items.every((it) => clearAt(it, dy)));
  const rank = (dy: number) => (dy > 0 === preferDown ? 0 : 1);
  clear.sort((a, b) => rank(a) - rank(b) || Math.abs(a) - Math.abs(b));
  return clear[0] ?? null;
}

/** Moves worth trying: the template's place, the previous one, just above and just below each face, the top and the bottom of the area. */
function candidates(items: Item[], prev: number): number[] {
  const out = new Set<number>([0, prev]);
  const faces = new Set(items.flatMap((it) => it.faces));
  for (const f of faces) {
    const facing = items.filter((it) => it.faces.includes(f));
    out.add(Math.min(...facing.map((it) => f.y - (it.ink.y + it.ink.height))));
    out.add(Math.max(...facing.map((it) => f.y + f.height - it.ink.y)));
  }
  out.add(Math.max(...items.map((it) => it.lo - it.ink.y)));
  out.add(Math.min(...items.map((it) => it.hi - (it.ink.y + it.ink.height))));
  return [...out];
}

/** When no place is clear: the one in the area covering the least face area (the nearest to `cur` of equals). */
function leastCovered(it: Item, cur: number): number {
  let best = cur;
  let bestCover = Number.POSITIVE_INFINITY;
  for (const dy of candidates([it], cur)) {
    if (!inRange(it, dy)) continue;
    const moved = { ...it.ink, y: it.ink.y + dy };
    const cover = it.faces.reduce((sum, f) => sum + overlapArea(moved, f), 0);
    if (cover < bestCover - 1e-6 || (Math.abs(cover - bestCover) <= 1e-6 && Math.abs(dy - cur) < Math.abs(best - cur))) {
      best = dy;
      bestCover = cover;
    }
  }
  return best;
}

function inRange(it: Item, dy: number): boolean {
  return it.ink.y + dy >= it.lo - 1e-6 && it.ink.y + it.ink.height + dy <= it.hi + 1e-6;
}

function clearAt(it: Item, dy: number): boolean {
  if (!inRange(it, dy)) return false;
  const moved = { ...it.ink, y: it.ink.y + dy };
  return !it.faces.some((f) => overlaps(moved, f));
}

/** Runs of page indices of the same phrase. */
function phrasesOf(pages: InkInput['pages']): number[][] {
  const out: number[][] = [];
  pages.forEach((p, i) => {
    const last = out.at(-1);
    if (last && pages[last[0]!]!.phrase === p.phrase) last.push(i);
    else out.push([i]);
  });
  return out;
}

/** Overlap of more than a hair (touching edges, within float error, is clear). */
function overlaps(a: Rect, b: Rect): boolean {
  const e = 1e-6;
  return a.x < b.x + b.width - e && b.x < a.x + a.width - e && a.y < b.y + b.height - e && b.y < a.y + a.height - e;
}

function overlapArea(a: Rect, b: Rect): number {
  const w = Math.min(a.x + a.width, b.x + b.width) - Math.max(a.x, b.x);
  const h = Math.min(a.y + a.height, b.y + b.height) - Math.max(a.y, b.y);
  return w > 0 && h > 0 ? w * h : 0;
}

function grow(r: Rect, by: number): Rect {
  return { x: r.x - by, y: r.y - by, width: r.width + 2 * by, height: r.height + 2 * by };
}
