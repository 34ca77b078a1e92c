-- Organisation import (app_private.import_organisation, CONTRACT section 6): a bad document
-- raises WV020 naming its first bad path and leaves nothing behind; a good one returns the
-- key → id map and loads every section.
begin;
select plan(68);

select tests.freeze('2026-11-16 10:00+01');

-- A valid document; each bad document below is this one with one path changed.
create temp table base (doc jsonb not null);
insert into base values ($json$
{
  "establishments": [
    {"key": "X1", "name": "Maison Essai Un", "count_base": "ouvres"},
    {"key": "X2", "name": "Maison Essai Deux"}
  ],
  "teams": [{"key": "TX", "name": "Équipe essai", "establishments": ["X1", "X2"]}],
  "posts": [
    {"key": "X1-J", "code": "JT", "label": "Journée essai", "establishment": "X1", "start_time": "09:00", "end_time": "17:00",
     "break_start_time": "12:00", "break_end_time": "12:30", "break_paid": false},
    {"key": "X1-N", "code": "NT", "label": "Nuit essai", "establishment": "X1", "start_time": "21:00", "end_time": "07:00"},
    {"key": "X2-J", "code": "JT", "label": "Journée essai", "establishment": "X2", "start_time": "08:30", "end_time": "16:30"}
  ],
  "employees": [
    {"key": "hugo", "first_name": "Hugo", "last_name": "Essai", "professional_email": "hugo.essai@example.org",
     "main_establishment": "X1", "secondary_establishments": ["X2"], "teams": ["TX"], "social_security_number": "1850175123456",
     "contracts": [{"type": "CDD", "start": "2026-01-05", "end": "2026-12-31", "trial_end": "2026-02-05", "weekly_hours": 35}],
     "week": {"mon": "X1-J", "tue": "X1-N", "wed": null, "thu": "X1-J", "fri": "X1-J", "sat": null, "sun": null},
     "counters": [{"code": "CP", "year": 2026, "acquired": "12.50"}]},
    {"key": "ines", "first_name": "Inès", "last_name": "Essai", "professional_email": "ines.essai@example.org",
     "main_establishment": null, "contracts": [{"type": "CDI", "start": "2024-03-01", "end": null, "trial_end": null}]}
  ],
  "accounts": [
    {"key": "hugo", "username": "hugo.essai", "password_hash": "$argon2id$v=19$essai", "employee": "hugo",
     "permissions": ["audit.view_actionlog"],
     "roles": [{"role": "Salarié"}, {"role": "Manager n2", "establishments": ["X2"], "start": "2026-11-01", "end": null}]},
    {"key": "ines", "username": "ines.essai", "employee": "ines"},
    {"key": "svc", "username": "svc.essai", "employee": null, "is_staff": true, "is_active": false}
  ],
  "on_call": [{"account": "hugo", "establishments": ["X1"], "start": "2026-11-21T18:00:00+01:00", "end": "2026-11-22T08:00:00+01:00"}]
}
$json$);

