/**
 * Opening a year's counters on demand (issue 27 point 2): a staff account chooses the year
 * (this one or the next) and an establishment or the whole association, reads the preview
 * (counters by code, already open, employees skipped and why: app_public.counter_opening_preview),
 * then confirms (app_public.counter_opening_run, idempotent, audited). Both are SQL functions
 * of sql/counters/year.sql called as the signed-in account; they refuse a non-staff account.
 */
import express, { type Request, type Response } from 'express';
import { apiErrorFromPg, type FieldErrors } from '../http/errors.js';
import { asUser, asyncRoute, navUser, render, requireUser } from './common.js';
import { html, message, trusted, type Html } from './html.js';
import { ruleChoices } from './resources/counter-rules.js';
import { isStaff } from './resources/staff.js';
import { CSRF_FIELD } from './sessions.js';

export const COUNTER_OPENINGS_PATH = '/backoffice/counter-openings/';

interface Summary {
  year: number;
  establishment: number | null;
  establishment_name: string | null;
  employees: number;
  counters: number;
  already_open: number;
  by_code: Record<string, { counters: number; acquired: string }>;
  skipped: Array<{ employee: number; employee_name: string; reason: string }>;
  opened?: number;
  movements?: number;
}

interface Choice {
  year: number | null;
  establishment: number | null;
}

const YEAR = /^\d{4}$/;
const ID = /^[1-9]\d{0,9}$/;

function choiceOf(body: Record<string, unknown>): { choice: Choice; errors: FieldErrors } {
  const year = typeof body.year === 'string' ? body.year.trim() : '';
  const establishment = typeof body.establishment === 'string' ? body.establishment.trim() : '';
  const errors: FieldErrors = {};
  if (!YEAR.test(year)) errors.year = ['Choisissez l’année.'];
  if (establishment !== '' && !ID.test(establishment)) errors.establishment = ['Établissement inconnu.'];
  return { choice: { year: YEAR.test(year) ? Number(year) : null, establishment: ID.test(establishment) ? Number(establishment) : null }, errors };
}

function summaryBlock(summary: Summary, done: boolean): Html {
  const scope = summary.establishment_name ?? 'toute l’association';
  const codes = Object.entries(summary.by_code);
  return html`<section class="card" aria-labelledby="apercu">
  <h2 id="apercu">${done ? `Compteurs ${summary.year} ouverts — ${scope}` : `Aperçu : compteurs ${summary.year} — ${scope}`}</h2>
  <dl class="facts">
    <dt>${done ? 'Compteurs ouverts' : 'Compteurs à ouvrir'}</dt><dd><strong>${String(done ? summary.opened ?? 0 : summary.counters)}</strong>
      ${done ? '' : ` pour ${summary.employees} salarié(s)`}</dd>
    ${done ? html`<dt>Mouvements d’acquisition écrits</dt><dd>${String(summary.movements ?? 0)}</dd>` : ''}
    <dt>Déjà ouverts (laissés tels quels)</dt><dd>${String(summary.already_open)}</dd>
  </dl>
  ${codes.length && !done ? html`<table>
    <caption>Par compteur</caption>
    <thead><tr><th scope="col">Compteur</th><th scope="col">Compteurs</th><th scope="col">Acquis à l’ouverture (total)</th></tr></thead>
    <tbody>${codes.map(([code, line]) => html`<tr><th scope="row">${code}</th><td>${String(line.counters)}</td><td>${line.acquired.replace('.', ',')}</td></tr>`)}</tbody>
  </table>` : ''}
  <h3>Salariés écartés (${String(summary.skipped.length)})</h3>
  ${summary.skipped.length ? html`<table>
    <caption>Salariés sans compteur ouvert, et pourquoi</caption>
    <thead><tr><th scope="col">Salarié</th><th scope="col">Raison</th></tr></thead>
    <tbody>${summary.skipped.map((s) => html`<tr><th scope="row"><a href="/backoffice/employees/${s.employee}/">${s.employee_name}</a></th><td>${s.reason}</td></tr>`)}</tbody>
  </table>` : html`<p>Aucun.</p>`}
</section>`;
}

