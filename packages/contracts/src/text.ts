import { z } from 'zod';

// One rule for the short texts clients give (vocabulary terms, replacements, transcript words,
// template names): the control plane, the agent and the SDK validate them with the same schema.

/** C0, DEL and C1 controls and the Unicode line/paragraph separators: they break a line, an SRT/VTT cue or a terminal. */
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;
/** Half of a UTF-16 pair without its other half (JSON can carry one as "\ud800"): no character at all. */
const LONE_SURROGATE = /\p{Cs}/u;
/** Something that shows: not only white space and format characters (zero-width space and joiners, BOM, bidi marks). */
const VISIBLE = /[^\s\p{Cf}]/u;
/** A term the recognizer or a replacement can match: punctuation, symbols or emoji alone are not one. */
const LETTER_OR_DIGIT = /[\p{L}\p{N}]/u;

/**
 * One line of text, trimmed (inner runs of white space become one space), min..max code points:
 * no control character, no lone surrogate, and (unless empty) something visible, or with
 * `needs: 'letter-or-digit'` a letter or a digit (zero-width and other invisible characters alone
 * are nothing to say or to show). `wordless` is the message when that is missing.
 */
export function lineText(what: string, o: { min: number; max: number; needs?: 'visible' | 'letter-or-digit'; wordless?: string }) {
  const letters = o.needs === 'letter-or-digit';
  const wordless = o.wordless ?? (letters ? `${what} must hold a letter or a digit` : `${what} must hold a visible character, not only invisible ones`);
  return z
    .string()
    .refine((s) => !CONTROL.test(s), `${what} must be one line without control characters`)
    .refine((s) => !LONE_SURROGATE.test(s), `${what} must be valid Unicode: it holds half of a surrogate pair`)
    .transform((s) => s.trim().replace(/\s+/gu, ' '))
    .pipe(
      z
        .string()
        .refine((s) => [...s].length >= o.min, {
          message: o.min === 1 ? `${what} must not be empty or blank` : `${what} is at least ${o.min} characters`,
          abort: true,
        })
        .refine((s) => [...s].length <= o.max, `${what} is at most ${o.max} characters`)
        .refine((s) => s.length === 0 || (letters ? LETTER_OR_DIGIT : VISIBLE).test(s), wordless),
    );
}
