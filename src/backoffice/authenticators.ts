/**
 * The page of the authenticators of the back-office accounts: a superuser verified by a second
 * factor deletes the factors of an account, which enrols again at its next login (SPEC,
 * Authentication rule 3). The reads and the removal are src/auth/backoffice-login.ts's.
 */
import express from 'express';
import { deleteFactors, factorAccounts } from '../auth/backoffice-login.js';
import { html, message } from './html.js';
import { asUser, asyncRoute, navUser, render, requireUser } from './common.js';
import { frenchFormat } from './date-format.js';

const DATE_TIME = frenchFormat({ dateStyle: 'short', timeStyle: 'short', timeZone: 'Europe/Paris' });

export function authenticatorRoutes(): express.Router {
  const router = express.Router();

  router.get('/authenticators/', asyncRoute(async (req, res) => {
    const session = requireUser(req, res);
    if (!session) return;
    const accounts = await asUser(req, session, factorAccounts);
    const deleted = accounts.find((a) => String(a.id) === req.query.supprime);
    render(req, res, 200, 'Authentificateurs', await navUser(req, session), (csrf) => html`
${deleted ? message('success', `Les facteurs de ${deleted.username} ont été supprimés : un nouvel enrôlement sera demandé à sa prochaine connexion.`) : ''}
<p>Comptes ayant accès au back-office (statut équipe, superutilisateur, rôle RH n1 ou RH n2 en cours).</p>
<div class="table-wrap">
<table>
  <caption>Second facteur des comptes du back-office</caption>
  <thead><tr><th scope="col">Compte</th><th scope="col">Nom</th><th scope="col">Authentificateur</th>
    <th scope="col">Codes de secours restants</th><th scope="col">Action</th></tr></thead>
  <tbody>
  ${accounts.map((a) => html`<tr>
    <th scope="row">${a.username}</th><td>${a.name}</td>
    <td>${a.enrolled ? `Enregistré le ${DATE_TIME.format(new Date(a.enrolled_at!))}` : 'Aucun'}</td>
    <td>${a.enrolled ? a.backup_codes_left : '—'}</td>
    <td>${a.enrolled ? html`<form method="post" action="/backoffice/authenticators/${a.id}/delete/">
      <input type="hidden" name="csrf_token" value="${csrf}">
      <button type="submit" class="danger" aria-label="Supprimer les facteurs de ${a.username}">Supprimer les facteurs</button>
    </form>` : ''}</td>
  </tr>`)}
  </tbody>
</table>
</div>`);
  }));

  router.post('/authenticators/:id/delete/', asyncRoute(async (req, res) => {
    const session = requireUser(req, res);
    if (!session) return;
    const id = Number(req.params.id);
    if (!Number.isSafeInteger(id) || id <= 0) {
      res.redirect(303, '/backoffice/authenticators/');
      return;
    }
    await asUser(req, session, (client) => deleteFactors(client, id));
    res.redirect(303, `/backoffice/authenticators/?supprime=${id}`);
  }));

  return router;
}
