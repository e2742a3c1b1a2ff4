// One real control-plane process for the multi-control-plane tests: the environment configures
// it (CAPTIONFARM_DATA_DIR, CAPTIONFARM_DATABASE_URL, PORT...); it prints `listening <url>` on
// stdout once it serves, and stops on SIGTERM. Names resolve as in the in-process harness.
import { createControlPlane, loadConfig } from '../src/index.ts';
import { testLookup } from './harness.ts';

const cp = await createControlPlane(loadConfig(process.env), { lookup: testLookup });
const url = await cp.listen();
process.stdout.write(`listening ${url}\n`);
process.once('SIGTERM', () => {
  void cp.close().then(() => process.exit(0));
});
