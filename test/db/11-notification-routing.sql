-- Routing of a filing to its deciders (SPEC Events, Notifications rules): deciders whose
-- queue shows the employee, attached ones first (main, secondary workplace, team of the
-- day, on-call), unattached ones (Admin or RH of the whole association, explicit
-- permission) only when no attached one qualifies; never the author, never an account that
-- can decide but cannot read the queue (DA, explicit decide permission), never a superuser
-- without a role; nobody → "sans valideur" to the author and every Admin (else RH n1 and
-- RH n2, else a superuser), has_recipient = false.
--
-- Fixture: admin (Admin, whole), rh1 (RH n1, whole), rh2 (RH n2, E2), da (DA, E1),
-- mgr1 (Manager n1, E1), mgr2 (Manager n2, E2), mgr3 (Manager n1, E3, on call for E1 from
-- 2026-11-20 18:00 to 2026-11-23 08:00), paie (Service Paie), root (superuser, no role); each role
-- again without employee record: admin_noemp, rh1_noemp, rh2_noemp, mgr1_noemp, mgr2_noemp (deciders
-- restricted to E3, named below as the E3 deciders without employee record), da_noemp, paie_noemp,
-- salarie_noemp, interim_noemp.
-- alice: E1, team T1 (E1); chloe: E2, team T2 (E1+E2); david: E3; farid: no workplace.
begin;
select plan(47);

select tests.freeze('2026-11-16 10:00+01');

-- Usernames routed for a filing about an employee (sorted).
create function pg_temp.route(p_employee text, p_author text, p_permission text default 'planning.decide_shift_change',
                              p_on date default '2026-11-16')
returns text[] language sql as $$
  select coalesce(array_agg(a.username order by a.username), '{}')
  from app_private.route_deciders(tests.id('employees', p_employee), p_on, p_permission, tests.id('accounts', p_author)) r(id)
  join app_public.accounts a on a.id = r.id;
$$;
-- Candidates with their attachment, as 'username:attached|unattached' (sorted).
create function pg_temp.candidates(p_employee text, p_author text, p_permission text default 'planning.decide_shift_change')
returns text[] language sql as $$
  select coalesce(array_agg(a.username || ':' || case when c.attached then 'attached' else 'unattached' end order by a.username), '{}')
  from app_private.decider_candidates(tests.id('employees', p_employee), '2026-11-16', p_permission,
                                      tests.id('accounts', p_author)) c
  join app_public.accounts a on a.id = c.account_id;
$$;
-- Recipients of the notifications of a title (sorted usernames).
create function pg_temp.recipients(p_title text) returns text[] language sql as $$
  select coalesce(array_agg(a.username order by a.username), '{}')
  from app_public.notifications n join app_public.accounts a on a.id = n.account_id
  where n.title = p_title;
$$;
-- A small employee arranged for one rule (main workplace, optional secondary and team).
create function pg_temp.employee(p_key text, p_main text, p_secondary text default null) returns void language plpgsql as $$
declare
  v_id int;
begin
  insert into app_public.employees (first_name, last_name, main_establishment_id)
  values (initcap(p_key), 'Test', tests.id('establishments', p_main)) returning id into v_id;
  if p_secondary is not null then
    insert into app_public.employee_secondary_establishments (employee_id, establishment_id)
    values (v_id, tests.id('establishments', p_secondary));
  end if;
  insert into public.fixture_ids (section, key, id) values ('employees', p_key, v_id);
  insert into app_public.accounts (username, employee_id) values (p_key, v_id) returning id into v_id;
  insert into public.fixture_ids (section, key, id) values ('accounts', p_key, v_id);
end;
$$;

-- ---------------------------------------------------------------- attached first
select is(pg_temp.route('alice', 'alice'), array['mgr1'], 'alice (E1): her attached manager only');
select is(pg_temp.route('alice', 'alice', 'absences.decide_absence'), array['mgr1'], 'same routing for absences');
select is(pg_temp.candidates('alice', 'alice'), array['admin:unattached', 'mgr1:attached', 'rh1:unattached'],
          'candidates: the unattached (Admin, RH of the whole association) wait behind the attached');
