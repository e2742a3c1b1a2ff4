import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { Piscina } from 'piscina';
import { renderTemplatePreview } from './preview.ts';

// Previews are background work: on Linux a thread has its own nice value, so this worker thread
// yields the CPU to the main thread (API requests, the agents' control messages) when cores are
// scarce. /proc/thread-self names this thread's id; elsewhere this is skipped.
try {
  const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
  if (Number.isInteger(tid) && tid > 0) setPriority(tid, 10);
} catch {
  /* not Linux, or not permitted: run at normal priority */
}

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
