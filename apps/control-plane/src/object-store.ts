import type { IncomingMessage, ServerResponse } from 'node:http';
import path from 'node:path';
import { createBuiltinStore, createS3Store, removeStalePartFiles, type BuiltinStore, type ObjectStore } from '@captionfarm/storage';
import type { ControlPlaneConfig } from './config.ts';
import type { Secrets } from './secrets.ts';

export interface ControlPlaneStoreDeps {
  config: Readonly<ControlPlaneConfig>;
  secrets: Secrets;
  now: () => Date;
  /** The URL clients reach this control plane at (known once it listens). */
  baseUrl: () => string;
  /** Asked before a PUT to the built-in store: a string refuses it (an upload a job already claimed). */
  beforePut: (key: string) => Promise<string | null>;
}

export interface ControlPlaneStore {
  /** What the services use: the external S3 store, or the built-in one. */
  readonly store: ObjectStore;
  /** Serves a request to the built-in store (`/s3`); false (nothing done) for any other, and always with an external store. */
  handle(req: IncomingMessage, res: ServerResponse): boolean;
  /** Removes the part files of PUTs a killed process left behind (at start, before any PUT of this process). */
  removeKilledParts(): Promise<void>;
  /** Removes part files nobody wrote to for an hour (a sweeper). */
  sweepIdleParts(): Promise<void>;
}

/** A part file nobody wrote to for this long is debris (the store cuts a stalled PUT long before). */
const PART_FILE_MAX_IDLE_MS = 60 * 60_000;

/**
 * The object store: S3 when configured, else the built-in store under `<dataDir>/objects`, served
 * at `/s3` by the control plane's HTTP server. The built-in store presigns against the URL we
 * listen on, known only after listen(), so it is built at its first use.
 */
export function createControlPlaneStore(d: ControlPlaneStoreDeps): ControlPlaneStore {
  const { config, secrets, now } = d;
  const objectsDir = path.join(config.dataDir, 'objects');
  let builtin: BuiltinStore | undefined;
  const getBuiltin = () => {
    if (!builtin) {
      const baseUrl = d.baseUrl();
      if (!baseUrl) throw new Error('the control plane is not listening yet');
      builtin = createBuiltinStore({
        dir: objectsDir,
        publicUrl: baseUrl,
        bucket: config.bucket,
        accessKeyId: secrets.storeAccessKeyId,
        secretAccessKey: secrets.storeSecretAccessKey,
        now,
        limits: {
          maxConnectionsPerIp: config.storeMaxConnectionsPerIp,
          maxPutsPerObject: config.storeMaxPutsPerObject,
          putIdleMs: config.uploadIdleSeconds * 1000,
        },
        beforePut: d.beforePut,
      });
    }
    return builtin;
  };
  if (config.s3.kind === 'external') {
    const done = async () => {};
    return { store: createS3Store(config.s3), handle: () => false, removeKilledParts: done, sweepIdleParts: done };
  }
  return {
    store: {
      presignPut: (o) => getBuiltin().presignPut(o),
      presignGet: (o) => getBuiltin().presignGet(o),
      head: (k) => getBuiltin().head(k),
      delete: (k) => getBuiltin().delete(k),
      seal: (k, to) => getBuiltin().seal(k, to),
    },
    handle(req, res) {
      if (req.url !== '/s3' && !req.url?.startsWith('/s3/')) return false;
      getBuiltin().handle(req, res);
      return true;
    },
    removeKilledParts: async () => {
      await removeStalePartFiles(objectsDir, 0);
    },
    sweepIdleParts: async () => {
      await removeStalePartFiles(objectsDir, PART_FILE_MAX_IDLE_MS);
    },
  };
}
