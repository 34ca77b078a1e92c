import express, { type Express, type NextFunction, type Request, type Response } from 'express';
import { createRequire } from 'node:module';
import { WEB_CSP } from './web.js';

const require = createRequire(import.meta.url);

const INDEX_HTML = `<!doctype html>
<html lang="fr">
<head>
  <meta charset="utf-8">
  <title>API — documentation interactive</title>
  <link rel="stylesheet" href="./swagger-ui.css">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="./swagger-ui-bundle.js"></script>
  <script src="./initializer.js"></script>
</body>
</html>`;

// validatorUrl null: otherwise Swagger UI sends the schema address to validator.swagger.io
// (an outside host) to draw its badge. The requestInterceptor sends the back-office session's
// CSRF token (cookie wfm_csrftoken) as X-CSRFToken, so that a signed-in back-office user can
// try the unsafe methods with the session (src/auth/middleware.ts).
const INITIALIZER = `window.ui = SwaggerUIBundle({ url: '/api/schema/', dom_id: '#swagger-ui', deepLinking: true, persistAuthorization: true, validatorUrl: null,
  requestInterceptor: function (request) {
    var match = document.cookie.match(/(?:^|; )wfm_csrftoken=([^;]*)/);
    if (match) request.headers['X-CSRFToken'] = decodeURIComponent(match[1]);
    return request;
  } });`;

/** The files of swagger-ui-dist the page loads; the package's demo page and initializer stay unserved. */
const ASSETS = new Set(['/swagger-ui.css', '/swagger-ui-bundle.js']);

/**
 * The documentation's Content-Security-Policy: the web application's (no inline script, nothing
 * from another origin). The page reads the CSRF cookie and acts with the back-office session, so
 * it runs only its own files: the Swagger UI bundle and the initializer, served as files.
 */
export const DOCS_CSP = WEB_CSP;

/** Interactive documentation at /api/docs/, served from the swagger-ui-dist package (no CDN). */
export function mountDocs(app: Express): void {
  // Every answer under /api/docs (the page, its initializer, its assets, a redirect, a 404).
  app.use('/api/docs', (_req: Request, res: Response, next: NextFunction) => {
    res.setHeader('Content-Security-Policy', DOCS_CSP);
    next();
  });
  // The package's directory only: its main module would also load and run the 1.5 MB browser
  // bundle in the server (some 20 MB of memory for nothing).
  const assets = (require('swagger-ui-dist/absolute-path.js') as () => string)();
  // Routing is not strict (/api/docs matches /api/docs/ too): only the address without the
  // trailing slash is redirected, so that the page's relative asset links resolve.
  app.get('/api/docs/', (req, res) => {
    if (!req.path.endsWith('/')) {
      res.redirect(301, '/api/docs/');
      return;
    }
    res.type('html').send(INDEX_HTML);
  });
  // The page names no icon (its links stay files of /api/docs/): the browser asks /favicon.ico,
  // answered without content rather than with a 404 in the console.
  app.get('/favicon.ico', (_req, res) => {
    res.status(204).end();
  });
  app.get('/api/docs/initializer.js', (_req, res) => {
    res.type('application/javascript').send(INITIALIZER);
  });
  // Cache-Control stays the no-store of every /api response.
  const serveAsset = express.static(assets, { index: false, cacheControl: false });
  app.use('/api/docs', (req, res, next) => (ASSETS.has(req.path) ? serveAsset(req, res, next) : next()));
}
