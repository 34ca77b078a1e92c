-- The shortcuts taken for speed (issue 7, BENCHMARKS.md) give the answers of the plain
-- definitions they replace:
--   * app_hidden.may(A, P, E, T) = E in app_hidden.perimeter_employee_ids(P, A, T), without
--     listing the perimeter;
--   * app_hidden.permission_scopes(accounts, P, T) = app_hidden.permission_scope per account;
--   * app_private.decider_candidates (both perimeters of every decider in one statement each)
--     = the per-decider definition (may for the decision and for the queue);
--   * the directory shortcut of the employee-readable policies reads what the list did;
--   * planning blocks that start at the same time: the worked slot, then the hourly absence;
--   * the perimeters kept for a transaction follow every write to what they are computed from
--     (workplace, team assignment, team establishments, attributions, on-call periods, account).
-- Over every fixture account, extra accounts (dated, expired, multi-establishment, mixed, explicit,
-- on call, inactive, superuser), every employee (and null, and an unknown id), several
-- permissions and instants (on-call boundaries included).
begin;
select plan(19);

select tests.freeze('2026-11-16 10:00+01');

-- Extra people and accounts, as in 03-perimeter.sql.
insert into app_public.employees (first_name, last_name, main_establishment_id)
values ('Zoé', 'zoe', tests.id('establishments', 'E3')), ('Yann', 'yann', null);
insert into app_public.employee_secondary_establishments (employee_id, establishment_id)
select id, tests.id('establishments', 'E2') from app_public.employees where last_name = 'zoe';
insert into app_public.team_assignments (employee_id, team_id, start_date, end_date)
select id, tests.id('teams', 'T2'), '2026-11-20', '2026-11-22' from app_public.employees where last_name = 'yann';
insert into app_public.accounts (username, is_active) values
  ('p-dated', true), ('p-multi', true), ('p-mixed', true), ('p-expired', true), ('p-closed', false);
insert into app_public.role_attributions (account_id, role_id, start_date, end_date)
select a.id, x.role_id, x.start_date::date, x.end_date::date
from (values ('p-dated', 6, '2026-11-17', '2026-11-18'), ('p-multi', 5, null, null), ('p-mixed', 5, null, null),
             ('p-mixed', 6, null, null), ('p-expired', 5, '2026-01-01', '2026-11-15'), ('p-closed', 1, null, null))
       as x(username, role_id, start_date, end_date)
join app_public.accounts a on a.username = x.username;
insert into app_public.role_attribution_establishments (attribution_id, establishment_id)
select ra.id, tests.id('establishments', x.est)
from (values ('p-dated', 6, 'E3'), ('p-multi', 5, 'E2'), ('p-multi', 5, 'E3'), ('p-mixed', 5, 'E1'), ('p-expired', 5, 'E3'))
       as x(username, role_id, est)
join app_public.accounts a on a.username = x.username
join app_public.role_attributions ra on ra.account_id = a.id and ra.role_id = x.role_id;
insert into app_public.on_call_periods (account_id, start_at, end_at)
select a.id, '2026-11-16 08:00+01', '2026-11-17 08:00+01' from app_public.accounts a where a.username in ('p-expired', 'alice');
insert into app_public.on_call_period_establishments (period_id, establishment_id)
select p.id, tests.id('establishments', 'E1')
from app_public.on_call_periods p join app_public.accounts a on a.id = p.account_id
where a.username in ('p-expired', 'alice');

-- Explicit permissions (the queue and the decision, or the decision alone) and a superuser holding
-- a restricted manager role: the whole association without an open attribution.
insert into app_public.accounts (username, is_active, is_superuser) values
  ('p-explicit', true, false), ('p-explicit-decide', true, false), ('p-super', true, true);
insert into app_public.account_permissions (account_id, permission_code)
select a.id, x.permission_code
from (values ('p-explicit', 'absences.decide_absence'), ('p-explicit', 'absences.view_absence_queue'),
             ('p-explicit', 'planning.decide_shift_change'), ('p-explicit-decide', 'absences.decide_absence'))
       as x(username, permission_code)
