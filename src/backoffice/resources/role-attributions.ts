/**
 * Role attributions (issue 13, point 4): a role given to an account, with dates and, for the
 * roles of the manager workspace, establishments (none: the whole association). Read as the
 * policies allow (one's own, the directory readers); written by staff accounts only, inside
 * their employee-record perimeter, never on their own account, never beyond the rights they
 * hold themselves: every rule is in sql/org/role_attributions.sql.
 */
import { s } from '../../http/schema.js';
import { html } from '../html.js';
import { defineResource, type FormField, type Option } from '../registry.js';
import { period, type RoleAttribution } from './employees.js';
import { establishmentOptions } from './referentials.js';
import { anyOf, declareCall, holds, inputArg, isStaff, listCall, rowId } from '../calls.js';
import { optionsFrom } from './staff.js';

interface ListedAttribution extends RoleAttribution {
  account_username: string;
  account_name: string | null;
}

interface Attribution extends ListedAttribution {
  account_employee: number | null;
  can_edit: boolean;
}

/** The nine roles, in the display precedence of CONTRACT section 2. */
export const ROLE_NAMES = ['Admin', 'RH n1', 'RH n2', 'DA', 'Manager n1', 'Manager n2', 'Salarié', 'Intérimaire', 'Service Paie'];

const roleOptions = async (): Promise<Option[]> => ROLE_NAMES.map((name) => ({ value: name, label: name }));

const accountOptions = optionsFrom(declareCall('role-attributions: accounts', 'app_hidden.account_choices', [], { rows: true }));

const DATES_AND_ESTABLISHMENTS: FormField[] = [
  { key: 'start_date', label: 'Début', hint: 'Inclus ; vide : sans date de début.' },
  { key: 'end_date', label: 'Fin', hint: 'Incluse ; vide : sans fin.' },
  {
    key: 'establishments', label: 'Établissements', options: establishmentOptions,
    hint: 'Aucun coché : toute l’association. Seuls les rôles de l’encadrement (tous sauf Salarié et Intérimaire) se restreignent par établissement.',
  },
];

const datesAndEstablishments = {
  start_date: s.nullable(s.date()),
  end_date: s.nullable(s.date()),
  establishments: s.array(s.id(), { maxItems: 200 }),
};

/** The arguments the SQL functions read from the body (null dates are no bound, null establishments none). */
const DATES_AND_ESTABLISHMENTS_ARGS = [inputArg('start_date', 'date'), inputArg('end_date', 'date'), inputArg('establishments', 'int[]')];

const GET = declareCall('role-attributions: read', 'app_public.role_attribution_get', [rowId()]);
const GRANT = declareCall('role-attributions: grant', 'app_public.role_attribution_grant',
  [inputArg('account', 'int'), inputArg('role', 'text'), ...DATES_AND_ESTABLISHMENTS_ARGS]);
const CHANGE = declareCall('role-attributions: change', 'app_public.role_attribution_change', [rowId(), ...DATES_AND_ESTABLISHMENTS_ARGS]);
const DELETE = declareCall('role-attributions: delete', 'app_public.role_attribution_delete', [rowId()]);

const establishmentsOf = (r: RoleAttribution) =>
  r.restricts_by_establishment ? (r.establishment_names.length ? r.establishment_names.join(', ') : 'toute l’association') : 'sans objet';

