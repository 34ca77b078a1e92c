-- The leave year (issue 27 points 2 to 4, sql/counters/year.sql): the scheduled opening of
-- next year's counters from the rules (from the configured date, prorated, idempotent, each
-- acquisition a journal movement with its reason, employees skipped and why), the monthly
-- acquisition exactly once per counter and month (late, twice, a duplicate refused by the
-- key), prorated for a contract ending in the month; the year's end (carry-over within the
-- ceiling, the excess expiring, both years' journals), the expiry after the carry-over date,
-- the notice one month before. Concurrent filing during an opening: test/api/backoffice-counter-rules.test.ts.
begin;
select plan(45);
select tests.freeze('2026-11-16 10:00+01');
select tests.as_owner();

create function pg_temp.acquired(p_employee text, p_code text, p_year int) returns numeric language sql as $$
  select coalesce(sum(m.quantity) filter (where m.bucket = 'acquired'), 0)::numeric(8,2)
  from app_public.counters c left join app_private.counter_movements m on m.counter_id = c.id
  where c.employee_id = tests.id('employees', p_employee) and c.code = p_code and c.year = p_year;
$$;
create function pg_temp.counter(p_employee text, p_code text, p_year int) returns int language sql as $$
  select c.id from app_public.counters c
  where c.employee_id = tests.id('employees', p_employee) and c.code = p_code and c.year = p_year;
$$;
create function pg_temp.movements(p_employee text, p_code text, p_year int, p_kind text) returns numeric[] language sql as $$
  select coalesce(array_agg(m.quantity order by m.id), '{}')
  from app_private.counter_movements m where m.counter_id = pg_temp.counter(p_employee, p_code, p_year) and m.kind = p_kind;
$$;

select count(*) as before_2027 from app_public.counters where year = 2027 \gset

-- Point 2: the scheduled opening, from 1 October (the setting counters_opening_date).
select is(app_private.open_next_year_counters('2026-09-30'), 0, 'on 30 September the job opens nothing');
select is((select count(*) from app_public.counters where year = 2027), :before_2027::bigint, '... and writes nothing');
select is(app_private.counter_opening_summary(2027, null, '2026-10-01') -> 'counters', '25',
  'the preview: 25 counters (CP and CT of 13 employees, alice''s CP 2027 already open)');
select is(app_private.counter_opening_summary(2027, null, '2026-10-01') -> 'skipped',
  jsonb_build_array(
    jsonb_build_object('employee', tests.id('employees', 'farid'), 'employee_name', 'Benali Farid',
                       'reason', 'Sans établissement principal : aucune règle d’établissement ne s’applique.'),
    jsonb_build_object('employee', tests.id('employees', 'emma'), 'employee_name', 'Faure Emma',
                       'reason', 'Aucun contrat en cours en 2027.')),
  'the preview names the employees skipped and why');
select is((select count(*) from app_public.counters where year = 2027), :before_2027::bigint, 'the preview writes nothing');
select is(app_private.open_next_year_counters('2026-10-01'), 25, 'on 1 October the job opens the 25 counters');
select is(pg_temp.acquired('chloe', 'CP', 2027), 18.75, 'chloe (E2, jours ouvrés): January to September 2026 acquired, 25 × 9 / 12');
select is(pg_temp.movements('chloe', 'CP', 2027, 'acquisition'), array[2.08, 2.09, 2.08, 2.08, 2.09, 2.08, 2.08, 2.09, 2.08]::numeric[],
  '... one journal movement per month');
select is((select comment from app_private.counter_movements where counter_id = pg_temp.counter('chloe', 'CP', 2027) order by id limit 1),
  'Acquisition de janvier 2026 pour 2027 : 2,08 jours', '... each with its reason');
select is(pg_temp.acquired('david', 'CP', 2027), 22.50, 'david (E3, jours ouvrables): 2.5 a month, 9 months');
select is(pg_temp.acquired('bruno', 'CP', 2027), 22.18, 'bruno (CDD from 5 January 2026): January prorated 2.5 × 27 / 31 = 2.18, then 8 × 2.5');
select is(pg_temp.acquired('gaelle', 'CP', 2027), 0.00, 'gaelle (hired 1 October): nothing acquired yet, the counter is open');
select is(pg_temp.acquired('gaelle', 'CT', 2027), 9.00, 'CT at the opening: 9 days for a whole year of contract');
select is(pg_temp.acquired('bruno', 'CT', 2027), 0.10, 'CT prorated: bruno''s CDD ends on 4 January 2027, 9 × 4 / 365');
select is(pg_temp.acquired('alice', 'CP', 2027), 25.00, 'alice''s CP 2027, opened by the import, is left as it was');
select is((select acquisition from app_public.counters where id = pg_temp.counter('chloe', 'CP', 2027)), 'monthly', 'the counter acquires month by month');
select count(*) as movements_after from app_private.counter_movements \gset
select is(app_private.open_next_year_counters('2026-10-02'), 0, 'idempotent: the next day opens nothing more');
select is((select count(*) from app_private.counter_movements), :movements_after::bigint, '... and writes no movement');

