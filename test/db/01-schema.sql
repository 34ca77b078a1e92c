-- Schema-wide guarantees: row-level security everywhere, API functions run as wfm_api,
-- reference data present, code namespace shared by posts and absence types.
begin;
select plan(4);

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

select * from finish();
rollback;