export const roleAttributionResource = defineResource<ListedAttribution>({
  slug: 'role-attributions',
  title: 'Attributions de rôle',
  summary: 'Qui détient quel rôle, sur quelles dates et quels établissements ; attributions par le personnel d’administration.',
  available: anyOf(holds('employee.view_employee_directory'), isStaff),
  list: {
    ...listCall('role-attributions: list', 'app_public.role_attributions_search',
      s.object({ account: s.id(), role: s.enum(ROLE_NAMES), establishment: s.id() })),
    pageSize: 25,
    caption: 'Attributions de rôle, en vigueur d’abord',
    empty: 'Aucune attribution ne correspond à ces filtres.',
    filters: [
      { key: 'account', label: 'Compte', options: accountOptions },
      { key: 'role', label: 'Rôle', options: roleOptions },
      { key: 'establishment', label: 'Établissement', hint: 'Attributions qui le couvrent (y compris sur toute l’association).', options: establishmentOptions },
    ],
    columns: [
      { label: 'Compte', rowHeader: true, value: (r) => html`<a href="/backoffice/role-attributions/${r.id}/">${r.account_username}</a>${r.account_name && r.account_name !== r.account_username ? html`<br><span class="muted">${r.account_name}</span>` : ''}` },
      { label: 'Rôle', value: (r) => r.role },
      { label: 'Période', value: (r) => period(r.start_date, r.end_date) },
      { label: 'Établissements', value: establishmentsOf },
      { label: 'En vigueur', value: (r) => (r.is_current ? 'oui' : 'non') },
    ],
  },
  create: {
    title: 'Attribuer un rôle',
    submitLabel: 'Attribuer le rôle',
    intro: 'Vous n’attribuez que des droits que vous détenez vous-même, au même rang ou au-dessus, sur ces établissements ; jamais à votre propre compte.',
    call: GRANT,
    body: s.object({ account: s.id(), role: s.enum(ROLE_NAMES), ...datesAndEstablishments }, ['account', 'role']),
    fields: [
      { key: 'account', label: 'Compte', options: accountOptions },
      { key: 'role', label: 'Rôle', options: roleOptions },
      ...DATES_AND_ESTABLISHMENTS,
    ],
    allowed: isStaff,
    done: 'Le rôle a été attribué.',
  },
  detail: {
    read: GET,
    title: (r) => `${r.role} — ${r.account_username}`,
    render: async (row) => {
      const r = row as Attribution;
      return html`<section class="card" aria-labelledby="fiche">
  <h2 id="fiche">L’attribution</h2>
  <dl class="facts">
    <dt>Compte</dt><dd>${r.account_username}${r.account_name && r.account_name !== r.account_username ? ` (${r.account_name})` : ''}${r.account_employee
      ? html` — <a href="/backoffice/employees/${r.account_employee}/">fiche salarié</a>` : ''}</dd>
    <dt>Rôle</dt><dd>${r.role}</dd>
    <dt>Période</dt><dd>${period(r.start_date, r.end_date)}</dd>
    <dt>Établissements</dt><dd>${establishmentsOf(r)}</dd>
    <dt>En vigueur aujourd’hui</dt><dd>${r.is_current ? 'oui' : 'non'}</dd>
  </dl>
  ${r.can_edit ? '' : html`<p class="muted">Vous ne pouvez pas modifier cette attribution : réservé au personnel d’administration qui détient ces droits, et jamais sur son propre compte.</p>`}
</section>`;
    },
    edit: {
      title: 'Modifier les dates et les établissements',
      submitLabel: 'Enregistrer',
      intro: 'Le rôle ne change pas : pour un autre rôle, attribuez-le et datez la fin de celui-ci.',
      call: CHANGE,
      body: s.object(datesAndEstablishments),
      fields: DATES_AND_ESTABLISHMENTS,
      initial: (r) => ({ start_date: r.start_date, end_date: r.end_date, establishments: r.establishments }),
      allowed: (r) => Boolean((r as Attribution).can_edit),
      done: 'L’attribution a été enregistrée.',
    },
    actions: [
      {
        slug: 'supprimer',
        title: 'Supprimer l’attribution',
        intro: 'Pour garder l’historique, datez plutôt sa fin.',
        call: DELETE,
        body: s.object({}),
        fields: [],
        initial: () => ({}),
        allowed: (r) => Boolean((r as Attribution).can_edit),
        submitLabel: 'Supprimer',
        done: 'L’attribution a été supprimée.',
        danger: true,
        afterwards: 'list',
      },
    ],
  },
});
