export type { ObjectStore, S3Location } from './types.ts';
export { createS3Store, createS3Client } from './s3-store.ts';
export { createBuiltinStore, type BuiltinStore, type BuiltinStoreOptions } from './builtin-store.ts';
export { verifyPresignedRequest, type PresignCheck } from './sigv4-verify.ts';
export { removeStalePartFiles } from './part-files.ts';
