import { createCanvas, loadImage, type Canvas, type DOMMatrix, type Image, type SKRSContext2D } from './canvas.ts';
import {
  backgroundRects,
  bandForAnyWords,
  captionFrameAt,
  inkBounds,
  layoutCaptions,
  type CaptionFrame,
  type CaptionLayout,
  type CaptionUnit,
  type CaptionEmoji,
  EMOJI_FAMILY,
  type FontSpec,
  type Rect,
  type Template,
  type WordFrame,
  containsRect,
  restWordScales,
  unionRect,
} from '@captionfarm/captions';
import { createCanvasMeasurer, setFont } from './measurer.ts';
import type { BandPainter, BandPainterOptions, PreviewFrameOptions } from './types.ts';

const DEFAULT_FPS = 30;

/** The words' captions reach outside the band the painter was given (`BandPainterOptions.band`). */
export class BandOverflow extends Error {
  override readonly name = 'BandOverflow';
  constructor(band: Rect, needed: Rect) {
    super(`The captions need ${JSON.stringify(needed)}, outside the band ${JSON.stringify(band)}`);
  }
}

/** The band for words not known yet (`bandForAnyWords`, measured with the canvas the painter draws with). */
export function bandForAnyWordsOf(opts: Pick<BandPainterOptions, 'template' | 'width' | 'height' | 'fonts' | 'safeArea'>): Rect {
  return bandForAnyWords({
    template: opts.template,
    width: opts.width,
    height: opts.height,
    measurer: createCanvasMeasurer(),
    fonts: opts.fonts,
    safeArea: opts.safeArea,
  });
}

/**
 * What one band painter keeps: its layout, once, and what it reuses from call to call (the last
 * frame, the ink rects, scratch layers, sprites). One object of a fixed shape, read by the
 * module's paint functions below.
 */
interface PainterState {
  readonly template: Template;
  readonly fps: number;
  readonly layout: CaptionLayout;
  readonly band: Rect;
  readonly units: PreparedUnit[];
  readonly restScales: ReadonlySet<number>;
  /**
   * Under a clip Skia fills a rounded rectangle with another rasteriser: its edge pixels came out
   * a level or two apart from an unclipped fill (measured on boxed-word and typewriter). Text,
   * strokes, shadows and glows matched exactly, so only templates without rounded boxes clip.
   */
  readonly clipExact: boolean;
  // Scratch layers for words and pages that fade: drawn opaque, then composited with alpha, so
  // an outline never shows through its own semi-transparent fill.
  wordLayer: Canvas | null;
  pageLayer: Canvas | null;
  // A glowing or fading word at rest (not moving, at a scale a word settles at) is painted once on
  // a canvas of its own and copied for every image that touches it (spriteFor).
  readonly sprites: Map<number, Sprite[]>;
  readonly spareSprites: Canvas[];
  lastFrame: CaptionFrame | null;
  lastT: number;
  ink: ReturnType<typeof inkBounds> | null;
}

/** A painter for the caption band of one video: layout once, then cheap keys and paints. */
export function createBandPainter(opts: BandPainterOptions): BandPainter & { layout: CaptionLayout } {
  const { template, width, height } = opts;
  const measurer = createCanvasMeasurer();
  const layout = layoutCaptions({
    words: opts.words,
    template,
    width,
    height,
    measurer,
    fonts: opts.fonts,
    safeArea: opts.safeArea,
    placement: opts.placement,
    avoid: opts.avoid,
  });
  const band = opts.band ?? layout.band;
  if (!containsRect(band, layout.band, 0)) throw new BandOverflow(band, layout.band);
  const s: PainterState = {
    template,
    fps: opts.fps ?? DEFAULT_FPS,
    layout,
    band,
    units: layout.units.map((u) => prepareUnit(u, layout)),
    restScales: restWordScales(template),
    clipExact: !template.background && !template.active.box,
    wordLayer: null,
    pageLayer: null,
    sprites: new Map(),
    spareSprites: [],
    lastFrame: null,
    lastT: Number.NaN,
    ink: null,
  };

  const painter: BandPainter & { layout: CaptionLayout } = {
    band,
    layout,
    keyAt: (t) => frameAt(s, t).key,
    paintPart(ctx, t, rect) {
      if (!s.clipExact) {
        ctx.clearRect(0, 0, band.width, band.height);
        painter.paint(ctx, t);
        return;
      }
      ctx.save();
      clipTo(ctx, rect);
      ctx.clearRect(rect.x, rect.y, rect.width, rect.height);
      paintFrame(s, ctx, t, rect);
      ctx.restore();
    },
    changed: (from, to) => changedPart(s, from, to),
    paint(ctx, t) {
      paintFrame(s, ctx, t, null);
    },
  };
  return painter;
}

