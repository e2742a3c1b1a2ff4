import { safeAreaZones, type SafeAreaName } from '@captionfarm/contracts';

export interface Rect {
  x: number;
  y: number;
  width: number;
  height: number;
}

export type AspectClass = 'portrait' | 'square' | 'landscape';

/** 9:16 and anything narrower than 4:5 is portrait, wider than 5:4 landscape, the rest square. */
export function aspectClass(width: number, height: number): AspectClass {
  const r = width / height;
  if (r < 0.8) return 'portrait';
  if (r > 1.25) return 'landscape';
  return 'square';
}

/** Margins as fractions of the frame: where platform UI covers the video. */
export const SAFE_MARGINS: Readonly<Record<AspectClass, { top: number; right: number; bottom: number; left: number }>> = {
  // TikTok / Reels / Shorts: tabs on top, like/comment/share column on the right, caption,
  // account name and music ticker over the bottom fifth.
  portrait: { top: 0.08, right: 0.13, bottom: 0.22, left: 0.06 },
  // Instagram / LinkedIn feed: a little room for overlaid buttons at the bottom.
  square: { top: 0.06, right: 0.06, bottom: 0.1, left: 0.06 },
  // Title-safe 90% plus the player's progress bar and controls at the bottom.
  landscape: { top: 0.05, right: 0.05, bottom: 0.09, left: 0.05 },
};

/**
 * The part of the frame no platform UI covers: the generic margins of the frame's aspect, and
 * with an app named (`tiktok`, `reels`, `shorts`) clear of that app's interface zones at this
 * size too (`safeAreaZones` of the contracts), so naming an app never lets captions closer to an
 * edge than `none` does.
 */
export function safeArea(width: number, height: number, app: SafeAreaName = 'none'): Rect {
  const m = SAFE_MARGINS[aspectClass(width, height)];
  const x = width * m.left;
  const y = height * m.top;
  const generic = { x, y, width: width * (1 - m.left - m.right), height: height * (1 - m.top - m.bottom) };
  if (app === 'none') return generic;
  const clear = clearOfZones(safeAreaZones(app, { width, height }), width, height);
  const x0 = Math.max(generic.x, clear.x);
  const y0 = Math.max(generic.y, clear.y);
  const x1 = Math.min(generic.x + generic.width, clear.x + clear.width);
  const y1 = Math.min(generic.y + generic.height, clear.y + clear.height);
  return { x: x0, y: y0, width: Math.max(0, x1 - x0), height: Math.max(0, y1 - y0) };
}

/**
 * The largest rect of the frame clear of `zones` that cutting one side per zone leaves: each
 * zone the rect still overlaps is cut off along the side that keeps the most area (the apps'
 * zones are strips along the edges: a bar on top, a block at the bottom, columns at the sides).
 */
function clearOfZones(zones: readonly Rect[], width: number, height: number): Rect {
  let r = { x0: 0, y0: 0, x1: width, y1: height };
  for (const z of zones) {
    if (z.x >= r.x1 || z.x + z.width <= r.x0 || z.y >= r.y1 || z.y + z.height <= r.y0) continue;
    const cuts = [
      { ...r, y0: Math.max(r.y0, z.y + z.height) },
      { ...r, y1: Math.min(r.y1, z.y) },
      { ...r, x0: Math.max(r.x0, z.x + z.width) },
      { ...r, x1: Math.min(r.x1, z.x) },
    ];
    const area = (c: typeof r) => Math.max(0, c.x1 - c.x0) * Math.max(0, c.y1 - c.y0);
    r = cuts.reduce((a, b) => (area(b) > area(a) ? b : a));
  }
  return { x: r.x0, y: r.y0, width: Math.max(0, r.x1 - r.x0), height: Math.max(0, r.y1 - r.y0) };
}

/**
 * Where caption text goes: the widest rect inside the safe area (of `app`, see safeArea) that is
 * centred horizontally on the frame (captions are centred on the video, not on the asymmetric
 * safe area).
 */
export function captionArea(width: number, height: number, app: SafeAreaName = 'none'): Rect {
  const s = safeArea(width, height, app);
  const cx = width / 2;
  const half = Math.max(0, Math.min(cx - s.x, s.x + s.width - cx));
  return { x: cx - half, y: s.y, width: 2 * half, height: s.height };
}

export function unionRect(a: Rect | null, b: Rect): Rect {
  if (!a) return { ...b };
  const x = Math.min(a.x, b.x);
  const y = Math.min(a.y, b.y);
  return { x, y, width: Math.max(a.x + a.width, b.x + b.width) - x, height: Math.max(a.y + a.height, b.y + b.height) - y };
}

export function containsRect(outer: Rect, inner: Rect, tolerance = 0.5): boolean {
  return (
    inner.x >= outer.x - tolerance &&
    inner.y >= outer.y - tolerance &&
    inner.x + inner.width <= outer.x + outer.width + tolerance &&
    inner.y + inner.height <= outer.y + outer.height + tolerance
  );
}

/**
 * The caption area of a frame laid out at another size than the output's (layout.ts lays out at a
 * reference size, then scales): `px` is one output pixel in the units of `width` and `height`. An
 * app's zones are rounded outward at the output's size, so they are measured there.
 */
export function captionAreaAt(width: number, height: number, app: SafeAreaName, px: number): Rect {
  if (app === 'none') return captionArea(width, height);
  const a = captionArea(width / px, height / px, app);
  return { x: a.x * px, y: a.y * px, width: a.width * px, height: a.height * px };
}
