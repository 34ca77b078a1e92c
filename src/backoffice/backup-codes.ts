/**
 * « Mes codes de secours »: the signed-in account replaces its unused backup codes with 10 new
 * ones, shown once (issue 25 finding 3: the regeneration is audited). Only a session that
 * passed its second factor may do it; SQL decides it from the session itself
 * (app_private.backoffice_backup_codes_regenerate).
 */
import express from 'express';
import { html, message } from './html.js';
import { type BackofficeDeps, asyncRoute, navUser, render, requireUser, sessionCookie } from './common.js';
import { BackofficeSecrets } from './secrets.js';

export function backupCodeRoutes(deps: BackofficeDeps): express.Router {
  const { sessions } = deps;
  const router = express.Router();

  router.get('/backup-codes/', asyncRoute(async (req, res) => {
    const session = requireUser(req, res);
    if (!session) return;
    const left = await sessions.authenticatorFor(req)(async (client) =>
      (await client.query<{ n: number }>('select count(*)::int as n from app_private.backoffice_backup_codes($1)', [session.accountId])).rows[0]!.n);
    const verified = session.method === 'totp' || session.method === 'backup_code';
    render(req, res, 200, 'Mes codes de secours', await navUser(req, session), (csrf) => html`
<p>Il vous reste <strong>${left}</strong> code${left > 1 ? 's' : ''} de secours inutilisé${left > 1 ? 's' : ''}.
Chacun remplace une fois le code de votre application d’authentification.</p>
${verified
    ? html`<form method="post" action="/backoffice/backup-codes/" class="card narrow">
  <input type="hidden" name="csrf_token" value="${csrf}">
  <p class="hint" id="renouveler-aide">Les codes inutilisés cesseront de fonctionner ; 10 nouveaux codes seront affichés une seule fois.</p>
  <button type="submit" aria-describedby="renouveler-aide">Générer de nouveaux codes de secours</button>
</form>`
    : message('info', 'Cette session n’a pas vérifié de second facteur : reconnectez-vous avec votre application pour renouveler vos codes.')}`);
  }));

  router.post('/backup-codes/', asyncRoute(async (req, res) => {
    const session = requireUser(req, res);
    if (!session) return;
    const codes = BackofficeSecrets.newBackupCodes();
    const done = await sessions.authenticatorFor(req)(async (client) =>
      (await client.query<{ ok: boolean }>('select app_private.backoffice_backup_codes_regenerate($1, $2) as ok',
        [BackofficeSecrets.tokenHash(sessionCookie(req)!), codes.map((c) => sessions.secrets.backupCodeHash(c))])).rows[0]!.ok);
    const user = await navUser(req, session);
    if (!done) {
      render(req, res, 403, 'Mes codes de secours', user, message('error',
        'Vos codes n’ont pas été renouvelés : cette session n’a pas vérifié de second facteur. Reconnectez-vous avec votre application.'));
      return;
    }
    render(req, res, 200, 'Vos nouveaux codes de secours', user, html`
${message('success', 'Vos codes de secours ont été renouvelés : les anciens ne fonctionnent plus.')}
<p>Voici vos <strong>10 nouveaux codes de secours</strong>. Notez-les ou imprimez-les maintenant et gardez-les en lieu sûr :
<strong>ils ne seront plus jamais affichés</strong>.</p>
<ul class="codes" aria-label="Codes de secours">${codes.map((c) => html`<li><code>${c}</code></li>`)}</ul>
<p><a class="button" href="/backoffice/">J’ai noté mes codes, revenir à l’accueil</a></p>`);
  }));

  return router;
}
