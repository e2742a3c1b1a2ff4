// Entry of the transcript worker thread (see preview-worker-entry.mjs for why it is plain JS).
import { tsImport } from 'tsx/esm/api';

const mod = await tsImport('./transcript-worker.ts', import.meta.url);
export default mod.default;
