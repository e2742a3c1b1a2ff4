import { Router, type Request, type Response } from 'express';
import { ApiError, issuesToDetails, StyleOverrideSchema } from '@captionfarm/contracts';
import { z } from 'zod';
import type { PreviewPool } from '../preview-pool.ts';
import { callerOf, countInTransactionOf } from '../http/middleware.ts';
import type { JobsService } from '../jobs/service.ts';
import type { TranscriptWork } from '../transcript-work.ts';
import type { EditsService } from '../services/edits.ts';
import type { OutputsService } from '../services/outputs.ts';
import type { ProfanityWordsService } from '../services/profanity-words.ts';
import type { TranscriptsService } from '../services/transcripts.ts';
import type { TemplatesService } from '../services/templates.ts';
import type { UploadsService } from '../services/uploads.ts';
import { fontIdsOf, type FontsService } from '../services/fonts.ts';

const PreviewRequestSchema = z.strictObject({
  text: z.string().min(1).max(300).default('Your captions will look exactly like this'),
  width: z.number().int().min(64).max(3840).default(1080),
  height: z.number().int().min(64).max(3840).default(1920),
  /** Seconds: which moment of the animation to show. */
  at: z.number().min(0).max(600).default(2),
  /** A per-job style to preview over the template (the same `style` POST /v1/automation-jobs takes). */
  style: StyleOverrideSchema.optional(),
});

/** Aborts when the client goes away before its answer (work queued for it is dropped). */
function goneSignal(res: Response): AbortSignal {
  const gone = new AbortController();
  res.once('close', () => {
    if (!res.writableFinished) gone.abort(new ApiError('invalid_request', 'The request was aborted.'));
  });
  return gone.signal;
}

/** A small raw JSON body parsed here, as express.json would. */
function parseInline(bytes: Buffer): unknown {
  const text = bytes.toString('utf8');
  try {
    return JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
  } catch {
    throw new ApiError('invalid_request', 'The request body is not valid JSON.');
  }
}

function noBody(req: Request): void {
  if (req.body !== undefined && req.body !== null && !(typeof req.body === 'object' && Object.keys(req.body as object).length === 0)) {
    throw new ApiError('invalid_request', 'This endpoint takes no request body.');
  }
}

export interface PublicRoutesDeps {
  jobs: JobsService;
  uploads: UploadsService;
  templates: TemplatesService;
  fonts: FontsService;
  previews: PreviewPool;
  transcripts: TranscriptsService;
  edits: EditsService;
  /** GET .../outputs: every rendition and the poster (issue 43). */
  outputs: OutputsService;
  profanityWords: ProfanityWordsService;
  /** Where create bodies larger than `inlineJobBytes` are parsed and validated. */
  transcriptWork: Pick<TranscriptWork, 'jobBody'>;
  /** Create bodies up to this size are parsed on the event loop (config.maxJsonBytes: 64 KiB by default). */
  inlineJobBytes: number;
  /** Extra routes mounted by later parts (webhook deliveries, template previews). */
  extend?: (router: Router) => void;
}

