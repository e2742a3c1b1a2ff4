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

/** The part of the frame no platform UI covers. */
export function safeArea(width: number, height: number): Rect {
  const m = SAFE_MARGINS[aspectClass(width, height)];
  const x = width * m.left;
  const y = height * m.top;
  return { x, y, width: width * (1 - m.left - m.right), height: height * (1 - m.top - m.bottom) };
}

/**
 * Where caption text goes: the widest rect inside the safe area that is centred horizontally on
 * the frame (captions are centred on the video, not on the asymmetric safe area).
 */
export function captionArea(width: number, height: number): Rect {
  const s = safeArea(width, height);
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