-- Point 3: the monthly acquisition, exactly once per counter and month.
select is(app_private.acquire_monthly_counters('2026-10-31'), 0, 'on 31 October, October has not ended: nothing');
select is(app_private.acquire_monthly_counters('2026-11-01'), 12, 'on 1 November, October for the 12 monthly counters');
select is(app_private.acquire_monthly_counters('2026-11-01'), 0, 'twice the same day: nothing more');
select is(pg_temp.acquired('gaelle', 'CP', 2027), 2.08, 'gaelle acquires October (25 × 10 / 12 − 25 × 9 / 12)');
select is(app_private.acquire_monthly_counters('2027-01-02'), 24, 'late (2 January): November and December, each once');
select is(pg_temp.acquired('chloe', 'CP', 2027), 25.00, 'chloe''s twelve months make 25 exactly');
select throws_ok(format($$insert into app_private.counter_movements (counter_id, bucket, quantity, kind, period)
                          values (%s, 'acquired', 2.08, 'acquisition', '2026-12-01')$$, pg_temp.counter('chloe', 'CP', 2027)),
  '23505', null, 'the key refuses a second acquisition of the same month (a crash between two runs cannot double it)');
-- A contract ending during the month: the prorated part.
select tests.as_owner();
insert into app_public.counters (employee_id, code, year, acquisition)
values (tests.id('employees', 'emma'), 'CP', 2027, 'monthly');
insert into app_public.contracts (employee_id, contract_type_id, start_date, end_date)
select tests.id('employees', 'emma'), id, '2026-12-01', '2026-12-15' from app_public.contract_types where code = 'CDD';
select is(app_private.acquire_monthly_counters('2027-01-03'), 1, 'a CDD of emma from 1 to 15 December: one movement');
select is(pg_temp.acquired('emma', 'CP', 2027), 1.21, '... December prorated: 2.5 × 15 / 31');

-- Point 4: the year's end. E2's CP carries over up to 5 days until 31 March.
insert into app_public.counter_rules (establishment_id, counter_code, annual_amount, annual_amount_ouvrables, acquisition,
                                      carry_over, carry_over_ceiling, carry_over_until)
values (tests.id('establishments', 'E2'), 'CP', 25, null, 'monthly', 'ceiling', 5, '31/03');
select app_private.counter_remaining(pg_temp.counter('chloe', 'CP', 2026)) as chloe_left,
       app_private.counter_remaining(pg_temp.counter('alice', 'CP', 2026)) as alice_left \gset
select is(app_private.counter_expiry_notify('2026-12-01'), 6,
  'on 1 December: the year-end expiries are announced (alice''s CT and DLG_CSE, chloe''s RTT, CP above 5 days of chloe, rh2, mgr2 of E2)');
select is((select body from app_public.notifications
           where account_id = tests.id('accounts', 'chloe') and title = 'Congés bientôt perdus' and body like '%(Congés payés)%'),
  format('%s de CP (Congés payés) de 2026 expire(nt) le 31/12/2026 : posez-les avant cette date.',
         app_hidden.quantity_fr(:chloe_left - 5, 'day')), 'chloe reads how much CP expires on 31 December');
select is((select jsonb_build_object('kind', kind, 'path', path, 'level', level) from app_public.notifications
           where account_id = tests.id('accounts', 'chloe') and title = 'Congés bientôt perdus' and body like '%(Congés payés)%'),
  '{"kind": "own", "path": "/compteurs", "level": "warning"}', 'the notice is the employee''s own and leads to « Mes compteurs »');
select is(app_private.counter_expiry_notify('2026-12-02'), 0, 'each notice is sent once');
select is(app_private.counters_close_year(2026, '2026-12-31'), 0, 'nothing closes before 1 January');
select ok(app_private.close_counter_years('2027-01-01') > 0, 'on 1 January the year 2026 closes');
select is(pg_temp.movements('chloe', 'CP', 2026, 'carry_over') || pg_temp.movements('chloe', 'CP', 2026, 'expiry'),
  array[-5, 5 - :chloe_left]::numeric[], 'chloe''s CP 2026: 5 days carried over (compensation), the rest expires');
select is(pg_temp.movements('chloe', 'CP', 2027, 'carry_over'), array[5.00]::numeric[], '... and acquired in 2027');
select is(app_private.counter_remaining(pg_temp.counter('chloe', 'CP', 2026)), 0.00, 'chloe''s CP 2026 is left at 0');
select is(pg_temp.movements('alice', 'CP', 2027, 'carry_over'), array[:alice_left]::numeric[], 'alice (E1, all until 31/05): all carried over');
select is(pg_temp.movements('alice', 'CT', 2026, 'expiry'), array[-6.00]::numeric[], 'alice''s CT (no carry-over) expires');
select is(pg_temp.movements('farid', 'CP', 2026, 'carry_over'), '{}'::numeric[], 'farid has no 2027 counter: his balance stays');
select is(app_private.counters_close_year(2026, '2027-01-02'), 0, 'the year closes once');

-- The carry-over date: the notice a month before, then the expiry of what was not taken.
insert into app_private.counter_movements (counter_id, bucket, quantity, kind, comment)
values (pg_temp.counter('chloe', 'CP', 2027), 'taken', 2, 'adjustment', 'Pris en février');
select is(app_private.counter_expiry_notify('2027-03-01'), 4, 'on 1 March the four of E2 with a carry-over are told it expires on 31 March');
select is((select body from app_public.notifications
           where account_id = tests.id('accounts', 'chloe') and title = 'Congés bientôt perdus' and body like '%31/03/2027%'),
  '3 jours de CP (Congés payés) de 2026 expire(nt) le 31/03/2027 : posez-les avant cette date.', '... chloe: 5 carried over, 2 taken, 3 left');
select is(app_private.counters_expire_carry_over('2027-03-31'), 0, 'nothing expires on the date itself');
select is(app_private.counters_expire_carry_over('2027-04-01'), 4, 'the day after, the carry-overs not taken expire');
select is(pg_temp.movements('chloe', 'CP', 2027, 'expiry'), array[-3.00]::numeric[], '5 carried over, 2 taken: 3 expire');

select * from finish();
rollback;
