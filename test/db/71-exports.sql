-- Exports (issue 16): each export shares its list's selection (filters, perimeter, columns),
-- and the absence export is inlined into the caller's query so that a cursor streams it.
begin;
select plan(24);
select tests.freeze('2026-11-16 10:00+01');

-- The plan of a query, as text (is the export inlined, or a materialised function scan?).
create function pg_temp.plan_of(p_query text) returns text language plpgsql as $$
declare
  v_line text;
  v_plan text := '';
begin
  for v_line in execute 'explain ' || p_query loop
    v_plan := v_plan || v_line || E'\n';
  end loop;
  return v_plan;
end;
$$;
grant execute on function pg_temp.plan_of(text) to public;

-- The ids of a list route's rows, every page (200 a page).
create function pg_temp.list_ids(p_list jsonb) returns int[] language sql immutable as $$
  select coalesce(array_agg((r ->> 'id')::int order by o), '{}') from jsonb_array_elements(p_list -> 'results') with ordinality x(r, o);
$$;
grant execute on function pg_temp.list_ids(jsonb) to public;

select tests.as_owner();
insert into app_public.absences (employee_id, type_id, date_start, date_end, status, counted_quantity, counted_unit, comment, decision_reason)
select tests.id('employees', x.who), (select id from app_public.absence_types where code = 'CP'), x.d, x.d, x.status, 1, 'day',
       'Commentaire ' || x.who, case when x.status = 'refused' then 'Motif confidentiel' end
from (values ('alice', date '2026-11-23', 'validated'), ('alice', date '2026-11-24', 'refused'),
             ('bruno', date '2026-11-25', 'pending'), ('chloe', date '2026-11-26', 'validated'),
             ('david', date '2026-11-27', 'validated')) x(who, d, status);

-- Streaming: the absence export is plain SQL (no security definer, no SET), and inlined.
select is((select p.prosecdef or p.proconfig is not null from pg_proc p where p.oid = 'app_public.absences_export(text,int,date,date,int,int)'::regprocedure),
          false, 'absences_export is neither security definer nor SET: it can be inlined');
select is((select l.lanname from pg_proc p join pg_language l on l.oid = p.prolang
           where p.oid = 'app_public.absences_export(text,int,date,date,int,int)'::regprocedure), 'sql', 'absences_export is plain SQL');
select tests.authenticate_as('mgr1');
select unalike(pg_temp.plan_of('select * from app_public.absences_export()'), '%Function Scan on absences_export%',
              'the export is inlined into the query (no function scan filling its whole result first)');

-- The list and its export share one selection.
-- (absences_list and its REST text variant take their page from absences_list_page, which reads it.)
select ok((select p.prosrc from pg_proc p where p.proname = 'absences_list_page') like '%app_hidden.absences_selection(%'
          and (select p.prosrc from pg_proc p where p.proname = 'absences_list') like '%app_hidden.absences_list_page(%'
          and (select p.prosrc from pg_proc p where p.proname = 'absences_list_text') like '%app_hidden.absences_list_page(%',
          'absences_list reads app_hidden.absences_selection');
select ok((select p.prosrc from pg_proc p where p.proname = 'audit_log_search') like '%app_hidden.audit_log_selection(%',
          'audit_log_search reads app_hidden.audit_log_selection');
select ok((select p.prosrc from pg_proc p where p.proname = 'payroll_lines') like '%app_hidden.payroll_month(%',
          'payroll_lines reads app_hidden.payroll_month');

-- Same rows, same order as the list, for the same filters.
select is(array(select e.id from app_public.absences_export() e),
          pg_temp.list_ids(app_public.absences_list(p_page_size => 200)), 'a manager: the export holds the list''s rows, in order');
select is(array(select e.id from app_public.absences_export(p_status => 'validated', p_employee => tests.id('employees', 'alice')) e),
          pg_temp.list_ids(app_public.absences_list(p_status => 'validated', p_employee => tests.id('employees', 'alice'), p_page_size => 200)),
          'with filters too');
select ok(not exists (select 1 from app_public.absences_export() e where e.employee = tests.id('employees', 'david')),
          'Manager n1 of E1: nothing of E3');
select throws_ok($$select * from app_public.absences_export(p_status => 'archived')$$, 'WV220', null, 'an unknown status: 400 under status');
select throws_ok($$select * from app_public.absences_export(p_from => '2026-12-01', p_to => '2026-11-01')$$, 'WV220', null,
                 'to before from: 400 under to, even with no row to read');

select tests.authenticate_as('alice');
select is(array(select distinct e.employee from app_public.absences_export() e), array[tests.id('employees', 'alice')],
          'an employee exports their own absences only');
select tests.authenticate_as('mgr1_noemp');
select ok(not exists (select 1 from app_public.absences_export() e where e.employee <> tests.id('employees', 'david')
                        and e.employee in (tests.id('employees', 'alice'), tests.id('employees', 'chloe'))),
          'a manager without employee record (E3): nothing outside E3');
select tests.authenticate_as('paie');
select is((select count(*) from app_public.absences_export())::int, 0, 'Service Paie: the absence list is not its (no row)');

-- Counters by establishment and year.
select tests.authenticate_as('mgr1');
select throws_ok(format('select app_public.counters_establishment(%s, 2026)', tests.id('establishments', 'E2')), 'WN302', null,
                 'an establishment outside the perimeter: 404');
select throws_ok('select app_public.counters_establishment(999999, 2026)', 'WN302', null, 'an unknown establishment: 404');
select throws_ok(format('select app_public.counters_establishment(%s, 1999)', tests.id('establishments', 'E1')), 'WV302', null,
                 'a bad year: 400 under year');
select is((select count(*) from app_public.counters_establishment_export(tests.id('establishments', 'E1'), 2026))::int,
          jsonb_array_length(app_public.counters_establishment(tests.id('establishments', 'E1'), 2026) -> 'results'),
          'the export holds the JSON list''s lines');
select tests.authenticate_as('alice');
select throws_ok(format('select * from app_public.counters_establishment_export(%s, 2026)', tests.id('establishments', 'E1')), 'WN302', null,
                 'an employee without the queue: 404');

-- Payroll: the list's readers and lines; no comment, decision reason or document column.
select tests.authenticate_as('mgr1');
select throws_ok($$select * from app_public.payroll_export('2026-11')$$, 'WF550', null, 'a manager does not export payroll');
select tests.authenticate_as('paie');
select is((select count(*) from app_public.payroll_export('2026-11'))::int, (app_public.payroll_lines('2026-11') ->> 'count')::int,
          'the payroll export holds every line of the month');
select is((select count(*) from unnest((select p.proargnames from pg_proc p where p.proname = 'payroll_export')) n
           where n ~ '(comment|reason|document)')::int, 0, 'the payroll export has no comment, decision reason or document column');

-- Audit log: its readers only.
select tests.authenticate_as('mgr1');
select throws_ok($$select * from app_public.audit_log_export()$$, 'WF601', null, 'a manager does not export the audit log');
select tests.authenticate_as('rh1');
select is((select count(*) from app_public.audit_log_export(p_model => 'absence'))::int,
          (app_public.audit_log_search(p_model => 'absence') ->> 'count')::int, 'a reader exports the lines of the search');

select * from finish();
rollback;
