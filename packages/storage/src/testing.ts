import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import path from 'node:path';
import { CreateBucketCommand } from '@aws-sdk/client-s3';
import { runProcess, runToEnd } from '@captionfarm/process';
import { createS3Client } from './s3-store.ts';
import type { S3Location } from './types.ts';

/**
 * Test support: a real S3-compatible server (MinIO, built by scripts/build-minio into the cache
 * outside the clone) started per test file on loopback, with a temp data dir, credentials made
 * for this run, and one empty bucket. No mock: the server checks SigV4 signatures, expiry and
 * signed Content-Length itself.
 */
export interface TestS3Server extends S3Location {
  /** The control plane's environment for this server (CAPTIONFARM_S3_*). */
  env: Record<string, string>;
  close(): Promise<void>;
}

/**
 * The MinIO binary: CAPTIONFARM_MINIO_BIN, else `${XDG_CACHE_HOME:-$HOME/.cache}/captionfarm/minio/current/minio`
 * (scripts/build-minio's cache, the same root as the whisper build and the models). Undefined when absent.
 */
export function testS3ServerBinary(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const bin =
    env.CAPTIONFARM_MINIO_BIN || path.join(env.XDG_CACHE_HOME || path.join(env.HOME || homedir(), '.cache'), 'captionfarm', 'minio', 'current', 'minio');
  return existsSync(bin) ? bin : undefined;
}

/**
 * Why the S3 suites cannot run here (also printed), or undefined when they can. On CI (CI=true) a missing binary
 * throws instead: scripts/setup builds it there, so its absence is a broken setup, not a skip.
 */
export function testS3ServerMissing(env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (testS3ServerBinary(env)) return undefined;
  const why = 'no MinIO binary (run `bash scripts/build-minio`, or set CAPTIONFARM_MINIO_BIN): the tests against a real S3 server are skipped';
  if (env.CI === 'true' || env.CI === '1') throw new Error(`CI: ${why.replace(' are skipped', ' cannot run')}; scripts/setup --s3 should have built it`);
  // Said out loud: a reporter lists skipped tests by count only.
  console.warn(`S3 suites: ${why}`);
  return why;
}

/**
 * Starts MinIO on 127.0.0.1 (a port it picks), waits until it serves, and creates the bucket.
 * With `container`, the same binary runs in a podman container of that image on the host's network
 * (containers/test/farm.ts: the farm in containers), its data in a bind-mounted temp dir.
 */
export async function startTestS3Server(o: { bucket?: string; region?: string; container?: { image: string; name: string } } = {}): Promise<TestS3Server> {
  const bin = testS3ServerBinary();
  if (!bin) throw new Error(testS3ServerMissing() ?? 'no MinIO binary');
  const dir = await mkdtemp(path.join(tmpdir(), 'cf-s3-'));
  const accessKeyId = `cf${randomBytes(9).toString('hex')}`;
  const secretAccessKey = randomBytes(24).toString('base64url');
  let output = '';
  let onOutput = () => {};
  const seen = (chunk: string) => {
    output += chunk;
    onOutput();
  };
  const minioEnv = {
    MINIO_ROOT_USER: accessKeyId,
    MINIO_ROOT_PASSWORD: secretAccessKey,
    MINIO_BROWSER: 'off',
    MINIO_UPDATE: 'off',
    MINIO_CALLHOME_ENABLE: 'off',
  };
  const c = o.container;
  const [command, args, env] = c
    ? [
        'podman',
        ['run', '--rm', '--name', c.name, '--network', 'host', '-v', `${bin}:/usr/local/bin/minio:ro`, '-v', `${dir}:/s3`]
          .concat(Object.entries({ ...minioEnv, HOME: '/s3' }).flatMap(([k, v]) => ['-e', `${k}=${v}`]))
          .concat([c.image, 'minio', 'server', '/s3/data', '--address', '127.0.0.1:0']),
        process.env,
      ]
    : [bin, ['server', path.join(dir, 'data'), '--address', '127.0.0.1:0'], { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir, ...minioEnv }];
  // Through the one process runner: its setpriv prefix takes MinIO down with a test worker that dies.
  const child = runProcess(command, {
    args,
    env,
    // MinIO's banner (with the API line) is read from both streams, as it may print it on either.
    onStdout: seen,
    onStderr: seen,
  });
  let running = true;
  const exited = child.done.then(
    (r) => r.exitCode,
    () => null,
  );
  void exited.then(() => (running = false));
  const close = async () => {
    if (running) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    }
    // A container outlives its podman client when that is killed.
    if (c) await runToEnd('podman', { args: ['rm', '-f', '--ignore', c.name], stdout: 'ignore' }).catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
  };
  try {
    // MinIO prints "API: http://127.0.0.1:<port>" once it listens (port 0: no race for a free port).
    const endpoint = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`MinIO did not start within 60 s:\n${output}`)), 60_000);
      onOutput = () => {
        const m = /API:\s+(http:\/\/127\.0\.0\.1:\d+)/.exec(output);
        if (m) {
          clearTimeout(timer);
          resolve(m[1]!);
        }
      };
      void exited.then((code) => {
        clearTimeout(timer);
        reject(new Error(`MinIO exited (${code}) before serving:\n${output}`));
      });
    });
    const loc: S3Location = { endpoint, region: o.region ?? 'us-east-1', bucket: o.bucket ?? 'captionfarm', accessKeyId, secretAccessKey };
    await waitUntilReady(endpoint, exited);
    const client = createS3Client(loc);
    try {
      await client.send(new CreateBucketCommand({ Bucket: loc.bucket }));
    } finally {
      client.destroy();
    }
    return {
      ...loc,
      env: {
        CAPTIONFARM_S3_ENDPOINT: loc.endpoint,
        CAPTIONFARM_S3_REGION: loc.region,
        CAPTIONFARM_S3_BUCKET: loc.bucket,
        CAPTIONFARM_S3_ACCESS_KEY_ID: accessKeyId,
        CAPTIONFARM_S3_SECRET_ACCESS_KEY: secretAccessKey,
      },
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}

/** Polls MinIO's unauthenticated readiness probe (it listens before its drives are ready). */
async function waitUntilReady(endpoint: string, exited: Promise<unknown>): Promise<void> {
  let gone = false;
  void exited.then(() => (gone = true));
  const end = Date.now() + 60_000;
  for (;;) {
    if (gone) throw new Error('MinIO exited before it was ready');
    const status = await fetch(`${endpoint}/minio/health/ready`).then(
      (r) => r.status,
      () => 0,
    );
    if (status === 200) return;
    if (Date.now() > end) throw new Error(`MinIO at ${endpoint} not ready within 60 s (last status ${status})`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