join app_public.accounts a on a.username = x.username;
insert into app_public.role_attributions (account_id, role_id)
select a.id, 5 from app_public.accounts a where a.username = 'p-super';
insert into app_public.role_attribution_establishments (attribution_id, establishment_id)
select ra.id, tests.id('establishments', 'E3')
from app_public.role_attributions ra join app_public.accounts a on a.id = ra.account_id where a.username = 'p-super';

create temp table cases_accounts as select id from app_public.accounts union all select null::int union all select -1;
create temp table cases_employees as select id from app_public.employees union all select null::int union all select -1;
create temp table cases_permissions as
select unnest(array['absences.view_absence_queue', 'absences.decide_absence', 'employee.view_payroll',
                    'audit.view_actionlog']) as p;
create temp table cases_times as
select unnest(array['2026-11-16 10:00+01', '2026-11-17 08:00+01', '2026-11-21 12:00+01']::timestamptz[]) as t;
grant select on cases_accounts, cases_employees, cases_permissions, cases_times to public;
-- Each perimeter listed once.
create temp table cases_perimeters as
select a.id as account_id, p.p, t.t, array(select app_hidden.perimeter_employee_ids(p.p, a.id, t.t)) as ids
from cases_accounts a, cases_permissions p, cases_times t;

select is((select count(*)::int
           from cases_perimeters c, cases_employees e
           where app_hidden.may(c.account_id, c.p, e.id, c.t)
                 is distinct from coalesce(e.id in (select unnest(c.ids)), false)),
          0, 'may = membership of the listed perimeter (false, never NULL, for a NULL employee), for every account, permission, employee and instant');

select tests.authenticate_as('mgr1');
select is((select count(*)::int
           from cases_permissions p, cases_employees e
           where app_hidden.may(null, p.p, e.id)
                 is distinct from coalesce(e.id in (select app_hidden.perimeter_employee_ids(p.p)), false)),
          0, 'without account nor instant: the acting account, now');
select tests.as_owner();

create temp table cases_scopes as
select p.p, t.t, s.account_id, s.whole, s.establishment_ids
from cases_permissions p, cases_times t,
     lateral app_hidden.permission_scopes(array(select id from cases_accounts), p.p, t.t) s;
select is((select count(*)::int
           from cases_permissions p, cases_times t, cases_accounts a
           left join lateral (select * from cases_scopes c where c.account_id = a.id) x on true
           where a.id > 0 and x.p = p.p and x.t = t.t
             and (x.whole::text || ':' || coalesce((select array_agg(v order by v) from unnest(x.establishment_ids) v)::text, 'null'))
                 is distinct from (select s.whole::text || ':'
                                          || coalesce((select array_agg(v order by v) from unnest(s.establishment_ids) v)::text, 'null')
                                   from app_hidden.permission_scope(a.id, p.p, t.t) s)),
          0, 'permission_scopes (all accounts at once) = permission_scope of each account');
select is((select count(*)::int from cases_scopes), (select count(*)::int * 12 from cases_accounts where id > 0),
          'one scope per existing account');
select is((select s.whole::text || ':' || coalesce(s.establishment_ids::text, 'null')
           from app_hidden.permission_scope(-1, 'absences.view_absence_queue', '2026-11-16 10:00+01') s),
          'false:{}', 'an unknown account has no permission (one row)');

