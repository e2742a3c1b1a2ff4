/** The object store as the control plane sees it: the built-in one or any S3-compatible endpoint. */
export interface ObjectStore {
  /** A presigned PUT that accepts exactly `contentLength` bytes (content-length is signed). */
  presignPut(opts: { key: string; contentLength: number; contentType: string; expiresInSeconds: number }): Promise<string>;
  /** A presigned GET. */
  presignGet(opts: { key: string; expiresInSeconds: number; downloadName?: string }): Promise<string>;
  /** Size of a stored object, or null when there is none. */
  head(key: string): Promise<{ sizeBytes: number } | null>;
  /** Deletes an object; deleting a missing one is not an error. */
  delete(key: string): Promise<void>;
  /**
   * Puts the object at `key` out of reach of the presigned PUT URLs that name it, and returns the
   * key to read it from from now on. A presigned URL cannot be revoked on S3, so the S3 store
   * copies the object server-side (CopyObject) to `toKey`, which no URL names; the caller deletes
   * `key` once it no longer needs it. The built-in store refuses those PUTs itself (`beforePut`),
   * so it returns `key` and copies nothing.
   */
  seal(key: string, toKey: string): Promise<string>;
}

export interface S3Location {
  /** Base URL of the S3 endpoint, e.g. http://127.0.0.1:8080/s3 or https://s3.eu-west-1.amazonaws.com */
  endpoint: string;
  region: string;
  bucket: string;
  accessKeyId: string;
  secretAccessKey: string;
}
