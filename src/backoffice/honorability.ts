/**
 * Depositing (or replacing) the honorability certificate of an employee from the back-office:
 * a multipart form streamed to storage by the API's own parser (format checked by content,
 * 10 MB at most), then the API's SQL function honorability_certificate_put as the signed-in
 * account, with the stored file listed in app.uploaded_files exactly as an API request does.
 * The replaced file is purged after the commit. Registered before the back-office's CSRF
 * middleware, which reads URL-encoded bodies: the token is checked here, from the parsed form,
 * and only a full session's upload is parsed at all.
 */
import express, { type Request, type Response } from 'express';
import { withAuthenticatorTransaction } from '../db/transaction.js';
import { ApiError, apiErrorFromPg, type FieldErrors } from '../http/errors.js';
import { isMultipart, parseMultipart } from '../http/multipart.js';
import { megabytesFr } from '../http/input-contract.js';
import { MAX_DOCUMENT_BYTES } from '../http/routes/documents.js';
import { purgeStorageGarbageIn } from '../storage/garbage.js';
import { type BackofficeDeps, asUser, asyncRoute, navUser, render, requireUser } from './common.js';
import { html, message } from './html.js';
import { CSRF_FIELD } from './sessions.js';

const ID = /^[1-9]\d{0,9}$/;

async function showForm(req: Request, res: Response, status: number, errors: FieldErrors): Promise<void> {
  const session = requireUser(req, res);
  if (!session) return;
  const id = Number(req.params.id);
  // The record as the account reads it (404 outside its reading), and whether it may deposit.
  const { name, allowed } = await asUser(req, session, async (client) => {
    const employee = (await client.query<{ result: { first_name: string; last_name: string } }>(
      'select app_public.employee_get(p_id => $1) as result', [id])).rows[0]!.result;
    const may = (await client.query<{ ok: boolean }>('select app_hidden.can_deposit_honorability($1) as ok', [id])).rows[0]!.ok;
    return { name: `${employee.first_name} ${employee.last_name}`, allowed: may };
  });
  const fileErrors = errors.file;
  const others = Object.entries(errors).filter(([key]) => key !== 'file').flatMap(([, m]) => m);
  render(req, res, status, `Attestation d’honorabilité — ${name}`, await navUser(req, session), (csrf) => html`
<p><a href="/backoffice/employees/${id}/">← ${name}</a></p>
${others.length ? message('error', others.join(' ')) : ''}
${allowed ? html`<section class="card action" aria-labelledby="depot">
  <h2 id="depot">Déposer ou remplacer l’attestation</h2>
  <form method="post" action="/backoffice/employees/${id}/honorability/" enctype="multipart/form-data" novalidate>
    <input type="hidden" name="${CSRF_FIELD}" value="${csrf}">
    <div class="field">
      <label for="attestation">Fichier de l’attestation</label>
      <p class="hint" id="attestation-aide">PDF, JPG ou PNG, ${megabytesFr(MAX_DOCUMENT_BYTES)} au plus. Une attestation déjà déposée est remplacée.</p>
      <input type="file" id="attestation" name="file" accept="application/pdf,image/jpeg,image/png"
        aria-describedby="attestation-aide${fileErrors ? ' attestation-erreur' : ''}"${fileErrors ? html` aria-invalid="true"` : ''}>
      ${fileErrors ? html`<p class="field-error" id="attestation-erreur">${fileErrors.join(' ')}</p>` : ''}
    </div>
    <button type="submit">Déposer</button>
  </form>
</section>` : message('info', 'Vous ne pouvez pas déposer l’attestation de ce salarié.')}`);
}

export function honorabilityRoutes(): express.Router {
  const router = express.Router();
  router.get('/employees/:id/honorability/', asyncRoute(async (req, res, next) => {
    if (!ID.test(String(req.params.id))) return next();
    await showForm(req, res, 200, {});
  }));
  router.post('/employees/:id/honorability/', asyncRoute(async (req, res, next) => {
    // Only a multipart body is this route's: any other goes on to the back-office's CSRF check of
    // every unsafe request (src/backoffice/index.ts), then to the page not found.
    if (!ID.test(String(req.params.id)) || !isMultipart(req)) return next();
    const session = requireUser(req, res);
    if (!session) return;
    const deps = req.app.locals.backoffice as BackofficeDeps;
    let parsed;
    try {
      parsed = await parseMultipart(req, { files: ['file'], maxFileBytes: MAX_DOCUMENT_BYTES }, deps.storage);
    } catch (error) {
      if (error instanceof ApiError && error.status === 400) {
        await showForm(req, res, 400, error.body as FieldErrors);
        return;
      }
      throw error;
    }
    const token = parsed.fields[CSRF_FIELD];
    if (!deps.sessions.csrfOk(req, typeof token === 'string' ? token : undefined)) {
      await deps.storage.remove(parsed.storedKeys);
      render(req, res, 403, 'Formulaire refusé', await navUser(req, session), message('error',
        'Ce formulaire a expiré ou ne vient pas du back-office (protection CSRF). Rechargez la page et recommencez.'));
      return;
    }
    const files = parsed.files.file ?? [];
    if (files.length !== 1) {
      await deps.storage.remove(parsed.storedKeys);
      await showForm(req, res, 400, { file: [files.length ? 'Un seul fichier.' : 'Choisissez un fichier.'] });
      return;
    }
    try {
      await asUser(req, session, (client) => client.query(
        'select app_public.honorability_certificate_put(p_employee => $1::int, p_file => $2::jsonb, p_public_url => $3::text)',
        [Number(req.params.id), JSON.stringify(files), deps.config.publicUrl]), { uploadedFiles: files });
    } catch (error) {
      await deps.storage.remove(parsed.storedKeys);
      const known = apiErrorFromPg(error);
      if (known?.status === 400) {
        await showForm(req, res, 400, known.body as FieldErrors);
        return;
      }
      throw error;
    }
    // The replaced file leaves storage now (the worker's sweep would do it within 10 minutes).
    await withAuthenticatorTransaction(deps.pool, (client) => purgeStorageGarbageIn(client, deps.storage), deps.sessions.clock)
      .catch((error: unknown) => req.log?.warn({ err: error }, 'storage purge left to the worker'));
    res.redirect(303, `/backoffice/employees/${req.params.id}/`);
  }));
  return router;
}
