-- The planning as text (app_public.planning_read_text, what GET /api/planning/ sends as it
-- comes): valid JSON, the same answer as planning_read for every kind of reader and window,
-- the same errors, and hidden from GraphQL.
begin;
select plan(10);
select tests.freeze('2026-11-16 10:00+01');

-- Both answers parsed: equal, or the first difference.
create function pg_temp.same(p_from date, p_to date, p_employee int default null, p_establishment int default null,
                             p_team int default null) returns boolean language plpgsql as $$
begin
  return app_public.planning_read_text(p_from, p_to, p_employee, p_establishment, p_team)::jsonb
         = app_public.planning_read(p_from, p_to, p_employee, p_establishment, p_team)::jsonb;
end;
$$;
grant execute on all functions in schema pg_temp to public;

-- Every kind of block: whole-day, half-day, hourly absences, a requested cancellation, a
-- pending request, a day modification, a pending day-change request, an on-call period.
select tests.as_owner();
insert into app_public.absences (employee_id, type_id, date_start, date_end, start_half, end_half, start_time, end_time, status, comment)
select tests.id('employees', e), (select id from app_public.absence_types where code = t), ds::date, de::date, sh, eh, st::time, et::time, s, c
from (values
  ('alice', 'CP', '2026-11-17', '2026-11-17', null, null, null, null, 'validated', 'Congé « d''automne »'),
  ('alice', 'MAL', '2026-11-18', '2026-11-18', 'morning', 'morning', null, null, 'validated', null),
  ('alice', 'MAL', '2026-11-19', '2026-11-19', 'afternoon', 'afternoon', null, null, 'cancellation_requested', null),
  ('alice', 'DON', '2026-11-20', '2026-11-20', null, null, '10:00', '11:30', 'validated', null),
  ('alice', 'CP', '2026-11-24', '2026-11-24', null, null, null, null, 'pending', null),
  ('bruno', 'CP', '2026-11-30', '2026-12-02', 'afternoon', null, null, null, 'validated', E'ligne 1\nligne 2 \\ "guillemets"')
) as v(e, t, ds, de, sh, eh, st, et, s, c);
insert into app_public.day_modifications (employee_id, date, slots, is_remote, comment)
values (tests.id('employees', 'alice'), '2026-11-23',
        array[row('07:00', '14:00', '10:00', '10:15', true, tests.id('posts', 'E1-M'), tests.id('establishments', 'E1'), true)::app_public.slot],
        false, 'Remplacement de Bruno');
insert into app_public.shift_change_requests (employee_id, date, reason, is_remote)
values (tests.id('employees', 'alice'), '2026-11-27', 'urgence', true);
with p as (
  insert into app_public.on_call_periods (account_id, start_at, end_at, comment)
  values (tests.id('accounts', 'mgr1'), '2026-11-21 08:00+01', '2026-11-23 08:00+01', 'Week-end')
  returning id
)
insert into app_public.on_call_period_establishments (period_id, establishment_id)
select p.id, tests.id('establishments', 'E1') from p;

select tests.authenticate_as('alice');
select ok(pg_temp.same(null, null), 'an employee, the current week');
select ok(pg_temp.same('2026-11-01', '2026-11-30'), 'an employee, a month (absences, modification, requests, on call)');
select ok(app_public.planning_read_text('2026-11-01', '2026-11-30')::jsonb -> 'cells' -> 0 -> 'blocks' is not null,
  'the text is JSON with its cells');
select tests.authenticate_as('mgr1');
select ok(pg_temp.same('2026-11-01', '2026-11-30'), 'a manager, a month of its perimeter');
select ok(pg_temp.same('2026-11-30', '2026-12-06', tests.id('employees', 'bruno')), 'a manager, one employee, across two months');
select tests.authenticate_as('rh1');
select ok(pg_temp.same('2026-11-01', '2026-12-31', null, tests.id('establishments', 'E2')),
  'RH n1, 61 days, one establishment (special characters in comments)');
select ok(pg_temp.same('2026-11-01', '2026-11-30', null, null, tests.id('teams', 'T1')), 'RH n1, one team');
select tests.authenticate_as('mgr1_noemp');
select ok(pg_temp.same('2026-11-16', '2026-11-22'), 'a manager without an employee record');

select throws_ok($$select app_public.planning_read_text('2026-11-01', '2027-01-02')$$, 'WV108', null,
  'the same errors: more than 62 days is 400');
select tests.as_owner();
select is(split_part(obj_description('app_public.planning_read_text(date, date, int, int, int)'::regprocedure, 'pg_proc'), E'\n', 1),
  '@behavior -*', 'hidden from GraphQL (planningRead is the typed one): the smart tag is its comment''s first line');

select * from finish();
rollback;
