// One control-plane process of the fault farm (fault-farm.ts): configured by the environment
// (CAPTIONFARM_DATA_DIR, CAPTIONFARM_DATABASE_URL, PORT...), webhooks to the test CA's HTTPS
// receiver on loopback allowed (FAULT_FARM_CA_FILE: a test-only setting no deployment can make).
// Prints `listening <url>` once it serves.
import { readFileSync } from 'node:fs';
import { createControlPlane, loadConfig } from '../../apps/control-plane/src/index.ts';
import { testLookup } from '../../apps/control-plane/test/harness.ts';

const ca = readFileSync(process.env.FAULT_FARM_CA_FILE ?? '', 'utf8');
const cp = await createControlPlane({ ...loadConfig(process.env), unsafeTestNetwork: { allowLoopback: true, ca } }, { lookup: testLookup });
const url = await cp.listen();
process.stdout.write(`listening ${url}\n`);
process.once('SIGTERM', () => {
  void cp.close().then(() => process.exit(0));
});