async function showPage(req: Request, res: Response, status: number, choice: Choice, errors: FieldErrors,
  result: { summary: Summary; done: boolean } | null): Promise<void> {
  const session = requireUser(req, res);
  if (!session) return;
  const { staff, establishments, today } = await asUser(req, session, async (client) => ({
    staff: await isStaff(client),
    establishments: await ruleChoices('establishments')(client),
    today: (await client.query<{ year: number }>('select extract(year from app_hidden.today())::int as year')).rows[0]!.year,
  }));
  if (!staff) {
    render(req, res, 403, 'Action refusée', await navUser(req, session), message('error',
      'Les compteurs s’ouvrent par les comptes du personnel d’administration uniquement.'));
    return;
  }
  const year = choice.year ?? today + 1;
  const fieldError = (key: string) => (errors[key] ? html`<p class="field-error" id="ouverture-${key}-erreur">${errors[key]!.join(' ')}</p>` : '');
  const aria = (key: string) => trusted(errors[key] ? ` aria-describedby="ouverture-${key}-erreur" aria-invalid="true"` : '');
  const others = Object.entries(errors).filter(([key]) => key !== 'year' && key !== 'establishment').flatMap(([, m]) => m);
  render(req, res, status, 'Ouverture des compteurs d’une année', await navUser(req, session), (csrf) => html`
<p><a href="/backoffice/counter-rules/">← Règles des compteurs</a></p>
<p>Ouvre, pour chaque salarié dont un contrat court dans l’année, les compteurs que les règles de son établissement prévoient,
avec leurs acquisitions déjà dues (chacune un mouvement du journal, avec son motif). Un compteur déjà ouvert est laissé tel quel :
relancer l’ouverture ne change rien. La tâche planifiée open_next_year_counters fait de même chaque jour à partir du 1er octobre.</p>
${others.length ? message('error', others.join(' ')) : ''}
${result ? summaryBlock(result.summary, result.done) : ''}
${result && !result.done ? html`<section class="card action" aria-labelledby="confirmer">
  <h2 id="confirmer">Confirmer l’ouverture</h2>
  <form method="post" action="${COUNTER_OPENINGS_PATH}" novalidate>
    <input type="hidden" name="${CSRF_FIELD}" value="${csrf}">
    <input type="hidden" name="year" value="${String(result.summary.year)}">
    <input type="hidden" name="establishment" value="${result.summary.establishment == null ? '' : String(result.summary.establishment)}">
    <input type="hidden" name="step" value="confirm">
    <button type="submit">Ouvrir ${String(result.summary.counters)} compteur(s) ${String(result.summary.year)}</button>
  </form>
</section>` : ''}
<section class="card action" aria-labelledby="choisir">
  <h2 id="choisir">${result ? 'Autre aperçu' : 'Aperçu avant ouverture'}</h2>
  <form method="post" action="${COUNTER_OPENINGS_PATH}" novalidate>
    <input type="hidden" name="${CSRF_FIELD}" value="${csrf}">
    <input type="hidden" name="step" value="preview">
    <div class="field">
      <label for="ouverture-year">Année <span class="muted">(obligatoire)</span></label>
      <select id="ouverture-year" name="year" aria-required="true"${aria('year')}>
        ${[today, today + 1].map((y) => html`<option value="${String(y)}"${y === year ? trusted(' selected') : ''}>${String(y)}</option>`)}
      </select>
      ${fieldError('year')}
    </div>
    <div class="field">
      <label for="ouverture-establishment">Établissement</label>
      <select id="ouverture-establishment" name="establishment"${aria('establishment')}>
        <option value="">Toute l’association</option>
        ${establishments.map((e) => html`<option value="${e.value}"${e.value === String(choice.establishment ?? '') ? trusted(' selected') : ''}>${e.label}</option>`)}
      </select>
      ${fieldError('establishment')}
    </div>
    <button type="submit">Voir l’aperçu</button>
  </form>
</section>`);
}

export function counterOpeningRoutes(): express.Router {
  const router = express.Router();
  router.get('/counter-openings/', asyncRoute(async (req, res) => {
    await showPage(req, res, 200, { year: null, establishment: null }, {}, null);
  }));
  router.post('/counter-openings/', asyncRoute(async (req, res) => {
    const session = requireUser(req, res);
    if (!session) return;
    const body = (req.body ?? {}) as Record<string, unknown>;
    const { choice, errors } = choiceOf(body);
    if (Object.keys(errors).length) {
      await showPage(req, res, 400, choice, errors, null);
      return;
    }
    const confirm = body.step === 'confirm';
    try {
      const summary = await asUser(req, session, async (client) => (await client.query<{ result: Summary }>(
        confirm ? 'select app_public.counter_opening_run(p_year => $1, p_establishment => $2) as result'
          : 'select app_public.counter_opening_preview(p_year => $1, p_establishment => $2) as result',
        [choice.year, choice.establishment])).rows[0]!.result);
      await showPage(req, res, 200, choice, {}, { summary, done: confirm });
    } catch (error) {
      const known = apiErrorFromPg(error);
      if (known?.status === 400) {
        await showPage(req, res, 400, choice, known.body as FieldErrors, null);
        return;
      }
      throw error;
    }
  }));
  return router;
}