-- The per-decider definition of the candidates (before the set-wise rewrite).
create function pg_temp.candidates_ref(p_employee_id int, p_on date, p_decide_permission text, p_author_account_id int)
returns table (account_id int, attached boolean) language sql stable as $$
  with deciders as (
    select a.id from app_public.accounts a
    where a.is_active and a.id is distinct from p_author_account_id
      and (exists (select 1 from app_public.role_attributions ra
                   join app_public.role_permissions rp on rp.role_id = ra.role_id
                   where ra.account_id = a.id and rp.permission_code = p_decide_permission
                     and app_hidden.date_in(app_hidden.today(), ra.start_date, ra.end_date))
           or exists (select 1 from app_public.account_permissions ap
                      where ap.account_id = a.id and ap.permission_code = p_decide_permission and not a.is_superuser))
  ),
  est as (
    select array(select app_hidden.employee_establishments(p_employee_id, coalesce(p_on, app_hidden.today()))
                 union select app_hidden.employee_establishments(p_employee_id, app_hidden.today())) as ids
  ),
  restricted as (
    select ra.account_id, rae.establishment_id
    from app_public.role_attributions ra
    join app_public.roles r on r.id = ra.role_id and r.opens_manager_workspace
    join app_public.role_permissions rp on rp.role_id = ra.role_id and rp.permission_code = p_decide_permission
    join app_public.role_attribution_establishments rae on rae.attribution_id = ra.id
    where ra.account_id in (select d.id from deciders d) and app_hidden.date_in(app_hidden.today(), ra.start_date, ra.end_date)
  )
  select d.id,
         exists (select 1 from restricted x, est where x.account_id = d.id and x.establishment_id = any (est.ids))
         or (exists (select 1 from restricted x where x.account_id = d.id)
             and exists (select 1 from app_public.on_call_periods op
                         join app_public.on_call_period_establishments ope on ope.period_id = op.id, est
                         where op.account_id = d.id and op.start_at <= app_hidden.now() and app_hidden.now() < op.end_at
                           and ope.establishment_id = any (est.ids)))
  from deciders d
  where d.id in (select x from app_public.employees e, lateral (select d.id) y(x)
                 where e.id = p_employee_id
                   and p_employee_id in (select app_hidden.perimeter_employee_ids(p_decide_permission, d.id, app_hidden.now()))
                   and p_employee_id in (select app_hidden.perimeter_employee_ids('absences.view_absence_queue', d.id, app_hidden.now())));
$$;
create temp table cases_candidates as
select e.id as employee_id, p.p as permission, a.id as author, d.on_date
from (select id from app_public.employees
      where id in (select tests.id('employees', k) from unnest(array['alice', 'bruno', 'chloe', 'david', 'farid', 'mgr1']) k)
         or last_name in ('zoe', 'yann')) e
cross join (values ('planning.decide_shift_change'), ('absences.decide_absence')) p(p)
cross join (select id from app_public.accounts where username in ('mgr1', 'alice') union all select null) a
cross join (values (date '2026-11-16'), (date '2026-11-21')) d(on_date);
select is((select count(*)::int from cases_candidates c
           where (select array_agg(x.account_id::text || ':' || x.attached::text order by x.account_id)
                  from app_private.decider_candidates(c.employee_id, c.on_date, c.permission, c.author) x)
                 is distinct from
                 (select array_agg(x.account_id::text || ':' || x.attached::text order by x.account_id)
                  from pg_temp.candidates_ref(c.employee_id, c.on_date, c.permission, c.author) x)),
          0, 'decider candidates (set-wise) = the per-decider definition, today');
select tests.freeze('2026-11-21 12:00+01');
select is((select count(*)::int from cases_candidates c
           where (select array_agg(x.account_id::text || ':' || x.attached::text order by x.account_id)
                  from app_private.decider_candidates(c.employee_id, c.on_date, c.permission, c.author) x)
                 is distinct from
                 (select array_agg(x.account_id::text || ':' || x.attached::text order by x.account_id)
                  from pg_temp.candidates_ref(c.employee_id, c.on_date, c.permission, c.author) x)),
          0, 'and during mgr3''s on-call period');
select tests.freeze('2026-11-16 10:00+01');

-- Employee-readable policies: the directory shortcut and the listed definition agree.
select tests.authenticate_as('da');
select set_eq($$select id from app_public.employees$$, $$select id from cases_employees where id > 0$$,
              'a directory reader (DA) reads every employee');
select tests.authenticate_as('paie');
select set_eq($$select id from app_public.employees$$, $$select app_hidden.readable_employee_ids()$$,
              'without the directory: its own record and the payroll perimeter');

-- Same start time: the worked slot, then the hourly absence.
select tests.as_owner();
insert into app_public.absences (employee_id, type_id, date_start, date_end, start_time, end_time, status, counted_quantity,
                                 counted_unit, author_account_id)
