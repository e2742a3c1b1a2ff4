import { readdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';

/** The temp name of a PUT in progress: `<object>.part-<random hex>` (older versions: `.part-<pid>-<ms>`). */
const PART_FILE = /\.part-[0-9a-f-]+$/;

/**
 * Removes the part files a PUT left behind when the process died mid-upload (a finished or
 * failed PUT removes its own): all of them at start-up (`olderThanMs` 0: no PUT of this process
 * is in flight yet), those untouched for `olderThanMs` on each sweep (a live PUT writes all the
 * time; a stalled one is cut by the store's idle timeout long before). Returns how many went.
 */
export async function removeStalePartFiles(dir: string, olderThanMs: number, now = Date.now()): Promise<number> {
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true, recursive: true });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 0;
    throw err;
  }
  let removed = 0;
  for (const e of entries) {
    if (!e.isFile() || !PART_FILE.test(e.name)) continue;
    const file = path.join(e.parentPath, e.name);
    if (olderThanMs > 0) {
      const st = await stat(file).catch(() => null);
      if (!st || now - st.mtimeMs < olderThanMs) continue;
    }
    await rm(file, { force: true });
    removed++;
  }
  return removed;
}
