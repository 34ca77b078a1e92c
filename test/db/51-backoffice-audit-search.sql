-- Audit log search (sql/audit/search.sql): filters by model, target, actor, verb and
-- date window (business dates, inclusive), newest first; readers only.
begin;
select plan(11);

select tests.freeze('2026-11-16 10:00+01');
insert into app_private.audit_log (at, actor_account_id, actor_username, actor_display_name, verb, model, target_id, before, after) values
  ('2026-11-10 09:00+01', tests.id('accounts', 'rh1'), 'rh1', 'RH Un', 'Correction', 'shift_change_request', 900007, '{"slots": []}', '{"slots": [1]}'),
  ('2026-11-12 23:30+01', tests.id('accounts', 'mgr1'), 'mgr1', 'Manager Un', 'Validation', 'shift_change_request', 900007, '{"status": "pending"}', '{"status": "validated"}'),
  ('2026-11-13 00:30+01', tests.id('accounts', 'mgr1'), 'mgr1', 'Manager Un', 'Creation', 'absence', 900003, null, '{"status": "pending"}'),
  ('2026-11-14 08:00+01', null, 'ancien', 'Ancien compte', 'Refus', 'absence', 900004, '{"status": "pending"}', '{"status": "refused"}');

-- The lines written here (target ids above 900000; the fixture wrote others), as target:verb.
create function pg_temp.ids(p_result jsonb) returns text language sql immutable as $$
  select string_agg(((x ->> 'target_id')::int - 900000) || ':' || (x ->> 'verb'), ' ' order by ord)
  from jsonb_array_elements(p_result -> 'results') with ordinality t(x, ord)
  where (x ->> 'target_id')::int > 900000;
$$;
grant execute on function pg_temp.ids(jsonb) to public;

select tests.authenticate_as('mgr1');
select throws_ok($$select app_public.audit_log_search()$$, 'WF601', null, 'a manager does not read the audit log');
select throws_ok($$select app_public.audit_log_models()$$, 'WF601', null, 'nor the list of its models');

select tests.authenticate_as('rh1');
select is(pg_temp.ids(app_public.audit_log_search(p_page_size => 200)), '4:Refus 3:Creation 7:Validation 7:Correction', 'all lines, newest first');
select is(pg_temp.ids(app_public.audit_log_search(p_model => 'shift_change_request', p_target_id => 900007)),
  '7:Validation 7:Correction', 'by model and target');
select is(pg_temp.ids(app_public.audit_log_search(p_actor => 'MGR1')), '3:Creation 7:Validation', 'by actor, case-insensitive');
select is(pg_temp.ids(app_public.audit_log_search(p_actor => 'ancien')), '4:Refus', 'by the username frozen in the line');
select is(pg_temp.ids(app_public.audit_log_search(p_verb => 'Correction')), '7:Correction', 'by verb');
select is(pg_temp.ids(app_public.audit_log_search(p_from => '2026-11-12', p_to => '2026-11-12')), '7:Validation',
  'a window of one day holds 23:30 and not 00:30 the next day (Paris dates)');
select is(array[(app_public.audit_log_search(p_actor => 'mgr1', p_page => 2, p_page_size => 1) -> 'count')::int,
                jsonb_array_length(app_public.audit_log_search(p_actor => 'mgr1', p_page => 2, p_page_size => 1) -> 'results')],
  array[2, 1], 'count is the whole match, results the page');
select throws_ok($$select app_public.audit_log_search(p_from => '2026-11-12', p_to => '2026-11-11')$$, 'WV601',
  'La fin de la période précède son début.', 'a window that ends before it starts is refused under to');
select ok((select bool_and(x ? 'label') and count(*) >= 4 from jsonb_array_elements(app_public.audit_log_models()) x),
  'the models come with their labels');

select * from finish();
rollback;
