import type { OutputFormat } from './encoder-args.ts';

/**
 * ISO 639-1 -> ISO 639-2/T for the languages the speech recognizer knows (whisper.cpp's, as in
 * WHISPER_LANGUAGES of @captionfarm/contracts; `jw` is its code for Javanese). MP4 stores the
 * terminology code (ISO/IEC 14496-12 packs three letters); ffmpeg's MP4 muxer drops a 2-letter one.
 */
// biome-ignore format: a hand-laid table
const ISO_639_2T: Readonly<Record<string, string>> = {
  en: 'eng', zh: 'zho', de: 'deu', es: 'spa', ru: 'rus', ko: 'kor', fr: 'fra', ja: 'jpn', pt: 'por', tr: 'tur',
  pl: 'pol', ca: 'cat', nl: 'nld', ar: 'ara', sv: 'swe', it: 'ita', id: 'ind', hi: 'hin', fi: 'fin', vi: 'vie',
  he: 'heb', uk: 'ukr', el: 'ell', ms: 'msa', cs: 'ces', ro: 'ron', da: 'dan', hu: 'hun', ta: 'tam', no: 'nor',
  th: 'tha', ur: 'urd', hr: 'hrv', bg: 'bul', lt: 'lit', la: 'lat', mi: 'mri', ml: 'mal', cy: 'cym', sk: 'slk',
  te: 'tel', fa: 'fas', lv: 'lav', bn: 'ben', sr: 'srp', az: 'aze', sl: 'slv', kn: 'kan', et: 'est', mk: 'mkd',
  br: 'bre', eu: 'eus', is: 'isl', hy: 'hye', ne: 'nep', mn: 'mon', bs: 'bos', kk: 'kaz', sq: 'sqi', sw: 'swa',
  gl: 'glg', mr: 'mar', pa: 'pan', si: 'sin', km: 'khm', sn: 'sna', yo: 'yor', so: 'som', af: 'afr', oc: 'oci',
  ka: 'kat', be: 'bel', tg: 'tgk', sd: 'snd', gu: 'guj', am: 'amh', yi: 'yid', lo: 'lao', uz: 'uzb', fo: 'fao',
  ht: 'hat', ps: 'pus', tk: 'tuk', nn: 'nno', mt: 'mlt', sa: 'san', lb: 'ltz', my: 'mya', bo: 'bod', tl: 'tgl',
  mg: 'mlg', as: 'asm', tt: 'tat', ln: 'lin', ha: 'hau', ba: 'bak', jw: 'jav', jv: 'jav', su: 'sun',
};

/** Where the bibliographic code (Matroska's, so WebM's) differs from the terminology one. */
// biome-ignore format: a hand-laid table
const BIBLIOGRAPHIC: Readonly<Record<string, string>> = {
  zho: 'chi', deu: 'ger', fra: 'fre', nld: 'dut', ell: 'gre', msa: 'may', ces: 'cze', ron: 'rum', mri: 'mao', cym: 'wel',
  slk: 'slo', fas: 'per', mkd: 'mac', eus: 'baq', isl: 'ice', hye: 'arm', sqi: 'alb', kat: 'geo', mya: 'bur', bod: 'tib',
};

/**
 * A subtitle track's language tag: a 2-letter code as ISO 639-2 (terminology for MP4,
 * bibliographic for WebM, Matroska's convention), a 3-letter one as given, else none.
 */
export function subtitleLanguage(language: string | null | undefined, format: OutputFormat): string | null {
  const code = language?.toLowerCase();
  if (!code) return null;
  if (/^[a-z]{3}$/.test(code)) return code;
  const terminology = ISO_639_2T[code];
  if (!terminology) return null;
  return format === 'webm' ? (BIBLIOGRAPHIC[terminology] ?? terminology) : terminology;
}
