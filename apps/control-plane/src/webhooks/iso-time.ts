/** The database stores ISO 8601 text (fixed width, so text order is time order); the dispatcher speaks epoch ms. */
export const iso = (ms: number): string => new Date(ms).toISOString();
export const epochMs = (text: string): number => Date.parse(text);
