/**
 * Role attributions (issue 13, point 4): a role given to an account, with dates and, for the
 * roles of the manager workspace, establishments (none: the whole association). Read as the
 * policies allow (one's own, the directory readers); written by staff accounts only, inside
 * their employee-record perimeter, never on their own account, never beyond the rights they
 * hold themselves: every rule is in sql/backoffice/role_attributions.sql.
 */
import type pg from 'pg';
import { s } from '../../http/schema.js';
import { html } from '../html.js';
import { defineResource, type FormField, type Option } from '../registry.js';
import { period, type RoleAttribution } from './employees.js';
import { establishmentOptions } from './referentials.js';
import { isStaff } from './staff.js';

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

async function accountOptions(client: pg.PoolClient): Promise<Option[]> {
  return (await client.query<Option>(
    `select a.id::text as value, a.username || ' — ' || coalesce(app_hidden.account_display_name(a.id), a.username) as label
     from app_public.accounts a order by lower(a.username)`)).rows;
}

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

/** The body of the SQL functions, built from the form's keys (null dates are no bound). */
const BODY_SQL = "jsonb_build_object('start_date', $2::text, 'end_date', $3::text, 'establishments', coalesce($4::jsonb, '[]'::jsonb))";

const establishmentsOf = (r: RoleAttribution) =>
  r.restricts_by_establishment ? (r.establishment_names.length ? r.establishment_names.join(', ') : 'toute l’association') : 'sans objet';

export const roleAttributionResource = defineResource<ListedAttribution>({
  slug: 'role-attributions',
  title: 'Attributions de rôle',
  summary: 'Qui détient quel rôle, sur quelles dates et quels établissements ; attributions par le personnel d’administration.',
  available: async (client) => (await client.query<{ ok: boolean }>(
    "select app_hidden.current_account_has('employee.view_employee_directory') or app_hidden.current_account_is_staff() as ok")).rows[0]!.ok,
  list: {
    call: {
      query: s.object({ account: s.id(), role: s.enum(ROLE_NAMES), establishment: s.id() }),
      sql: 'select app_public.role_attributions_search(p_account => $1, p_role => $2, p_establishment => $3, p_page => $4, p_page_size => $5) as result',
      keys: ['account', 'role', 'establishment'],
    },
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
    call: {
      body: s.object({ account: s.id(), role: s.enum(ROLE_NAMES), ...datesAndEstablishments }, ['account', 'role']),
      sql: `select app_public.role_attribution_grant(p_account => $1,
              p_body => jsonb_build_object('role', $2::text, 'start_date', $3::text, 'end_date', $4::text,
                                           'establishments', coalesce($5::jsonb, '[]'::jsonb))) as result`,
      keys: ['account', 'role', 'start_date', 'end_date', 'establishments'],
    },
    fields: [
      { key: 'account', label: 'Compte', options: accountOptions },
      { key: 'role', label: 'Rôle', options: roleOptions },
      ...DATES_AND_ESTABLISHMENTS,
    ],
    allowed: isStaff,
    done: 'Le rôle a été attribué.',
  },
  detail: {
    sql: 'select app_public.role_attribution_get($1) as result',
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
      call: {
        body: s.object(datesAndEstablishments),
        sql: `select app_public.role_attribution_change($1, ${BODY_SQL}) as result`,
        keys: ['start_date', 'end_date', 'establishments'],
      },
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
        call: { body: s.object({}), sql: 'select app_public.role_attribution_delete($1) as result', keys: [] },
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
