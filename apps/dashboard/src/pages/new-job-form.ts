// The new-job form's state and its submit: the fields as typed, turned into the job's options, the
// upload (straight to the store) and the job's creation. The page (new-job.tsx) lays the fields out.
import type { UploadRecord } from '@captionfarm/contracts';
import { useState, type FormEvent } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import { useLocation, useNavigate } from 'react-router';
import { api, putWithProgress, type JobRecord } from '../api.ts';
import { parseKeywords } from '../fonts.tsx';
import { parseReplacements, parseVocabulary } from '../recognition.ts';
import { readRenderAgain, type RenderAgain } from '../render-again.ts';
import { FRAMING_START, framingOptions, type FramingFields } from '../renditions.ts';

/**
 * The form's fields as the user typed them (numbers and lists still text). The job's format and
 * size are its first rendition's (FramingFields.renditions[0], issue 43).
 */
interface NewJobFields extends FramingFields {
  source: 'file' | 'url';
  file: File | null;
  videoUrl: string;
  templateId: string;
  quality: string;
  language: string;
  webhookUrl: string;
  overlay: boolean;
  fontId: string | null;
  emoji: boolean;
  keywords: string;
  vocabulary: string;
  replacements: string;
  // Issue 42: the edit for shorts.
  silences: string;
  fillers: string;
  zoom: boolean;
  hookText: string;
  hookSeconds: string;
  profanity: string;
  /** A job rendered again: its words go back as the transcript, with its keep-ranges when it has them. */
  from: RenderAgain | null;
}

const START: NewJobFields = {
  source: 'file',
  file: null,
  videoUrl: '',
  templateId: 'karaoke',
  quality: 'high',
  language: '',
  webhookUrl: '',
  overlay: false,
  fontId: null,
  emoji: false,
  keywords: '',
  vocabulary: '',
  replacements: '',
  silences: 'off',
  fillers: 'off',
  zoom: false,
  hookText: '',
  hookSeconds: '3',
  profanity: 'off',
  from: null,
  ...FRAMING_START,
};

/** The form as a job left it (job page: "Render again"): its look and its edit; the video is chosen again. */
function fieldsFrom(from: RenderAgain | null): NewJobFields {
  if (!from) return START;
  return {
    ...START,
    templateId: from.templateId,
    // Its renditions and framing as they were (a page state from before issue 43 has none: its format).
    ...(from.framing ?? { renditions: [{ size: '', width: '', height: '', format: from.format, reframe: '' }] }),
    // A ProRes job was an overlay; the form offers mov only then.
    overlay: from.format === 'mov',
    quality: from.quality,
    silences: from.silences,
    fillers: from.fillers,
    zoom: from.zoom,
    hookText: from.hookTitle?.text ?? '',
    hookSeconds: String(from.hookTitle?.seconds ?? 3),
    profanity: from.profanity,
    from,
  };
}

/** Issue 42's options, each only when it is not the default; a job rendered again sends its words back. */
function editOptions(f: NewJobFields): Record<string, unknown> {
  const options: Record<string, unknown> = {};
  const edit: Record<string, unknown> = {};
  // Keep-ranges give the cut themselves: the API refuses them beside a silence pace or fillers.
  if (f.from?.keep) edit.keep = f.from.keep;
  else {
    if (f.silences !== 'off') edit.silences = f.silences;
    if (f.fillers !== 'off') edit.fillers = f.fillers;
  }
  if (f.zoom) edit.zoom = 'emphasis';
  if (Object.keys(edit).length > 0) options.edit = edit;
  if (f.hookText.trim() !== '') {
    options.hookTitle = f.hookSeconds.trim() === '' ? { text: f.hookText } : { text: f.hookText, seconds: Number(f.hookSeconds) };
  }
  if (f.profanity !== 'off') options.profanity = f.profanity;
  if (f.from) options.transcript = f.from.transcript;
  return options;
}

/** The job's options from the fields: only what the user set. Throws on a replacement line it cannot read. */
function jobOptions(f: NewJobFields): Record<string, unknown> {
  const options: Record<string, unknown> = { templateId: f.templateId, quality: f.quality, ...framingOptions(f, { overlay: f.overlay }) };
  if (f.language) options.language = f.language;
  if (f.webhookUrl) options.webhookUrl = f.webhookUrl;
  if (f.overlay) options.overlay = true;
  // Only what the user set: the rest of the look is the template's.
  const style: Record<string, unknown> = {};
  if (f.fontId) style.font = { fontId: f.fontId };
  if (f.emoji) style.emoji = 'auto';
  const words = parseKeywords(f.keywords);
  if (words.length > 0) style.keywords = words;
  if (Object.keys(style).length > 0) options.style = style;
  // Empty: the template's defaults (a custom template may have them); given, they replace them.
  const terms = parseVocabulary(f.vocabulary);
  const fixes = parseReplacements(f.replacements);
  if (fixes.problems.length > 0) throw new Error(fixes.problems[0]);
  if (terms.values.length > 0) options.vocabulary = terms.values;
  if (fixes.values.length > 0) options.replacements = fixes.values;
  return { ...options, ...editOptions(f) };
}

/** Uploads the file (or takes the URL) and creates the job; `onProgress` gets the upload's percent. */
async function createJob(f: NewJobFields, onProgress: (percent: number) => void): Promise<JobRecord> {
  const options = jobOptions(f);
  if (f.source !== 'file') return api<JobRecord>('POST', '/v1/automation-jobs', { videoUrl: f.videoUrl, ...options });
  const file = f.file;
  if (!file) throw new Error('Choose or drop a video file first.');
  const up = await api<UploadRecord>('POST', '/v1/automation-jobs/uploads', { fileName: file.name, sizeBytes: file.size });
  onProgress(0);
  // Straight to the store's presigned URL: the bytes never pass through the API.
  await putWithProgress(up.uploadUrl, file, (fraction) => onProgress(fraction * 100));
  return api<JobRecord>('POST', '/v1/automation-jobs', { uploadId: up.uploadId, ...options });
}

/** The form's state; `submit` creates the job and opens its page, or keeps the error to show. */
export function useNewJobForm() {
  const navigate = useNavigate();
  const qc = useQueryClient();
  const location = useLocation();
  const [fields, setFields] = useState<NewJobFields>(() => fieldsFrom(readRenderAgain(location.state)));
  const [progress, setProgress] = useState<number | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const set = (patch: Partial<NewJobFields>) => setFields((x) => ({ ...x, ...patch }));
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setError(null);
    setBusy(true);
    try {
      const job = await createJob(fields, setProgress);
      await qc.invalidateQueries({ queryKey: ['jobs'] });
      navigate(`/jobs/${job.id}`);
    } catch (err) {
      setError(err);
      setProgress(null);
    } finally {
      setBusy(false);
    }
  };
  return { fields, set, progress, error, busy, submit };
}

export type NewJobForm = ReturnType<typeof useNewJobForm>;
