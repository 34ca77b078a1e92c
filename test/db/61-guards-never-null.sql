-- Guards are true or false, never NULL (issue 11, finding 2 and its class).
--
-- 1. Regressions: an account without an employee record (app_hidden.current_employee_id()
--    is NULL) used to pass `if not <guard>` checks whose guard compared with that NULL.
-- 2. The proof: every helper declared in app_private.never_null_guards is called as every kind
--    of caller (no account, accounts of each role without an employee record, an employee
--    with no main workplace, closed accounts) with every mix of NULL and ordinary arguments,
--    and answers true or false.
-- 3. The catalogue check: a function (app_public, app_hidden, app_private) or a policy that
--    negates a helper (`not app_hidden.x(...)`, `not (app_hidden.x(...) or ...)`) names a helper
--    declared never-NULL, and none negates a raw comparison with current_employee_id().
begin;
select plan(14);
select tests.freeze('2026-11-16 10:00+01');

-- Accounts without an employee record, one per role kind, and closed accounts.
insert into app_public.accounts (username, is_active) values
  ('nx-admin', true), ('nx-rh1', true), ('nx-rh2', true), ('nx-da', true), ('nx-mgr1', true), ('nx-mgr2', true),
  ('nx-paie', true), ('nx-none', true), ('nx-closed', false);
insert into app_public.role_attributions (account_id, role_id)
select a.id, x.role_id
from (values ('nx-admin', 1), ('nx-rh1', 2), ('nx-rh2', 3), ('nx-da', 4), ('nx-mgr1', 5), ('nx-mgr2', 6), ('nx-paie', 9),
             ('nx-closed', 2)) x(username, role_id)
join app_public.accounts a on a.username = x.username;
insert into app_public.role_attribution_establishments (attribution_id, establishment_id)
select ra.id, tests.id('establishments', 'E1')
from app_public.role_attributions ra join app_public.accounts a on a.id = ra.account_id
where a.username in ('nx-rh2', 'nx-da', 'nx-mgr1', 'nx-mgr2');
update app_public.accounts set is_active = false where username = 'gaelle';

-- A document on an absence of alice (E1) and her honorability certificate.
select tests.authenticate_as('alice');
do $$
begin
  perform tests.absence_create(jsonb_build_object(
    'employee', tests.id('employees', 'alice'), 'type', (select t.id from app_public.absence_types t where t.code = 'MAL'),
    'date_start', '2026-11-16', 'date_end', '2026-11-16',
    'add_documents', jsonb_build_array(tests.uploaded_file('arret-nx.pdf'))));
  perform app_public.honorability_certificate_put(tests.id('employees', 'alice'),
    p_file => jsonb_build_array(tests.uploaded_file('casier-nx.pdf')));
end;
$$;
select tests.as_owner();
create function pg_temp.doc() returns int language sql stable security definer as $$
  select d.id from app_public.absence_documents d where d.filename = 'arret-nx.pdf';
$$;
create function pg_temp.has_certificate() returns boolean language sql stable security definer as $$
  select exists (select 1 from app_public.honorability_certificates h where h.employee_id = tests.id('employees', 'alice'));
$$;
grant execute on all functions in schema pg_temp to public;

-- 1. Regressions -----------------------------------------------------------------------
-- A Manager n1 of E1 without an employee record: queue perimeter E1, no right to read content.
select tests.authenticate_as('nx-mgr1');
select throws_ok(format('select app_public.absence_document_file(%s)', pg_temp.doc()), 'WF401', null,
  'no employee record: a manager may not download a medical certificate of its perimeter (403)');
select throws_ok(format('select app_public.honorability_certificate_file(%s)', tests.id('employees', 'alice')), 'WF401', null,
  'no employee record: a manager may not download an honorability certificate (403)');
select throws_ok(format('select app_public.counters_read(%s, 2026)', tests.id('employees', 'david')), 'WN001', null,
  'no employee record: the balances of an employee outside the perimeter are not found');