select tests.id('employees', 'alice'), t.id, '2026-11-26', '2026-11-26', s.start_time, s.start_time + interval '1 hour',
       'validated', 1, 'hour', tests.id('accounts', 'mgr1')
from app_public.absence_types t,
     lateral (select (app_hidden.planned_slots(tests.id('employees', 'alice'), '2026-11-26'))[1].start_time) s
where t.code = 'DON';
select tests.authenticate_as('alice');
select is((select string_agg(b ->> 'kind', ',' order by o)
           from jsonb_array_elements(app_public.planning_read('2026-11-26', '2026-11-26', null)::jsonb -> 'cells') c,
                jsonb_array_elements(c -> 'blocks') with ordinality x(b, o)),
          'work,absence', 'an hourly absence starting with the worked slot comes after it');

-- The transaction's memo of scopes and perimeters follows the writes of the same transaction.
select tests.as_owner();
create function pg_temp.emp(p_key text) returns int language sql stable as $$
  select coalesce(tests.id('employees', p_key), (select id from app_public.employees where last_name = p_key));
$$;
grant execute on function pg_temp.emp(text) to public;
create function pg_temp.mgr1_reads(p_key text) returns boolean language sql as $$
  select pg_temp.emp(p_key) in (select app_hidden.perimeter_employee_ids('absences.view_absence_queue',
                                                                          tests.id('accounts', 'mgr1')));
$$;
select ok(not pg_temp.mgr1_reads('david') and not pg_temp.mgr1_reads('zoe'), 'memo: mgr1 (E1) reads neither david nor zoe');
update app_public.employees set main_establishment_id = tests.id('establishments', 'E1') where id = pg_temp.emp('david');
select ok(pg_temp.mgr1_reads('david'), 'memo: a workplace moved into E1 in the same transaction is read at once');
insert into app_public.team_assignments (employee_id, team_id) values (pg_temp.emp('zoe'), tests.id('teams', 'T1'));
select ok(pg_temp.mgr1_reads('zoe'), 'memo: and so is a new team assignment');
delete from app_public.team_assignments where employee_id = pg_temp.emp('zoe') and team_id = tests.id('teams', 'T1');
update app_public.employees set main_establishment_id = tests.id('establishments', 'E3') where id = pg_temp.emp('david');
select ok(not pg_temp.mgr1_reads('david') and not pg_temp.mgr1_reads('zoe'), 'memo: and their removal');
update app_public.role_attributions set end_date = '2026-11-15'
where account_id = tests.id('accounts', 'mgr1') and role_id = 5;
select is((select count(*)::int from app_hidden.perimeter_employee_ids('absences.view_absence_queue', tests.id('accounts', 'mgr1'))),
          0, 'memo: an attribution ended in the same transaction empties the perimeter');
update app_public.role_attributions set end_date = null where account_id = tests.id('accounts', 'mgr1') and role_id = 5;
select tests.authenticate_as('mgr3');
select ok(not (pg_temp.emp('alice') in (select app_hidden.perimeter_employee_ids('absences.view_absence_queue'))),
          'memo: mgr3 (E3) does not read alice (E1) before its on-call period');
select tests.freeze('2026-11-21 12:00+01');
select ok(pg_temp.emp('alice') in (select app_hidden.perimeter_employee_ids('absences.view_absence_queue')),
          'memo: another instant (on call for E1) is another perimeter');

-- The readers of absences (app_hidden.absence_readers, one array for the transaction) follow the
-- same writes.
select tests.freeze('2026-11-16 10:00+01');
select tests.authenticate_as('mgr1');
select ok(exists (select 1 from app_public.absences a where a.employee_id = pg_temp.emp('alice')),
          'memo: mgr1 (E1) reads the absences of alice');
select tests.as_owner();
update app_public.role_attributions set end_date = '2026-11-15'
where account_id = tests.id('accounts', 'mgr1') and role_id = 5;
select tests.authenticate_as('mgr1');
select ok(not exists (select 1 from app_public.absences a where a.employee_id = pg_temp.emp('alice')),
          'memo: and no longer once its attribution ended in the same transaction');

select * from finish();
rollback;
