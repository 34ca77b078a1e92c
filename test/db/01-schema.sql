-- Schema-wide guarantees: row-level security everywhere, API functions run as wfm_api,
-- reference data present, code namespace shared by posts and absence types.
begin;
select plan(7);

select is(
  (select count(*)::int from pg_class c join pg_namespace n on n.oid = c.relnamespace
   where n.nspname in ('app_public', 'app_private', 'app_hidden') and c.relkind = 'r' and not c.relrowsecurity),
  0, 'every table of the application schemas has row-level security enabled');

select is(
  (select count(*)::int from pg_proc p join pg_namespace n on n.oid = p.pronamespace
   where n.nspname = 'app_public' and p.prosecdef and p.proowner <> 'wfm_api'::regrole),
  0, 'security definer API functions are owned by wfm_api (RLS applies to them)');

select is((select count(*)::int from app_public.absence_types), 52, '52 reasons');
select is((select count(*)::int from app_public.counter_associations), 15, '15 counter associations');

select is_empty(
  $$select p.oid::regprocedure::text from pg_proc p join pg_namespace n on n.oid = p.pronamespace
    where n.nspname in ('app_public', 'app_hidden', 'app_private') and p.prosecdef
      and not coalesce(p.proconfig @> array['search_path=pg_catalog, public, pg_temp'], false)$$,
  'every security definer function pins search_path to pg_catalog, public, pg_temp');

select is_empty(
  $$select c.oid::regclass::text from pg_class c join pg_namespace n on n.oid = c.relnamespace
    where n.nspname = 'app_public' and c.relkind = 'r'
      and not exists (select 1 from pg_policy po where po.polrelid = c.oid and po.polcmd in ('r', '*')
                      and 'wfm_visitor'::regrole = any (po.polroles))$$,
  'every app_public table has a read policy for wfm_visitor (its perimeter is stated, not implied)');

select is_empty(
  $$select p.oid::regprocedure::text from pg_proc p join pg_namespace n on n.oid = p.pronamespace
    where n.nspname = 'app_private'
      and (has_function_privilege('wfm_visitor', p.oid, 'execute') or has_function_privilege('public', p.oid, 'execute'))$$,
  'no app_private function is executable by wfm_visitor or PUBLIC');

select * from finish();
rollback;