select ok(not ('da' = any (pg_temp.route('alice', 'alice')) or exists (
            select 1 from unnest(pg_temp.candidates('alice', 'alice')) c where c like 'da:%')),
          'DA reads the queue but cannot decide: never a decider');
select ok(not exists (select 1 from unnest(pg_temp.candidates('farid', 'farid')) c where c like 'root:%'),
          'a superuser without a role is never a decider');
select ok(not exists (select 1 from unnest(pg_temp.candidates('alice', 'alice')) c where c like 'paie:%' or c like 'staff:%'),
          'Service Paie and staff without role are not deciders');
select is(pg_temp.route('chloe', 'chloe'), array['mgr1', 'mgr2', 'rh2'],
          'chloe (E2, team T2 spanning E1 and E2): every attached decider of her establishments');

-- Secondary workplace.
select pg_temp.employee('yann', 'E3', 'E2');
select is(pg_temp.route('yann', 'yann'),
          array['admin_noemp', 'mgr1_noemp', 'mgr2', 'mgr2_noemp', 'mgr3', 'rh1_noemp', 'rh2', 'rh2_noemp'],
          'a secondary workplace attaches its deciders (E3''s, with or without employee record, and E2''s)');

-- Team of the day.
select pg_temp.employee('zoe', 'E3');
insert into app_public.team_assignments (employee_id, team_id, start_date, end_date)
values (tests.id('employees', 'zoe'), tests.id('teams', 'T1'), '2026-11-16', '2026-11-16');
select is(pg_temp.route('zoe', 'zoe'), array['admin_noemp', 'mgr1', 'mgr1_noemp', 'mgr2_noemp', 'mgr3', 'rh1_noemp', 'rh2_noemp'],
          'a team of the day attaches the deciders of its establishments (E1''s mgr1 besides E3''s)');
update app_public.team_assignments set start_date = '2026-11-01', end_date = '2026-11-15'
where employee_id = tests.id('employees', 'zoe');
select is(pg_temp.route('zoe', 'zoe'), array['admin_noemp', 'mgr1_noemp', 'mgr2_noemp', 'mgr3', 'rh1_noemp', 'rh2_noemp'],
          'a team assignment that ended attaches nobody (E3''s deciders only)');

-- ---------------------------------------------------------------- unattached only when nobody attached
select is(pg_temp.route('farid', 'farid'), array['admin', 'rh1'], 'farid (no workplace): the unattached deciders');
select is(pg_temp.route('david', 'david'), array['admin_noemp', 'mgr1_noemp', 'mgr2_noemp', 'mgr3', 'rh1_noemp', 'rh2_noemp'],
          'david (E3) filed by himself: E3''s deciders, with or without employee record');
select is(pg_temp.route('mgr1', 'mgr1'), array['admin', 'rh1'], 'a manager''s own filing never goes to the manager');
-- From here on mgr3 is E3's only decider: its deciders without employee record are closed.
update app_public.accounts set is_active = false where username like '%\_noemp';
select is(pg_temp.route('david', 'mgr3'), array['admin', 'rh1'],
          'david (E3) filed by mgr3, his only attached decider: the author is excluded, the unattached receive it');

-- ---------------------------------------------------------------- on call
select tests.freeze('2026-11-21 10:00+01');
select is(pg_temp.route('alice', 'alice', 'planning.decide_shift_change', '2026-11-21'), array['mgr1', 'mgr3'],
          'during the on-call period, the on-call manager is attached');
select tests.freeze('2026-11-23 08:00+01');
select is(pg_temp.route('alice', 'alice', 'planning.decide_shift_change', '2026-11-23'), array['mgr1'],
          'the on-call period ends exclusive');
select tests.freeze('2026-11-20 17:59+01');
select is(pg_temp.route('david', 'mgr3', 'planning.decide_shift_change', '2026-11-20'), array['admin', 'rh1'],
          'before the on-call period, mgr3 is not a decider of E1');
update app_public.accounts set is_active = true where username like '%\_noemp';
select tests.freeze('2026-11-16 10:00+01');

-- ---------------------------------------------------------------- explicit permissions, superuser with a role
insert into app_public.accounts (username) values ('xdecider');
insert into app_public.account_permissions (account_id, permission_code)
select id, 'planning.decide_shift_change' from app_public.accounts where username = 'xdecider';
select ok(not exists (select 1 from app_private.decider_candidates(tests.id('employees', 'farid'), '2026-11-16',
                        'planning.decide_shift_change', null) c
                      join app_public.accounts a on a.id = c.account_id where a.username = 'xdecider'),
          'an account that can decide but cannot read the queue is not a decider');