select throws_ok('select app_public.counters_read(null, 2026)', 'WN001', null,
  'no employee record and no employee named: not found');
-- Service Paie without an employee record: neither deposits nor removes a certificate.
select tests.authenticate_as('nx-paie');
select throws_ok(format('select app_public.honorability_certificate_delete(%s)', tests.id('employees', 'alice')), 'WF402', null,
  'no employee record: the honorability DELETE is refused (403), not a silent 204');
select ok(pg_temp.has_certificate(), 'and the certificate is still there');
select tests.as_owner();

-- 2. The proof --------------------------------------------------------------------------
create temp table proof_callers (label text, account int, employee int);
insert into proof_callers
select 'no account', null, null
union all
select a.username, a.id, a.employee_id from app_public.accounts a
where a.username in ('nx-admin', 'nx-rh1', 'nx-rh2', 'nx-da', 'nx-mgr1', 'nx-mgr2', 'nx-paie', 'nx-none', 'nx-closed',
                     'farid', 'gaelle', 'alice', 'mgr3', 'root', 'staff');

-- Candidate values per argument type: NULL first, then ordinary values.
create function pg_temp.candidates(p_type regtype) returns text[] language sql stable as $$
  select case p_type
    when 'integer'::regtype then array['null::int', tests.id('employees', 'alice')::text,
                                       tests.id('employees', 'farid')::text, tests.id('establishments', 'E1')::text]
    when 'text'::regtype then array['null::text', quote_literal('absences.view_absence_queue'),
                                    quote_literal('absences.view_absencedocument_file'), quote_literal('')]
    when 'timestamp with time zone'::regtype then array['null::timestamptz', quote_literal('2026-11-16 10:00+01') || '::timestamptz']
    when 'date'::regtype then array['null::date', quote_literal('2026-11-16') || '::date']
    when 'jsonb'::regtype then array['null::jsonb', quote_literal('null') || '::jsonb', quote_literal('{}') || '::jsonb']
    when 'integer[]'::regtype then array['null::int[]', quote_literal('{}') || '::int[]',
                                         quote_literal(array[tests.id('establishments', 'E1')]::text) || '::int[]']
    when 'text[]'::regtype then array['null::text[]', quote_literal('{}') || '::text[]',
                                      quote_literal('{absences.view_absence_queue,NULL}') || '::text[]']
    when 'boolean'::regtype then array['null::boolean', 'true', 'false']
    else array[format('null::%s', p_type)] end;
$$;

-- Every call: the helper, then each mix of candidates (cartesian product over the arguments).
create temp table proof_calls (helper regprocedure, call text);
do $$
declare
  g record;
  v_calls text[];
  v_next text[];
  v_type regtype;
begin
  for g in select p.oid::regprocedure as helper, p.proname, ns.nspname, p.proargtypes::regtype[] as types
           from app_private.never_null_guards n
           join pg_proc p on p.oid = to_regprocedure(n.helper)
           join pg_namespace ns on ns.oid = p.pronamespace loop
    v_calls := array[''];
    foreach v_type in array coalesce(g.types, '{}') loop
      v_next := array(select case when c = '' then x else c || ', ' || x end
                      from unnest(v_calls) c, unnest(pg_temp.candidates(v_type)) x);
      v_calls := v_next;
    end loop;
    insert into proof_calls
    select g.helper, format('select %I.%I(%s)', g.nspname, g.proname, c) from unnest(v_calls) c;
  end loop;
end;
$$;

-- Runs every call as every caller, as wfm_api (the role API functions run as), and keeps the
-- calls that answered NULL or raised (a guard answers; it does not fail the request).
create temp table proof_nulls (caller text, call text);
grant all on proof_calls, proof_nulls to public;
do $$
declare
  c record;
  k record;
  v boolean;
