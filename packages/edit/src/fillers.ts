// Filler lexicons: which tokens the `fillers` modes cut, per language.
//
// `safe` cuts pure hesitations only: sounds that carry no meaning in the language. Words that are
// also ordinary words stay out on purpose: Portuguese "é" (is) and "um" (a, one), German "um"
// (around, in order to), Spanish "este" (this), Italian "cioè" (that is). Languages without a list
// get the universal set (um, uh, hmm...), which is no ordinary word in them; German and Portuguese
// do not, for the reason above.
//
// `aggressive` adds discourse fillers ("like", "you know", "I mean"...). These ARE ordinary words
// and the planner does not parse grammar: it cuts every standalone occurrence, the verb "like" in
// "I like it" included. That is the documented cost of the mode; a client restores a cut with
// `edit.keep`.

import { baseLanguage } from './words.ts';

const UNIVERSAL = ['um', 'umm', 'uhm', 'uh', 'uhh', 'hmm', 'hm', 'mm', 'mmm'];

const HESITATIONS: Record<string, readonly string[]> = {
  en: [...UNIVERSAL, 'ummm', 'er', 'erm', 'ah', 'ahh'],
  de: ['äh', 'ähm', 'ähh', 'öh', 'öhm', 'hm', 'hmm'],
  fr: ['euh', 'heu', 'bah', 'ben', 'hum', 'hmm'],
  es: ['eh', 'em', 'ehm', 'mm', 'mmm', 'hmm'],
  it: ['ehm', 'eh', 'mm', 'mmm', 'hmm'],
  nl: ['eh', 'ehm', 'uh', 'uhm', 'hmm'],
  pt: ['hã', 'ãh', 'ahn', 'ah', 'hmm'],
  sv: ['öh', 'öhm', 'eh', 'ehm', 'hmm'],
};

/** Discourse fillers, cut only by `aggressive`: single words and phrases of consecutive words. */
const DISCOURSE: Record<string, readonly string[]> = {
  en: ['like', 'you know', 'i mean', 'basically', 'literally', 'actually', 'sort of', 'kind of'],
  de: ['halt', 'sozusagen', 'quasi'],
  fr: ['genre', 'en fait', 'tu vois', 'du coup'],
  es: ['o sea', 'pues', 'bueno'],
  it: ['tipo', 'cioè', 'praticamente', 'diciamo'],
  nl: ['zeg maar', 'eigenlijk', 'weet je'],
  pt: ['tipo', 'né', 'ou seja'],
  sv: ['typ', 'liksom'],
};

/** Doubled words that are grammar, not a stumble ("I know that that is", "Die Frau, die die Katze"). */
const LEGIT_DOUBLES: Record<string, readonly string[]> = {
  en: ['that', 'had', 'is', 'do', 'bye', 'ha'],
  de: ['die', 'der', 'das', 'den', 'dem', 'des', 'sie'],
  fr: ['nous', 'vous'],
  nl: ['die', 'dat'],
};

const PROMPTS: Record<string, string> = {
  en: "Umm, let me think, like, hmm... Okay, uh, here's what I'm, you know, thinking.",
  de: 'Ähm, also, äh, ich meine, hm... Naja, öh, sozusagen.',
  fr: 'Euh, bah, ben, tu vois, euh... En fait, heu, genre.',
  es: 'Eh, este, mmm, o sea, pues... Bueno, em, eh.',
  it: 'Ehm, cioè, eh, mmm... Tipo, diciamo, ehm.',
  nl: 'Eh, ehm, uh, zeg maar... Nou, eh, weet je.',
  pt: 'Hã, ãh, tipo, né... Então, ahn, sabe.',
  sv: 'Öh, eh, typ, liksom... Alltså, öhm.',
};

/**
 * Text to append to whisper's initial prompt so that the recognizer writes fillers down instead of
 * dropping them (whisper imitates the prompt's style): a few hesitations in the language, or ''
 * for a language without a lexicon and for null (auto-detected: an English prompt would pull
 * another language's decoding towards English).
 */
export function fillerPrompt(language: string | null): string {
  const lang = baseLanguage(language);
  return (lang && PROMPTS[lang]) ?? '';
}

/** The hesitations of a language (`safe`). */
export function hesitationsOf(language: string | null): ReadonlySet<string> {
  const lang = baseLanguage(language) ?? 'en';
  return new Set(HESITATIONS[lang] ?? UNIVERSAL);
}

/** The discourse filler phrases of a language (`aggressive`), each as its word keys. */
export function discourseOf(language: string | null): readonly (readonly string[])[] {
  const lang = baseLanguage(language) ?? 'en';
  return (DISCOURSE[lang] ?? []).map((p) => p.split(' '));
}

/** Whether a doubled word is grammar in the language, not a stumble; numbers never count as a stumble. */
export function isLegitDouble(key: string, language: string | null): boolean {
  if (/\p{N}/u.test(key)) return true;
  const lang = baseLanguage(language) ?? 'en';
  return (LEGIT_DOUBLES[lang] ?? []).includes(key);
}
