-- The naming and documentation conventions of sql/ (issue 12, point 6), read from the catalogue
-- so that the next function written cannot miss them. (That every function states its volatility
-- is read from the sources: test/api/sql-conventions.test.ts.)
begin;
select plan(3);

-- Trigger functions: tg_<table>__<task> for one table, tg__<task> for a function shared by several.
select is_empty($$
  select n.nspname || '.' || p.proname
  from pg_proc p join pg_namespace n on n.oid = p.pronamespace
  where n.nspname in ('app_public', 'app_hidden', 'app_private')
    and p.prorettype = 'trigger'::regtype
    and p.proname !~ '^tg(_[a-z0-9]+(_[a-z0-9]+)*)?__[a-z0-9]+(_[a-z0-9]+)*$'
$$, 'every trigger function is named tg_<table>__<task> or tg__<task>');

-- The triggers themselves run in the order their name says (_100_, _500_, _900_...).
select is_empty($$
  select c.relname || '.' || t.tgname
  from pg_trigger t join pg_class c on c.oid = t.tgrelid join pg_namespace n on n.oid = c.relnamespace
  where n.nspname in ('app_public', 'app_hidden', 'app_private') and not t.tgisinternal
    and t.tgname !~ '^_[0-9]{3}_[a-z0-9_]+$'
$$, 'every trigger is named _NNN_<task>, its rank among the triggers of its table');

-- Every API function (the schema REST calls and GraphQL exposes) says what it does and which
-- SPEC rule it implements: the comment is the GraphQL description too.
select is_empty($$
  select n.nspname || '.' || p.proname || '(' || pg_get_function_identity_arguments(p.oid) || ')'
  from pg_proc p join pg_namespace n on n.oid = p.pronamespace
  where n.nspname = 'app_public'
    and p.prokind = 'f'
    -- smart tags (leading lines starting with @, sql/graphql.sql) are no description
    and coalesce(btrim(regexp_replace(obj_description(p.oid, 'pg_proc'), '^(\s*@[^\n]*(\n|$))*', '')), '') = ''
    -- functions installed by an extension are not ours to document
    and not exists (select 1 from pg_depend d where d.objid = p.oid and d.deptype = 'e')
$$, 'every app_public function has a comment with a description');

select * from finish();
rollback;