insert into app_public.account_permissions (account_id, permission_code)
select id, 'absences.view_absence_queue' from app_public.accounts where username = 'xdecider';
select is((select array_agg(a.username order by a.username)
           from app_private.route_deciders(tests.id('employees', 'farid'), '2026-11-16', 'planning.decide_shift_change',
                                           tests.id('accounts', 'farid')) r(id)
           join app_public.accounts a on a.id = r.id),
          array['admin', 'rh1', 'xdecider'], 'explicit decide + queue permissions: an unattached decider');
select is(pg_temp.route('alice', 'alice'), array['mgr1'], '... who stays behind the attached ones');
delete from app_public.accounts where username = 'xdecider';

insert into app_public.role_attributions (account_id, role_id) values (tests.id('accounts', 'root'), 5);
insert into app_public.role_attribution_establishments (attribution_id, establishment_id)
select max(id), tests.id('establishments', 'E1') from app_public.role_attributions where account_id = tests.id('accounts', 'root');
select is(pg_temp.route('alice', 'alice'), array['mgr1', 'root'], 'a superuser holding a manager role counts through it');
delete from app_public.role_attributions where account_id = tests.id('accounts', 'root');

-- ---------------------------------------------------------------- inactive and ended roles
update app_public.accounts set is_active = false where username = 'mgr1';
select is(pg_temp.route('alice', 'alice'), array['admin', 'rh1'], 'an inactive decider is skipped');
update app_public.accounts set is_active = true where username = 'mgr1';
update app_public.role_attributions set end_date = '2026-11-15'
where account_id = tests.id('accounts', 'mgr1') and role_id = 5;
select is(pg_temp.route('alice', 'alice'), array['admin', 'rh1'], 'a role attribution that ended is skipped');
update app_public.role_attributions set end_date = null where account_id = tests.id('accounts', 'mgr1') and role_id = 5;

-- ---------------------------------------------------------------- notify_filing with deciders
select is(app_private.notify_filing(tests.id('employees', 'alice'), '2026-11-16', 'planning.decide_shift_change',
                                    tests.id('accounts', 'alice'), 'Nouvelle demande de modification',
                                    'Alice Martin, 16/11/2026', 'Demande de modification sans valideur',
                                    'Alice Martin, 16/11/2026', 'shift_change_request', 4242),
          true, 'a filing with a decider: has_recipient = true');
select is(pg_temp.recipients('Nouvelle demande de modification'), array['mgr1'], 'the decider is notified, not the author');
select is((select row(level, body, model, target_id)::text from app_public.notifications
           where title = 'Nouvelle demande de modification'),
          row('info', 'Alice Martin, 16/11/2026', 'shift_change_request', 4242::bigint)::text, 'title, body, level and target');
select is(pg_temp.recipients('Demande de modification sans valideur'), '{}'::text[], 'no "sans valideur" notification');
select is(app_private.notify_deciders(tests.id('employees', 'chloe'), '2026-11-16', 'absences.decide_absence',
                                      tests.id('accounts', 'chloe'), 'Demande d''annulation d''absence', 'Chloé Bernard',
                                      'absence', 7),
          3, 'notify_deciders notifies the routed deciders and returns their number');
select is(pg_temp.recipients('Demande d''annulation d''absence'), array['mgr1', 'mgr2', 'rh2'], '... the same routing');

-- ---------------------------------------------------------------- nobody can decide
-- The author is the only possible decider: mgr1's own request with every Admin and rh1 closed.
update app_public.accounts set is_active = false where username in ('admin', 'admin_noemp', 'rh1');
select is(app_private.notify_filing(tests.id('employees', 'mgr1'), '2026-11-16', 'absences.decide_absence',
                                    tests.id('accounts', 'mgr1'), 'Nouvelle demande d''absence', 'Julien Petit',
                                    'Demande d''absence sans valideur', 'Julien Petit, du 16/11/2026', 'absence', 1),
          false, 'only the author could decide: has_recipient = false');
