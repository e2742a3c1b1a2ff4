import { useEffect, useId, useState, type ReactNode } from 'react';
import type { JobStatus } from './api.ts';
import { ApiFailure } from './api.ts';

export function PageHeader(props: { title: string; subtitle?: ReactNode; actions?: ReactNode }) {
  useEffect(() => {
    document.title = `${props.title} · Captionfarm`;
  }, [props.title]);
  return (
    <header className="page-header">
      <div>
        <h1>{props.title}</h1>
        {props.subtitle && <p className="muted">{props.subtitle}</p>}
      </div>
      {props.actions && <div className="actions">{props.actions}</div>}
    </header>
  );
}

export function Card(props: { title?: ReactNode; children: ReactNode; actions?: ReactNode; className?: string }) {
  return (
    <section className={`card ${props.className ?? ''}`}>
      {(props.title || props.actions) && (
        <div className="card-head">
          {props.title && <h2>{props.title}</h2>}
          {props.actions}
        </div>
      )}
      {props.children}
    </section>
  );
}

export function Loading(props: { label?: string }) {
  return (
    <div className="state" role="status" aria-live="polite">
      <span className="spinner" aria-hidden="true" />
      {props.label ?? 'Loading…'}
    </div>
  );
}

export function ErrorState(props: { error: unknown; retry?: () => void }) {
  const message = props.error instanceof Error ? props.error.message : 'Something went wrong.';
  return (
    <div className="state error" role="alert">
      <strong>Could not load this.</strong> {message}
      {props.retry && (
        <button type="button" className="btn small" onClick={props.retry}>
          Retry
        </button>
      )}
    </div>
  );
}

export function Empty(props: { title: string; children?: ReactNode }) {
  return (
    <div className="empty">
      <strong>{props.title}</strong>
      {props.children && <div className="muted">{props.children}</div>}
    </div>
  );
}

export function FormError(props: { error: unknown }) {
  if (!props.error) return null;
  const message = props.error instanceof Error ? props.error.message : 'Something went wrong.';
  return (
    <p className="form-error" role="alert">
      {message}
    </p>
  );
}

/** A labelled input; `error` is the API's message for this field. */
export function Field(props: {
  label: string;
  hint?: ReactNode;
  error?: string | undefined;
  children: (id: string, describedBy: string | undefined) => ReactNode;
}) {
  const id = useId();
  const hintId = `${id}-hint`;
  const errId = `${id}-err`;
  const describedBy = [props.hint ? hintId : '', props.error ? errId : ''].filter(Boolean).join(' ') || undefined;
  return (
    <div className={`field ${props.error ? 'invalid' : ''}`}>
      <label htmlFor={id}>{props.label}</label>
      {props.children(id, describedBy)}
      {props.hint && (
        <small id={hintId} className="muted">
          {props.hint}
        </small>
      )}
      {props.error && (
        <small id={errId} className="field-error">
          {props.error}
        </small>
      )}
    </div>
  );
}

export function fieldError(err: unknown, path: string): string | undefined {
  return err instanceof ApiFailure ? err.field(path) : undefined;
}

export function CopyButton(props: { value: string; label?: string }) {
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle');
  return (
    <button
      type="button"
      className="btn small"
      onClick={() => {
        navigator.clipboard
          .writeText(props.value)
          .then(() => setState('copied'))
          .catch(() => setState('failed'));
      }}
    >
      {state === 'copied' ? 'Copied' : state === 'failed' ? 'Select and copy' : (props.label ?? 'Copy')}
    </button>
  );
}

const STATUS_LABEL: Record<JobStatus, string> = { queued: 'Queued', running: 'Running', succeeded: 'Succeeded', failed: 'Failed', cancelled: 'Cancelled' };

export function StatusBadge(props: { status: JobStatus; phase?: string; percent?: number | null }) {
  const detail = props.status === 'running' && props.phase ? ` · ${props.phase}${props.percent != null ? ` ${props.percent}%` : ''}` : '';
  return (
    <span className={`badge ${props.status}`} data-status={props.status}>
      {STATUS_LABEL[props.status]}
      {detail}
    </span>
  );
}

export function Progress(props: { value: number; label: string }) {
  return (
    <div className="progress">
      <progress max={100} value={Math.round(props.value)} aria-label={props.label} />
      <span>{Math.round(props.value)}%</span>
    </div>
  );
}
