-- Counter associations and reasons in the back-office (sql/reference/administration.sql and
-- counters.sql) under the orphan rules of SPEC rule 17: a consumable counter is not
-- activated without an active association to an active reason; an association or a reason
-- is not deactivated or deleted while it would orphan an active counter. Staff only.
begin;
select plan(14);
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
  return case when v_detail like '{%' then v_detail::jsonb else jsonb_build_object(v_detail, jsonb_build_array(v_message)) end;
end;
$$;
grant execute on function pg_temp.errors_of(text) to public;

select tests.as_owner();
select id as cp_type from app_public.absence_types where code = 'CP' \gset
select id as cp_assoc from app_public.counter_associations where counter_code = 'CP' \gset
select id as rtt_assoc from app_public.counter_associations where counter_code = 'RTT' \gset
select id as conges from app_public.absence_categories where code = 'CONGES' \gset
select ok((select count(*) from app_public.counters where code = 'CP' and is_active) > 0, 'active CP counters exist (fixture)');

select tests.authenticate_as('admin');   -- staff, Admin role
-- The only active association of CP keeps active counters alive.
select is(pg_temp.errors_of(format('select app_public.counter_association_save(%s, %s, ''CP'', false)', :cp_assoc, :cp_type)) -> 'is_active' ->> 0,
  'Impossible de désactiver ou de supprimer l’association au compteur CP : ' ||
  (select count(*) from app_public.counters where code = 'CP' and is_active) || ' compteur(s) CP actif(s) n’aurai(en)t plus aucun motif associé. Fermez d’abord ces compteurs.',
  'deactivating the association would orphan the active CP counters: refused under is_active');
select is(pg_temp.errors_of(format('select app_public.counter_association_delete(%s)', :cp_assoc)) ? 'is_active', true,
  'deleting it is refused too');
select is(pg_temp.errors_of(format($$select app_public.absence_type_save(%s, p_code => 'CP', p_name => 'Congés payés', p_category => %s, p_unit => 'day', p_half_day_allowed => false, p_is_active => false)$$,
  :cp_type, (select category_id from app_public.absence_types where id = :cp_type))) -> 'is_active' ->> 0 like 'Impossible de désactiver ou de supprimer le motif CP%', true,
  'deactivating the reason CP is refused under is_active');
select is(pg_temp.errors_of(format('select app_public.absence_type_delete(%s)', :cp_type)) ? 'is_active', true,
  'deleting the reason CP is refused (its association would orphan the counters)');
select is((select is_active from app_public.counter_associations where id = :cp_assoc), true, 'the association is unchanged');

-- A second active association to an active reason keeps the counters alive: now allowed.
select (app_public.absence_type_save(null, p_code => 'CP_BIS', p_name => 'CP bis', p_category => :conges, p_unit => 'day') ->> 'id')::int as bis \gset
select (app_public.counter_association_save(null, :bis, 'cp', true) ->> 'id')::int as bis_assoc \gset
select is((select counter_code from app_public.counter_associations where id = :bis_assoc), 'CP', 'an association is created (counter code upper-cased)');
select is(app_public.counter_association_save(:cp_assoc, :cp_type, 'CP', false) -> 'is_active', 'false'::jsonb,
  'with another active association, the first one is deactivated');
select is(pg_temp.errors_of(format('select app_public.counter_association_save(null, %s, ''CP'', true)', :bis)) -> 'counter_code',
  '["Ce motif est déjà associé à ce compteur."]', 'the same pair twice is refused under counter_code');

-- Activation: a consumable counter needs an active association to an active reason. The
-- RTT counters are closed first, so that the RTT association may be deactivated.
select tests.as_owner();
update app_public.counters set is_active = false where code = 'RTT';
delete from app_public.counters where code = 'RTT' and employee_id = tests.id('employees', 'alice') and year = 2026;
select tests.authenticate_as('admin');
select app_public.counter_association_save(:rtt_assoc, (select absence_type_id from app_public.counter_associations where id = :rtt_assoc), 'RTT', false) as ignored \gset
select tests.as_owner();
insert into app_public.counters (employee_id, code, year, is_active) values (tests.id('employees', 'alice'), 'RTT', 2026, false);
select id as rtt_counter from app_public.counters where employee_id = tests.id('employees', 'alice') and code = 'RTT' and year = 2026 \gset
select tests.authenticate_as('admin');
select is(pg_temp.errors_of(format('select app_public.counter_set_active(%s, true)', :rtt_counter)) -> 'is_active' ->> 0,
  'Le compteur RTT ne peut pas être activé : aucun motif actif ne lui est associé par une association active.',
  'a consumable counter without active association is not activated');
select app_public.counter_association_save(:rtt_assoc, (select absence_type_id from app_public.counter_associations where id = :rtt_assoc), 'RTT', true) as ignored \gset
select is(app_public.counter_set_active(:rtt_counter, true) -> 'is_active', 'true'::jsonb, 'with an active association it is');
select tests.as_owner();
select is((select after ->> 'is_active' from app_private.audit_log where model = 'counter' and target_id = :rtt_counter), 'true',
  'the activation is audited');

-- Staff only.
select tests.authenticate_as('rh1');
select throws_ok(format('select app_public.counter_association_save(null, %s, ''RTT'', true)', :cp_type), 'WF510', null,
  'an RH account does not create an association (403)');
select throws_ok(format('select app_public.counter_association_delete(%s)', :bis_assoc), 'WF510', null, 'nor deletes one');

select * from finish();
rollback;
