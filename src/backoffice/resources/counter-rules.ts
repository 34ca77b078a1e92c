/**
 * Counter rules (issue 27 point 1): per establishment (or the association's default) and
 * counter code, the annual amount (jours ouvrés / ouvrables), the acquisition (at the opening
 * or month by month), the rounding, the proration and the carry-over. Written by staff
 * accounts, read by HR of the establishment (sql/counters/rules.sql: the functions called
 * here check it all; the table's policies again).
 */
import type pg from 'pg';
import { s } from '../../http/schema.js';
import { html } from '../html.js';
import { defineResource, type FormField, type Option } from '../registry.js';
import { YES_NO, isStaff, staffAbilities } from './staff.js';

interface CounterRule {
  id: number;
  establishment: number | null;
  establishment_name: string | null;
  counter_code: string;
  counter_name: string;
  unit: 'day' | 'hour';
  annual_amount: string | null;
  annual_amount_ouvrables: string | null;
  acquisition: 'opening' | 'monthly';
  rounding: 'hundredth' | 'half_up' | 'whole_up';
  prorate: boolean;
  carry_over: 'none' | 'all' | 'ceiling';
  carry_over_ceiling: string | null;
  carry_over_until: string | null;
  monthly_amount: string | null;
  monthly_amount_ouvrables: string | null;
  may_write?: boolean;
}

export const ACQUISITION_LABELS: Record<string, string> = { opening: 'À l’ouverture du compteur', monthly: 'Mois par mois' };
export const ROUNDING_LABELS: Record<string, string> = {
  hundredth: 'Au centième', half_up: 'Au demi supérieur', whole_up: 'À l’unité supérieure',
};
export const CARRY_OVER_LABELS: Record<string, string> = { none: 'Aucun report', all: 'Tout le solde', ceiling: 'Jusqu’à un plafond' };

const labelled = (labels: Record<string, string>) => async (): Promise<Option[]> =>
  Object.entries(labels).map(([value, label]) => ({ value, label }));

/** Choices read by the named SQL function of sql/counters/rules.sql, as the signed-in account. */
export function ruleChoices(what: 'establishments' | 'counters') {
  return async (client: pg.PoolClient): Promise<Option[]> =>
    (await client.query<Option>('select value, label from app_public.counter_rule_choices($1)', [what])).rows;
}

const amount = (value: string | null) => (value == null ? '—' : value.replace('.', ','));
const unitOf = (r: CounterRule) => (r.unit === 'day' ? 'j' : 'h');

/** « 25 j (ouvrés) / 30 j (ouvrables) », « 20 h », « aucun compteur ». */
export function annualText(r: CounterRule): string {
  if (r.annual_amount == null) return 'Aucun compteur ouvert';
  if (r.annual_amount_ouvrables == null) return `${amount(r.annual_amount)} ${unitOf(r)}`;
  return `${amount(r.annual_amount)} j ouvrés / ${amount(r.annual_amount_ouvrables)} j ouvrables`;
}

function acquisitionText(r: CounterRule): string {
  if (r.acquisition !== 'monthly') return ACQUISITION_LABELS.opening!;
  const monthly = r.monthly_amount_ouvrables == null ? `${amount(r.monthly_amount)} ${unitOf(r)}`
    : `${amount(r.monthly_amount)} j ouvrés / ${amount(r.monthly_amount_ouvrables)} j ouvrables`;
  return `Mois par mois (${monthly} par mois, sur l’année précédente)`;
}

function carryOverText(r: CounterRule): string {
  const base = r.carry_over === 'ceiling' ? `Jusqu’à ${amount(r.carry_over_ceiling)} ${unitOf(r)}` : CARRY_OVER_LABELS[r.carry_over]!;
  return r.carry_over !== 'none' && r.carry_over_until ? `${base}, jusqu’au ${r.carry_over_until} de l’année suivante` : base;
}

