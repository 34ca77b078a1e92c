/**
 * Employees (issue 13, point 4): the directory, each record with its contracts, teams, account
 * ("Compte actif"), role attributions and honorability certificate. Every read and write goes
 * through the API's SQL functions (employees_list / employee_get, account_activation_set,
 * honorability_certificate_*) or the back-office's role attribution functions
 * (sql/org/role_attributions.sql): the perimeter and the rights are theirs. Contracts are
 * added, changed and removed through employee_update (sql/employees/contracts.sql), which
 * re-raises its refusals under the form's fields.
 */
import type pg from 'pg';
import { html, message, type Html } from '../html.js';
import { defineResource, type FormField } from '../registry.js';
import { s } from '../../http/schema.js';
import { INPUT_CONTRACT } from '../../http/input-contract.js';
import { bodyObject, callRows, callValue, callValueOrNull, declareCall, holds, inputArg, rowId } from '../calls.js';
import { ESTABLISHMENTS_NAMED, establishmentOptions } from './referentials.js';
import { optionsFrom } from './staff.js';
import { frenchFormat } from '../date-format.js';

/** The contract types in creation order. */
const contractTypeOptions = optionsFrom(declareCall('employees: contract types', 'app_hidden.contract_type_choices', [], { rows: true }));

const READ = declareCall('employees: read', 'app_hidden.employee_with_contracts_version', [rowId()]);
const ABILITIES = declareCall('employees: abilities', 'app_hidden.employee_abilities', [rowId()]);
const ACCOUNT_ROLES = declareCall('employees: account roles', 'app_public.account_role_attributions', [inputArg('account', 'int')]);
const CAN_DEPOSIT = declareCall('employees: certificate deposit', 'app_hidden.can_deposit_honorability', [inputArg('employee', 'int')]);
const CERTIFICATE = declareCall('employees: certificate', 'app_public.honorability_certificate_get', [inputArg('employee', 'int')]);
const CONTRACT_ADD = declareCall('employees: contract addition', 'app_public.employee_contract_add', [rowId('p_employee'), bodyObject('p_contract')]);
const CONTRACT_CHOICE_ARGS = [inputArg('contract', 'int'), inputArg('version', 'text')];
const CONTRACT_CHANGE = declareCall('employees: contract change', 'app_public.employee_contract_change', [rowId('p_employee'),
  ...CONTRACT_CHOICE_ARGS, inputArg('type', 'int'), inputArg('start_date', 'date'), inputArg('end_date', 'date'),
  inputArg('trial_end_date', 'date'), inputArg('job_title', 'text'), inputArg('weekly_hours', 'numeric')]);
const CONTRACT_REMOVE = declareCall('employees: contract removal', 'app_public.employee_contract_remove', [rowId('p_employee'), ...CONTRACT_CHOICE_ARGS]);
const CERTIFICATE_DELETE = declareCall('employees: certificate removal', 'app_public.honorability_certificate_delete', [rowId('p_employee')]);
/** A refusal of a read (a missing certificate, roles out of reach: WN…), answered as nothing. */
const notFound = (error: unknown) => (error as { code?: string }).code?.startsWith('WN') === true;

interface Contract {
  id: number;
  type: number;
  type_code: string;
  type_name: string;
  start_date: string;
  end_date: string | null;
  trial_end_date: string | null;
  job_title: string | null;
  weekly_hours: string | null;
}

interface Assignment {
  id: number;
  team: number;
  team_name: string;
  start_date: string | null;
  end_date: string | null;
}

export interface Employee {
  id: number;
  first_name: string;
  last_name: string;
  name: string;
  professional_email: string | null;
  birth_date: string | null;
  is_polyvalent: boolean;
  main_establishment: number | null;
  main_establishment_name: string | null;
  secondary_establishments: number[];
  teams: Assignment[];
  contracts: Contract[];
  account: { id: number; username: string; is_active: boolean } | null;
  /** The fingerprint of the contract list (for its writers only): the contract forms' `version`. */
  contracts_version: string | null;
}

