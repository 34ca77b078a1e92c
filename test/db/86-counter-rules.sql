-- Counter rules (issue 27 point 1, sql/counters/rules.sql): defaults loaded with the
-- reference data, written by staff only (every field error at once, audited), read by staff
-- and by HR of the establishment; the rounding and proration helpers.
begin;
select plan(31);
select tests.freeze('2026-11-16 10:00+01');

create function pg_temp.errors_of(p_sql text) returns jsonb language plpgsql as $$
declare
  v_detail text;
  v_message text;
begin
  execute p_sql;
  return null;
exception when others then
  get stacked diagnostics v_detail = pg_exception_detail, v_message = message_text;
  return case when v_detail like '{%' then v_detail::jsonb else jsonb_build_object(coalesce(v_detail, 'detail'), jsonb_build_array(v_message)) end;
end;
$$;
grant execute on function pg_temp.errors_of(text) to public;

select tests.as_owner();
select tests.id('establishments', 'E1') as e1, tests.id('establishments', 'E2') as e2 \gset

-- Defaults of the reference data.
select is((select jsonb_build_object('amount', annual_amount, 'ouvrables', annual_amount_ouvrables, 'acquisition', acquisition,
                                     'carry_over', carry_over, 'until', carry_over_until)
           from app_public.counter_rules where establishment_id is null and counter_code = 'CP'),
  '{"amount": 25.00, "ouvrables": 30.00, "acquisition": "monthly", "carry_over": "all", "until": "31/05"}'::jsonb,
  'default CP: 25 jours ouvrés / 30 ouvrables, monthly, carried over whole until 31 May');
select is((select array_agg(counter_code order by counter_code) from app_public.counter_rules where establishment_id is null and annual_amount is null),
  array['ANC', 'DLG_CS', 'DLG_CSE', 'DLG_DS', 'RTT'], 'seniority, RTT and delegation hours: no amount by default');
select is((select annual_amount from app_public.counter_rules where establishment_id is null and counter_code = 'CT'), 9.00::numeric,
  'default CT: 9 days at the opening');

-- Helpers: rounding, monthly parts (cumulative, so twelve months make the year), proration.
select is(app_hidden.counter_rule_round(25.0 / 12, 'hundredth'), 2.08, 'hundredth: 25 / 12 = 2.08');
select is(app_hidden.counter_rule_round(2.1, 'half_up'), 2.5, 'half_up: 2.1 → 2.5');
select is(app_hidden.counter_rule_round(2.1, 'whole_up'), 3.0, 'whole_up: 2.1 → 3');
select is((select sum(app_hidden.counter_month_part(25, 'hundredth', k, 30, 30, true)) from generate_series(1, 12) k), 25.00,
  'twelve full months of a 25-day year make 25.00 exactly');
select is((select array_agg(app_hidden.counter_month_part(25, 'hundredth', k, 30, 30, true) order by k) from generate_series(1, 3) k),
  array[2.08, 2.09, 2.08]::numeric[], 'the monthly parts are 2.08, 2.09, 2.08, ...');
select is(app_hidden.counter_month_part(30, 'hundredth', 1, 31, 31, true), 2.50, 'ouvrables: 2.5 a month');
select is(app_hidden.counter_month_part(30, 'hundredth', 1, 16, 31, true), 1.29, 'a contract from the 16th of a 31-day month: 2.5 × 16 / 31');
select is(app_hidden.counter_month_part(30, 'hundredth', 1, 16, 31, false), 2.50, 'not prorated: the whole part');
select is(app_hidden.counter_opening_part(9, 'half_up', 92, 365, true), 2.5, 'opening, 92 days of 365 at half_up: 9 × 92 / 365 = 2.27 → 2.5');

-- Staff writes; every field error at once; nothing written.
select tests.authenticate_as('staff');
select is(pg_temp.errors_of(format($$select app_public.counter_rule_save(null, %s, 'cp', -1, 30, 'weekly', 'hundredth', true, 'ceiling', null, '30/02')$$, :e1)),
  jsonb_build_object(
    'counter_code', jsonb_build_array('Le compteur CP a déjà une règle pour cet établissement.'),
    'annual_amount', jsonb_build_array('Une quantité entre 0 et 999,99, deux décimales au plus ; vide : aucun compteur ouvert.'),
    'acquisition', jsonb_build_array('Acquisition à l’ouverture (opening) ou mois par mois (monthly).'),
    'carry_over_ceiling', jsonb_build_array('Le plafond du report est obligatoire pour un report plafonné.'),
    'carry_over_until', jsonb_build_array('Une date de l’année suivante au format JJ/MM, par exemple 31/05 (le 29/02 n’existe pas chaque année).'))
  - 'counter_code',
  'bad amount, acquisition, missing ceiling and an impossible date: refused together under their fields');
