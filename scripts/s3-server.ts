/**
 * A throwaway S3 server on loopback for trying the S3 path (and "Scaling out") on one machine:
 * MinIO from scripts/build-minio's cache, a port it picks on 127.0.0.1, a temp data dir and
 * credentials made for this run, and an empty bucket `captionfarm`. The same start the test suites
 * use (@captionfarm/storage/testing). Prints the control plane's environment on stdout; Ctrl-C
 * stops the server and deletes its data.
 *
 *   npx tsx scripts/s3-server.ts        # then, in another shell, paste the exports and `npm start`
 */
import { startTestS3Server, testS3ServerBinary } from '@captionfarm/storage/testing';

if (!testS3ServerBinary()) {
  console.error('s3-server: no MinIO binary; build it with `bash scripts/build-minio` (or set CAPTIONFARM_MINIO_BIN)');
  process.exit(1);
}
const s3 = await startTestS3Server();
for (const [k, v] of Object.entries(s3.env)) console.log(`export ${k}=${v}`);
console.error(`s3-server: MinIO at ${s3.endpoint}, bucket ${s3.bucket}; Ctrl-C stops it and deletes its data`);
const stop = async () => {
  await s3.close();
  process.exit(0);
};
process.once('SIGINT', () => void stop());
process.once('SIGTERM', () => void stop());