export interface RoleAttribution {
  id: number;
  account: number;
  role: string;
  start_date: string | null;
  end_date: string | null;
  establishments: number[];
  establishment_names: string[];
  restricts_by_establishment: boolean;
  is_current: boolean;
}

export interface AccountRoles {
  account: { id: number; username: string; name: string; is_active: boolean; is_staff: boolean; is_superuser: boolean };
  can_edit: boolean;
  results: RoleAttribution[];
}

interface Certificate {
  filename: string;
  uploaded_at: string;
  uploaded_by: string;
  size_bytes: number;
  file?: string;
}

const DAY = frenchFormat({ day: '2-digit', month: '2-digit', year: 'numeric', timeZone: 'UTC' });
const DATE_TIME = frenchFormat({ dateStyle: 'short', timeStyle: 'short', timeZone: 'Europe/Paris' });

export const frDay = (iso: string | null) => (iso ? DAY.format(new Date(`${iso}T00:00:00Z`)) : null);

/** "du 01/12/2026 au 30/06/2027", "depuis le …", "jusqu’au …", "sans limite de dates". */
export function period(start: string | null, end: string | null): string {
  if (start && end) return `du ${frDay(start)} au ${frDay(end)}`;
  if (start) return `depuis le ${frDay(start)}`;
  if (end) return `jusqu’au ${frDay(end)}`;
  return 'sans limite de dates';
}

export function rolesTable(roles: RoleAttribution[], actions?: (role: RoleAttribution) => Html): Html {
  if (roles.length === 0) return html`<p>Aucun rôle.</p>`;
  return html`<div class="table-wrap"><table>
  <caption>Rôles attribués</caption>
  <thead><tr><th scope="col">Rôle</th><th scope="col">Période</th><th scope="col">Établissements</th><th scope="col">En vigueur</th>${actions ? html`<th scope="col">Actions</th>` : ''}</tr></thead>
  <tbody>${roles.map((r) => html`<tr>
    <th scope="row">${r.role}</th>
    <td>${period(r.start_date, r.end_date)}</td>
    <td>${r.restricts_by_establishment ? (r.establishment_names.length ? r.establishment_names.join(', ') : 'toute l’association') : 'sans objet'}</td>
    <td>${r.is_current ? 'oui' : 'non'}</td>
    ${actions ? html`<td>${actions(r)}</td>` : ''}
  </tr>`)}</tbody>
</table></div>`;
}

function contractsTable(contracts: Contract[]): Html {
  if (contracts.length === 0) return html`<p>Aucun contrat.</p>`;
  return html`<div class="table-wrap"><table>
  <caption>Contrats</caption>
  <thead><tr><th scope="col">Type</th><th scope="col">Période</th><th scope="col">Fin de période d’essai</th><th scope="col">Emploi</th><th scope="col">Heures par semaine</th></tr></thead>
  <tbody>${contracts.map((c) => html`<tr>
    <th scope="row">${c.type_code} — ${c.type_name}</th>
    <td>${period(c.start_date, c.end_date)}</td>
    <td>${frDay(c.trial_end_date) ?? '—'}</td>
    <td>${c.job_title ?? '—'}</td>
    <td>${c.weekly_hours ?? '—'}</td>
  </tr>`)}</tbody>
</table></div>`;
}

function teamsTable(teams: Assignment[]): Html {
  if (teams.length === 0) return html`<p>Aucune équipe.</p>`;
  return html`<ul>${teams.map((t) => html`<li><a href="/backoffice/teams/${t.team}/">${t.team_name}</a> (${period(t.start_date, t.end_date)})</li>`)}</ul>`;
}