/** The frame at time t, kept while t comes again (keyAt, then paint of the same image). */
function frameAt(s: PainterState, t: number): CaptionFrame {
  if (t !== s.lastT || !s.lastFrame) {
    s.lastFrame = captionFrameAt(s.layout, s.template, t, { fps: s.fps });
    s.lastT = t;
  }
  return s.lastFrame;
}

function inkOf(s: PainterState): ReturnType<typeof inkBounds> {
  s.ink ??= inkBounds(s.layout, s.template);
  return s.ink;
}

/** `BandPainter.changed`: the band pixels that can differ between times `from` and `to`. */
function changedPart(s: PainterState, from: number | null, to: number): Rect | null {
  const { band, layout, template } = s;
  if (from === null) return { x: 0, y: 0, width: band.width, height: band.height };
  const a = captionFrameAt(layout, template, from, { fps: s.fps });
  const b = frameAt(s, to);
  if (a.key === b.key) return null;
  const ink = inkOf(s);
  let r: Rect | null = null;
  if (wordsOnlyChanged(a, b, template)) {
    // The page stands still: only the units whose look changed (and all that overlaps them, which
    // the caller repaints whole) can differ.
    const before = new Map(a.words.filter((w) => w.opacity > 0).map((w) => [w.unit, w]));
    for (const w of b.words) {
      if (w.opacity <= 0) continue;
      const old = before.get(w.unit);
      before.delete(w.unit);
      if (!old || !sameLook(old, w)) r = unionRect(r, ink.units[w.unit]!);
    }
    for (const unit of before.keys()) r = unionRect(r, ink.units[unit]!);
  } else {
    for (const f of [a, b]) if (f.page >= 0 && ink.pages[f.page]) r = unionRect(r, ink.pages[f.page]!);
  }
  return r && bandPart(r, band);
}

/**
 * Paints time t; with `clip` (band pixels, already clipped on ctx) only what can reach it.
 * Fading words and pages go through a scratch layer; only the part of the layer their ink can
 * cover (and the clip) is cleared and composited: clearing and compositing the whole band for
 * each fading word cost more than drawing it (neon: every upcoming word fades to 80%).
 * A word paints nothing outside its ink rect (what `changed` already relies on, and what
 * band-images.test checks against whole repaints), so outside that rect its layer is
 * transparent and compositing it changed nothing: the image is the same to the byte (6,044
 * band images of 14 looks at two sizes compared against the whole-layer code).
 */
