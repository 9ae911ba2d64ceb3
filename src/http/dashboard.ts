/**
 * Serves the dashboard (docs/internals.md, The dashboard): the single-page app built from `web/`
 * into `dist/dashboard/`, at `/dashboard`, and `/` redirecting there.
 *
 * Owns: where the built files are, their caching headers (hashed assets are
 * immutable, index.html is revalidated every time so a new build shows at
 * once), and the answer when no build exists.
 * Must never: serve anything outside the build directory, or need a token
 * (the page itself holds no data; every call it makes is to the token-checked
 * API).
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import fastifyStatic from '@fastify/static';
import { sendError } from './error-handler.js';
import { ApiError } from '../errors.js';
import { packageRoot } from '../package-root.js';

/** dist/dashboard of the gateway's package, whether it runs from src/ (tsx) or from the build. */
export const defaultDashboardDir = join(packageRoot, 'dist', 'dashboard') + '/';

const IMMUTABLE = 'public, max-age=31536000, immutable';
const REVALIDATE = 'no-cache';
/**
 * The page holds an API token: nothing but its own files may run in it, it talks to its own origin only,
 * and no other site may frame it. QR codes arrive as data: URLs.
 */
export const DASHBOARD_CSP = [
  "default-src 'self'",
  "img-src 'self' data:",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** Every dashboard route is public: the page is the same for everyone and asks for the token itself. */
export function isDashboardPath(url: string): boolean {
  return url === '/' || url === '/dashboard' || url.startsWith('/dashboard/');
}

export async function dashboardRoutes(app: FastifyInstance, options: { dir: string }): Promise<void> {
  const hidden = { schema: { hide: true }, config: { public: true } };
  // In the envelope like every other answer (a client that does not follow redirects still reads JSON).
  app.get('/', hidden, async (_request, reply) =>
    reply
      .code(302)
      .header('location', '/dashboard/')
      .send({ code: 302, status: 302, message: 'Found: the dashboard is at /dashboard/' }),
  );

  if (!existsSync(`${options.dir}/index.html`)) {
    const notBuilt = new ApiError('NOT_FOUND', { error: 'the dashboard is not built: run npm run build:web' });
    app.get('/dashboard', hidden, async (_request, reply) => sendError(reply, notBuilt));
    app.get('/dashboard/*', hidden, async (_request, reply) => sendError(reply, notBuilt));
    return;
  }

  await app.register(fastifyStatic, {
    root: options.dir,
    prefix: '/dashboard/',
    decorateReply: false,
    cacheControl: false,
    // Vite names every asset by its content hash; only index.html keeps its name across builds.
    setHeaders(res, path) {
      res.setHeader('cache-control', path.includes('/assets/') ? IMMUTABLE : REVALIDATE);
      res.setHeader('x-content-type-options', 'nosniff');
      if (path.endsWith('.html')) {
        res.setHeader('content-security-policy', DASHBOARD_CSP);
        res.setHeader('referrer-policy', 'no-referrer');
      }
    },
  });
  // The app's entry at /dashboard and /dashboard/ (one route: trailing slashes are ignored). Read on
  // each load, so a rebuild shows without a restart; it is a few hundred bytes.
  app.get('/dashboard', hidden, async (_request, reply) =>
    reply
      .type('text/html; charset=utf-8')
      .header('cache-control', REVALIDATE)
      .header('content-security-policy', DASHBOARD_CSP)
      .header('x-content-type-options', 'nosniff')
      .header('referrer-policy', 'no-referrer')
      .send(await readFile(`${options.dir}/index.html`)),
  );
}