async function render(e: Employee, client: pg.PoolClient): Promise<Html> {
  const secondary = e.secondary_establishments.length
    ? (await callRows<{ name: string }>(client, ESTABLISHMENTS_NAMED, { body: { ids: e.secondary_establishments } })).map((r) => r.name).join(', ')
    : '—';
  const roles = e.account
    ? await callValueOrNull<AccountRoles>(client, ACCOUNT_ROLES, { body: { account: e.account.id } }, notFound)
    : null;
  const canDeposit = await callValue<boolean>(client, CAN_DEPOSIT, { body: { employee: e.id } });
  const certificate = await callValueOrNull<Certificate>(client, CERTIFICATE, { body: { employee: e.id } }, notFound);
  return html`<section class="card" aria-labelledby="fiche">
  <h2 id="fiche">La fiche</h2>
  <dl class="facts">
    <dt>Nom</dt><dd>${e.last_name}</dd>
    <dt>Prénom</dt><dd>${e.first_name}</dd>
    <dt>Adresse professionnelle</dt><dd>${e.professional_email ?? '—'}</dd>
    <dt>Date de naissance</dt><dd>${frDay(e.birth_date) ?? '—'}</dd>
    <dt>Agent polyvalent</dt><dd>${e.is_polyvalent ? 'oui' : 'non'}</dd>
    <dt>Établissement principal</dt><dd>${e.main_establishment_name ?? '—'}</dd>
    <dt>Établissements secondaires</dt><dd>${secondary}</dd>
    <dt>Compte</dt><dd>${e.account ? `${e.account.username} — ${e.account.is_active ? 'actif' : 'fermé'}` : 'aucun'}</dd>
  </dl>
</section>
<section class="card" aria-labelledby="contrats">
  <h2 id="contrats">Contrats</h2>
  ${contractsTable(e.contracts)}
</section>
<section class="card" aria-labelledby="equipes">
  <h2 id="equipes">Équipes</h2>
  ${teamsTable(e.teams)}
</section>
${roles ? html`<section class="card" aria-labelledby="roles">
  <h2 id="roles">Rôles</h2>
  ${rolesTable(roles.results)}
  <p><a href="/backoffice/role-attributions/?account=${roles.account.id}">Attributions de rôle de ce compte</a></p>
  ${roles.can_edit ? '' : html`<p class="muted">Les rôles s’attribuent par un compte du personnel d’administration qui détient lui-même ces droits ; personne ne modifie ses propres rôles.</p>`}
</section>` : ''}
<section class="card" aria-labelledby="honorabilite">
  <h2 id="honorabilite">Attestation d’honorabilité</h2>
  ${certificate
    ? html`<p>${certificate.filename}, déposée le ${DATE_TIME.format(new Date(certificate.uploaded_at))} par ${certificate.uploaded_by}.</p>
  ${certificate.file ? html`<p><a href="${certificate.file}">Télécharger l’attestation</a></p>` : message('info', 'Vous n’avez pas le droit d’en lire le contenu.')}`
    : html`<p>Aucune attestation déposée.</p>`}
  ${canDeposit ? html`<p><a href="/backoffice/employees/${e.id}/honorability/">${certificate ? 'Remplacer l’attestation' : 'Déposer l’attestation'}</a></p>` : ''}
</section>`;
}

/** The fields of one contract, as employee_update reads them. */
const CONTRACT_PROPERTIES = {
  type: s.id(),
  start_date: s.date(),
  end_date: s.nullable(s.date()),
  trial_end_date: s.nullable(s.date()),
  job_title: s.nullable(s.text(INPUT_CONTRACT.jobTitleMaxLength)),
  weekly_hours: s.nullable({ type: 'number', exclusiveMinimum: 0, maximum: 48 }),
};

const CONTRACT_FIELDS: FormField[] = [
  { key: 'type', label: 'Type de contrat', options: contractTypeOptions },
  { key: 'start_date', label: 'Début' },
  { key: 'end_date', label: 'Fin', hint: 'Vide : sans fin (CDI).' },
  { key: 'trial_end_date', label: 'Fin de période d’essai' },
  { key: 'job_title', label: 'Emploi' },
  { key: 'weekly_hours', label: 'Heures par semaine', hint: 'De 0 (exclu) à 48 ; par exemple 35 ou 28,5.' },
];