function paintFrame(s: PainterState, ctx: SKRSContext2D, t: number, clip: Rect | null): void {
  const { band, layout, template, units } = s;
  const f = frameAt(s, t);
  if (f.page < 0) return;
  const inks = inkOf(s);
  let target = ctx;
  let pageRect: Rect | null = null;
  if (f.opacity < 1) {
    pageRect = intersect(bandPart(inks.pages[f.page]!, band), clip);
    if (!pageRect) return;
    s.pageLayer ??= createCanvas(band.width, band.height);
    target = s.pageLayer.getContext('2d');
    target.clearRect(pageRect.x, pageRect.y, pageRect.width, pageRect.height);
  }
  target.save();
  target.translate(-band.x, -band.y);
  const page = layout.pages[f.page]!;
  if (f.scale !== 1 || f.dy !== 0) {
    const cx = page.box.x + page.box.width / 2;
    const cy = page.box.y + page.box.height / 2;
    target.translate(cx, cy + f.dy);
    target.scale(f.scale, f.scale);
    target.translate(-cx, -cy);
  }
  paintBackground(target, layout, template, f, units);
  if (f.emoji && page.emoji) paintEmoji(target, page.emoji, f.emoji);
  const m = target.getTransform();
  const pageAtRest = f.scale === 1 && f.dy === 0;
  for (const w of f.words) {
    if (w.opacity <= 0) continue;
    const ink = deviceRect(m, inks.units[w.unit]!, band);
    const r = intersect(ink, pageRect ?? clip);
    // Nothing of this word can land in the part being painted.
    if (!r || !ink) continue;
    const atRest = pageAtRest && w.dy === 0 && w.visible === null && s.restScales.has(w.scale);
    if (w.opacity >= 1 && !(atRest && w.glow)) {
      paintWord(target, units[w.unit]!, w, template);
      continue;
    }
    let layer: Canvas;
    let at = ink;
    if (atRest) layer = spriteFor(s, w, m, ink, f);
    else {
      // Moving and fading: painted opaque on the scratch layer.
      s.wordLayer ??= createCanvas(band.width, band.height);
      const lc = s.wordLayer.getContext('2d');
      lc.setTransform(1, 0, 0, 1, 0, 0);
      lc.clearRect(ink.x, ink.y, ink.width, ink.height);
      lc.setTransform(m);
      paintWord(lc, units[w.unit]!, w, template);
      layer = s.wordLayer;
      at = { x: 0, y: 0, width: band.width, height: band.height };
    }
    target.save();
    target.setTransform(1, 0, 0, 1, 0, 0);
    target.globalAlpha = w.opacity;
    // A clip, not drawImage's source rect: that path samples the image differently (up to 255 levels off).
    clipTo(target, r);
    target.drawImage(layer, at.x, at.y);
    target.restore();
  }
  target.restore();
  if (s.pageLayer && pageRect) {
    ctx.save();
    ctx.globalAlpha = f.opacity;
    clipTo(ctx, pageRect);
    ctx.drawImage(s.pageLayer, 0, 0);
    ctx.restore();
  }
}

/**
 * Word `w` at rest, glowing or fading, painted with transform `m` (opaque: its opacity is
 * applied when copying) on a canvas of its own covering `ink` (its ink's band pixels), kept
 * while the look and place come back. Such a word was painted again, two blurred glows and a
 * blurred shadow (neon), for every image whose changed part touched it; copying it costs a
 * fraction of that (neon's painting -16%). An opaque word without glow is not worth it: a copy
 * of its larger ink rect costs about what painting it again does, and a first sight costs a
 * canvas (measured: no gain for karaoke, word-pop, bounce, boxed-word, cinematic). Every such
 * word goes through its sprite, the first time too, so an image is the same whatever the
 * painter painted before it.
 */
function spriteFor(s: PainterState, w: WordFrame, m: DOMMatrix, ink: Rect, f: CaptionFrame): Canvas {
  const { sprites, spareSprites } = s;
  const place = [m.a, m.b, m.c, m.d, m.e, m.f];
  let list = sprites.get(w.unit);
  if (!list) {
    if (sprites.size >= MAX_SPRITE_WORDS) {
      // Words of other pages are not coming back soon: their canvases are reused.
      for (const [unit, old] of sprites) {
        if (f.words.some((x) => x.unit === unit)) continue;
        sprites.delete(unit);
        for (const sprite of old) spareSprites.push(sprite.canvas);
      }
      spareSprites.splice(MAX_SPARE_SPRITES);
    }
    list = [];
    sprites.set(w.unit, list);
  }
  const i = list.findIndex((sprite) => sameLook({ ...sprite.look, opacity: w.opacity }, w) && sprite.place.every((v, k) => v === place[k]));
  if (i >= 0) {
    // Most recently used first.
    const [kept] = list.splice(i, 1);
    list.unshift(kept!);
    return kept!.canvas;
  }
  // A new canvas costs about what painting the word does: reuse this word's least recently used look, or a spare one as large.
  const oldest = list.length >= SPRITES_PER_WORD ? list.pop()!.canvas : null;
  const reused = oldest && oldest.width >= ink.width && oldest.height >= ink.height ? oldest : takeSpare(spareSprites, ink);
  const canvas = reused ?? createCanvas(ink.width, ink.height);
  const sc = canvas.getContext('2d');
  sc.setTransform(1, 0, 0, 1, 0, 0);
  // Only this corner is copied (the clip lies inside ink): the rest of a larger spare can stay as it is.
  if (reused) sc.clearRect(0, 0, ink.width, ink.height);
  sc.setTransform(m.a, m.b, m.c, m.d, m.e - ink.x, m.f - ink.y);
  paintWord(sc, s.units[w.unit]!, w, s.template);
  list.unshift({ canvas, look: { ...w }, place });
  return canvas;
}

