/**
 * The back-office under /backoffice/: server-rendered pages in French, one stylesheet, no
 * script (a strict Content-Security-Policy), a CSRF token on every form.
 */
import express, { type Express, type NextFunction, type Request, type Response } from 'express';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { apiErrorFromPg } from '../http/errors.js';
import { html, message } from './html.js';
import { authenticatorRoutes } from './authenticators.js';
import { backupCodeRoutes } from './backup-codes.js';
import { type BackofficeDeps, asyncRoute, currentSession, navUser, render, requireUser } from './common.js';
import { counterOpeningRoutes } from './counter-openings.js';
import { honorabilityRoutes } from './honorability.js';
import { loginRoutes } from './login.js';
import { RESOURCES } from './resources/index.js';
import { resourceRoutes } from './views.js';
import { CSRF_FIELD } from './sessions.js';

const STYLESHEET = path.join(path.dirname(fileURLToPath(import.meta.url)), 'static/backoffice.css');

export const CONTENT_SECURITY_POLICY =
  "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/** The header's user of any page (errors included): null before the second factor. */
async function userOf(req: Request) {
  const session = currentSession(req);
  return session?.stage === 'full' ? navUser(req, session).catch(() => null) : null;
}

export function mountBackoffice(app: Express, deps: BackofficeDeps): void {
  app.locals.backoffice = deps;
  const router = express.Router({ strict: true });
  router.use((_req: Request, res: Response, next: NextFunction) => {
    res.setHeader('Content-Security-Policy', CONTENT_SECURITY_POLICY);
    res.setHeader('Cache-Control', 'no-store');
    next();
  });
  router.get('/static/backoffice.css', (_req, res) => {
    res.setHeader('Cache-Control', 'private, max-age=300');
    res.sendFile(STYLESHEET);
  });
  // Multipart uploads check their CSRF token from the parsed form (honorability.ts).
  router.use(honorabilityRoutes());
  router.use(express.urlencoded({ extended: false, limit: '64kb', parameterLimit: 200 }));
  // Every form carries the CSRF token of its session (sessions.ts): a forged post is refused, and
  // so is any other unsafe method (the authentication middleware leaves these pages to this check,
  // src/auth/middleware.ts). GET, HEAD and OPTIONS change nothing.
  router.use(asyncRoute(async (req: Request, res: Response, next: NextFunction) => {
    if (['GET', 'HEAD', 'OPTIONS'].includes(req.method)
        || deps.sessions.csrfOk(req, typeof req.body?.[CSRF_FIELD] === 'string' ? req.body[CSRF_FIELD] : undefined)) {
      next();
      return;
    }
    render(req, res, 403, 'Formulaire refusé', await userOf(req), html`${message('error',
      'Ce formulaire a expiré ou ne vient pas du back-office (protection CSRF). Rechargez la page et recommencez.')}
<p><a href="/backoffice/">Retour au back-office</a></p>`);
  }));

  router.use(loginRoutes(deps));

  router.get('/', asyncRoute(async (req, res) => {
    const session = requireUser(req, res);
    if (!session) return;
    const user = await navUser(req, session);
    render(req, res, 200, 'Accueil', user, html`
<p>Bienvenue, <strong>${session.username}</strong>.</p>
<ul class="tiles">
  ${user.links!.map((link) => html`<li><a href="${link.href}">${link.label}</a> <span>${link.summary}</span></li>`)}
  <li><a href="/api/docs/">Documentation interactive de l’API</a>
    <span>Votre session y est reconnue : les appels s’y font en votre nom.</span></li>
</ul>`);
  }));

  router.use(counterOpeningRoutes());
  router.use(resourceRoutes(RESOURCES));
  router.use(authenticatorRoutes());
  router.use(backupCodeRoutes(deps));

  router.use(asyncRoute(async (req: Request, res: Response) => {
    render(req, res, 404, 'Page introuvable', await userOf(req), html`<p>Cette page n’existe pas.</p><p><a href="/backoffice/">Retour à l’accueil</a></p>`);
  }));
  router.use((error: unknown, req: Request, res: Response, _next: NextFunction) => {
    void (async () => {
      const known = apiErrorFromPg(error);
      const user = await userOf(req);
      if (known && known.status < 500) {
        const detail = typeof known.body.detail === 'string' ? known.body.detail : 'Demande refusée.';
        render(req, res, known.status, known.status === 404 ? 'Introuvable' : 'Action refusée', user, message('error', detail));
        return;
      }
      req.log?.error({ err: error }, 'back-office error');
      render(req, res, 500, 'Erreur', user, message('error', 'Erreur interne du serveur. Réessayez dans un instant.'));
    })();
  });
  // /backoffice (without the slash) leads to the home page.
  app.get('/backoffice', (req, res, next) => (req.path === '/backoffice' ? res.redirect(301, '/backoffice/') : next()));
  app.use('/backoffice/', router);
}
