// Renders every built-in caption template at 9:16 and 16:9 over a neutral, video-like background
// into one PNG, for looking at. Generated PNGs are never committed.
//
//   npx tsx scripts/contact-sheet.ts OUT.png [--only=id,id] [--scale=0.4] [--safe] [--scripts] [--t=0.63,9.3]
//
// --safe draws the safe area (green) and the band (magenta); --scripts renders Arabic, Hebrew,
// Japanese, Chinese and emoji samples instead of the templates; --scale is the thumbnail scale of
// frames rendered at 720x1280 and 1280x720.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createCanvas, loadImage, type SKRSContext2D } from '@napi-rs/canvas';
import type { Word } from '@captionfarm/contracts';
import { builtinTemplates, getBuiltinTemplate, safeArea, type Template } from '@captionfarm/captions';
import { createBandPainter, registerCaptionFonts, renderPreviewFrame } from '../packages/renderer/src/paint/index.ts';

const args = process.argv.slice(2);
const out = args.find((a) => !a.startsWith('--'));
if (!out) {
  console.error('usage: npx tsx scripts/contact-sheet.ts OUT.png [--only=id,id] [--scale=0.4] [--safe] [--scripts] [--t=0.63,9.3]');
  process.exit(2);
}
const flag = (name: string) => args.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
const scale = Number(flag('scale') ?? 0.4);
const showSafe = args.includes('--safe');
const times = (flag('t') ?? '0.63,9.35').split(',').map(Number);
const only = flag('only')?.split(',');

registerCaptionFonts();

/** "The North Wind and the Sun" read by espeak-ng, with exact word onsets (shared/media), or a stand-in. */
function sampleWords(): Word[] {
  const media = fileURLToPath(new URL('../../shared/media/', import.meta.url));
  if (existsSync(`${media}en.words`)) {
    const text = readFileSync(`${media}en.txt`, 'utf8');
    const rows = readFileSync(`${media}en.words`, 'utf8')
      .trim()
      .split('\n')
      .map((l) => l.split('\t'));
    return rows.slice(0, -1).map((r, i) => {
      const next = rows[i + 1]!;
      return {
        text: text.slice(Number(r[1]) - 1, Number(next[1]) - 1).trim() || r[3]!,
        start: Number(r[0]) / 1000,
        end: Number(next[0]) / 1000 - 0.04,
        confidence: 1,
      };
    });
  }
  return spread(
    'The North Wind and the Sun were disputing which was the stronger, when a traveler came along wrapped in a warm cloak. They agreed that the one who first succeeded in making the traveler take his cloak off should be considered stronger.'.split(
      ' ',
    ),
    0,
    0.3,
  );
}

function spread(texts: string[], t0: number, step: number): Word[] {
  return texts.map((text, i) => ({ text, start: t0 + i * step, end: t0 + i * step + step * 0.85, confidence: 1 }));
}