function takeSpare(spareSprites: Canvas[], ink: Rect): Canvas | null {
  const i = spareSprites.findIndex((c) => c.width >= ink.width && c.height >= ink.height);
  return i < 0 ? null : spareSprites.splice(i, 1)[0]!;
}

/** Words whose sprites are kept (more only while one page holds more), looks kept a word, and spare canvases kept. */
const MAX_SPRITE_WORDS = 12;
const SPRITES_PER_WORD = 3;
const MAX_SPARE_SPRITES = 12;

interface Sprite {
  canvas: Canvas;
  /** The word's look when painted (its opacity is applied when copying, not in the sprite). */
  look: WordFrame;
  /** The transform it was painted with. */
  place: number[];
}

/** Same page, standing still (no page animation, emoji or background in play): words alone tell what changed. */
function wordsOnlyChanged(a: CaptionFrame, b: CaptionFrame, tpl: Template): boolean {
  if (tpl.background || a.page < 0 || a.page !== b.page) return false;
  if (a.opacity !== b.opacity || a.scale !== 1 || b.scale !== 1 || a.dy !== 0 || b.dy !== 0) return false;
  return a.emoji === b.emoji || (a.emoji !== null && b.emoji !== null && a.emoji.opacity === b.emoji.opacity && a.emoji.scale === b.emoji.scale);
}

/** Every field paintWord draws from. */
function sameLook(a: WordFrame, b: WordFrame): boolean {
  return (
    a.text === b.text &&
    a.color === b.color &&
    a.outlineColor === b.outlineColor &&
    a.opacity === b.opacity &&
    a.scale === b.scale &&
    a.dy === b.dy &&
    a.box === b.box &&
    a.glow === b.glow
  );
}

/** A frame-pixel rect as whole band pixels covering it, clipped to the band; null when it misses the band. */
function bandPart(r: Rect, band: Rect): Rect | null {
  const x0 = Math.max(0, Math.floor(r.x - band.x));
  const y0 = Math.max(0, Math.floor(r.y - band.y));
  const x1 = Math.min(band.width, Math.ceil(r.x + r.width - band.x));
  const y1 = Math.min(band.height, Math.ceil(r.y + r.height - band.y));
  return x1 > x0 && y1 > y0 ? { x: x0, y: y0, width: x1 - x0, height: y1 - y0 } : null;
}

/** The whole band pixels that frame rect `r` covers under transform `m` (a translate-and-scale, possibly more), inside the band; null when none. */
function deviceRect(m: DOMMatrix, r: Rect, band: Rect): Rect | null {
  const xs = [m.a * r.x + m.c * r.y, m.a * (r.x + r.width) + m.c * r.y, m.a * r.x + m.c * (r.y + r.height), m.a * (r.x + r.width) + m.c * (r.y + r.height)];
  const ys = [m.b * r.x + m.d * r.y, m.b * (r.x + r.width) + m.d * r.y, m.b * r.x + m.d * (r.y + r.height), m.b * (r.x + r.width) + m.d * (r.y + r.height)];
  const x0 = Math.min(...xs) + m.e;
  const y0 = Math.min(...ys) + m.f;
  // In band pixels already: bandPart with a band at the origin just rounds outwards and clips.
  return bandPart(
    { x: x0, y: y0, width: Math.max(...xs) + m.e - x0, height: Math.max(...ys) + m.f - y0 },
    { x: 0, y: 0, width: band.width, height: band.height },
  );
}

function clipTo(ctx: SKRSContext2D, r: Rect): void {
  ctx.beginPath();
  ctx.rect(r.x, r.y, r.width, r.height);
  ctx.clip();
}

