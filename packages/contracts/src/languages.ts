import { z } from 'zod';

/**
 * whisper.cpp's languages (src/whisper.cpp `g_lang`), code -> the full name its server reports.
 * Codes are ISO 639-1 except `haw` (Hawaiian) and `yue` (Cantonese), which have none.
 */
// biome-ignore format: a hand-laid table, whisper.cpp's order
export const WHISPER_LANGUAGES: Readonly<Record<string, string>> = Object.freeze({
  en: 'english', zh: 'chinese', de: 'german', es: 'spanish', ru: 'russian', ko: 'korean',
  fr: 'french', ja: 'japanese', pt: 'portuguese', tr: 'turkish', pl: 'polish', ca: 'catalan',
  nl: 'dutch', ar: 'arabic', sv: 'swedish', it: 'italian', id: 'indonesian', hi: 'hindi',
  fi: 'finnish', vi: 'vietnamese', he: 'hebrew', uk: 'ukrainian', el: 'greek', ms: 'malay',
  cs: 'czech', ro: 'romanian', da: 'danish', hu: 'hungarian', ta: 'tamil', no: 'norwegian',
  th: 'thai', ur: 'urdu', hr: 'croatian', bg: 'bulgarian', lt: 'lithuanian', la: 'latin',
  mi: 'maori', ml: 'malayalam', cy: 'welsh', sk: 'slovak', te: 'telugu', fa: 'persian',
  lv: 'latvian', bn: 'bengali', sr: 'serbian', az: 'azerbaijani', sl: 'slovenian', kn: 'kannada',
  et: 'estonian', mk: 'macedonian', br: 'breton', eu: 'basque', is: 'icelandic', hy: 'armenian',
  ne: 'nepali', mn: 'mongolian', bs: 'bosnian', kk: 'kazakh', sq: 'albanian', sw: 'swahili',
  gl: 'galician', mr: 'marathi', pa: 'punjabi', si: 'sinhala', km: 'khmer', sn: 'shona',
  yo: 'yoruba', so: 'somali', af: 'afrikaans', oc: 'occitan', ka: 'georgian', be: 'belarusian',
  tg: 'tajik', sd: 'sindhi', gu: 'gujarati', am: 'amharic', yi: 'yiddish', lo: 'lao',
  uz: 'uzbek', fo: 'faroese', ht: 'haitian creole', ps: 'pashto', tk: 'turkmen', nn: 'nynorsk',
  mt: 'maltese', sa: 'sanskrit', lb: 'luxembourgish', my: 'myanmar', bo: 'tibetan', tl: 'tagalog',
  mg: 'malagasy', as: 'assamese', tt: 'tatar', haw: 'hawaiian', ln: 'lingala', ha: 'hausa',
  ba: 'bashkir', jw: 'javanese', su: 'sundanese', yue: 'cantonese',
});

const CODE_BY_NAME = new Map(Object.entries(WHISPER_LANGUAGES).map(([code, name]) => [name, code]));

/** 'english' or 'en' -> 'en'; undefined when whisper.cpp does not know the language. */
export function languageCode(nameOrCode: string): string | undefined {
  const key = nameOrCode.trim().toLowerCase();
  if (Object.hasOwn(WHISPER_LANGUAGES, key)) return key;
  return CODE_BY_NAME.get(key);
}

/** The spec's 2-letter codes that whisper.cpp can transcribe (it also knows `haw` and `yue`, which are not 2 letters). */
export const LanguageSchema = z
  .string()
  .regex(/^[a-zA-Z]{2}$/, 'a 2-letter language code, e.g. "en"')
  .transform((s) => s.toLowerCase())
  .refine((code) => Object.hasOwn(WHISPER_LANGUAGES, code), {
    message: 'a language the speech recognizer knows (ISO 639-1, e.g. "en", "de", "ja"); omit it to detect the language',
  });