select is(pg_temp.recipients('Demande d''absence sans valideur'), array['mgr1', 'rh1_noemp', 'rh2', 'rh2_noemp'],
          'no active Admin: the author and the active RH n1/RH n2 accounts');
select ok((select bool_and(body like 'Julien Petit, du 16/11/2026' || E'\n' || 'Cause : l’auteur de la demande est le seul valideur possible%')
           from app_public.notifications where title = 'Demande d''absence sans valideur'),
          'the body names the cause: the author is the only decider');
select is((select array_agg(distinct level) from app_public.notifications where title = 'Demande d''absence sans valideur'),
          array['warning'], '"sans valideur" notifications are warnings');
update app_public.accounts set is_active = true where username in ('admin', 'admin_noemp', 'rh1');

-- Nobody holds the decision at all.
delete from app_public.role_permissions where permission_code = 'planning.decide_shift_change';
select is(app_private.notify_filing(tests.id('employees', 'alice'), '2026-11-16', 'planning.decide_shift_change',
                                    tests.id('accounts', 'alice'), 'Nouvelle demande de modification', 'x',
                                    'Demande de modification sans valideur', 'Alice Martin, 17/11/2026', 'shift_change_request', 1),
          false, 'nobody can decide: has_recipient = false');
select is(pg_temp.recipients('Demande de modification sans valideur'), array['admin', 'admin_noemp', 'alice'],
          '"sans valideur" goes to the author and every Admin');
select ok((select bool_and(body like '%Cause : aucun compte actif ne peut à la fois voir et décider les demandes concernant Alice Martin (établissements : %')
           from app_public.notifications where title = 'Demande de modification sans valideur'),
          'the body names the cause and the employee''s establishments');
select is(pg_temp.recipients('Nouvelle demande de modification'), array['mgr1'], 'no decider notification was added');

delete from app_public.notifications;
update app_public.role_attributions set end_date = '2026-11-01' where role_id = 1;
select is(app_private.notify_filing(tests.id('employees', 'farid'), '2026-11-16', 'planning.decide_shift_change',
                                    tests.id('accounts', 'farid'), 'Nouvelle demande de modification', 'x',
                                    'Demande de modification sans valideur', 'Farid Benali', 'shift_change_request', 2),
          false, 'nobody, no Admin');
select is(pg_temp.recipients('Demande de modification sans valideur'), array['farid', 'rh1', 'rh1_noemp', 'rh2', 'rh2_noemp'],
          'without an Admin: the author, RH n1 and RH n2');
select ok((select bool_and(body like '%rattaché à aucun établissement%') from app_public.notifications),
          'the cause says the employee has no workplace');

delete from app_public.notifications;
update app_public.role_attributions set end_date = '2026-11-01' where role_id in (2, 3);
select is(app_private.notify_filing(tests.id('employees', 'farid'), '2026-11-16', 'planning.decide_shift_change',
                                    tests.id('accounts', 'farid'), 'Nouvelle demande de modification', 'x',
                                    'Demande de modification sans valideur', 'Farid Benali', 'shift_change_request', 3),
          false, 'nobody, no Admin, no RH');
select is(pg_temp.recipients('Demande de modification sans valideur'), array['farid', 'root'],
          'without Admin nor RH: the author and the superuser');

delete from app_public.notifications;
select is(app_private.notify_filing(tests.id('employees', 'farid'), '2026-11-16', 'planning.decide_shift_change',
                                    null, 'Nouvelle demande de modification', 'x',
                                    'Demande de modification sans valideur', 'Farid Benali', 'shift_change_request', 3),
          false, 'a filing without author account');
select is(pg_temp.recipients('Demande de modification sans valideur'), array['root'], '... notifies the fallback recipients only');

-- notify refuses what a caller should never send.
select throws_ok($$select app_private.notify(null, 'Titre', 'Corps')$$, 'P0001', null, 'notify needs a recipient');
select throws_ok(format($$select app_private.notify(%s, ' ', 'Corps')$$, tests.id('accounts', 'alice')), 'P0001', null,
                 'notify needs a title');
select throws_ok(format($$select app_private.notify(%s, 'Titre', 'Corps', 'rouge')$$, tests.id('accounts', 'alice')), 'P0001', null,
                 'notify needs a known level');

select * from finish();
rollback;
