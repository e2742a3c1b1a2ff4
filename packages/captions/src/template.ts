import { lineText, ReplacementsSchema, VocabularySchema } from '@captionfarm/contracts';
import { z } from 'zod';
import { FontFamilySchema } from './fonts.ts';

// Templates are data. Every object is strict (unknown keys are rejected, so a typo in a POSTed
// template is a 400, not a silently ignored field) and every field but id and name has a default,
// so a client may send a partial template. Lengths are in em (multiples of the font size) and
// sizes relative to the frame, so 720p and 4K look the same.

export const ColorSchema = z.string().regex(/^#(?:[0-9a-fA-F]{6}|[0-9a-fA-F]{8})$/, 'a colour is #RRGGBB or #RRGGBBAA');
export type Color = z.infer<typeof ColorSchema>;

const em = (max: number) => z.number().min(0).max(max);

export const FontSchema = z.strictObject({
  family: FontFamilySchema.default('Montserrat'),
  /** 100..900; the renderer uses the nearest weight the family ships. */
  weight: z.number().int().min(100).max(900).multipleOf(100).default(800),
  /** Font size in percent of the frame's shorter side (1080 px in both 1080x1920 and 1920x1080). */
  size: z.number().min(1.5).max(20).default(6),
  /** Extra space between letters, em. */
  letterSpacing: z.number().min(-0.1).max(0.5).default(0),
  /** Distance between baselines, em. */
  lineHeight: z.number().min(0.8).max(2.5).default(1.2),
  /** Space between words, em. */
  wordSpacing: z.number().min(0).max(1.5).default(0.28),
  /**
   * An uploaded font (POST /v1/fonts) by id. When set it replaces `family` and `weight` (the font
   * file has one weight); glyphs it lacks fall back to the Noto fonts like any family's.
   */
  fontId: z.uuid().nullable().default(null),
});

export const TextSchema = z.strictObject({
  case: z.enum(['none', 'upper', 'lower']).default('none'),
  /** 'strip' drops trailing commas and full stops (keeps ? and !). */
  punctuation: z.enum(['keep', 'strip']).default('keep'),
});

export const OutlineSchema = z.strictObject({
  color: ColorSchema.default('#000000'),
  /** Outline thickness outside the glyph, em. */
  width: em(0.4).default(0.08),
});

export const ShadowSchema = z.strictObject({
  color: ColorSchema.default('#000000A0'),
  /** Blur radius, em (0 = hard shadow). */
  blur: em(1).default(0.12),
  offsetX: z.number().min(-0.5).max(0.5).default(0),
  offsetY: z.number().min(-0.5).max(0.5).default(0.05),
});

export const GlowSchema = z.strictObject({
  color: ColorSchema.default('#FF2BD6'),
  /** Glow radius, em. */
  blur: em(1).default(0.35),
});

export const BoxSchema = z.strictObject({
  color: ColorSchema.default('#000000A6'),
  /** Corner radius, em. */
  radius: em(1).default(0.18),
  paddingX: em(1).default(0.3),
  paddingY: em(1).default(0.12),
});

export const BackgroundSchema = BoxSchema.extend({
  /** One box behind each line, or one behind the whole page. */
  scope: z.enum(['line', 'page']).default('line'),
}).strict();

export const PositionSchema = z.strictObject({
  /** Vertical place of the caption block inside the safe area: 0 top, 0.5 middle, 1 bottom. */
  y: z.number().min(0).max(1).default(0.72),
});

export const LayoutSchema = z.strictObject({
  maxWordsPerLine: z.number().int().min(1).max(20).default(4),
  /** Characters per line, spaces included; full-width (CJK) characters count as two. */
  maxCharsPerLine: z.number().int().min(4).max(80).default(24),
  maxLines: z.number().int().min(1).max(4).default(2),
  /** Fraction of the safe width a line may use. */
  maxWidth: z.number().min(0.3).max(1).default(1),
});

export const TimingSchema = z.strictObject({
  /** A silence at least this long (seconds) always starts a new page. */
  pauseSeconds: z.number().min(0.1).max(5).default(0.6),
  /** How long a page stays after its last word when nothing follows (seconds). */
  lingerSeconds: z.number().min(0).max(3).default(0.4),
  /** A word is never shown as spoken for longer than this (whisper stretches words over silences). */
  maxWordSeconds: z.number().min(0.2).max(10).default(1.5),
  /** A sentence end (. ! ?) starts a new page. */
  breakOnSentence: z.boolean().default(true),
});

export const WordStateSchema = z.strictObject({
  /** null: the template's fill. */
  color: ColorSchema.nullable().default(null),
  opacity: z.number().min(0).max(1).default(1),
});

export const ActiveSchema = z.strictObject({
  /** Colour of the word being spoken (null: unchanged). */
  color: ColorSchema.nullable().default(null),
  outlineColor: ColorSchema.nullable().default(null),
  /** Size of the word being spoken relative to the others. */
  scale: z.number().min(1).max(1.6).default(1),
  /** A box behind the word being spoken. */
  box: BoxSchema.nullable().default(null),
  glow: GlowSchema.nullable().default(null),
});

export const EmphasisSchema = z.strictObject({
  color: ColorSchema.default('#FFD60A'),
  scale: z.number().min(1).max(1.6).default(1.12),
  /**
   * 'keyword': per page, the word with a number or else the longest non-stopword (4+ letters),
   * plus the template's `keywords`; 'listed': only the `keywords`.
   */
  rule: z.enum(['keyword', 'listed']).default('keyword'),
});

export const AnimationSchema = z.strictObject({
  /** How a page comes in. */
  page: z.enum(['none', 'fade', 'pop', 'slide-up']).default('none'),
  /**
   * How words come in: 'none' shows the whole page at once; the others show each word when it is
   * spoken ('appear' at once, 'pop' scaling up, 'fade', 'rise' sliding up, 'typewriter' letter by letter).
   */
  word: z.enum(['none', 'appear', 'pop', 'fade', 'rise', 'typewriter']).default('none'),
  /** What the word being spoken does: 'pop' grows to active.scale with overshoot, 'bounce' jumps. */
  active: z.enum(['none', 'pop', 'bounce']).default('none'),
  /** Length of each transition, seconds. */
  duration: z.number().min(0.04).max(1).default(0.14),
});

export const TemplateIdSchema = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[a-z0-9]+(?:-[a-z0-9]+)*$/, 'a template id is kebab-case: lowercase letters, digits and single dashes');