/** A still that looks like video: graded gradient, soft bokeh, a subject silhouette, a bright window, grain. */
function background(width: number, height: number, seed: number): Buffer {
  const c = createCanvas(width, height);
  const ctx = c.getContext('2d');
  const g = ctx.createLinearGradient(0, 0, width * 0.3, height);
  const palettes = [
    ['#3b4a5c', '#7d8b8f', '#c9b8a0', '#2a2522'],
    ['#23313a', '#49606b', '#9fa7a0', '#d9d0bd'],
    ['#4b3b35', '#8a6f5c', '#c7b299', '#2b2a2e'],
  ];
  const pal = palettes[seed % palettes.length]!;
  for (const [i, col] of pal.entries()) g.addColorStop(i / (pal.length - 1), col);
  ctx.fillStyle = g;
  ctx.fillRect(0, 0, width, height);
  let s = seed * 9301 + 49297;
  const rnd = () => {
    s = (s * 9301 + 49297) % 233280;
    return s / 233280;
  };
  const m = Math.min(width, height);
  // A bright window behind the caption area: captions must read on light backgrounds too.
  const wg = ctx.createRadialGradient(width * 0.62, height * 0.62, 0, width * 0.62, height * 0.62, m * 0.55);
  wg.addColorStop(0, 'rgba(255,250,235,0.85)');
  wg.addColorStop(1, 'rgba(255,250,235,0)');
  ctx.fillStyle = wg;
  ctx.fillRect(0, 0, width, height);
  for (let i = 0; i < 14; i++) {
    const x = rnd() * width;
    const y = rnd() * height;
    const r = m * (0.03 + rnd() * 0.08);
    const bg = ctx.createRadialGradient(x, y, 0, x, y, r);
    bg.addColorStop(0, `rgba(255,${200 + Math.floor(rnd() * 55)},${150 + Math.floor(rnd() * 80)},0.35)`);
    bg.addColorStop(1, 'rgba(255,255,255,0)');
    ctx.fillStyle = bg;
    ctx.fillRect(x - r, y - r, 2 * r, 2 * r);
  }
  // Subject: head and shoulders, slightly off centre.
  ctx.fillStyle = 'rgba(28,24,26,0.78)';
  ctx.beginPath();
  ctx.ellipse(width * 0.42, height * 0.42, m * 0.13, m * 0.16, 0, 0, Math.PI * 2);
  ctx.fill();
  ctx.beginPath();
  ctx.ellipse(width * 0.42, height * 0.42 + m * 0.48, m * 0.36, m * 0.34, 0, Math.PI, 0);
  ctx.fill();
  const img = ctx.getImageData(0, 0, width, height);
  for (let i = 0; i < img.data.length; i += 4) {
    const n = (rnd() - 0.5) * 14;
    img.data[i] = clamp(img.data[i]! + n);
    img.data[i + 1] = clamp(img.data[i + 1]! + n);
    img.data[i + 2] = clamp(img.data[i + 2]! + n);
  }
  ctx.putImageData(img, 0, 0);
  return c.toBuffer('image/png');
}

const clamp = (v: number) => (v < 0 ? 0 : Math.min(v, 255));

interface Shot {
  label: string;
  template: Template;
  words: Word[];
  width: number;
  height: number;
  t: number;
}

async function renderShot(shot: Shot, bgCache: Map<string, Buffer>, seed: number): Promise<Buffer> {
  const key = `${shot.width}x${shot.height}:${seed}`;
  if (!bgCache.has(key)) bgCache.set(key, background(shot.width, shot.height, seed));
  const png = await renderPreviewFrame({
    words: shot.words,
    template: shot.template,
    width: shot.width,
    height: shot.height,
    t: shot.t,
    background: bgCache.get(key)!,
  });
  if (!showSafe) return png;
  const img = await loadImage(png);
  const c = createCanvas(shot.width, shot.height);
  const ctx = c.getContext('2d');
  ctx.drawImage(img, 0, 0);
  const s = safeArea(shot.width, shot.height);
  const band = createBandPainter({ words: shot.words, template: shot.template, width: shot.width, height: shot.height }).band;
  outline(ctx, s, '#22ff66');
  outline(ctx, band, '#ff33cc');
  return c.encode('png');
}

function outline(ctx: SKRSContext2D, r: { x: number; y: number; width: number; height: number }, color: string): void {
  ctx.strokeStyle = color;
  ctx.lineWidth = 2;
  ctx.setLineDash([10, 6]);
  ctx.strokeRect(r.x + 1, r.y + 1, r.width - 2, r.height - 2);
  ctx.setLineDash([]);
}

