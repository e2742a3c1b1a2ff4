// Word text as the planner compares it: the letters and digits of a token, punctuation around it
// ignored, case folded. "Um," and "um" are the same filler; "umbrella" is not "um".

const EDGES = /^([^\p{L}\p{N}]*)([\s\S]*?)([^\p{L}\p{N}]*)$/u;

/** A token split into its leading punctuation, its core (letters, digits and what lies between them) and its trailing punctuation. */
export function splitWord(text: string): { lead: string; core: string; trail: string } {
  const m = EDGES.exec(text);
  return { lead: m?.[1] ?? '', core: m?.[2] ?? text, trail: m?.[3] ?? '' };
}

/** The comparison key of a token: its core, NFC, lower case, typographic apostrophes made plain. */
export function wordKey(text: string): string {
  return splitWord(text.normalize('NFC')).core.toLowerCase().replace(/[’‘]/g, "'");
}

/** Whether a token ends a sentence (. ! ? … and their CJK forms, quotes or brackets after them allowed). */
export function endsSentence(text: string): boolean {
  return /[.!?…。！？]["'”’)\]]*$/u.test(text.trimEnd());
}

/** A whisper language code reduced to its 2-letter base ("pt-BR" -> "pt"), or null. */
export function baseLanguage(language: string | null): string | null {
  if (!language) return null;
  const base = language.toLowerCase().split(/[-_]/)[0];
  return base ? base : null;
}