select (app_public.counter_rule_save(null, :e1, 'cp', 25, 30, 'monthly', 'hundredth', true, 'ceiling', 10, '31/05') ->> 'id')::int as e1_cp \gset
select is((select jsonb_build_object('e', establishment_id, 'code', counter_code, 'ceiling', carry_over_ceiling)
           from app_public.counter_rules where id = :e1_cp),
  jsonb_build_object('e', :e1, 'code', 'CP', 'ceiling', 10.00), 'staff creates E1''s CP rule (code upper-cased), ceiling 10');
select is(pg_temp.errors_of(format($$select app_public.counter_rule_save(null, %s, 'CP', 25, null, 'opening', 'hundredth', true, 'none', null, null)$$, :e1)) -> 'counter_code',
  '["Le compteur CP a déjà une règle pour cet établissement."]', 'a second CP rule for E1 is refused under counter_code');
select is(pg_temp.errors_of($$select app_public.counter_rule_save(null, null, 'DLG_CSE', 20, 24, 'opening', 'hundredth', true, 'none', null, '31/05')$$),
  jsonb_build_object(
    'counter_code', jsonb_build_array('Le compteur DLG_CSE a déjà une règle par défaut de l’association.'),
    'annual_amount_ouvrables', jsonb_build_array('Un compteur en heures ne dépend pas de la base de décompte : laissez ce champ vide.'),
    'carry_over_until', jsonb_build_array('Sans report, il n’y a pas de date limite : laissez ce champ vide.')),
  'hours have no count base, no deadline without carry-over, one default per code');
select is(pg_temp.errors_of($$select app_public.counter_rule_save(null, null, 'AN', 20, null, 'opening', 'hundredth', true, 'none', null, null)$$) -> 'counter_code',
  '["Le compteur AN n’est pas un compteur de congés ou d’heures consommable : il n’a pas de règle d’acquisition."]',
  'a counter that is not consumable has no rule');
select tests.as_owner();
select is((select count(*)::int from app_private.audit_log where model = 'counter_rule' and target_id = :e1_cp and verb = 'Creation'), 1,
  'the creation is audited');
select tests.authenticate_as('staff');
select is(app_public.counter_rule_save(:e1_cp, :e1, 'CP', 25, 30, 'monthly', 'hundredth', true, 'all', null, '30/06') ->> 'carry_over_until', '30/06',
  'staff rewrites the rule');
select tests.as_owner();
select is((select count(*)::int from app_private.audit_log where model = 'counter_rule' and target_id = :e1_cp and verb = 'Modification'), 1,
  'the change is audited');
select tests.authenticate_as('staff');
select is(pg_temp.errors_of(format('select app_public.counter_rule_delete(%s)',
  (select id from app_public.counter_rules where establishment_id is null and counter_code = 'CP'))) -> 'non_field_errors' ->> 0,
  'Une règle par défaut de l’association ne se supprime pas : modifiez-la (une quantité vide n’ouvre aucun compteur).',
  'a default is not deleted');

-- HR reads (defaults and their establishments), others read nothing and write nothing.
select tests.as_owner();
select (app_public.counter_rule_save(null, :e2, 'CT', 12, null, 'opening', 'whole_up', true, 'none', null, null) ->> 'id')::int as e2_ct
  from (select set_config('app.account_id', tests.id('accounts', 'staff')::text, true)) s \gset
select tests.authenticate_as('rh2');
select is((select array_agg(coalesce(establishment_id, 0) order by establishment_id nulls first, counter_code) from app_public.counter_rules where counter_code in ('CP', 'CT')),
  array[0, 0, :e2], 'RH n2 of E2 reads the defaults and E2''s rule, not E1''s');
select throws_ok(format('select app_public.counter_rule_get(%s)', :e1_cp), 'WN303', 'Règle de compteur introuvable.',
  'E1''s rule is not found for RH of E2 (404)');
select throws_ok(format($$select app_public.counter_rule_save(%s, %s, 'CT', 1, null, 'opening', 'hundredth', true, 'none', null, null)$$, :e2_ct, :e2),
  'WF302', 'Les règles des compteurs s’écrivent par les comptes du personnel d’administration uniquement.', 'HR does not write rules (403)');
select tests.authenticate_as('rh1_noemp');
select is((select count(*)::int from app_public.counter_rules where establishment_id is not null), 0,
  'RH n1 of E3 without employee record reads no establishment rule of E1 or E2');
select ok((select count(*) from app_public.counter_rules where establishment_id is null) > 0, '... and reads the defaults');
select tests.authenticate_as('mgr1');
select is((select count(*)::int from app_public.counter_rules), 0, 'a manager reads no rule');
select is(app_public.counter_rules_search() -> 'count', '0', 'nor through the search');
select tests.authenticate_as('farid');
select is((select count(*)::int from app_public.counter_rules), 0, 'an employee without main workplace reads no rule');
select tests.authenticate_as('admin');
select is(app_public.counter_rule_delete(:e2_ct), null, 'staff (Admin) deletes an establishment''s rule');
select tests.as_owner();
select is((select count(*)::int from app_private.audit_log where model = 'counter_rule' and target_id = :e2_ct and verb = 'Suppression'), 1,
  'the deletion is audited');

select * from finish();
rollback;
