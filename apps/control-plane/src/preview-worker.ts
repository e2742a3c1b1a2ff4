import { Piscina } from 'piscina';
import { renderTemplatePreview } from './preview.ts';
import { lowerThisThreadPriority } from './worker-threads.ts';

// Background work, below the main thread's priority (worker-threads.ts).
lowerThisThreadPriority();

export interface PreviewTask {
  template: unknown;
  text: string;
  width: number;
  height: number;
  at: number;
  /** Checked uploaded fonts on local disk (FontsService.files). */
  fonts?: { id: string; sha256: string; weight: number; path: string }[];
}

/** Runs in a preview worker thread: one PNG frame, its bytes moved (not copied) to the main thread. */
export default async function renderPreviewTask(task: PreviewTask): Promise<unknown> {
  const png = await renderTemplatePreview(task);
  return Piscina.move(png.buffer.slice(png.byteOffset, png.byteOffset + png.byteLength) as ArrayBuffer);
}