-- The SQL of an import of the base document with one path set (or removed when p_value is null).
create function pg_temp.variant(p_path text[], p_value jsonb) returns text language sql stable as $$
  select format('select app_private.import_organisation(%L::jsonb)',
                case when p_value is null then b.doc #- p_path else jsonb_set(b.doc, p_path, p_value) end)
  from base b;
$$;
-- SQLSTATE and DETAIL of a statement that fails.
create function pg_temp.error_of(p_sql text) returns text language plpgsql as $$
declare
  v_state text;
  v_detail text;
begin
  execute p_sql;
  return 'no error';
exception when others then
  get stacked diagnostics v_state = returned_sqlstate, v_detail = pg_exception_detail;
  return v_state || ' ' || v_detail;
end;
$$;
-- Row counts of everything an import writes.
create function pg_temp.snapshot() returns jsonb language sql stable as $$
  select jsonb_build_object(
    'establishments', (select count(*) from app_public.establishments),
    'teams', (select count(*) from app_public.teams),
    'team_establishments', (select count(*) from app_public.team_establishments),
    'posts', (select count(*) from app_public.posts),
    'employees', (select count(*) from app_public.employees),
    'ssn', (select count(*) from app_public.employee_social_security_numbers),
    'secondary', (select count(*) from app_public.employee_secondary_establishments),
    'team_assignments', (select count(*) from app_public.team_assignments),
    'contracts', (select count(*) from app_public.contracts),
    'templates', (select count(*) from app_public.planning_templates),
    'slots', (select count(*) from app_public.planning_template_slots),
    'counters', (select count(*) from app_public.counters),
    'movements', (select count(*) from app_private.counter_movements),
    'accounts', (select count(*) from app_public.accounts),
    'secrets', (select count(*) from app_private.account_secrets),
    'roles', (select count(*) from app_public.role_attributions),
    'role_establishments', (select count(*) from app_public.role_attribution_establishments),
    'permissions', (select count(*) from app_public.account_permissions),
    'outbox', (select count(*) from app_private.email_outbox),
    'tokens', (select count(*) from app_private.password_tokens),
    'on_call', (select count(*) from app_public.on_call_periods),
    'on_call_establishments', (select count(*) from app_public.on_call_period_establishments));
$$;
create temp table snapshots (name text primary key, counts jsonb not null);
insert into snapshots values ('before', pg_temp.snapshot());

------------------------------------------------------------------------------------------
-- Bad documents: WV020 and the first bad path
select throws_ok($$select app_private.import_organisation('[]')$$, 'WV020', '$: expected an object',
  'a document that is not an object');
select throws_ok(pg_temp.variant('{establishment}', '[]'), 'WV020', '$.establishment: unknown field',
  'unknown top-level key');
select throws_ok(pg_temp.variant('{establishments}', '{}'), 'WV020', 'establishments: expected an array',
  'a section that is not an array');
select throws_ok(pg_temp.variant('{employees,0,nickname}', '"x"'), 'WV020', 'employees[0].nickname: unknown field',
  'unknown key of an employee');
select throws_ok(pg_temp.variant('{employees,0,week,lun}', '"X1-J"'), 'WV020', 'employees[0].week.lun: unknown field',
  'unknown weekday in a week');
select throws_ok(pg_temp.variant('{establishments,1,key}', '"X1"'), 'WV020', 'establishments[1].key: duplicate key "X1"',
  'duplicate establishment key');
select throws_ok(pg_temp.variant('{accounts,1,key}', '"hugo"'), 'WV020', 'accounts[1].key: duplicate key "hugo"',
  'duplicate account key');
select throws_ok(pg_temp.variant('{posts,2,key}', '"X1-J"'), 'WV020', 'posts[2].key: duplicate key "X1-J"',
  'duplicate post key');
select throws_ok(pg_temp.variant('{teams,0,establishments,1}', '"ZZ"'), 'WV020',
  'teams[0].establishments[1]: unknown establishment "ZZ"', 'unknown establishment of a team');
select throws_ok(pg_temp.variant('{employees,0,week,mon}', '"NOPE"'), 'WV020', 'employees[0].week.mon: unknown post code "NOPE"',
  'unknown post in a week');
select throws_ok(pg_temp.variant('{employees,0,teams,0}', '"TZ"'), 'WV020', 'employees[0].teams[0]: unknown team "TZ"',
  'unknown team of an employee');
select throws_ok(pg_temp.variant('{employees,0,main_establishment}', '"E1"'), 'WV020',
  'employees[0].main_establishment: unknown establishment "E1"', 'keys are those of the document, not of the database');
select throws_ok(pg_temp.variant('{accounts,0,employee}', '"ghost"'), 'WV020', 'accounts[0].employee: unknown employee "ghost"',
  'unknown employee of an account');
select throws_ok(pg_temp.variant('{accounts,1,employee}', '"hugo"'), 'WV020',
  'accounts[1].employee: employee "hugo" already has an account', 'two accounts on one employee');
select throws_ok(pg_temp.variant('{accounts,0,roles,1,establishments,0}', '"ZZ"'), 'WV020',
  'accounts[0].roles[1].establishments[0]: unknown establishment "ZZ"', 'unknown establishment of a role');
select throws_ok(pg_temp.variant('{on_call,0,account}', '"nobody"'), 'WV020', 'on_call[0].account: unknown account "nobody"',
  'unknown account of an on-call period');
select throws_ok(pg_temp.variant('{on_call,0,establishments}', '["X1", "E9"]'), 'WV020',
  'on_call[0].establishments[1]: unknown establishment "E9"', 'unknown establishment of an on-call period');
select throws_ok(pg_temp.variant('{accounts,0,roles,1,role}', '"Chef"'), 'WV020', 'accounts[0].roles[1].role: unknown role "Chef"',
  'unknown role');
select throws_ok(pg_temp.variant('{accounts,0,permissions,0}', '"audit.view_all"'), 'WV020',
  'accounts[0].permissions[0]: unknown permission "audit.view_all"', 'unknown permission');
select throws_ok(pg_temp.variant('{employees,0,contracts,0,type}', '"CDX"'), 'WV020',
  'employees[0].contracts[0].type: unknown contract type "CDX"', 'unknown contract type');
select throws_ok(pg_temp.variant('{employees,0,counters,0,code}', '"XX"'), 'WV020',
  'employees[0].counters[0].code: unknown counter code "XX"', 'unknown counter code');

-- dates and times
select throws_ok(pg_temp.variant('{employees,0,contracts,0,start}', '"05/01/2026"'), 'WV020',
  'employees[0].contracts[0].start: invalid date "05/01/2026" (expected YYYY-MM-DD)', 'a date in the wrong format');
select throws_ok(pg_temp.variant('{employees,0,contracts,0,start}', '"2026-02-30"'), 'WV020',
  'employees[0].contracts[0].start: invalid date "2026-02-30"', 'an impossible date');
select throws_ok(pg_temp.variant('{employees,0,contracts,0,end}', '"2025-12-31"'), 'WV020',
  'employees[0].contracts[0].end: end is before start', 'a contract ending before it starts');
select throws_ok(pg_temp.variant('{accounts,0,roles,1,end}', '"2026-10-31"'), 'WV020',
  'accounts[0].roles[1].end: end is before start', 'a role ending before it starts');
select throws_ok(pg_temp.variant('{posts,0,start_time}', '"25:00"'), 'WV020',
  'posts[0].start_time: invalid time "25:00" (expected HH:MM)', 'an impossible time');
select throws_ok(pg_temp.variant('{posts,0,start_time}', '"9:00"'), 'WV020',
  'posts[0].start_time: invalid time "9:00" (expected HH:MM)', 'a time in the wrong format');
select throws_ok(pg_temp.variant('{posts,1,end_time}', '"21:00"'), 'WV020',
  'posts[1].end_time: end_time must differ from start_time', 'a post of zero length');
select throws_ok(pg_temp.variant('{posts,0,break_end_time}', 'null'), 'WV020',
  'posts[0].break_end_time: break_start_time and break_end_time go together', 'a break without end');
select throws_ok(pg_temp.variant('{on_call,0,start}', '"2026-11-21T18:00"'), 'WV020',
  'on_call[0].start: invalid timestamp "2026-11-21T18:00" (expected ISO 8601 with offset)', 'a timestamp without offset');
select throws_ok(pg_temp.variant('{on_call,0,end}', '"2026-11-21T17:00:00+01:00"'), 'WV020',
  'on_call[0].end: end must be after start', 'an on-call period ending before it starts');

-- wrong types and values
select throws_ok(pg_temp.variant('{establishments,0,name}', '12'), 'WV020', 'establishments[0].name: expected a string',
  'a number where a string is expected');
select throws_ok(pg_temp.variant('{accounts,0,is_active}', '"yes"'), 'WV020', 'accounts[0].is_active: expected true or false',
  'a string where a boolean is expected');
select throws_ok(pg_temp.variant('{employees,0,secondary_establishments}', '"X2"'), 'WV020',
  'employees[0].secondary_establishments: expected an array', 'a string where an array is expected');
select throws_ok(pg_temp.variant('{teams,0,establishments,0}', '1'), 'WV020', 'teams[0].establishments[0]: expected a string',
  'a number in a list of keys');
select throws_ok(pg_temp.variant('{employees,0,contracts,0,weekly_hours}', '"35"'), 'WV020',
  'employees[0].contracts[0].weekly_hours: expected a number', 'weekly hours as a string');
select throws_ok(pg_temp.variant('{employees,0,counters,0,year}', '"2026"'), 'WV020',
  'employees[0].counters[0].year: expected a year such as 2026', 'a year as a string');
select throws_ok(pg_temp.variant('{employees,0,counters,0,acquired}', '"douze"'), 'WV020',
  'employees[0].counters[0].acquired: expected a decimal string such as "25.00"', 'a quantity that is not a decimal');
select throws_ok(pg_temp.variant('{employees,0,counters,1}', '{"code": "CP", "year": 2026}'), 'WV020',
  'employees[0].counters[1]: counter CP 2026 is listed twice', 'a counter listed twice');
select throws_ok(pg_temp.variant('{establishments,0,count_base}', '"semaine"'), 'WV020',
  'establishments[0].count_base: unknown count base "semaine" (ouvrables or ouvres)', 'an unknown count base');
select throws_ok(pg_temp.variant('{employees,0,professional_email}', '"pas-un-mail"'), 'WV020',
  'employees[0].professional_email: invalid e-mail "pas-un-mail"', 'an invalid e-mail');
select throws_ok(pg_temp.variant('{employees,0,social_security_number}', '"123"'), 'WV020',
  'employees[0].social_security_number: invalid social security number (13 or 15 characters)', 'an invalid social security number');
select throws_ok(pg_temp.variant('{employees,0,last_name}', null), 'WV020', 'employees[0].last_name: required',
  'a missing required field');
select throws_ok(pg_temp.variant('{employees,1,first_name}', '" "'), 'WV020', 'employees[1].first_name: must not be empty',
  'a blank required field');
select throws_ok(pg_temp.variant('{accounts,0,username}', '"ALICE"'), 'WV020', 'accounts[0].username: username "ALICE" is already taken',
  'a username already taken, case-insensitively');
select throws_ok(pg_temp.variant('{accounts,0,username}', '"hugo essai"'), 'WV020',
  'accounts[0].username: invalid username "hugo essai" (letters, digits and . _ @ + -)', 'an invalid username');
select throws_ok(pg_temp.variant('{posts,0,code}', '"Cp"'), 'WV020', 'posts[0].code: post code "Cp" is already an absence type code',
  'a post code equal to a reason code');
select throws_ok(pg_temp.variant('{establishments,0,name}', '"Foyer Les Tilleuls"'), 'WV020',
  'establishments[0].name: an establishment named "Foyer Les Tilleuls" already exists', 'an establishment name already used');

-- the first bad path wins, and DETAIL carries it
select throws_ok(
  format('select app_private.import_organisation(%L::jsonb)',
         (select jsonb_set(jsonb_set(doc, '{accounts,0,employee}', '"ghost"'), '{employees,1,main_establishment}', '"E7"') from base)),
  'WV020', 'employees[1].main_establishment: unknown establishment "E7"', 'two errors: the first one in document order is named');
select is(pg_temp.error_of(pg_temp.variant('{employees,0,week,mon}', '"NOPE"')), 'WV020 employees[0].week.mon',
  'DETAIL is the bad path');

-- nothing of a bad document stays, even when it fails at its very end
select is(pg_temp.snapshot(), (select counts from snapshots where name = 'before'), 'the refused documents left no row');
select throws_ok(pg_temp.variant('{on_call,0,establishments}', '[]'), 'WV020', 'on_call[0].establishments: at least one establishment',
  'a document failing on its last section');
select is(pg_temp.snapshot(), (select counts from snapshots where name = 'before'),
  'nothing stays of it: establishments, people, accounts, counters, mails, tokens, on-call');

------------------------------------------------------------------------------------------
-- A good document
create temp table imported as select app_private.import_organisation(doc) as r from base;
create function pg_temp.r(p_section text, p_key text) returns int language sql stable as $$
  select (r -> p_section ->> p_key)::int from imported;
$$;
create function pg_temp.est(p_name text) returns int language sql stable as $$
  select id from app_public.establishments where name = p_name;
$$;

select is((select r from imported),
  jsonb_build_object(
    'establishments', jsonb_build_object('X1', pg_temp.est('Maison Essai Un'), 'X2', pg_temp.est('Maison Essai Deux')),
    'teams', jsonb_build_object('TX', (select id from app_public.teams where name = 'Équipe essai')),
    'posts', (select jsonb_object_agg(case when p.code = 'NT' then 'X1-N' when p.establishment_id = pg_temp.est('Maison Essai Un')
                                           then 'X1-J' else 'X2-J' end, p.id)
              from app_public.posts p where p.establishment_id in (pg_temp.est('Maison Essai Un'), pg_temp.est('Maison Essai Deux'))),
    'employees', (select jsonb_object_agg(lower(e.first_name), e.id) filter (where e.first_name = 'Hugo')
                         || jsonb_object_agg('ines', e.id) filter (where e.first_name = 'Inès')
                  from app_public.employees e where e.last_name = 'Essai'),
    'accounts', (select jsonb_object_agg(split_part(a.username, '.', 1), a.id) from app_public.accounts a
                 where a.username like '%.essai'),
    'on_call', jsonb_build_object('0', (select p.id from app_public.on_call_periods p
                                        where p.account_id = (select id from app_public.accounts where username = 'hugo.essai')))),
  'the result maps every key of every section to the id it received');
select results_eq(
  $$select name, count_base from app_public.establishments where id in (pg_temp.r('establishments', 'X1'), pg_temp.r('establishments', 'X2'))
    order by id$$,
  $$values ('Maison Essai Un', 'ouvres'), ('Maison Essai Deux', 'ouvrables')$$,
  'establishments, count_base defaulting to ouvrables');
select set_eq($$select establishment_id from app_public.team_establishments where team_id = pg_temp.r('teams', 'TX')$$,
  $$values (pg_temp.r('establishments', 'X1')), (pg_temp.r('establishments', 'X2'))$$, 'a team spanning two establishments');
select results_eq(
  $$select code, establishment_id, start_time, end_time, break_start_time, break_end_time, break_paid
    from app_public.posts where id in (pg_temp.r('posts', 'X1-J'), pg_temp.r('posts', 'X1-N')) order by id$$,
  $$values ('JT', pg_temp.r('establishments', 'X1'), '09:00'::time, '17:00'::time, '12:00'::time, '12:30'::time, false),
           ('NT', pg_temp.r('establishments', 'X1'), '21:00'::time, '07:00'::time, null, null, false)$$,
  'posts with their hours and breaks, a night post ending the next day');
select results_eq(
  $$select e.main_establishment_id, s.establishment_id, t.team_id, n.social_security_number
    from app_public.employees e
    join app_public.employee_secondary_establishments s on s.employee_id = e.id
    join app_public.team_assignments t on t.employee_id = e.id
    join app_public.employee_social_security_numbers n on n.employee_id = e.id
    where e.id = pg_temp.r('employees', 'hugo')$$,
  $$values (pg_temp.r('establishments', 'X1'), pg_temp.r('establishments', 'X2'), pg_temp.r('teams', 'TX'), '1850175123456')$$,
  'an employee with main and secondary workplaces, a team and a social security number');
select results_eq(
  $$select ct.code, c.start_date, c.end_date, c.trial_end_date, c.weekly_hours
    from app_public.contracts c join app_public.contract_types ct on ct.id = c.contract_type_id
    where c.employee_id = pg_temp.r('employees', 'hugo')$$,
  $$values ('CDD', '2026-01-05'::date, '2026-12-31'::date, '2026-02-05'::date, 35.00::numeric(5,2))$$, 'the contract');
select results_eq(
  $$select t.valid_from, s.weekday::int, s.post_id
    from app_public.planning_templates t join app_public.planning_template_slots s on s.template_id = t.id
    where t.employee_id = pg_temp.r('employees', 'hugo') order by s.weekday$$,
  $$values ('2026-01-05'::date, 1, pg_temp.r('posts', 'X1-J')), ('2026-01-05'::date, 2, pg_temp.r('posts', 'X1-N')),
           ('2026-01-05'::date, 4, pg_temp.r('posts', 'X1-J')), ('2026-01-05'::date, 5, pg_temp.r('posts', 'X1-J'))$$,
  'the week becomes the planning template from the first contract start, rest days without slot');
select results_eq(
  $$select code, year::int, acquired, taken, planned, remaining from app_private.counter_balances
    where employee_id = pg_temp.r('employees', 'hugo')$$,
  $$values ('CP', 2026, 12.50::numeric(8,2), 0.00::numeric(8,2), 0.00::numeric(8,2), 12.50::numeric(8,2))$$,
  'the counter is opened with its Acquis written in the journal');
select results_eq(
  $$select r.name, ra.start_date, ra.end_date, array(select rae.establishment_id from app_public.role_attribution_establishments rae
                                                     where rae.attribution_id = ra.id)
    from app_public.role_attributions ra join app_public.roles r on r.id = ra.role_id
    where ra.account_id = pg_temp.r('accounts', 'hugo') order by r.precedence$$,
  $$values ('Manager n2', '2026-11-01'::date, null::date, array[pg_temp.r('establishments', 'X2')]),
           ('Salarié', null, null, '{}'::int[])$$,
  'roles: a dated Manager n2 on X2, and Salarié once although listed');
select results_eq(
  $$select a.is_active, a.is_staff, s.password_hash, array(select permission_code from app_public.account_permissions p
                                                             where p.account_id = a.id)
    from app_public.accounts a join app_private.account_secrets s on s.account_id = a.id
    where a.id = pg_temp.r('accounts', 'hugo')$$,
  $$values (true, false, '$argon2id$v=19$essai', array['audit.view_actionlog'])$$,
  'an account with its password hash and explicit permissions');
select results_eq(
  $$select a.username, a.is_active, a.is_staff, s.password_hash,
           (select count(*)::int from app_public.role_attributions ra where ra.account_id = a.id)
    from app_public.accounts a join app_private.account_secrets s on s.account_id = a.id
    where a.id in (pg_temp.r('accounts', 'ines'), pg_temp.r('accounts', 'svc')) order by a.id$$,
  $$values ('ines.essai', true, false, null::text, 1), ('svc.essai', false, true, null::text, 0)$$,
  'accounts without password: unusable password; an account without record has no role');
select results_eq(
  $$select o.account_id, o.kind, o.to_address from app_private.email_outbox o
    where o.account_id in (pg_temp.r('accounts', 'hugo'), pg_temp.r('accounts', 'ines'), pg_temp.r('accounts', 'svc'))$$,
  $$values (pg_temp.r('accounts', 'ines'), 'invitation', 'ines.essai@example.org')$$,
  'only the account without password and with an e-mail is invited');
select results_eq(
  $$select p.start_at, p.end_at, array(select establishment_id from app_public.on_call_period_establishments e
                                       where e.period_id = p.id)
    from app_public.on_call_periods p where p.id = pg_temp.r('on_call', '0')$$,
  $$values ('2026-11-21 18:00+01'::timestamptz, '2026-11-22 08:00+01'::timestamptz, array[pg_temp.r('establishments', 'X1')])$$,
  'the on-call period with its establishments');
select ok(app_hidden.may(pg_temp.r('accounts', 'hugo'), 'absences.decide_absence', pg_temp.r('employees', 'hugo'))
          and not app_hidden.may(pg_temp.r('accounts', 'hugo'), 'absences.decide_absence', pg_temp.r('employees', 'ines'))
          and app_hidden.may(pg_temp.r('accounts', 'hugo'), 'absences.decide_absence', pg_temp.r('employees', 'hugo'),
                             '2026-11-21 20:00+01'),
  'the imported perimeter works: X2 through the secondary workplace; ines without workplace stays out');
select throws_ok($$select app_private.import_organisation(doc) from base$$, 'WV020',
  'establishments[0].name: an establishment named "Maison Essai Un" already exists',
  'importing the same document twice is refused on its first clash');

select * from finish();
rollback;
