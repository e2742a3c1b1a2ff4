/**
 * The one table from file extension to content type. Uploads, fonts, job outputs, transcript
 * exports and the built-in object store each accept a subset of it (`contentTypesFor`), so a type
 * is written once and two places cannot disagree on it.
 */
export const CONTENT_TYPES = Object.freeze({
  mp4: 'video/mp4',
  m4v: 'video/x-m4v',
  mov: 'video/quicktime',
  webm: 'video/webm',
  mkv: 'video/x-matroska',
  avi: 'video/x-msvideo',
  ttf: 'font/ttf',
  otf: 'font/otf',
  woff2: 'font/woff2',
  png: 'image/png',
  jpg: 'image/jpeg',
  json: 'application/json',
  srt: 'application/x-subrip; charset=utf-8',
  vtt: 'text/vtt; charset=utf-8',
} as const);
export type ContentTypeExtension = keyof typeof CONTENT_TYPES;

/** The table's entries for these extensions, in this order (the order error messages list them). */
export function contentTypesFor<E extends ContentTypeExtension>(extensions: readonly E[]): Readonly<{ [K in E]: (typeof CONTENT_TYPES)[K] }> {
  return Object.freeze(Object.fromEntries(extensions.map((e) => [e, CONTENT_TYPES[e]]))) as { [K in E]: (typeof CONTENT_TYPES)[K] };
}

/** The content type of `ext` (no dot, any case) within `table`, or null when it has none. */
export function contentTypeForExtension(ext: string, table: Readonly<Record<string, string>> = CONTENT_TYPES): string | null {
  return Object.hasOwn(table, ext.toLowerCase()) ? (table[ext.toLowerCase()] ?? null) : null;
}
