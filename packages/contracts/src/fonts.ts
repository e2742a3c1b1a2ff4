import { z } from 'zod';
import { contentTypesFor } from './content-types.ts';
import { CreateUploadRequestSchema, contentTypeForFileName } from './upload.ts';

/** Accepted font uploads by extension and the content type derived from each. */
export const FONT_CONTENT_TYPES: Readonly<Record<string, string>> = contentTypesFor(['ttf', 'otf', 'woff2']);

/** Largest font file accepted. */
export const MAX_FONT_BYTES = 10 * 1024 * 1024;
/** Fonts an account may keep (pending ones included). */
export const MAX_FONTS_PER_ACCOUNT = 20;

/** The content type for a font file name, or null when its extension is not accepted. */
export function fontContentTypeForFileName(fileName: string): string | null {
  return contentTypeForFileName(fileName, FONT_CONTENT_TYPES);
}

/** POST /v1/fonts body: the same file-name and size rules as POST /v1/uploads. */
export const CreateFontRequestSchema = CreateUploadRequestSchema;
export type CreateFontRequest = z.infer<typeof CreateFontRequestSchema>;

/** POST /v1/fonts answer: PUT the bytes to uploadUrl, then POST /v1/fonts/:id/complete. */
export const FontUploadRecordSchema = z.strictObject({
  fontId: z.uuid(),
  uploadUrl: z.string(),
  contentType: z.string(),
  sizeBytes: z.number().int().positive(),
  expiresAt: z.iso.datetime({ offset: true }),
});
export type FontUploadRecord = z.infer<typeof FontUploadRecordSchema>;

export const FontStatusSchema = z.enum(['pending', 'ready']);
export type FontStatus = z.infer<typeof FontStatusSchema>;
export const FontFormatSchema = z.enum(['ttf', 'otf', 'woff2']);
export type FontFormat = z.infer<typeof FontFormatSchema>;

/** A font of the account. Fields read from the font file are null while it is pending. */
export const FontRecordSchema = z.strictObject({
  id: z.uuid(),
  status: FontStatusSchema,
  fileName: z.string(),
  sizeBytes: z.number().int().positive(),
  format: FontFormatSchema.nullable(),
  family: z.string().nullable(),
  subfamily: z.string().nullable(),
  weight: z.number().int().nullable(),
  italic: z.boolean().nullable(),
  glyphs: z.number().int().nullable(),
  sha256: z.string().nullable(),
  createdAt: z.iso.datetime({ offset: true }),
  completedAt: z.iso.datetime({ offset: true }).nullable(),
});
export type FontRecord = z.infer<typeof FontRecordSchema>;

export const FontListSchema = z.strictObject({ fonts: z.array(FontRecordSchema) });
export type FontList = z.infer<typeof FontListSchema>;
