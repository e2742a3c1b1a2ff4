import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runToEnd } from '@captionfarm/process';

export interface TestCertificates {
  /** PEM of the test CA: pass as `ca` to createSafeFetch. */
  ca: string;
  key: string;
  cert: string;
  dir: string;
  cleanup(): void;
}

export const TEST_HOSTNAME = 'receiver.test';

/**
 * A throwaway CA and a server certificate for receiver.test, localhost, 127.0.0.1 and ::1,
 * made with openssl (args as arrays, no shell) in a fresh temp dir.
 */
export async function createTestCertificates(): Promise<TestCertificates> {
  const dir = mkdtempSync(join(tmpdir(), 'cf-webhooks-tls-'));
  const p = (name: string): string => join(dir, name);
  const openssl = (args: string[]) => runToEnd('openssl', { args, stdout: 'ignore' });
  await openssl([
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    p('ca.key'),
    '-out',
    p('ca.pem'),
    '-days',
    '2',
    '-subj',
    '/CN=Captionfarm Test CA',
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  ]);
  await openssl(['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', p('server.key'), '-out', p('server.csr'), '-subj', `/CN=${TEST_HOSTNAME}`]);
  writeFileSync(
    p('server.ext'),
    [
      'basicConstraints=CA:FALSE',
      'keyUsage=critical,digitalSignature,keyEncipherment',
      'extendedKeyUsage=serverAuth',
      `subjectAltName=DNS:${TEST_HOSTNAME},DNS:localhost,IP:127.0.0.1,IP:::1`,
      '',
    ].join('\n'),
  );
  await openssl([
    'x509',
    '-req',
    '-in',
    p('server.csr'),
    '-CA',
    p('ca.pem'),
    '-CAkey',
    p('ca.key'),
    '-CAcreateserial',
    '-out',
    p('server.pem'),
    '-days',
    '2',
    '-extfile',
    p('server.ext'),
  ]);
  return {
    ca: readFileSync(p('ca.pem'), 'utf8'),
    key: readFileSync(p('server.key'), 'utf8'),
    cert: readFileSync(p('server.pem'), 'utf8'),
    dir,
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}
