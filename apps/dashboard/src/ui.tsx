import { useEffect, useId, useState, type ReactNode } from 'react';
import type { UseQueryResult } from '@tanstack/react-query';
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

/**
 * A query's rows: a spinner while loading, the error (with a retry button when `retry`), `empty`
 * when there are no rows, else `children(rows)`.
 */
export function QueryRows<D, T>(props: {
  query: UseQueryResult<D>;
  rows: (data: D) => T[];
  empty: ReactNode;
  retry?: boolean;
  children: (rows: T[]) => ReactNode;
}) {
  const q = props.query;
  if (q.isPending) return <Loading />;
  if (q.isError) return <ErrorState error={q.error} retry={props.retry ? () => void q.refetch() : undefined} />;
  const rows = props.rows(q.data);
  return rows.length === 0 ? props.empty : props.children(rows);
}

/** A scrollable table with column headers; `actions` adds a last column for row buttons (its header read by screen readers only). */
export function Table(props: { columns: string[]; actions?: boolean; className?: string; children: ReactNode }) {
  return (
    <div className="table-wrap">
      <table className={props.className}>
        <thead>
          <tr>
            {props.columns.map((c) => (
              <th key={c} scope="col">
                {c}
              </th>
            ))}
            {props.actions && (
              <th scope="col">
                <span className="sr-only">Actions</span>
              </th>
            )}
          </tr>
        </thead>
        <tbody>{props.children}</tbody>
      </table>
    </div>
  );
}

/** A button that asks `confirm` (the browser's dialog) before it acts. */
export function ConfirmButton(props: { confirm: string; onConfirm: () => void; className: string; disabled?: boolean; children: ReactNode }) {
  return (
    <button
      type="button"
      className={props.className}
      disabled={props.disabled}
      onClick={() => {
        if (window.confirm(props.confirm)) props.onConfirm();
      }}
    >
      {props.children}
    </button>
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

/** A select of fixed choices in a labelled Field; `onChange` gets the chosen option's value. */
export function SelectField(props: { label: string; value: string | number; options: readonly (string | number)[]; onChange: (value: string) => void }) {
  return (
    <Field label={props.label}>
      {(id) => (
        <select id={id} value={props.value} onChange={(e) => props.onChange(e.target.value)}>
          {props.options.map((o) => (
            <option key={o} value={o}>
              {o}
            </option>
          ))}
        </select>
      )}
    </Field>
  );
}

/** A select of described choices, [value, option label, hint under the select]: the chosen option's hint shows under it. */
export function Choice(props: {
  label: string;
  value: string;
  options: readonly (readonly [string, string, string])[];
  disabled?: boolean;
  /** Replaces the chosen option's own hint. */
  hint?: string | undefined;
  error?: string | undefined;
  onChange: (v: string) => void;
}) {
  return (
    <Field label={props.label} hint={props.hint ?? props.options.find(([v]) => v === props.value)?.[2]} error={props.error}>
      {(id, d) => (
        <select id={id} aria-describedby={d} value={props.value} disabled={props.disabled} onChange={(e) => props.onChange(e.target.value)}>
          {props.options.map(([v, text]) => (
            <option key={v} value={v}>
              {text}
            </option>
          ))}
        </select>
      )}
    </Field>
  );
}

/** A number box (or a slider with `type="range"`) in a labelled Field. */
export function NumberField(props: {
  label: string;
  error?: string | undefined;
  type?: 'number' | 'range';
  min: number;
  max: number;
  step?: number;
  value: number;
  onChange: (value: number) => void;
}) {
  return (
    <Field label={props.label} error={props.error}>
      {(id, d) => (
        <input
          id={id}
          aria-describedby={d}
          type={props.type ?? 'number'}
          min={props.min}
          max={props.max}
          step={props.step}
          value={props.value}
          onChange={(e) => props.onChange(Number(e.target.value))}
        />
      )}
    </Field>
  );
}

/** A colour picker in a labelled Field: shows #RRGGBB of `value` (any alpha dropped), gives upper-case #RRGGBB. */
export function ColorField(props: { label: string; error?: string | undefined; value: string; onChange: (value: string) => void }) {
  return (
    <Field label={props.label} error={props.error}>
      {(id, d) => (
        <input id={id} aria-describedby={d} type="color" value={props.value.slice(0, 7)} onChange={(e) => props.onChange(e.target.value.toUpperCase())} />
      )}
    </Field>
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