/** The spec's five endpoints, plus templates, fonts, a job's style, transcript, edit and outputs, the account's profane words. Auth, rate limit and body parsing run before. */
export function publicRoutes(deps: PublicRoutesDeps): Router {
  const r = Router();
  r.post('/automation-jobs/uploads', async (req, res) => {
    res.status(201).json(await deps.uploads.create(callerOf(res), req.body));
  });
  r.post('/automation-jobs', async (req, res) => {
    // The body arrives as bytes (server.ts: a raw route): a large one, a transcript, is parsed and
    // validated on the transcript worker, so it blocks no other request.
    const caller = callerOf(res);
    const body: unknown = req.body;
    const job =
      Buffer.isBuffer(body) && body.length > deps.inlineJobBytes
        ? await deps.jobs.createPrepared(caller, await deps.transcriptWork.jobBody(caller.accountId, body, goneSignal(res)), countInTransactionOf(res))
        : await deps.jobs.create(caller, Buffer.isBuffer(body) ? parseInline(body) : body, countInTransactionOf(res));
    res.locals.jobId = job.id; // for the request's log line
    res.status(202).json(job);
  });
  r.get('/automation-jobs', async (req, res) => {
    res.status(200).json(await deps.jobs.list(callerOf(res), req.query));
  });
  r.get('/automation-jobs/:id', async (req, res) => {
    res.status(200).json(await deps.jobs.get(callerOf(res), String(req.params.id)));
  });
  r.get('/automation-jobs/:id/style', async (req, res) => {
    res.status(200).json(await deps.jobs.style(callerOf(res), String(req.params.id)));
  });
  r.get('/automation-jobs/:id/transcript', async (req, res) => {
    const out = await deps.transcripts.get(callerOf(res), String(req.params.id), req.query, goneSignal(res));
    if (out.kind === 'json') {
      if (Buffer.isBuffer(out.body)) res.status(200).type('application/json; charset=utf-8').send(out.body);
      else res.status(200).json(out.body);
      return;
    }
    res.status(200).type(out.contentType).setHeader('Content-Disposition', `inline; filename="${out.fileName}"`).send(out.body);
  });
  r.get('/automation-jobs/:id/edit', async (req, res) => {
    res.status(200).json(await deps.edits.get(callerOf(res), String(req.params.id)));
  });
  r.get('/automation-jobs/:id/outputs', async (req, res) => {
    res.status(200).json(await deps.outputs.get(callerOf(res), String(req.params.id)));
  });
  r.post('/automation-jobs/:id/cancel', async (req, res) => {
    noBody(req);
    res.status(200).json(await deps.jobs.cancel(callerOf(res), String(req.params.id)));
  });

  r.get('/profanity-words', async (_req, res) => {
    res.status(200).json(await deps.profanityWords.get(callerOf(res).accountId));
  });
  r.put('/profanity-words', async (req, res) => {
    res.status(200).json(await deps.profanityWords.put(callerOf(res).accountId, req.body));
  });

  r.get('/templates', async (_req, res) => {
    res.json({ templates: await deps.templates.list(callerOf(res).accountId) });
  });
  r.post('/templates', async (req, res) => {
    res.status(201).json(await deps.templates.create(callerOf(res).accountId, req.body));
  });
  r.get('/templates/:id', async (req, res) => {
    res.json(await deps.templates.get(callerOf(res).accountId, String(req.params.id)));
  });
  r.delete('/templates/:id', async (req, res) => {
    await deps.templates.remove(callerOf(res).accountId, String(req.params.id));
    res.status(204).end();
  });
  r.post('/templates/:id/preview', async (req, res) => {
    const parsed = PreviewRequestSchema.safeParse(req.body ?? {});
    if (!parsed.success) throw new ApiError('invalid_request', 'Invalid preview request: see details.', { details: issuesToDetails(parsed.error.issues) });
    const caller = callerOf(res);
    const { style, ...opts } = parsed.data;
    let { template } = await deps.templates.get(caller.accountId, String(req.params.id));
    if (style) {
      const styled = deps.templates.catalog.applyStyle(template, style);
      if (!styled.ok) {
        throw new ApiError('invalid_request', 'style is not valid: see details.', {
          details: issuesToDetails(styled.issues).map((d) => ({ ...d, path: d.path ? `style.${d.path}` : 'style' })),
        });
      }
      template = styled.template;
    }
    const fontIds = fontIdsOf(template);
    await deps.fonts.requireReady(caller.accountId, fontIds, style ? 'style.font.fontId' : 'font.fontId');
    const fonts = await deps.fonts.files(caller.accountId, fontIds);
    // A client that goes away stops its render (its worker turn goes to someone else).
    const gone = new AbortController();
    res.once('close', () => {
      if (!res.writableFinished) gone.abort();
    });
    const png = await deps.previews.render(caller, { template, ...opts, fonts }, gone.signal);
    res.status(200).type('image/png').send(png);
  });
  r.post('/fonts', async (req, res) => {
    res.status(201).json(await deps.fonts.create(callerOf(res), req.body));
  });
  r.get('/fonts', async (_req, res) => {
    res.json({ fonts: await deps.fonts.list(callerOf(res)) });
  });
  r.get('/fonts/:id', async (req, res) => {
    res.json(await deps.fonts.get(callerOf(res), String(req.params.id)));
  });
  r.post('/fonts/:id/complete', async (req, res) => {
    noBody(req);
    res.status(200).json(await deps.fonts.complete(callerOf(res), String(req.params.id)));
  });
  r.delete('/fonts/:id', async (req, res) => {
    await deps.fonts.remove(callerOf(res), String(req.params.id));
    res.status(204).end();
  });
  deps.extend?.(r);
  return r;
}
