// The job page's renditions and poster (issue 43), from GET .../outputs: each rendition with its
// size, format, reframe, a player and a download link, and the poster image. Asked for only once
// the job has succeeded (before, there is nothing to show); a job with one rendition and no poster
// shows nothing more than its Output card.
import type { JobOutput, JobOutputs } from '@captionfarm/contracts';
import { useQuery } from '@tanstack/react-query';
import { api, type JobRecord } from '../api.ts';
import { bytes } from '../format.ts';
import { Card, ErrorState } from '../ui.tsx';

const REFRAMED: Record<JobOutput['reframe'], string> = { center: 'centre crop', subject: 'follows the speaker' };
const SAFE_AREA: Record<JobOutputs['safeArea'], string> = { none: 'none', tiktok: 'TikTok', reels: 'Instagram Reels', shorts: 'YouTube Shorts' };
const SUBTITLES: Record<JobOutputs['subtitles'], string> = { burn: 'burned in', track: 'a subtitle track', both: 'burned in and a subtitle track' };

function size(o: JobOutput): string {
  const r = o.resolution ?? o.requestedResolution;
  return r ? `${r.width}×${r.height}` : 'as the source';
}

export function OutputsPanel({ job }: { job: JobRecord }) {
  const q = useQuery({
    queryKey: ['outputs', job.id],
    // The links are presigned: a fresh set when the page is opened again, not on every focus.
    staleTime: 5 * 60_000,
    queryFn: () => api<JobOutputs>('GET', `/v1/automation-jobs/${job.id}/outputs`),
  });
  // Nothing while it loads: most jobs have one rendition, and their Output card already shows it.
  if (q.isPending) return null;
  if (q.isError)
    return (
      <Card title="Renditions" className="span-3">
        <ErrorState error={q.error} retry={() => void q.refetch()} />
      </Card>
    );
  const o = q.data;
  if (o.outputs.length === 1 && !o.poster) return null;
  return (
    <Card title="Renditions" className="span-3">
      <p className="muted small" data-testid="framing-summary">
        {o.outputs.length} {o.outputs.length === 1 ? 'rendition' : 'renditions'}; safe area {SAFE_AREA[o.safeArea]}; captions{' '}
        {o.placement === 'auto' ? 'kept off faces' : 'where the template puts them'}, {SUBTITLES[o.subtitles]}.
      </p>
      <div className="renditions-grid">
        {o.outputs.map((out) => (
          <Rendition key={out.index} output={out} />
        ))}
        {o.poster && (
          <figure className="rendition" data-testid="poster">
            <img src={o.poster.downloadUrl} alt={`Poster: the frame at ${o.poster.at.toFixed(2)} s`} width={o.poster.width} height={o.poster.height} />
            <figcaption>
              <strong>Poster</strong> · {o.poster.width}×{o.poster.height} JPEG · at {o.poster.at.toFixed(2)} s · {bytes(o.poster.sizeBytes)}
              <div className="actions">
                <a className="btn small" href={o.poster.downloadUrl} download>
                  Download poster
                </a>
              </div>
            </figcaption>
          </figure>
        )}
      </div>
    </Card>
  );
}

function Rendition({ output: out }: { output: JobOutput }) {
  const label = `${size(out)} ${out.format.toUpperCase()}`;
  return (
    <figure className="rendition" data-testid="rendition-output">
      {out.downloadUrl ? (
        // biome-ignore lint/a11y/useMediaCaption: the captions are in the pixels (or in the file's own subtitle track)
        <video controls preload="metadata" src={out.downloadUrl} aria-label={`Rendition ${out.index + 1}, ${label}`} />
      ) : (
        <span className="muted small">Not available</span>
      )}
      <figcaption>
        <strong>{out.index === 0 ? `${out.index + 1} · the job's` : out.index + 1}</strong> · {size(out)} · {out.format.toUpperCase()} · {REFRAMED[out.reframe]}
        {out.sizeBytes !== null && ` · ${bytes(out.sizeBytes)}`}
        {out.downloadUrl && (
          <div className="actions">
            <a className="btn small" href={out.downloadUrl} download>
              Download {label}
            </a>
          </div>
        )}
      </figcaption>
    </figure>
  );
}
