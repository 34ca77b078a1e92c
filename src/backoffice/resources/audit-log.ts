/**
 * Audit log viewer (issue point 5): readers of audit.view_actionlog with back-office access.
 * Filters by model, target, actor, verb and date; each line shows before and after side by
 * side, the keys that changed marked (not by colour alone).
 */
import type pg from 'pg';
import { html, trusted, type Html } from '../html.js';
import { callValue, declareCall, inputArg } from '../calls.js';
import { defineResource } from '../registry.js';
import { frenchFormat } from '../date-format.js';

const READS = declareCall('audit-log: reader', 'app_hidden.current_account_reads_audit_log');
const TRAIL = declareCall('audit-log: trail', 'app_public.audit_log_search',
  [inputArg('model', 'text'), inputArg('target_id', 'int'), inputArg('page_size', 'int')]);
const MODELS = declareCall('audit-log: models', 'app_public.audit_log_models');

/** Whether the signed-in account reads the audit log. */
const readsAuditLog = (client: pg.PoolClient) => callValue<boolean>(client, READS);

interface AuditLine {
  id: number;
  at: string;
  actor: number | null;
  actor_identity: { username: string | null; display_name: string | null } | null;
  impersonator: number | null;
  impersonator_identity: { username: string | null; display_name: string | null } | null;
  client_address: string | null;
  verb: string;
  model: string;
  target_id: number | null;
  before: Record<string, unknown> | null;
  after: Record<string, unknown> | null;
}

const VERB_LABELS: Record<string, string> = {
  Creation: 'Création',
  Modification: 'Modification',
  Suppression: 'Suppression',
  Validation: 'Validation',
  Refus: 'Refus',
  Correction: 'Correction',
  "Demande d'annulation": 'Demande d’annulation',
  Annulation: 'Annulation',
  Impersonation: 'Substitution d’identité',
  Securite: 'Sécurité du compte',
};

/** The security events of accounts (model account_security, after.event), in French. */
const SECURITY_EVENTS: Record<string, string> = {
  login_refused: 'Connexion refusée (compte fermé)',
  factor_enrolled: 'Second facteur enregistré',
  factor_removed: 'Second facteur supprimé',
  backup_code_used: 'Code de secours utilisé',
  backup_codes_regenerated: 'Codes de secours renouvelés',
  password_changed: 'Mot de passe changé',
  password_reset: 'Mot de passe réinitialisé',
  sessions_ended: 'Sessions terminées',
  impersonation_ended: 'Fin de la substitution d’identité',
};

/** The security event of a line in French (verb Securite), else null. */
function securityEvent(line: AuditLine): string | null {
  const event = line.verb === 'Securite' && typeof line.after?.event === 'string' ? line.after.event : null;
  return event ? SECURITY_EVENTS[event] ?? event : null;
}

/** The action of a line: its verb, and for a security event the event itself. */
function actionLabel(line: AuditLine): string {
  const verb = VERB_LABELS[line.verb] ?? line.verb;
  const event = securityEvent(line);
  return event ? `${verb} : ${event}` : verb;
}

/** Who: « par X, pour le compte de Y » when a superuser acted for Y (impersonation), else Y. */
export function authorCell(line: AuditLine): Html {
  const actor = line.actor_identity
    ? html`${line.actor_identity.display_name ?? ''} <span class="muted">(${line.actor_identity.username ?? '?'})</span>`
    : html`<span class="muted">sans compte (base de données, tâche)</span>`;
  if (!line.impersonator_identity) return actor;
  return html`par ${line.impersonator_identity.display_name ?? ''} <span class="muted">(${line.impersonator_identity.username ?? '?'})</span>,
pour le compte de ${actor}`;
}

/** The same in plain text (the history summary of a record). */
function authorText(line: AuditLine): string {
  const actor = line.actor_identity?.display_name ?? 'sans compte';
  return line.impersonator_identity ? `par ${line.impersonator_identity.display_name ?? '?'}, pour le compte de ${actor}` : actor;
}

const DATE_TIME = frenchFormat({ dateStyle: 'short', timeStyle: 'medium', timeZone: 'Europe/Paris' });

function showValue(value: unknown): Html {
  if (value === undefined) return html`<span class="absent">(absent)</span>`;
  if (value === null) return html`<span class="absent">vide</span>`;
  if (typeof value === 'object') return html`<pre>${JSON.stringify(value, null, 2)}</pre>`;
  return html`${String(value)}`;
}