function scriptShots(): Shot[] {
  const tpl = (id: string) => getBuiltinTemplate(id)!;
  const samples: { label: string; words: Word[]; t: number; id: string }[] = [
    { label: 'Arabic (RTL) karaoke', id: 'karaoke', words: spread('مرحبا بكم في قناتنا اليوم سنتحدث عن الذكاء الاصطناعي'.split(' '), 0, 0.4), t: 0.9 },
    { label: 'Hebrew (RTL) boxed', id: 'boxed-word', words: spread('שלום לכולם ברוכים הבאים לערוץ שלנו'.split(' '), 0, 0.4), t: 0.5 },
    { label: 'Japanese karaoke', id: 'karaoke', words: spread(['今日は', 'とても', 'いい', '天気', 'ですね。', '散歩に', '行きましょう'], 0, 0.5), t: 1.1 },
    { label: 'Chinese clean', id: 'clean-subtitle', words: spread(['我们', '今天', '要', '讨论', '人工智能', '的', '未来', '发展'], 0, 0.4), t: 1.3 },
    { label: 'Emoji + mixed', id: 'bounce', words: spread(['This', 'is', '🔥', 'fire', '100%', 'real', '🚀'], 0, 0.4), t: 0.9 },
    { label: 'Arabic + English bidi', id: 'clean-subtitle', words: spread(['أنا', 'أحب', 'Visual', 'Studio', 'Code', 'كثيرا'], 0, 0.4), t: 0.5 },
  ];
  return samples.flatMap((s) => [
    { label: `${s.label} 9:16`, template: tpl(s.id), words: s.words, width: 720, height: 1280, t: s.t },
    { label: `${s.label} 16:9`, template: tpl(s.id), words: s.words, width: 1280, height: 720, t: s.t },
  ]);
}

function templateShots(): Shot[] {
  const words = sampleWords();
  const list = builtinTemplates.filter((t) => !only || only.includes(t.id));
  return list.flatMap((template) => [
    ...times.map((t) => ({ label: `${template.id} 9:16 t=${t}`, template, words, width: 720, height: 1280, t })),
    { label: `${template.id} 16:9 t=${times[0]}`, template, words, width: 1280, height: 720, t: times[0]! },
  ]);
}

async function main(): Promise<void> {
  const shots = args.includes('--scripts') ? scriptShots() : templateShots();
  const perRow = args.includes('--scripts') ? 2 : times.length + 1;
  const rowsPerSheetRow = args.includes('--scripts') ? 2 : 2; // two groups side by side
  const pad = 16;
  const labelH = 22;
  const groups: Shot[][] = [];
  for (let i = 0; i < shots.length; i += perRow) groups.push(shots.slice(i, i + perRow));
  const groupW = groups[0]!.reduce((w, s) => w + s.width * scale + pad, pad);
  const groupH = Math.max(...groups[0]!.map((s) => s.height * scale)) + labelH + pad;
  const cols = Math.min(rowsPerSheetRow, groups.length);
  const rows = Math.ceil(groups.length / cols);
  const sheet = createCanvas(Math.ceil(groupW * cols), Math.ceil(groupH * rows + pad));
  const ctx = sheet.getContext('2d');
  ctx.fillStyle = '#16161a';
  ctx.fillRect(0, 0, sheet.width, sheet.height);
  const bgCache = new Map<string, Buffer>();
  for (const [gi, group] of groups.entries()) {
    const gx = (gi % cols) * groupW;
    const gy = Math.floor(gi / cols) * groupH + pad;
    let x = gx + pad;
    for (const shot of group) {
      const img = await loadImage(await renderShot(shot, bgCache, gi));
      ctx.drawImage(img, x, gy + labelH, shot.width * scale, shot.height * scale);
      ctx.fillStyle = '#d4d4d8';
      ctx.font = '600 14px "Inter"';
      ctx.fillText(shot.label, x, gy + 15);
      x += shot.width * scale + pad;
    }
  }
  writeFileSync(out!, await sheet.encode('png'));
  console.log(`wrote ${out} (${sheet.width}x${sheet.height}, ${shots.length} frames)`);
}

await main();
