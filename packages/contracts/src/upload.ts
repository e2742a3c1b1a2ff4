import { z } from 'zod';
import { contentTypeForExtension, contentTypesFor } from './content-types.ts';

/** Accepted upload extensions and the content type derived from each (ARCHITECTURE.md). */
export const UPLOAD_CONTENT_TYPES: Readonly<Record<string, string>> = contentTypesFor(['mp4', 'm4v', 'mov', 'webm', 'mkv', 'avi']);

/** The content type for a file name, or null when its extension is not accepted. */
export function contentTypeForFileName(fileName: string, table: Readonly<Record<string, string>> = UPLOAD_CONTENT_TYPES): string | null {
  const dot = fileName.lastIndexOf('.');
  if (dot < 0) return null;
  return contentTypeForExtension(fileName.slice(dot + 1), table);
}

export const CreateUploadRequestSchema = z.strictObject({
  fileName: z
    .string()
    .min(1)
    .max(255)
    .refine((s) => !/[\u0000-\u001f/\\]/.test(s), 'a plain file name, without path separators or control characters'),
  sizeBytes: z.number().int().positive().max(Number.MAX_SAFE_INTEGER),
});
export type CreateUploadRequest = z.infer<typeof CreateUploadRequestSchema>;

export const UploadRecordSchema = z.strictObject({
  uploadId: z.uuid(),
  uploadUrl: z.string(),
  contentType: z.string(),
  sizeBytes: z.number().int().positive(),
  expiresAt: z.iso.datetime({ offset: true }),
});
export type UploadRecord = z.infer<typeof UploadRecordSchema>;
