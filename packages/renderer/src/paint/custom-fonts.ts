import { GlobalFonts } from './canvas.ts';
import type { CustomFontFace } from '@captionfarm/captions';

const registered = new Map<string, CustomFontFace>();

/**
 * Makes an uploaded font drawable (`bytes` may be a function, called only on first use) under a family name derived from its content hash, so two
 * fonts never collide and the same font registers once per process. Only for bytes that passed
 * `inspectFont` (which read them in a child process first): Skia parses them in this process.
 */
export function registerCustomFont(o: { bytes: Uint8Array | (() => Uint8Array); sha256: string; weight: number }): CustomFontFace {
  const known = registered.get(o.sha256);
  if (known) return known;
  const family = `cf-font-${o.sha256.slice(0, 24)}`;
  const bytes = typeof o.bytes === 'function' ? o.bytes() : o.bytes;
  GlobalFonts.register(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), family);
  if (!GlobalFonts.has(family)) throw new Error(`the renderer could not load font ${o.sha256.slice(0, 12)}`);
  const face = { family, weight: o.weight };
  registered.set(o.sha256, face);
  return face;
}
