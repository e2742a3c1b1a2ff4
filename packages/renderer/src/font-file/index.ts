export { inspectFont, FontRejectedError, FONT_CHECKS_IN_PARALLEL, cpuBudgetMs, type FontReport, type InspectFontOptions } from './inspect-font.ts';
export { checkSfnt, checkWoff2Header, sniffFontFormat, sfntChecksum, FontProblem, MAX_SFNT_BYTES, type SfntInfo } from './sfnt.ts';
export type { FontFileFormat } from './decode.ts';
