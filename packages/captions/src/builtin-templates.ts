import { TemplateSchema, type Template, type TemplateInput } from './template.ts';

// The built-in looks. Each is a TemplateInput parsed through the schema at load, so a built-in
// can never drift from what a client is allowed to POST.

const inputs: TemplateInput[] = [
  {
    id: 'karaoke',
    name: 'Karaoke',
    description: 'The whole line is on screen; each word lights up in yellow as it is sung or spoken.',
    font: { family: 'Montserrat', weight: 800, size: 7 },
    fill: '#FFFFFF',
    outline: { color: '#000000', width: 0.09 },
    shadow: { color: '#00000099', blur: 0.14, offsetY: 0.04 },
    layout: { maxWordsPerLine: 4, maxCharsPerLine: 22, maxLines: 2 },
    spoken: { color: '#FFD400' },
    active: { color: '#FFD400' },
  },
  {
    id: 'word-pop',
    name: 'Word Pop',
    description: 'Big uppercase words that pop in one at a time; the word being spoken turns green.',
    font: { family: 'Montserrat', weight: 900, size: 9, letterSpacing: -0.01 },
    text: { case: 'upper', punctuation: 'strip' },
    fill: '#FFFFFF',
    outline: { color: '#000000', width: 0.12 },
    shadow: { color: '#000000B3', blur: 0.06, offsetY: 0.07 },
    layout: { maxWordsPerLine: 3, maxCharsPerLine: 16, maxLines: 1 },
    active: { color: '#3CFF6B' },
    animation: { word: 'pop', duration: 0.13 },
  },
  {
    id: 'boxed-word',
    name: 'Boxed Word',
    description: 'Clean white words; a rounded violet box jumps to the word being spoken.',
    font: { family: 'Poppins', weight: 800, size: 7 },
    fill: '#FFFFFF',
    outline: null,
    shadow: { color: '#000000AA', blur: 0.22, offsetY: 0.05 },
    layout: { maxWordsPerLine: 3, maxCharsPerLine: 20, maxLines: 2 },
    active: { color: '#FFFFFF', scale: 1.06, box: { color: '#7C3AED', radius: 0.2, paddingX: 0.16, paddingY: 0.1 } },
    animation: { active: 'pop', duration: 0.12 },
  },
  {
    id: 'bounce',
    name: 'Bounce',
    description: 'Playful cartoon lettering with a thick outline; the spoken word jumps and turns amber.',
    font: { family: 'Luckiest Guy', weight: 400, size: 8, letterSpacing: 0.02, lineHeight: 1.25 },
    text: { case: 'upper', punctuation: 'strip' },
    fill: '#FFFFFF',
    outline: { color: '#151515', width: 0.11 },
    shadow: { color: '#000000CC', blur: 0, offsetY: 0.08 },
    layout: { maxWordsPerLine: 3, maxCharsPerLine: 16, maxLines: 2 },
    active: { color: '#FFC23C', scale: 1.1 },
    animation: { active: 'bounce', duration: 0.12 },
  },
  {
    id: 'typewriter',
    name: 'Typewriter',
    description: 'Letters type out as they are spoken, on a dark rounded card.',
    font: { family: 'Inter', weight: 600, size: 5.2, lineHeight: 1.35, wordSpacing: 0.26 },
    fill: '#F4F4F5',
    outline: null,
    background: { color: '#0B0B10D9', radius: 0.32, paddingX: 0.55, paddingY: 0.42, scope: 'page' },
    position: { y: 0.78 },
    layout: { maxWordsPerLine: 6, maxCharsPerLine: 30, maxLines: 2 },
    timing: { lingerSeconds: 0.6 },
    animation: { word: 'typewriter' },
  },
  {
    id: 'clean-subtitle',
    name: 'Clean Subtitle',
    description: 'Broadcast-style subtitles: two lines on a translucent bar at the bottom, no animation.',
    font: { family: 'Inter', weight: 600, size: 4.6, lineHeight: 1.42, wordSpacing: 0.25 },
    fill: '#FFFFFF',
    outline: null,
    background: { color: '#000000B8', radius: 0.12, paddingX: 0.34, paddingY: 0.2, scope: 'line' },
    position: { y: 1 },
    layout: { maxWordsPerLine: 12, maxCharsPerLine: 42, maxLines: 2, maxWidth: 0.92 },
    timing: { pauseSeconds: 0.9, lingerSeconds: 0.8 },
  },
  {
    id: 'neon',
    name: 'Neon Glow',
    description: 'Uppercase words glowing magenta like a neon sign; the spoken word flares cyan.',
    font: { family: 'Poppins', weight: 600, size: 7, letterSpacing: 0.03 },
    text: { case: 'upper', punctuation: 'strip' },
    fill: '#FFE9FA',
    outline: null,
    shadow: { color: '#1A0022B3', blur: 0.45, offsetY: 0 },
    glow: { color: '#FF2BD6', blur: 0.38 },
    layout: { maxWordsPerLine: 3, maxCharsPerLine: 18, maxLines: 2 },
    upcoming: { opacity: 0.8 },
    active: { color: '#F2FEFF', glow: { color: '#18E0FF', blur: 0.48 }, scale: 1.04 },
    animation: { page: 'fade', active: 'pop', duration: 0.12 },
  },
  {
    id: 'keyword-emphasis',
    name: 'Keyword Emphasis',
    description: 'Two-tone condensed uppercase: the key word of each phrase is bigger and yellow.',
    font: { family: 'Anton', weight: 400, size: 8.5, letterSpacing: 0.02, lineHeight: 1.12 },
    text: { case: 'upper', punctuation: 'strip' },
    fill: '#FFFFFF',
    outline: { color: '#000000', width: 0.07 },
    shadow: { color: '#000000B3', blur: 0.16, offsetY: 0.05 },
    layout: { maxWordsPerLine: 3, maxCharsPerLine: 18, maxLines: 2 },
    emphasis: { color: '#FFD60A', scale: 1.18 },
    animation: { page: 'pop', duration: 0.15 },
  },
  {
    id: 'cinematic',
    name: 'Cinematic',
    description: 'Elegant serif words that rise softly into place, for documentary and storytelling.',
    font: { family: 'Playfair Display', weight: 600, size: 5.8, letterSpacing: 0.01, lineHeight: 1.3 },
    fill: '#FFFFFF',
    outline: null,
    shadow: { color: '#000000C0', blur: 0.35, offsetY: 0.04 },
    position: { y: 0.86 },
    layout: { maxWordsPerLine: 6, maxCharsPerLine: 30, maxLines: 2 },
    timing: { lingerSeconds: 0.7 },
    animation: { word: 'rise', duration: 0.16 },
  },
  {
    id: 'impact',
    name: 'Impact',
    description: 'Huge condensed headline words, two at a time, the spoken one in red; pages punch in.',
    font: { family: 'Bebas Neue', weight: 400, size: 12.5, letterSpacing: 0.015, lineHeight: 1 },
    text: { case: 'upper', punctuation: 'strip' },
    fill: '#FFFFFF',
    outline: { color: '#000000', width: 0.06 },
    shadow: { color: '#000000D0', blur: 0, offsetX: 0.035, offsetY: 0.05 },
    position: { y: 0.62 },
    layout: { maxWordsPerLine: 2, maxCharsPerLine: 14, maxLines: 1 },
    active: { color: '#FF3B3B' },
    animation: { page: 'pop', duration: 0.12 },
  },
];

export const builtinTemplates: readonly Template[] = Object.freeze(inputs.map((t) => deepFreeze(TemplateSchema.parse(t))));

const byId = new Map(builtinTemplates.map((t) => [t.id, t]));

/** A built-in template by id, or undefined. */
export function getBuiltinTemplate(id: string): Template | undefined {
  return byId.get(id);
}

function deepFreeze<T>(o: T): T {
  if (o && typeof o === 'object') {
    for (const v of Object.values(o)) deepFreeze(v);
    Object.freeze(o);
  }
  return o;
}