/** Before and after side by side: one row per key, the changed keys first and marked. */
export function auditDiff(before: Record<string, unknown> | null, after: Record<string, unknown> | null): Html {
  const keys = [...new Set([...Object.keys(before ?? {}), ...Object.keys(after ?? {})])].sort();
  const changed = (key: string) => JSON.stringify(before?.[key]) !== JSON.stringify(after?.[key]);
  const ordered = [...keys.filter(changed), ...keys.filter((k) => !changed(k))];
  const count = keys.filter(changed).length;
  return html`<table class="diff">
  <caption>${count} champ${count > 1 ? 's' : ''} modifié${count > 1 ? 's' : ''} sur ${keys.length}</caption>
  <thead><tr><th scope="col">Champ</th><th scope="col">Avant</th><th scope="col">Après</th></tr></thead>
  <tbody>${ordered.map((key) => html`<tr${changed(key) ? trusted(' class="changed"') : ''}>
    <th scope="row">${key}${changed(key) ? html` <span class="badge">modifié</span>` : ''}</th>
    <td>${before ? showValue(before[key]) : html`<span class="absent">—</span>`}</td>
    <td>${after ? showValue(after[key]) : html`<span class="absent">—</span>`}</td>
  </tr>`)}</tbody>
</table>`;
}

const TRAIL_TIME = frenchFormat({ dateStyle: 'short', timeStyle: 'short', timeZone: 'Europe/Paris' });

/** The audit lines of one row of `model`, for readers of the audit log (others see no trail). */
export async function auditTrail(client: pg.PoolClient, model: string, id: number): Promise<Html> {
  if (!(await readsAuditLog(client))) return html``;
  const lines = (await callValue<{ results: AuditLine[] }>(client, TRAIL, { body: { model, target_id: id, page_size: 200 } })).results;
  return html`<section class="card" aria-labelledby="historique">
  <h2 id="historique">Historique (journal d’audit)</h2>
  <ol class="trail">${lines.map((line) => html`<li><details>
    <summary>${TRAIL_TIME.format(new Date(line.at))} · ${VERB_LABELS[line.verb] ?? line.verb}${securityEvent(line) ? ` : ${securityEvent(line)}` : ''} · ${authorText(line)}</summary>
    ${auditDiff(line.before, line.after)}
  </details></li>`)}</ol>
  <p><a href="/backoffice/audit-log/?model=${model}&amp;target_id=${id}">Ouvrir dans le journal d’audit</a></p>
</section>`;
}

export const auditLogResource = defineResource<AuditLine>({
  slug: 'audit-log',
  title: 'Journal d’audit',
  summary: 'Qui a fait quoi, quand : chaque écriture avec ses valeurs avant et après.',
  available: readsAuditLog,
  list: {
    operationId: 'audit_log_list',
    pageSize: 25,
    caption: 'Lignes du journal, les plus récentes d’abord',
    exportPath: '/api/audit-log/export/',
    empty: 'Aucune ligne ne correspond à ces filtres.',
    filters: [
      {
        key: 'model', label: 'Objet',
        options: async (client) => (await callValue<Array<{ model: string; label: string }>>(client, MODELS))
          .map((m) => ({ value: m.model, label: m.label })),
      },
      { key: 'target_id', label: 'Identifiant de l’objet', hint: 'Le numéro de la demande, de l’absence…' },
      { key: 'actor', label: 'Auteur', hint: 'Identifiant de connexion, par exemple rh1.' },
      { key: 'impersonator', label: 'Par (emprunt d’identité)', hint: 'Identifiant du superutilisateur qui agissait pour le compte de l’auteur.' },
      { key: 'verb', label: 'Action', options: async () => Object.entries(VERB_LABELS).map(([value, label]) => ({ value, label })) },
      { key: 'from', label: 'Du' },
      { key: 'to', label: 'Au' },
    ],
    columns: [
      { label: 'Date', rowHeader: true, value: (line) => DATE_TIME.format(new Date(line.at)) },
      { label: 'Auteur', value: (line) => authorCell(line) },
      {
        label: 'Action',
        value: (line) => line.client_address
          ? html`${actionLabel(line)}<br><span class="muted">depuis ${line.client_address}</span>`
          : actionLabel(line),
      },
      {
        label: 'Objet',
        value: (line, { options, filterLink }) => {
          const label = options.model?.find((m) => m.value === line.model)?.label ?? line.model;
          return line.target_id === null
            ? label
            : html`${label} n° ${line.target_id}<br><a href="${filterLink({ model: line.model, target_id: line.target_id })}">Historique de cet objet</a>`;
        },
      },
    ],
    rowDetail: (line) => html`<details>
  <summary>Avant / après (ligne ${line.id})</summary>
  ${auditDiff(line.before, line.after)}
</details>`,
  },
});
