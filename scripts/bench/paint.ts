/**
 * npm run bench:paint [-- --rounds 5]
 *
 * What it costs Node to paint one caption band (1080x1920) per template, and to compute the
 * frame key that decides whether a frame changed. These were timed unit tests once (paint.test.ts);
 * a timed unit test flakes on a loaded machine, so the figures live here, with their spread over
 * rounds. The baseline of each round is a clearRect-only loop on the same canvas (the floor).
 */
import { parseArgs } from 'node:util';
import { createCanvas } from '@napi-rs/canvas';
import type { Word } from '@captionfarm/contracts';
import { builtinTemplates, type Template } from '@captionfarm/captions';
import { createBandPainter } from '@captionfarm/renderer';

const { values: flags } = parseArgs({ options: { rounds: { type: 'string', default: '5' }, frames: { type: 'string', default: '60' } } });
const rounds = Number(flags.rounds);
const frames = Number(flags.frames);

const STORY =
  'The North Wind and the Sun were disputing which was the stronger, when a traveler came along ' +
  'wrapped in a warm cloak. They agreed that the one who first succeeded in making the traveler take ' +
  'his cloak off should be considered stronger.';
const words: Word[] = STORY.split(' ').map((text, i) => ({ text, start: i * 0.4, end: i * 0.4 + 0.36, confidence: 1 }));

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const spread = (xs: number[]) => `${Math.min(...xs).toFixed(3)}-${Math.max(...xs).toFixed(3)}`;

console.log(`paint of a 1080x1920 caption band, ${frames} frames a round, ${rounds} rounds (ms per frame: median, min-max)`);
for (const tpl of builtinTemplates as readonly Template[]) {
  const p = createBandPainter({ words, template: tpl, width: 1080, height: 1920, fps: 30 });
  const ctx = createCanvas(p.band.width, p.band.height).getContext('2d');
  const paint: number[] = [];
  const key: number[] = [];
  for (let r = 0; r < rounds; r++) {
    let t0 = performance.now();
    for (let i = 0; i < frames; i++) {
      ctx.clearRect(0, 0, p.band.width, p.band.height);
      p.paint(ctx, 0.5 + i * 0.11);
    }
    paint.push((performance.now() - t0) / frames);
    t0 = performance.now();
    for (let i = 0; i < 20_000; i++) p.keyAt((i / 20_000) * 30);
    key.push(((performance.now() - t0) / 20_000) * 1000);
  }
  console.log(
    `${tpl.id.padEnd(17)} paint ${median(paint).toFixed(3)} ms (${spread(paint)}) = ` +
      `${Math.round(1000 / median(paint))} fps   keyAt ${median(key).toFixed(2)} us (${spread(key)})`,
  );
}