export const TemplateSchema = z.strictObject({
  id: TemplateIdSchema,
  /** One line: no control character (NUL, newline, ESC ...), no lone surrogate, something visible. */
  name: lineText('name', { min: 1, max: 80 }),
  description: z.string().max(500).default(''),
  font: FontSchema.prefault({}),
  text: TextSchema.prefault({}),
  /** Text colour. */
  fill: ColorSchema.default('#FFFFFF'),
  outline: OutlineSchema.nullable().prefault({}),
  shadow: ShadowSchema.nullable().default(null),
  /** Glow around every word (neon looks). */
  glow: GlowSchema.nullable().default(null),
  /** Box behind each line or the whole page. */
  background: BackgroundSchema.nullable().default(null),
  position: PositionSchema.prefault({}),
  layout: LayoutSchema.prefault({}),
  timing: TimingSchema.prefault({}),
  /** Words not yet spoken. */
  upcoming: WordStateSchema.prefault({}),
  /** Words already spoken. */
  spoken: WordStateSchema.prefault({}),
  active: ActiveSchema.prefault({}),
  /** Keyword emphasis in a second colour. */
  emphasis: EmphasisSchema.nullable().default(null),
  animation: AnimationSchema.prefault({}),
  /** 'auto': at most one emoji per page, picked from the words by a shipped table (see emoji.ts). */
  emoji: z.enum(['off', 'auto']).default('off'),
  /**
   * Words or phrases always emphasised (case-insensitive, whole words): in `emphasis`'s colour and
   * scale, or the default emphasis look when the template has none.
   */
  keywords: z.array(z.string().trim().min(1).max(60)).max(50).default([]),
  /**
   * The account's defaults for jobs made with this template (not rendering fields: a job keeps
   * them apart from its template). A job's own `vocabulary` or `replacements` replaces these, not merged.
   */
  vocabulary: VocabularySchema.optional().meta({
    description: "Default vocabulary of the jobs made with this template; a job's own vocabulary replaces it (not merged).",
  }),
  replacements: ReplacementsSchema.optional().meta({
    description: "Default replacements of the jobs made with this template; a job's own replacements replace them (not merged).",
  }),
});

/** A complete template (every default filled in). */
export type Template = z.infer<typeof TemplateSchema>;
/** What a client may send: id and name, everything else optional. */
export type TemplateInput = z.input<typeof TemplateSchema>;

/**
 * A per-job style: any template field but id, name, description, vocabulary and replacements (a
 * job has fields of its own for those two), nested objects partial.
 * Validated by the template schema itself, so a style can never hold what a template cannot.
 */
export const StyleSchema = TemplateSchema.omit({ id: true, name: true, description: true, vocabulary: true, replacements: true }).partial();
/** What a client sends as `style` (every field optional, at every depth). */
export type StyleInput = z.input<typeof StyleSchema>;

/** Parses a (partial) template; throws a ZodError listing every problem. */
export function parseTemplate(input: unknown): Template {
  return TemplateSchema.parse(input);
}

/**
 * A template derived from `base` with `patch` deep-merged over it (objects merge key by key,
 * arrays and scalars replace, `null` removes an optional effect), then validated.
 */
export function deriveTemplate(base: TemplateInput, patch: unknown): Template {
  return TemplateSchema.parse(deepMerge(base, patch));
}

/**
 * The effective template of a job: `style` deep-merged over `base` and validated by the template
 * schema. Returns the issues instead of throwing, with paths relative to the style.
 */
export function applyStyle(base: TemplateInput, style: unknown): { ok: true; template: Template } | { ok: false; issues: z.core.$ZodIssue[] } {
  const own = StyleSchema.safeParse(style ?? {});
  if (!own.success) return { ok: false, issues: own.error.issues };
  const merged = TemplateSchema.safeParse(deepMerge(base, style ?? {}));
  return merged.success ? { ok: true, template: merged.data } : { ok: false, issues: merged.error.issues };
}

/** The emphasis look a template uses: its own, or the default one when it only lists keywords. */
export function emphasisOf(t: Template): Template['emphasis'] {
  if (t.emphasis) return t.emphasis;
  return t.keywords.length > 0 ? DEFAULT_KEYWORD_EMPHASIS : null;
}
const DEFAULT_KEYWORD_EMPHASIS = Object.freeze(EmphasisSchema.parse({ rule: 'listed' }));

function deepMerge(base: unknown, patch: unknown): unknown {
  if (patch === undefined) return base;
  if (!isPlainObject(base) || !isPlainObject(patch)) return patch;
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(patch)) out[k] = deepMerge(base[k], v);
  return out;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