const decimal = s.nullable({ type: 'number' });
const BODY = s.object({
  establishment: s.nullable(s.id()),
  counter_code: s.text(16),
  annual_amount: decimal,
  annual_amount_ouvrables: decimal,
  acquisition: s.enum(['opening', 'monthly']),
  rounding: s.enum(['hundredth', 'half_up', 'whole_up']),
  prorate: s.bool(),
  carry_over: s.enum(['none', 'all', 'ceiling']),
  carry_over_ceiling: decimal,
  carry_over_until: s.nullable(s.text(5)),
}, ['counter_code', 'acquisition', 'rounding', 'prorate', 'carry_over']);
const KEYS = ['establishment', 'counter_code', 'annual_amount', 'annual_amount_ouvrables', 'acquisition', 'rounding', 'prorate',
  'carry_over', 'carry_over_ceiling', 'carry_over_until'];
const SAVE = 'select app_public.counter_rule_save($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) as result';
const FIELDS: FormField[] = [
  { key: 'establishment', label: 'Établissement', hint: 'Vide : règle par défaut de l’association (un établissement peut la remplacer).',
    options: ruleChoices('establishments') },
  { key: 'counter_code', label: 'Compteur', options: ruleChoices('counters') },
  { key: 'annual_amount', label: 'Quantité annuelle', hint: 'En jours (ouvrés pour un compteur en jours) ou en heures ; vide : aucun compteur ouvert. Virgule acceptée.' },
  { key: 'annual_amount_ouvrables', label: 'Quantité annuelle en jours ouvrables', hint: 'Pour les établissements qui décomptent en jours ouvrables (CP : 30) ; vide : la même quantité.' },
  { key: 'acquisition', label: 'Acquisition', options: labelled(ACQUISITION_LABELS),
    hint: 'Mois par mois : le compteur d’une année s’acquiert sur les douze mois de l’année précédente (CP : 2,08 j ouvrés ou 2,5 j ouvrables par mois).' },
  { key: 'rounding', label: 'Arrondi', options: labelled(ROUNDING_LABELS), hint: 'Des cumuls mensuels et des proratas.' },
  { key: 'prorate', label: 'Au prorata d’un contrat commencé ou terminé dans la période' },
  { key: 'carry_over', label: 'Report du solde en fin d’année', options: labelled(CARRY_OVER_LABELS) },
  { key: 'carry_over_ceiling', label: 'Plafond du report', hint: 'Seulement pour un report plafonné ; ce qui dépasse expire.' },
  { key: 'carry_over_until', label: 'Date limite du report (JJ/MM de l’année suivante)', hint: 'Par exemple 31/05 ; vide : le report vaut toute l’année suivante.', widget: 'text' },
];

const formValues = (r: CounterRule) => ({
  establishment: r.establishment, counter_code: r.counter_code, annual_amount: r.annual_amount?.replace('.', ','),
  annual_amount_ouvrables: r.annual_amount_ouvrables?.replace('.', ','), acquisition: r.acquisition, rounding: r.rounding,
  prorate: r.prorate, carry_over: r.carry_over, carry_over_ceiling: r.carry_over_ceiling?.replace('.', ','),
  carry_over_until: r.carry_over_until,
});

async function readsRules(client: pg.PoolClient): Promise<boolean> {
  return (await isStaff(client)) || (await client.query<{ ok: boolean }>(
    "select app_hidden.current_account_has('employee.change_employee_record') as ok")).rows[0]!.ok;
}

