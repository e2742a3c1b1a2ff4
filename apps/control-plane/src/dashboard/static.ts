import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import express, { type RequestHandler, type Router } from 'express';
import { ApiError } from '@captionfarm/contracts';
import { createHostAllowlist, HOST_HELP } from '../http/allowed-hosts.ts';

/** Where `vite build` of apps/dashboard writes (scripts/setup builds it). */
const DEFAULT_DASHBOARD_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../dashboard/dist');

/**
 * The pages' Content-Security-Policy: scripts, styles and everything else from this origin only
 * (Vite's build output has no inline script); media and uploads may also reach an external store.
 */
function contentSecurityPolicy(storeOrigin: string | undefined): string {
  const store = storeOrigin ? ` ${storeOrigin}` : '';
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data: blob:",
    `media-src 'self'${store}`,
    `connect-src 'self'${store}`,
    "font-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/**
 * Paths that belong to the API, the store or the agents, never to the single-page app. The admin
 * API is /admin/v1 only: /admin/nodes, /admin/queue ... are the operator console's pages.
 */
const NOT_PAGES = /^\/(?:v1|admin\/v1|app\/api|s3|agent|healthz)(?:\/|$)/;

/**
 * Serves the built dashboard at `/`: hashed assets cached for a year, every other GET that wants
 * HTML answers index.html (client-side routes), with the CSP and the usual hardening headers.
 */
export function dashboardPages(o: { dir?: string; storeOrigin?: string; publicUrl?: string | undefined; allowedHosts?: readonly string[] }): Router {
  const dir = o.dir ?? DEFAULT_DASHBOARD_DIR;
  const csp = contentSecurityPolicy(o.storeOrigin);
  const hostAllowed = createHostAllowlist(o);
  const r = express.Router();
  const headers: RequestHandler = (_req, res, next) => {
    res.setHeader('Content-Security-Policy', csp);
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('Referrer-Policy', 'no-referrer');
    res.setHeader('X-Frame-Options', 'DENY');
    next();
  };
  r.use((req, _res, next) => (NOT_PAGES.test(req.path) ? next('router') : next()));
  r.use(headers);
  // The pages under the names the dashboard's API answers only (session.ts csrfProtection): a page
  // loaded under another name would only fail on its first API call.
  r.use((req, _res, next) =>
    next(hostAllowed(req.headers.host) ? undefined : new ApiError('forbidden', `The dashboard is not served under this name: ${HOST_HELP}`)),
  );
  r.use('/assets', express.static(path.join(dir, 'assets'), { immutable: true, maxAge: '365d', index: false }), (req, _res, next) =>
    next(new ApiError('not_found', `No asset ${req.path}: the dashboard was rebuilt; reload the page.`)),
  );
  r.use(express.static(dir, { index: false, maxAge: 0 }));
  r.get(/.*/, (req, res, next) => {
    if (!req.accepts('html')) return next();
    const index = path.join(dir, 'index.html');
    if (!existsSync(index)) {
      return next(new ApiError('unavailable', 'The dashboard is not built: run "bash scripts/setup" (or "npm run build -w @captionfarm/dashboard").'));
    }
    res.setHeader('Cache-Control', 'no-cache');
    res.sendFile(index);
  });
  return r;
}
