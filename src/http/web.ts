import express, { type Express, type NextFunction, type Request, type Response } from 'express';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { ROOT_DIR } from '../db/root.js';

/** Where `npm run web:build` writes the single-page application. */
export const WEB_DIST = path.join(ROOT_DIR, 'web/dist');

/** The SPA's pages run no inline script and load nothing from another origin. */
export const WEB_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: blob:",
  "connect-src 'self'",
  "font-src 'self'",
  "object-src 'none'",
  "base-uri 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** Paths that belong to other surfaces: they never fall back to the application's page. */
const OTHER_SURFACES = /^\/(api|backoffice|graphql)(\/|$)/;

/**
 * Serves the built application at `/`: its hashed assets (cached for good) and, for any other
 * GET of a path that is not an API, back-office or GraphQL path and names no file, its
 * index.html (the client routes). Without a build, nothing is mounted.
 */
export function mountWeb(app: Express, dist = WEB_DIST): boolean {
  const index = path.join(dist, 'index.html');
  if (!existsSync(index)) return false;
  const csp = (_req: Request, res: Response, next: NextFunction) => {
    res.setHeader('Content-Security-Policy', WEB_CSP);
    next();
  };
  app.use('/assets', csp, express.static(path.join(dist, 'assets'), { immutable: true, maxAge: '1y', index: false, fallthrough: true }));
  app.get(/.*/, csp, (req: Request, res: Response, next: NextFunction) => {
    if (OTHER_SURFACES.test(req.path) || /\.[A-Za-z0-9]+$/.test(req.path)) return next();
    res.setHeader('Cache-Control', 'no-cache');
    res.sendFile(index);
  });
  return true;
}
