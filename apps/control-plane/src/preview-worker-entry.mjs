// Entry of the preview worker threads. Plain JS: a worker starts without the TypeScript loader of
// its parent when that parent is not `tsx` (vitest, plain node), so it loads the TypeScript
// module through tsx's API (a loader scoped to this import; under `tsx` it works the same way).
import { tsImport } from 'tsx/esm/api';

const mod = await tsImport('./preview-worker.ts', import.meta.url);
export default mod.default;
