/**
 * Delegations of decisions (issue 30): every delegation the signed-in account reads (RH n1,
 * RH n2 and Admin: those of the deciders of their perimeter; anyone: those given, received or
 * authored), filtered by account and by whether it is in force; a delegation is ended early from
 * its page. Every rule is in sql/delegations/api.sql.
 */
import { callValue, declareCall, rowId } from '../calls.js';
import { html } from '../html.js';
import { defineResource, type Option } from '../registry.js';
import { optionsFrom } from './staff.js';

interface Delegation {
  id: number;
  delegator: number;
  delegator_name: string | null;
  delegate: number;
  delegate_name: string | null;
  start_date: string;
  end_date: string;
  kinds: 'absences' | 'shift_changes' | 'both';
  all_establishments: boolean;
  establishment_names: string[];
  comment: string | null;
  created_by_name: string | null;
  created_at: string;
  ended_at: string | null;
  ended_by_name: string | null;
  is_active: boolean;
  is_over: boolean;
}

const KINDS: Record<Delegation['kinds'], string> = {
  absences: 'absences',
  shift_changes: 'modifications de journée',
  both: 'absences et modifications de journée',
};
const frDate = (iso: string) => `${iso.slice(8, 10)}/${iso.slice(5, 7)}/${iso.slice(0, 4)}`;
const stateOf = (d: Delegation) => (d.is_over ? 'terminée' : d.is_active ? 'en cours' : 'à venir');
const where = (d: Delegation) => (d.all_establishments ? 'tout le périmètre du délégant' : d.establishment_names.join(', '));

const accountOptions = optionsFrom(declareCall('delegations: accounts', 'app_hidden.account_choices', [], { rows: true }));
const READS_ALL = declareCall('delegations: HR', 'app_hidden.current_account_is_hr');
const GET = declareCall('delegations: read', 'app_public.delegation_get', [rowId()]);
const activeOptions = async (): Promise<Option[]> => [{ value: 'true', label: 'En vigueur' }, { value: 'false', label: 'À venir ou terminées' }];

export const delegationResource = defineResource<Delegation>({
  slug: 'delegations',
  title: 'Délégations de décision',
  summary: 'Qui décide à la place de qui, sur quelles dates, quels établissements et quelles demandes ; fin anticipée.',
  available: (client) => callValue<boolean>(client, READS_ALL),
  list: {
    operationId: 'delegations_list',
    pageSize: 25,
    caption: 'Délégations, les plus récentes d’abord',
    empty: 'Aucune délégation ne correspond à ces filtres.',
    filters: [
      { key: 'account', label: 'Compte', hint: 'Délégant ou délégataire.', options: accountOptions },
      { key: 'active', label: 'État', options: activeOptions },
    ],
    columns: [
      { label: 'Délégant', rowHeader: true, value: (d) => html`<a href="/backoffice/delegations/${d.id}/">${d.delegator_name ?? String(d.delegator)}</a>` },
      { label: 'Délégataire', value: (d) => d.delegate_name ?? String(d.delegate) },
      { label: 'Période', value: (d) => `du ${frDate(d.start_date)} au ${frDate(d.end_date)}` },
      { label: 'Décisions', value: (d) => KINDS[d.kinds] },
      { label: 'Établissements', value: where },
      { label: 'État', value: stateOf },
    ],
  },
  detail: {
    read: GET,
    title: (d) => `${d.delegator_name ?? d.delegator} → ${d.delegate_name ?? d.delegate}`,
    render: async (row) => {
      const d = row as Delegation;
      return html`<section class="card" aria-labelledby="fiche">
  <h2 id="fiche">La délégation</h2>
  <dl class="facts">
    <dt>Délégant</dt><dd>${d.delegator_name ?? String(d.delegator)}</dd>
    <dt>Délégataire</dt><dd>${d.delegate_name ?? String(d.delegate)}</dd>
    <dt>Période</dt><dd>du ${frDate(d.start_date)} au ${frDate(d.end_date)} (inclus)</dd>
    <dt>Décisions</dt><dd>${KINDS[d.kinds]}</dd>
    <dt>Établissements</dt><dd>${where(d)}</dd>
    <dt>État</dt><dd>${stateOf(d)}${d.ended_at ? ` (fin anticipée par ${d.ended_by_name ?? 'un compte'})` : ''}</dd>
    <dt>Créée par</dt><dd>${d.created_by_name ?? '—'}</dd>
    ${d.comment ? html`<dt>Commentaire</dt><dd>${d.comment}</dd>` : ''}
  </dl>
</section>`;
    },
    actions: [
      {
        slug: 'terminer',
        title: 'Mettre fin à la délégation',
        intro: 'Le délégataire cesse aussitôt de décider à la place du délégant ; les décisions déjà prises restent.',
        operationId: 'delegations_end',
        fields: [],
        initial: () => ({}),
        allowed: (d) => !(d as Delegation).is_over,
        submitLabel: 'Mettre fin maintenant',
        done: 'La délégation est terminée.',
        danger: true,
      },
    ],
  },
});
