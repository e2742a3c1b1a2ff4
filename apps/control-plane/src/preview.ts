import type { Word } from '@captionfarm/contracts';
import { parseTemplate, type CustomFontFace } from '@captionfarm/captions';
import { readFileSync } from 'node:fs';
import { registerCustomFont, renderPreviewFrame } from '@captionfarm/renderer';

/**
 * Sample timings for a preview text: one word every `wordSeconds`, the frame's time `at` falling
 * on the middle word, so the active-word treatment shows.
 */
export function sampleWords(text: string, at: number, wordSeconds = 0.4): Word[] {
  const tokens = text.split(/\s+/).filter(Boolean).slice(0, 60);
  const start = Math.max(0, at - Math.floor(tokens.length / 2) * wordSeconds - wordSeconds / 2);
  return tokens.map((t, i) => ({ text: t, start: start + i * wordSeconds, end: start + (i + 1) * wordSeconds - 0.05, confidence: 1 }));
}

/** A neutral, video-like background (a soft vertical gradient) as an SVG the canvas can load. */
function gradientBackground(width: number, height: number): Buffer {
  return Buffer.from(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}"><defs><linearGradient ` +
      `id="g" x1="0" y1="0" x2="0.3" y2="1"><stop offset="0" stop-color="#3b4a5e"/><stop offset="0.55" ` +
      `stop-color="#7a8a73"/><stop offset="1" stop-color="#2c2a28"/></linearGradient></defs><rect ` +
      `width="100%" height="100%" fill="url(#g)"/></svg>`,
  );
}

export async function renderTemplatePreview(o: {
  template: unknown;
  text: string;
  width: number;
  height: number;
  at?: number;
  background?: Buffer;
  /** Uploaded fonts the template names: checked files on this machine (FontsService.files). */
  fonts?: readonly { id: string; sha256: string; weight: number; path: string }[];
}): Promise<Buffer> {
  const at = o.at ?? 2;
  // Registered in the thread that draws (a preview worker); once per font and thread.
  const fonts = new Map<string, CustomFontFace>();
  for (const f of o.fonts ?? []) fonts.set(f.id, registerCustomFont({ bytes: () => readFileSync(f.path), sha256: f.sha256, weight: f.weight }));
  return renderPreviewFrame({
    words: sampleWords(o.text, at),
    template: parseTemplate(o.template),
    width: o.width,
    height: o.height,
    t: at,
    background: o.background ?? gradientBackground(o.width, o.height),
    fonts,
  });
}