/** The overlap of two rects; `b` null means no limit. */
function intersect(a: Rect | null, b: Rect | null): Rect | null {
  if (!a || !b) return a;
  const x0 = Math.max(a.x, b.x);
  const y0 = Math.max(a.y, b.y);
  const x1 = Math.min(a.x + a.width, b.x + b.width);
  const y1 = Math.min(a.y + a.height, b.y + b.height);
  return x1 > x0 && y1 > y0 ? { x: x0, y: y0, width: x1 - x0, height: y1 - y0 } : null;
}

interface PreparedUnit {
  unit: CaptionUnit;
  spec: FontSpec;
  /** Centre of scaling: middle of the advance box, middle of the cap height. */
  cx: number;
  cy: number;
  capHeight: number;
  descender: number;
}

function prepareUnit(u: CaptionUnit, layout: CaptionLayout): PreparedUnit {
  const k = u.fontPx / layout.font.sizePx;
  const spec: FontSpec = { ...layout.font, sizePx: u.fontPx, letterSpacingPx: layout.font.letterSpacingPx * k };
  const capHeight = layout.capHeight * k;
  return { unit: u, spec, cx: u.x + u.width / 2, cy: u.baseline - capHeight / 2, capHeight, descender: layout.descender * k };
}

function paintBackground(ctx: SKRSContext2D, layout: CaptionLayout, tpl: Template, f: CaptionFrame, units: PreparedUnit[]): void {
  if (!tpl.background) return;
  const fontPx = layout.font.sizePx;
  let page = layout.pages[f.page]!;
  if (tpl.animation.word !== 'none') {
    // Words appear one by one: the box grows with them instead of waiting empty.
    const lines = page.lines
      .map((line) => {
        let left = Infinity;
        let right = -Infinity;
        for (const w of f.words) {
          const u = units[w.unit]!;
          if (u.unit.line !== layout.units[line.units[0]!]!.line || w.opacity <= 0) continue;
          const width = w.visible === null ? u.unit.width : partialWidth(ctx, u, w.text);
          const x0 = u.unit.direction === 'rtl' ? u.unit.x + u.unit.width - width : u.unit.x;
          left = Math.min(left, x0);
          right = Math.max(right, x0 + width);
        }
        return left < right ? { ...line, box: { ...line.box, x: left, width: right - left } } : null;
      })
      .filter((l) => l !== null);
    if (lines.length === 0) return;
    let box = lines[0]!.box;
    for (const l of lines) box = unionRect(box, l.box);
    page = { ...page, lines, box };
  }
  ctx.fillStyle = tpl.background.color;
  for (const r of backgroundRects(tpl, page, fontPx, layout.lineHeightPx)) {
    roundRect(ctx, r.x, r.y, r.width, r.height, tpl.background.radius * fontPx);
    ctx.fill();
  }
}

function partialWidth(ctx: SKRSContext2D, u: PreparedUnit, text: string): number {
  ctx.save();
  setFont(ctx, u.spec, text);
  const w = ctx.measureText(text).width;
  ctx.restore();
  return Math.min(u.unit.width, w);
}

