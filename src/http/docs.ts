import express, { type Express } from 'express';
import { createRequire } from 'node:module';

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

const INITIALIZER = `window.ui = SwaggerUIBundle({ url: '/api/schema/', dom_id: '#swagger-ui', deepLinking: true, persistAuthorization: true });`;

/** Interactive documentation at /api/docs/, served from the swagger-ui-dist package (no CDN). */
export function mountDocs(app: Express): void {
  const assets = (require('swagger-ui-dist') as { getAbsoluteFSPath: () => string }).getAbsoluteFSPath();
  // Routing is not strict (/api/docs matches /api/docs/ too): only the address without the
  // trailing slash is redirected, so that the page's relative asset links resolve.
  app.get('/api/docs/', (req, res) => {
    if (!req.path.endsWith('/')) {
      res.redirect(301, '/api/docs/');
      return;
    }
    res.type('html').send(INDEX_HTML);
  });
  app.get('/api/docs/initializer.js', (_req, res) => {
    res.type('application/javascript').send(INITIALIZER);
  });
  // Cache-Control stays the no-store of every /api response.
  app.use('/api/docs', express.static(assets, { index: false, cacheControl: false }));
}
