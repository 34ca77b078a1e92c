-- Reference administration (sql/reference/administration.sql): absence types and posts share one
-- case-insensitive code namespace, refused on save in both directions (by the save functions
-- under `code`, and by the tables' trigger for any other write); the annual cap is strictly
-- positive or empty; the category tree has two levels; writes are for staff accounts only.
begin;
select plan(27);
select tests.freeze('2026-11-16 10:00+01');

-- The field errors of a refused statement as the HTTP layer reads them: DETAIL is the JSON
-- of several fields, or the one field of MESSAGE.
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
select id as conges from app_public.absence_categories where code = 'CONGES' \gset
select id as sub from app_public.absence_categories where parent_id is not null order by id limit 1 \gset
select id as cdi from app_public.contract_types where code = 'CDI' \gset
select id as e1 from app_public.establishments e where e.id = tests.id('establishments', 'E1') \gset

select tests.authenticate_as('admin');   -- staff

-- Absence type saved with every field of the SPEC's table.
select (app_public.absence_type_save(null,
  p_code => 'ESSAI', p_name => 'Motif d''essai', p_category => :conges, p_unit => 'day', p_paid => true, p_splittable => false,
  p_annual_cap => 5.5, p_cap_overrun => 'warn', p_contract_types => array[:cdi], p_is_active => true,
  p_half_day_allowed => true, p_documents_expected => true, p_validation_required => false, p_annualisation_effect => 'impute') ->> 'id')::int as essai \gset
select is((select row(code, unit, paid, splittable, annual_cap, cap_overrun, half_day_allowed, documents_expected,
                      validation_required, annualisation_effect, is_active)::text from app_public.absence_types where id = :essai),
  '(ESSAI,day,t,f,5.50,warn,t,t,f,impute,t)', 'a staff account creates an absence type with every field');
select is(app_public.absence_type_get(:essai) -> 'contract_type_ids', jsonb_build_array(:cdi), 'its contract types are saved');
select tests.as_owner();
select is((select count(*)::int from app_private.audit_log where model = 'absence_type' and target_id = :essai and verb = 'Creation'), 1,
  'the creation is audited');
select tests.authenticate_as('admin');

-- Code clash, absence type → post, case-insensitively (post J of E1).
select is(pg_temp.errors_of(format($$select app_public.absence_type_save(null, p_code => 'j', p_name => 'Clash', p_category => %s)$$, :conges)) -> 'code',
  '["Le code « j » est déjà utilisé par un poste."]', 'an absence type whose code is a post code (other case) is refused under code');
select is(pg_temp.errors_of(format($$select app_public.absence_type_save(%s, p_code => 'J', p_name => 'Clash', p_category => %s)$$, :essai, :conges)) -> 'code',
  '["Le code « J » est déjà utilisé par un poste."]', 'renaming an absence type to a post code is refused too');
select is((select code from app_public.absence_types where id = :essai), 'ESSAI', 'nothing written');
-- Code clash, post → absence type (CP), case-insensitively.
select is(pg_temp.errors_of(format($$select app_public.post_save(null, p_code => 'cp', p_label => 'Poste CP', p_establishment => %s, p_start_time => '08:00', p_end_time => '16:00')$$, :e1)) -> 'code',
  '["Le code « cp » est déjà utilisé par un motif d’absence."]', 'a post whose code is an absence type code (other case) is refused under code');
select is(pg_temp.errors_of(format($$select app_public.post_save(null, p_code => 'Essai', p_label => 'Poste', p_establishment => %s, p_start_time => '08:00', p_end_time => '16:00')$$, :e1)) -> 'code',
  '["Le code « Essai » est déjà utilisé par un motif d’absence."]', 'also against a type created just now');
select is((select count(*)::int from app_public.posts where lower(code) in ('cp', 'essai')), 0, 'no post written');
-- The trigger guards any other write, in both directions.
select tests.as_owner();
select throws_ok(format($$insert into app_public.posts (code, label, establishment_id, start_time, end_time) values ('Cp', 'x', %s, '08:00', '16:00')$$, :e1),
  'WV010', 'Le code « Cp » est déjà utilisé par un motif d’absence.', 'trigger: a post insert with an absence type code is refused');
select throws_ok(format($$update app_public.absence_types set code = 'm' where id = %s$$, :essai),
  'WV010', 'Le code « m » est déjà utilisé par un poste.', 'trigger: an absence type renamed to a post code is refused');
select tests.authenticate_as('admin');
-- A post with a free code is saved.
select is((app_public.post_save(null, p_code => 'SOIR2', p_label => 'Soirée', p_establishment => :e1, p_start_time => '18:00', p_end_time => '23:00', p_break_start_time => '20:00', p_break_end_time => '20:30') ->> 'break_end_time'),
  '20:30', 'a staff account creates a post');

-- Annual cap strictly positive or empty.
select is(pg_temp.errors_of(format($$select app_public.absence_type_save(%s, p_code => 'ESSAI', p_name => 'x', p_category => %s, p_annual_cap => 0)$$, :essai, :conges)) -> 'annual_cap',
  '["Le plafond annuel est strictement positif, ou vide pour aucun plafond."]', 'a cap of 0 is refused under annual_cap');
select is(pg_temp.errors_of(format($$select app_public.absence_type_save(%s, p_code => 'ESSAI', p_name => 'x', p_category => %s, p_annual_cap => -3)$$, :essai, :conges)) -> 'annual_cap',
  '["Le plafond annuel est strictement positif, ou vide pour aucun plafond."]', 'a negative cap is refused');
select is(app_public.absence_type_save(:essai, p_code => 'ESSAI', p_name => 'x', p_category => :conges, p_annual_cap => null) -> 'annual_cap',
  'null'::jsonb, 'an empty cap means no cap');
-- Hour types are not taken by half-day.
select is(pg_temp.errors_of(format($$select app_public.absence_type_save(%s, p_code => 'ESSAI', p_name => 'x', p_category => %s, p_unit => 'hour', p_half_day_allowed => true)$$, :essai, :conges)) -> 'half_day_allowed',
  '["Un motif saisi en heures ne se prend pas par demi-journée."]', 'an hour type with half-days is refused under half_day_allowed');
-- A caller that is not the form (GraphQL): the id list and the hours are checked under their field.
select is(pg_temp.errors_of(format($$select app_public.absence_type_save(%s, p_code => 'ESSAI', p_name => 'x', p_category => %s, p_contract_types => array[%s, %s])$$, :essai, :conges, :cdi, :cdi)) -> 'contract_types',
  '["La liste contient des doublons."]', 'a contract type given twice is refused under contract_types');
select is(pg_temp.errors_of(format($$select app_public.absence_type_save(%s, p_code => 'ESSAI', p_name => 'x', p_category => %s, p_contract_types => array[null]::int[])$$, :essai, :conges)) -> 'contract_types',
  '["Une liste d’identifiants (nombres entiers) est attendue."]', 'a null contract type is refused under contract_types');
select is(pg_temp.errors_of(format($$select app_public.post_save(null, p_code => 'HEURE', p_label => 'Poste', p_establishment => %s, p_start_time => '8h', p_end_time => '16:00', p_break_end_time => '25:00')$$, :e1)),
  jsonb_build_object('start_time', jsonb_build_array(app_hidden.time_format_message()), 'break_end_time', jsonb_build_array(app_hidden.time_format_message())),
  'a post''s hours out of HH:MM come back under their fields');
-- Several field errors at once.
select is((select array_agg(k order by k) from jsonb_object_keys(pg_temp.errors_of($$select app_public.absence_type_save(null, p_code => '', p_name => '', p_annual_cap => 0)$$)) k),
  array['annual_cap', 'category', 'code', 'name'], 'every field error comes back at once');

-- Two-level tree.
select is(pg_temp.errors_of(format($$select app_public.absence_category_save(null, 'TROISIEME', 'Troisième', %s)$$, :sub)) -> 'parent',
  '["Une catégorie d’absence a au plus deux niveaux (catégorie, sous-catégorie)."]', 'a sub-category of a sub-category is refused under parent');
select is(pg_temp.errors_of(format($$select app_public.absence_category_save(%s, 'CONGES', 'Congés', %s)$$, :conges, :sub)) -> 'parent',
  '["Une catégorie d’absence a au plus deux niveaux (catégorie, sous-catégorie)."]', 'a root with sub-categories does not become a sub-category');
select is((app_public.absence_category_save(null, 'NOUVELLE', 'Nouvelle', :conges) ->> 'parent')::int, :conges, 'a second level is accepted');

-- Staff only (Permissions rule 6): an RH account reads but does not write.
select tests.authenticate_as('rh1');
select ok((app_public.absence_types_search() ->> 'count')::int > 50, 'an RH account reads the types, inactive ones included');
select throws_ok(format($$select app_public.absence_type_save(%s, p_code => 'ESSAI', p_name => 'Par RH', p_category => %s)$$, :essai, :conges),
  'WF510', null, 'an RH account does not write an absence type (403)');
select throws_ok(format($$select app_public.post_save(null, p_code => 'RHP', p_label => 'x', p_establishment => %s, p_start_time => '08:00', p_end_time => '16:00')$$, :e1),
  'WF510', null, 'nor a post');
select throws_ok($$select app_public.absence_category_save(null, 'PAR_RH', 'Par RH', null)$$, 'WF510', null, 'nor a category');

select * from finish();
rollback;
