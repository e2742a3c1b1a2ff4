import { useRef, useState } from 'react';
import type { FontRecord, FontUploadRecord } from '@captionfarm/contracts';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { api, ApiFailure, putWithProgress } from './api.ts';

/** The account's uploaded fonts (GET /v1/fonts). */
function useFonts() {
  return useQuery({ queryKey: ['fonts'], queryFn: () => api<{ fonts: FontRecord[] }>('GET', '/v1/fonts') });
}

/** The three steps of a font upload: create, PUT to the store, complete (the service checks the file there). */
async function uploadFont(file: File): Promise<FontRecord> {
  const up = await api<FontUploadRecord>('POST', '/v1/fonts', { fileName: file.name, sizeBytes: file.size });
  await putWithProgress(up.uploadUrl, file, () => {});
  return api<FontRecord>('POST', `/v1/fonts/${up.fontId}/complete`);
}

const label = (f: FontRecord) => `${f.family ?? f.fileName}${f.subfamily && f.subfamily !== 'Regular' ? ` ${f.subfamily}` : ''}`;

/**
 * Picks one of the account's uploaded fonts (or none: the template's own family) and uploads new
 * ones (TTF, OTF, WOFF2). A refused file shows the service's reason.
 */
export function FontPicker(props: { id: string; describedBy?: string | undefined; value: string | null; onChange: (fontId: string | null) => void }) {
  const qc = useQueryClient();
  const fonts = useFonts();
  const input = useRef<HTMLInputElement>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const ready = (fonts.data?.fonts ?? []).filter((f) => f.status === 'ready');

  const onFile = async (file: File | undefined) => {
    if (!file) return;
    setBusy(true);
    setError(null);
    try {
      const font = await uploadFont(file);
      await qc.invalidateQueries({ queryKey: ['fonts'] });
      props.onChange(font.id);
    } catch (err) {
      setError(err instanceof ApiFailure || err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
      if (input.current) input.current.value = '';
    }
  };

  return (
    <div className="font-picker">
      <select id={props.id} aria-describedby={props.describedBy} value={props.value ?? ''} onChange={(e) => props.onChange(e.target.value || null)}>
        <option value="">The template's font</option>
        {ready.map((f) => (
          <option key={f.id} value={f.id}>
            {label(f)}
          </option>
        ))}
      </select>
      <input
        ref={input}
        className="sr-only"
        type="file"
        accept=".ttf,.otf,.woff2"
        aria-label="Font file"
        data-testid="font-file"
        onChange={(e) => void onFile(e.target.files?.[0])}
      />
      <button type="button" className="btn" disabled={busy} onClick={() => input.current?.click()}>
        {busy ? 'Checking the font…' : 'Upload a font'}
      </button>
      {error && (
        <small className="field-error" role="alert">
          {error}
        </small>
      )}
    </div>
  );
}

/** "a, b c, d" -> ['a', 'b c', 'd']. */
export function parseKeywords(text: string): string[] {
  return text
    .split(',')
    .map((k) => k.trim())
    .filter(Boolean);
}
