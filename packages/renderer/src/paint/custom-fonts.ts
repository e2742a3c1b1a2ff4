import { GlobalFonts } from '@napi-rs/canvas';
import type { CustomFontFace } from '@captionfarm/captions';

const registered = new Map<string, CustomFontFace>();

/**
 * Makes an uploaded font drawable under a family name derived from its content hash, so two
 * fonts never collide and the same font registers once per process. Only for bytes that passed
 * `inspectFont` (which read them in a child process first): Skia parses them in this process.
 */
export function registerCustomFont(o: { bytes: Uint8Array; sha256: string; weight: number }): CustomFontFace {
  const known = registered.get(o.sha256);
  if (known) return known;
  const family = `cf-font-${o.sha256.slice(0, 24)}`;
  GlobalFonts.register(Buffer.from(o.bytes.buffer, o.bytes.byteOffset, o.bytes.byteLength), family);
  if (!GlobalFonts.has(family)) throw new Error(`the renderer could not load font ${o.sha256.slice(0, 12)}`);
  const face = { family, weight: o.weight };
  registered.set(o.sha256, face);
  return face;
}