/** The record's contracts to choose from (the change and removal forms). */
const contractOptions = async (_client: pg.PoolClient, row?: Record<string, unknown>) =>
  ((row as Employee | undefined)?.contracts ?? []).map((c) => ({ value: String(c.id), label: `${c.type_code} ${period(c.start_date, c.end_date)}` }));

/** The chosen contract and the version of the list the form was drawn from (409 when stale). */
const CONTRACT_CHOICE = { contract: s.id(), version: s.string({ maxLength: 64 }) };
const CONTRACT_CHOICE_FIELDS: FormField[] = [
  { key: 'contract', label: 'Contrat', options: contractOptions },
  { key: 'version', label: 'Version', widget: 'hidden' },
];

/** The most recent contract: the one a change usually concerns (its end, its hours). */
const latestContract = (e: Employee): Contract | undefined => e.contracts[e.contracts.length - 1];

/** The record's own fields (contracts and teams keep their lists: PATCH leaves absent keys unchanged). */
const RECORD_FIELDS: FormField[] = [
  { key: 'last_name', label: 'Nom' },
  { key: 'first_name', label: 'Prénom' },
  { key: 'professional_email', label: 'Adresse professionnelle', hint: 'Reçoit l’invitation à définir le mot de passe.' },
  { key: 'birth_date', label: 'Date de naissance' },
  { key: 'is_polyvalent', label: 'Agent polyvalent', widget: 'checkbox' },
  { key: 'main_establishment', label: 'Établissement principal', options: establishmentOptions },
  { key: 'secondary_establishments', label: 'Établissements secondaires', options: establishmentOptions },
];


