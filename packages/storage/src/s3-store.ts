import { CopyObjectCommand, DeleteObjectCommand, GetObjectCommand, HeadObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import type { ObjectStore, S3Location } from './types.ts';

export function createS3Client(loc: S3Location): S3Client {
  return new S3Client({
    endpoint: loc.endpoint,
    region: loc.region,
    forcePathStyle: true,
    credentials: { accessKeyId: loc.accessKeyId, secretAccessKey: loc.secretAccessKey },
    // The SDK's default adds an empty-body CRC32 checksum to presigned PUTs that breaks real uploads.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
}

/**
 * Presigns with the AWS SDK v3 presigner. `content-length` is kept as a signed header (not hoisted
 * into the query), so a PUT of any other size fails the signature: the spec's 403 for a wrong size.
 */
export function createS3Store(
  loc: S3Location,
  opts: { client?: S3Client /** The signing clock (tests sign URLs that have already expired). */; now?: () => Date } = {},
): ObjectStore {
  const client = opts.client ?? createS3Client(loc);
  const now = opts.now ?? (() => new Date());
  return {
    async presignPut({ key, contentLength, contentType, expiresInSeconds }) {
      const cmd = new PutObjectCommand({ Bucket: loc.bucket, Key: key, ContentLength: contentLength, ContentType: contentType });
      return getSignedUrl(client, cmd, {
        expiresIn: expiresInSeconds,
        signingDate: now(),
        signableHeaders: new Set(['content-length']),
        unhoistableHeaders: new Set(['content-length']),
      });
    },
    async presignGet({ key, expiresInSeconds, downloadName }) {
      const cmd = new GetObjectCommand({
        Bucket: loc.bucket,
        Key: key,
        ...(downloadName ? { ResponseContentDisposition: `attachment; filename="${downloadName.replace(/["\\]/g, '')}"` } : {}),
      });
      return getSignedUrl(client, cmd, { expiresIn: expiresInSeconds, signingDate: now() });
    },
    async head(key) {
      try {
        const out = await client.send(new HeadObjectCommand({ Bucket: loc.bucket, Key: key }));
        return { sizeBytes: Number(out.ContentLength ?? 0) };
      } catch (err) {
        const status = (err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
        if (status === 404 || (err as { name?: string }).name === 'NotFound') return null;
        throw err;
      }
    },
    async delete(key) {
      await client.send(new DeleteObjectCommand({ Bucket: loc.bucket, Key: key }));
    },
    async seal(key, toKey) {
      // Server-side: the bytes never leave the S3 server. CopySource is `bucket/key`, URL-encoded.
      await client.send(new CopyObjectCommand({ Bucket: loc.bucket, Key: toKey, CopySource: encodeURI(`${loc.bucket}/${key}`) }));
      return toKey;
    },
  };
}