function paintWord(ctx: SKRSContext2D, p: PreparedUnit, w: WordFrame, tpl: Template): void {
  const u = p.unit;
  const fontPx = u.fontPx;
  ctx.save();
  if (w.scale !== 1 || w.dy !== 0) {
    ctx.translate(p.cx, p.cy + w.dy);
    ctx.scale(w.scale, w.scale);
    ctx.translate(-p.cx, -p.cy);
  }
  if (w.box) {
    const padX = w.box.paddingX * fontPx;
    const padY = w.box.paddingY * fontPx;
    // Boxes span cap height plus a share of the descender, so boxes of words with and without
    // descenders have the same height and the text sits optically centred.
    const top = u.baseline - p.capHeight - padY;
    const bottom = u.baseline + p.descender * 0.45 + padY;
    ctx.fillStyle = w.box.color;
    roundRect(ctx, u.x - padX, top, u.width + 2 * padX, bottom - top, w.box.radius * fontPx);
    ctx.fill();
  }
  setFont(ctx, p.spec, u.text);
  const rtl = u.direction === 'rtl';
  // Typewriter text is partial: anchor it where the word starts in reading order.
  let x = u.x;
  if (rtl) {
    ctx.textAlign = 'right';
    x = u.x + u.width;
  }
  const y = u.baseline;
  const outline = tpl.outline && w.outlineColor ? tpl.outline.width * fontPx : 0;

  // Shadow first (a dark halo keeps glowing text readable on bright video), then glow, outline, fill.
  if (tpl.shadow) {
    ctx.save();
    ctx.shadowColor = tpl.shadow.color;
    ctx.shadowBlur = tpl.shadow.blur * fontPx;
    ctx.shadowOffsetX = tpl.shadow.offsetX * fontPx;
    ctx.shadowOffsetY = tpl.shadow.offsetY * fontPx;
    if (outline > 0) strokeText(ctx, w.text, x, y, outline, w.outlineColor!);
    else {
      ctx.fillStyle = w.color;
      ctx.fillText(w.text, x, y);
    }
    ctx.restore();
  }
  if (w.glow) {
    ctx.save();
    ctx.shadowColor = w.glow.color;
    ctx.shadowBlur = w.glow.blur * fontPx;
    ctx.fillStyle = w.glow.color;
    // Two passes: a wide halo and a tight, brighter core.
    ctx.fillText(w.text, x, y);
    ctx.shadowBlur = w.glow.blur * fontPx * 0.4;
    ctx.fillText(w.text, x, y);
    ctx.restore();
  }
  if (outline > 0) strokeText(ctx, w.text, x, y, outline, w.outlineColor!);
  ctx.fillStyle = w.color;
  ctx.fillText(w.text, x, y);
  ctx.restore();
}

/** The page's emoji in colour, popping in about its centre like a word. */
function paintEmoji(ctx: SKRSContext2D, e: CaptionEmoji, f: NonNullable<CaptionFrame['emoji']>): void {
  if (f.opacity <= 0) return;
  ctx.save();
  const cx = e.ink.x + e.ink.width / 2;
  const cy = e.ink.y + e.ink.height / 2;
  if (f.scale !== 1) {
    ctx.translate(cx, cy);
    ctx.scale(f.scale, f.scale);
    ctx.translate(-cx, -cy);
  }
  ctx.globalAlpha *= f.opacity;
  setFont(ctx, { family: EMOJI_FAMILY, weight: 400, sizePx: e.sizePx, letterSpacingPx: 0 }, e.text);
  ctx.fillStyle = '#FFFFFF';
  ctx.fillText(e.text, e.x, e.baseline);
  ctx.restore();
}

function strokeText(ctx: SKRSContext2D, text: string, x: number, y: number, width: number, color: string): void {
  ctx.strokeStyle = color;
  // The stroke is centred on the glyph edge; the fill covers the inner half.
  ctx.lineWidth = width * 2;
  ctx.lineJoin = 'round';
  ctx.miterLimit = 2;
  ctx.strokeText(text, x, y);
}

function roundRect(ctx: SKRSContext2D, x: number, y: number, w: number, h: number, r: number): void {
  ctx.beginPath();
  ctx.roundRect(x, y, w, h, Math.min(r, h / 2, w / 2));
}

/** One full frame as PNG: the background still (scaled to cover) with the captions at time t. */
export async function renderPreviewFrame(opts: PreviewFrameOptions): Promise<Buffer> {
  const { width, height } = opts;
  const canvas = createCanvas(width, height);
  const ctx = canvas.getContext('2d');
  if (opts.background) {
    const img: Image = Buffer.isBuffer(opts.background) ? await loadImage(opts.background) : opts.background;
    const s = Math.max(width / img.width, height / img.height);
    const w = img.width * s;
    const h = img.height * s;
    ctx.drawImage(img, (width - w) / 2, (height - h) / 2, w, h);
  }
  const painter = createBandPainter(opts);
  const bandCanvas = createCanvas(painter.band.width, painter.band.height);
  painter.paint(bandCanvas.getContext('2d'), opts.t);
  ctx.drawImage(bandCanvas, painter.band.x, painter.band.y);
  return canvas.encode('png');
}