begin
  for k in select * from proof_callers loop
    perform set_config('app.account_id', coalesce(k.account::text, ''), true);
    perform set_config('app.employee_id', coalesce(k.employee::text, ''), true);
    perform set_config('role', 'wfm_api', true);
    for c in select * from proof_calls loop
      begin
        execute c.call into v;
        if v is null then
          insert into proof_nulls values (k.label, c.call);
        end if;
      exception when others then
        insert into proof_nulls values (k.label, c.call || ' raised: ' || sqlerrm);
      end;
    end loop;
    perform tests.as_owner();
  end loop;
end;
$$;

select ok((select count(*) from app_private.never_null_guards) >= 20, 'at least 20 helpers are declared never-NULL');
select is_empty($$select n.helper from app_private.never_null_guards n
                  where to_regprocedure(n.helper) is null
                     or (select p.prorettype from pg_proc p where p.oid = to_regprocedure(n.helper)) <> 'boolean'::regtype$$,
  'every declared helper exists and returns boolean');
select ok((select count(*) from proof_calls) >= 200, format('the proof calls the helpers with NULL and ordinary arguments (%s calls per caller)', (select count(*) from proof_calls)));
select is_empty('select * from proof_nulls order by 1, 2',
  'no declared helper answers NULL or raises, for any caller (no employee record, no main workplace, closed) and any NULL argument');

-- 3. The catalogue check --------------------------------------------------------------------
create temp view negated_helpers as
with sources as (
  select format('function %s', p.oid::regprocedure) as place, p.prosrc as src
  from pg_proc p join pg_namespace n on n.oid = p.pronamespace
  join pg_language l on l.oid = p.prolang
  where n.nspname in ('app_public', 'app_hidden', 'app_private') and l.lanname in ('plpgsql', 'sql')
  union all
  select format('policy %s on %s.%s', pol.policyname, pol.schemaname, pol.tablename),
         concat_ws(' ', pol.qual, pol.with_check)
  from pg_policies pol
  where pol.schemaname in ('app_public', 'app_hidden', 'app_private')
),
negations as (
  select s.place, lower(m[1]) as helper
  from sources s, regexp_matches(s.src, 'not\s+[(\s]*(?:select\s+)?(app_(?:public|hidden|private)\.\w+)\s*\(', 'gi') m
)
select distinct neg.place, neg.helper
from negations neg
where not exists (select 1 from app_private.never_null_guards g
                  where to_regprocedure(g.helper)::text like neg.helper || '(%');
select ok((select count(*) from pg_proc p where p.prosrc ~* 'not\s+app_hidden\.may\(') > 0,
  'the check sees the sources (a negated app_hidden.may exists)');
select is_empty('select * from negated_helpers order by 1, 2',
  'every helper negated in a function or a policy is declared never-NULL (app_private.never_null_guards)');
-- `not (x = app_hidden.current_employee_id() ...)` lets a caller without an employee record
-- through: the comparison is written app_hidden.is_current_employee(x).
create temp view negated_own_comparisons as
select format('function %s', p.oid::regprocedure) as place
from pg_proc p join pg_namespace n on n.oid = p.pronamespace
where n.nspname in ('app_public', 'app_hidden', 'app_private')
  and p.prosrc ~* 'not\s+\((?:[^()]|\([^()]*\))*current_employee_id\s*\(\s*\)'
union all
select format('policy %s on %s.%s', pol.policyname, pol.schemaname, pol.tablename)
from pg_policies pol
where concat_ws(' ', pol.qual, pol.with_check) ~* 'not\s+\((?:[^()]|\([^()]*\))*current_employee_id\s*\(\s*\)';
select ok('  or not (v_employee = app_hidden.current_employee_id()
             or v_employee in (select 1)) then' ~* 'not\s+\((?:[^()]|\([^()]*\))*current_employee_id\s*\(\s*\)',
  'the rule below recognises the negated comparison that let counters_read through');
select is_empty('select * from negated_own_comparisons order by 1',
  'no function or policy negates a raw comparison with current_employee_id() (use app_hidden.is_current_employee)');

select * from finish();
rollback;