export const counterRulesResource = defineResource<CounterRule>({
  slug: 'counter-rules',
  title: 'Règles des compteurs',
  summary: 'Acquisition annuelle ou mensuelle, prorata, report et expiration, par établissement ; ouverture de l’année suivante.',
  available: readsRules,
  list: {
    call: {
      query: s.object({ establishment: s.id(), counter_code: s.text(16) }),
      sql: 'select app_public.counter_rules_search(p_establishment => $1, p_counter_code => $2, p_page => $3, p_page_size => $4) as result',
      keys: ['establishment', 'counter_code'],
    },
    pageSize: 50,
    caption: 'Règles des compteurs : celles de l’association d’abord, puis celles des établissements',
    empty: 'Aucune règle ne correspond à ces filtres.',
    filters: [
      { key: 'establishment', label: 'Établissement', options: ruleChoices('establishments') },
      { key: 'counter_code', label: 'Compteur', options: ruleChoices('counters') },
    ],
    columns: [
      { label: 'Compteur', rowHeader: true, value: (r) => html`<a href="/backoffice/counter-rules/${r.id}/">${r.counter_code}</a> — ${r.counter_name}` },
      { label: 'Établissement', value: (r) => r.establishment_name ?? 'Association (par défaut)' },
      { label: 'Par an', value: (r) => annualText(r) },
      { label: 'Acquisition', value: (r) => acquisitionText(r) },
      { label: 'Prorata', value: (r) => YES_NO(r.prorate) },
      { label: 'Report', value: (r) => carryOverText(r) },
    ],
  },
  create: {
    title: 'Nouvelle règle de compteur',
    intro: 'Une règle d’établissement remplace, pour ses salariés (établissement principal), la règle par défaut du même compteur.',
    submitLabel: 'Créer la règle',
    call: { body: BODY, sql: 'select app_public.counter_rule_save(null, $1, $2, $3, $4, $5, $6, $7, $8, $9, $10) as result', keys: KEYS },
    fields: FIELDS,
    initial: () => ({ acquisition: 'opening', rounding: 'hundredth', prorate: true, carry_over: 'none' }),
    allowed: isStaff,
    done: 'La règle a été créée.',
  },
  detail: {
    sql: 'select app_public.counter_rule_get($1) as result',
    title: (r) => `Règle ${r.counter_code} — ${r.establishment_name ?? 'association (par défaut)'}`,
    abilities: staffAbilities,
    render: async (r) => html`<section class="card" aria-labelledby="fiche">
  <h2 id="fiche">La règle</h2>
  <dl class="facts">
    <dt>Compteur</dt><dd>${r.counter_code} — ${r.counter_name} (${r.unit === 'day' ? 'jours' : 'heures'})</dd>
    <dt>Établissement</dt><dd>${r.establishment_name ?? 'Association (règle par défaut)'}</dd>
    <dt>Quantité annuelle</dt><dd>${annualText(r)}</dd>
    <dt>Acquisition</dt><dd>${acquisitionText(r)}</dd>
    <dt>Arrondi</dt><dd>${ROUNDING_LABELS[r.rounding]}</dd>
    <dt>Prorata</dt><dd>${r.prorate ? 'Oui, pour un contrat commencé ou terminé dans la période' : 'Non'}</dd>
    <dt>Report</dt><dd>${carryOverText(r)}</dd>
  </dl>
  <p><a href="/backoffice/counter-openings/">Ouvrir les compteurs d’une année</a></p>
</section>`,
    edit: {
      title: 'Modifier la règle',
      submitLabel: 'Enregistrer',
      call: { body: BODY, sql: SAVE, keys: KEYS },
      fields: FIELDS,
      initial: formValues,
      allowed: (_r, can) => Boolean(can.edit),
      done: 'La règle a été enregistrée.',
    },
    actions: [
      {
        slug: 'supprimer',
        title: 'Supprimer la règle de l’établissement',
        intro: 'Ses salariés suivent de nouveau la règle par défaut de l’association.',
        call: { body: s.object({}), sql: 'select app_public.counter_rule_delete($1) as result', keys: [] },
        fields: [],
        initial: () => ({}),
        allowed: (r, can) => Boolean(can.delete) && r.establishment != null,
        submitLabel: 'Supprimer',
        done: 'La règle a été supprimée.',
        danger: true,
        afterwards: 'list',
      },
    ],
  },
});
