// Profanity: the LDNOOBW lists (npm naughty-words, CC-BY-4.0) per language, with the account's own
// words, matched on whole tokens (punctuation around ignored, case folded). Entries of several
// words ("blow job") are left out: matching is per token, so only single words are masked, the
// account's own words included. English also matches the plain inflections of a listed word
// (fucked, fucks, bitches, shitting); other languages match the listed forms only.
//
// The lists are imported as JSON (about 25 KB together), so the module works in the browser too.

import ar from 'naughty-words/ar.json' with { type: 'json' };
import cs from 'naughty-words/cs.json' with { type: 'json' };
import da from 'naughty-words/da.json' with { type: 'json' };
import de from 'naughty-words/de.json' with { type: 'json' };
import en from 'naughty-words/en.json' with { type: 'json' };
import eo from 'naughty-words/eo.json' with { type: 'json' };
import es from 'naughty-words/es.json' with { type: 'json' };
import fa from 'naughty-words/fa.json' with { type: 'json' };
import fi from 'naughty-words/fi.json' with { type: 'json' };
import fil from 'naughty-words/fil.json' with { type: 'json' };
import fr from 'naughty-words/fr.json' with { type: 'json' };
import hi from 'naughty-words/hi.json' with { type: 'json' };
import hu from 'naughty-words/hu.json' with { type: 'json' };
import it from 'naughty-words/it.json' with { type: 'json' };
import ja from 'naughty-words/ja.json' with { type: 'json' };
import ko from 'naughty-words/ko.json' with { type: 'json' };
import nl from 'naughty-words/nl.json' with { type: 'json' };
import no from 'naughty-words/no.json' with { type: 'json' };
import pl from 'naughty-words/pl.json' with { type: 'json' };
import pt from 'naughty-words/pt.json' with { type: 'json' };
import ru from 'naughty-words/ru.json' with { type: 'json' };
import sv from 'naughty-words/sv.json' with { type: 'json' };
import th from 'naughty-words/th.json' with { type: 'json' };
import tr from 'naughty-words/tr.json' with { type: 'json' };
import zh from 'naughty-words/zh.json' with { type: 'json' };
import { baseLanguage, splitWord, wordKey } from './words.ts';

const LISTS: Record<string, readonly string[]> = {
  ar,
  cs,
  da,
  de,
  en,
  eo,
  es,
  fa,
  fi,
  fil,
  fr,
  hi,
  hu,
  it,
  ja,
  ko,
  nl,
  no,
  pl,
  pt,
  ru,
  sv,
  th,
  tr,
  zh,
  tl: fil,
  nb: no,
  nn: no,
};

/** The language's list, or English's for null and for a language the package has no list for. */
function listOf(language: string | null): readonly string[] {
  const lang = baseLanguage(language);
  return (lang && LISTS[lang]) || en;
}

/** A matcher for one job: the language's single-word entries and the account's own words. */
export function profanityMatcher(language: string | null, own: readonly string[]): (text: string) => boolean {
  const words = new Set<string>();
  for (const entry of [...listOf(language), ...own]) {
    const key = wordKey(entry);
    if (key && !/\s/u.test(key)) words.add(key);
  }
  const english = listOf(language) === en;
  return (text) => {
    const key = wordKey(text);
    if (!key) return false;
    if (words.has(key)) return true;
    return english && englishStems(key).some((s) => words.has(s));
  };
}

/** Stems of an English inflection: fucks -> fuck, bitches -> bitch, fucked -> fuck, shitting -> shit. */
function englishStems(key: string): string[] {
  const out: string[] = [];
  const undouble = (s: string) => (/([b-df-hj-np-tv-z])\1$/.test(s) ? s.slice(0, -1) : s);
  if (key.endsWith("'s")) out.push(key.slice(0, -2));
  if (key.endsWith('ies')) out.push(`${key.slice(0, -3)}y`);
  if (key.endsWith('es')) out.push(key.slice(0, -2));
  if (key.endsWith('s')) out.push(key.slice(0, -1));
  for (const suffix of ['ed', 'ing']) {
    if (key.endsWith(suffix) && key.length > suffix.length + 2) {
      const stem = key.slice(0, -suffix.length);
      out.push(stem, undouble(stem));
    }
  }
  return out.filter((s) => s.length >= 3);
}

/**
 * A profane word as captions and exports show it: the first letter kept, the other letters and
 * digits of the word replaced by "*", punctuation around and inside kept ("fuck," -> "f***,",
 * "Scheiße!" -> "S******!").
 */
export function maskWord(text: string): string {
  const { lead, core, trail } = splitWord(text);
  const chars = Array.from(core);
  const masked = chars.map((c, i) => (i > 0 && /[\p{L}\p{N}\p{M}]/u.test(c) ? '*' : c)).join('');
  return `${lead}${masked}${trail}`;
}
