import type { JobOutputs } from '@captionfarm/sdk';
import { table } from '../output.ts';
import { formatBytes } from './burn.ts';

/**
 * `captionfarm jobs outputs`: the job's modes, one row per rendition (rendered size, or the size
 * asked for until it succeeded), and the poster.
 */
export function outputsText(o: JobOutputs): string {
  const size = (r: { width: number; height: number } | null) => (r ? `${r.width}x${r.height}` : null);
  const rows = o.outputs.map((r) => ({
    index: r.index,
    format: r.format,
    reframe: r.reframe,
    resolution: size(r.resolution) ?? `${size(r.requestedResolution) ?? 'source'} (asked)`,
    size: r.sizeBytes === null ? null : formatBytes(r.sizeBytes),
    expires: r.outputExpiresAt,
    url: r.downloadUrl,
  }));
  const poster = o.poster
    ? `poster at ${o.poster.at.toFixed(2)} s, ${o.poster.width}x${o.poster.height}, ${formatBytes(o.poster.sizeBytes)}, expires ${o.poster.outputExpiresAt}\n${o.poster.downloadUrl}`
    : 'poster: none (not asked for, or not made yet)';
  return [
    `safe area ${o.safeArea}, placement ${o.placement}, subtitles ${o.subtitles}`,
    table(rows, ['index', 'format', 'reframe', 'resolution', 'size', 'expires', 'url']),
    poster,
  ].join('\n');
}