export const employeeResource = defineResource<Employee>({
  slug: 'employees',
  title: 'Salariés',
  summary: 'Fiches des salariés : contrats, équipes, compte actif, rôles et attestation d’honorabilité.',
  available: holds('employee.view_employee_directory'),
  create: {
    title: 'Nouvelle fiche salarié',
    submitLabel: 'Créer la fiche et son compte',
    intro: 'Le compte est ouvert sans mot de passe utilisable, avec le rôle Salarié ; une invitation part vers l’adresse professionnelle si elle est donnée.',
    operationId: 'employees_create',
    fields: RECORD_FIELDS,
    allowed: holds('employee.change_employee_record'),
    done: 'La fiche a été créée.',
  },
  list: {
    operationId: 'employees_list',
    pageSize: 25,
    caption: 'Salariés, par nom',
    empty: 'Aucun salarié ne correspond à ces filtres.',
    filters: [
      { key: 'search', label: 'Recherche', hint: 'Prénom, nom ou adresse électronique.' },
      { key: 'establishment', label: 'Établissement', options: establishmentOptions },
      { key: 'scope', label: 'Périmètre', options: async () => [{ value: 'perimeter', label: 'Mon périmètre' }] },
    ],
    columns: [
      { label: 'Nom', rowHeader: true, value: (e) => html`<a href="/backoffice/employees/${e.id}/">${e.last_name} ${e.first_name}</a>` },
      { label: 'Établissement principal', value: (e) => e.main_establishment_name ?? '—' },
      { label: 'Compte', value: (e) => (e.account ? `${e.account.username}${e.account.is_active ? '' : ' (fermé)'}` : '—') },
    ],
  },
  detail: {
    // employee_get (the API's reading and its 404) with the version the contract forms carry.
    read: READ,
    title: (e) => `${e.first_name} ${e.last_name}`,
    abilities: async (client, id) => callValue<Record<string, boolean>>(client, ABILITIES, { id }),
    render,
    edit: {
      title: 'Modifier la fiche',
      submitLabel: 'Enregistrer',
      operationId: 'employees_partial_update',
      fields: RECORD_FIELDS,
      initial: (e) => ({
        last_name: e.last_name, first_name: e.first_name, professional_email: e.professional_email, birth_date: e.birth_date,
        is_polyvalent: e.is_polyvalent, main_establishment: e.main_establishment, secondary_establishments: e.secondary_establishments,
      }),
      allowed: (_e, can) => Boolean(can.edit),
      done: 'La fiche a été enregistrée.',
    },
    actions: [
      {
        slug: 'account-activation',
        title: 'Compte',
        intro: 'Un compte fermé ne se connecte plus ; ses jetons cessent de fonctionner à la requête suivante.',
        operationId: 'employee_account_activation',
        fields: [{ key: 'is_active', label: 'Compte actif', widget: 'checkbox' }],
        initial: (e) => ({ is_active: e.account?.is_active ?? false }),
        allowed: (e, can) => e.account !== null && Boolean(can.activation),
        submitLabel: 'Enregistrer',
        done: 'Le compte a été mis à jour.',
      },
      {
        slug: 'ajouter-contrat',
        title: 'Ajouter un contrat',
        intro: 'Les contrats d’un salarié ne se chevauchent pas : datez d’abord la fin du contrat en cours si besoin.',
        call: CONTRACT_ADD,
        body: s.object(CONTRACT_PROPERTIES, ['type', 'start_date']),
        fields: CONTRACT_FIELDS,
        initial: () => ({}),
        allowed: (_e, can) => Boolean(can.edit),
        submitLabel: 'Ajouter le contrat',
        done: 'Le contrat a été ajouté.',
      },
      {
        slug: 'modifier-contrat',
        title: 'Modifier un contrat',
        intro: 'Les champs sont préremplis avec le contrat le plus récent ; pour un autre contrat, choisissez-le et saisissez tous ses champs : '
          + 'ils remplacent les siens.',
        call: CONTRACT_CHANGE,
        body: s.object({ ...CONTRACT_CHOICE, ...CONTRACT_PROPERTIES }, ['contract', 'version', 'type', 'start_date']),
        fields: [...CONTRACT_CHOICE_FIELDS, ...CONTRACT_FIELDS],
        initial: (e) => {
          const c = latestContract(e);
          return c ? {
            contract: c.id, version: e.contracts_version, type: c.type, start_date: c.start_date, end_date: c.end_date,
            trial_end_date: c.trial_end_date, job_title: c.job_title, weekly_hours: c.weekly_hours,
          } : {};
        },
        allowed: (e, can) => Boolean(can.edit) && e.contracts.length > 0,
        submitLabel: 'Enregistrer le contrat',
        done: 'Le contrat a été modifié.',
      },
      {
        slug: 'supprimer-contrat',
        title: 'Supprimer un contrat',
        intro: 'Le contrat est effacé de la fiche (un contrat terminé se garde en datant sa fin).',
        call: CONTRACT_REMOVE,
        body: s.object(CONTRACT_CHOICE, ['contract', 'version']),
        fields: CONTRACT_CHOICE_FIELDS,
        initial: (e) => ({ contract: latestContract(e)?.id, version: e.contracts_version }),
        allowed: (e, can) => Boolean(can.edit) && e.contracts.length > 0,
        submitLabel: 'Supprimer le contrat',
        done: 'Le contrat a été supprimé.',
        danger: true,
      },
      {
        slug: 'remove-certificate',
        title: 'Retirer l’attestation d’honorabilité',
        intro: 'Le fichier est supprimé du stockage.',
        call: CERTIFICATE_DELETE,
        body: { type: 'object', properties: {} },
        fields: [],
        initial: () => ({}),
        allowed: (_e, can) => Boolean(can.remove_certificate),
        submitLabel: 'Retirer l’attestation',
        done: 'L’attestation a été retirée.',
        danger: true,
      },
    ],
  },
});
