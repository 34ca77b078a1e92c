-- Payroll and the leave year (issue 27 point 5): each counter of a payroll line carries the figures
-- of « Mes compteurs », computed by the same function as GET /api/counters/
-- (app_private.counter_year_facts); the export writes them in its counters' columns (French).
begin;
select plan(9);
select tests.freeze('2026-11-16 10:00+01');
select tests.as_owner();
select app_private.open_next_year_counters('2026-10-01') as opened \gset
select last_name as chloe_name from app_public.employees where id = tests.id('employees', 'chloe') \gset
select tests.authenticate_as('paie');
select app_public.payroll_lines('2027-01', null, :'chloe_name', 1, 25) as l2027 \gset
select app_public.payroll_lines('2026-11', null, null, 1, 100) as l2026 \gset
create temp table export_2027 as select * from app_public.payroll_export('2027-01', null, :'chloe_name');
create temp table export_2026 as select * from app_public.payroll_export('2026-11', null, 'Alice Martin');
select tests.as_owner();

create function pg_temp.facts(p_lines jsonb, p_month_year int)
returns table (employee int, code text, payroll jsonb, counters jsonb) language sql as $$
  select (l ->> 'employee')::int, c ->> 'code',
         c - array['code', 'name', 'unit', 'acquired', 'taken', 'planned', 'remaining'],
         app_private.counter_year_facts(k.id, app_hidden.today())
  from jsonb_array_elements(p_lines -> 'results') l, jsonb_array_elements(l -> 'counters') c
  join app_public.counters k on k.code = c ->> 'code' and k.year = p_month_year
  where k.employee_id = (l ->> 'employee')::int;
$$;

select cmp_ok((select count(*) from pg_temp.facts(:'l2026', 2026)), '>', 10::bigint,
  'the payroll of November 2026 lists counters');
select is((select count(*) from pg_temp.facts(:'l2026', 2026) f where f.payroll is distinct from f.counters), 0::bigint,
  'each counter carries exactly the figures of « Mes compteurs » (counter_year_facts, as GET /api/counters/)');
select is((select count(*) from pg_temp.facts(:'l2027', 2027) f where f.payroll is distinct from f.counters), 0::bigint,
  '... the counters of next year too');
select is((select f.payroll from pg_temp.facts(:'l2027', 2027) f where f.code = 'CP'),
  jsonb_build_object('acquisition', 'monthly', 'to_come', '4.17', 'carried_over', '0.00', 'carry_over_expires_on', null,
                     'carry_over_expiring', null,
                     'year_end', jsonb_build_object('carries_over', '18.75', 'expires', '0.00', 'carry_over_until', '2028-05-31')),
  'chloe''s CP 2027 in the payroll of January 2027: monthly, November and December 2026 to come, carried over until 31 May 2028');
select is((select f.payroll -> 'year_end' from pg_temp.facts(:'l2027', 2027) f where f.code = 'CT'),
  jsonb_build_object('carries_over', '0.00', 'expires', '9.00', 'carry_over_until', null),
  'chloe''s CT 2027: no carry-over, the year end loses it all');

select is((select row(e.counters_acquisition, e.counters_acquired, e.counters_remaining, e.counters_to_come,
                      e.counters_carried_over, e.counters_year_end)::text from export_2027 e),
  row('CP : mensuelle ; CT : à l’ouverture', 'CP : 18,75 jours ; CT : 9 jours', 'CP : 18,75 jours ; CT : 9 jours',
      'CP : 4,17 jours ; CT : 0 jour', 'CP : 0 jour ; CT : 0 jour',
      'CP : reporte 18,75 jours jusqu’au 31/05/2028, perd 0 jour ; CT : reporte 0 jour, perd 9 jours')::text,
  'the export writes the same figures, one column per figure, in French');
select is((select e.counters_year_end from export_2026 e),
  'CP : reporte 25 jours jusqu’au 31/05/2027, perd 0 jour ; CT : reporte 0 jour, perd 6 jours ; '
  'RC : année close ou sans règle ; DLG_CSE : reporte 0 heure, perd 20 heures',
  'a counter without a rule says so in the export');
select is((select e.counters_acquisition from export_2026 e),
  'CP : à la main ou par import ; CT : à la main ou par import ; RC : à la main ou par import ; DLG_CSE : à la main ou par import',
  'counters opened by the import say how they were opened');

select tests.authenticate_as('mgr1');
select throws_ok($$select * from app_public.payroll_export('2026-11')$$, 'WF550', null,
  'a manager reads no counter figures through the payroll export');

select * from finish();
rollback;
