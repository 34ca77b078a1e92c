-- Role attributions (back-office reference administration): written by staff only, inside
-- the employee-record perimeter (outside: 404), never one's own, never more than the editor
-- holds (rank and establishments), every write audited, nothing written on a refusal.
begin;
select plan(38);
select tests.freeze('2026-11-16 10:00+01');

create temporary table ids as
select tests.id('accounts', 'alice') as alice, tests.id('accounts', 'chloe') as chloe, tests.id('accounts', 'root') as root,
       tests.id('accounts', 'admin') as admin, tests.id('accounts', 'rh1_noemp') as rh1_noemp,
       tests.id('establishments', 'E1') as e1, tests.id('establishments', 'E2') as e2;
grant select on ids to public;

-- A staff editor whose own rights are RH n2 on E2 (the fixture's rh2, given staff status).
update app_public.accounts set is_staff = true where username = 'rh2';

select tests.authenticate_as('admin');
select is((app_public.role_attribution_grant((select alice from ids),
             p_role => 'Manager n1', p_start_date => '2026-12-01', p_establishments => array[(select e2 from ids)])
           - 'id' - 'created_at' - 'account'),
          jsonb_build_object('role', 'Manager n1', 'start_date', '2026-12-01', 'end_date', null,
                             'establishments', jsonb_build_array((select e2 from ids)),
                             'establishment_names', jsonb_build_array((select name from app_public.establishments where id = (select e2 from ids))),
                             'restricts_by_establishment', true, 'is_current', false),
          'a staff Admin grants Manager n1 on E2 from a date to an employee');
select is((select count(*)::int from app_public.role_attributions ra join app_public.roles r on r.id = ra.role_id
           where ra.account_id = (select alice from ids) and r.name = 'Manager n1'), 1, 'the attribution is written');
select is((app_public.account_role_attributions((select alice from ids)) ->> 'can_edit')::boolean, true,
          'the Admin may edit the roles of that account');

-- Field errors (400 under the field), nothing written.
select throws_ok(format($$select app_public.role_attribution_grant(%s, p_role => 'Manager n2', p_start_date => '2026-12-01', p_end_date => '2026-11-30')$$,
                        (select alice from ids)), 'WV580', null, 'an end before the start is refused');
select throws_ok(format($$select app_public.role_attribution_grant(%s, p_role => 'Salarié', p_establishments => array[%s]::int[])$$,
                        (select alice from ids), (select e1 from ids)), 'WV580', null, 'Salarié does not restrict by establishment');
select throws_ok(format($$select app_public.role_attribution_grant(%s, p_role => 'Chef')$$, (select alice from ids)),
                 'WV580', null, 'an unknown role is refused');
select throws_ok(format($$select app_public.role_attribution_grant(%s, p_role => null)$$, (select alice from ids)),
                 'WV580', 'Choisissez un rôle.', 'the role is required');
select throws_ok(format($$select app_public.role_attribution_grant(%s, p_role => 'Manager n1', p_start_date => '2027-01-01')$$,
                        (select alice from ids)), 'WV580', null, 'the same role on an overlapping period is refused');
select throws_ok(format($$select app_public.role_attribution_grant(%s, p_role => 'Manager n1', p_establishments => array[999999]::int[])$$,
                        (select chloe from ids)), 'WV580', null, 'an unknown establishment is refused');
select throws_ok(format($$select app_public.role_attribution_grant(%s, p_role => 'Manager n1', p_establishments => array[%s, %s])$$,
                        (select chloe from ids), (select e2 from ids), (select e2 from ids)), 'WV001', 'La liste contient des doublons.',
                 'an establishment given twice is refused (a caller that is not the form)');
select is((select count(*)::int from app_public.role_attributions where account_id = (select alice from ids)), 2,
          'no refusal wrote anything (Salarié and the new Manager n1)');

-- Who may write at all.
select throws_ok(format($$select app_public.role_attribution_grant(%s, p_role => 'Manager n2')$$, (select admin from ids)),
                 'WF581', null, 'nobody changes their own roles');
select throws_ok(format($$select app_public.role_attribution_grant(%s, p_role => 'Manager n2')$$, (select root from ids)),
                 'WF582', null, 'a staff Admin does not touch the roles of a superuser');

select tests.authenticate_as('rh1');
select throws_ok(format($$select app_public.role_attribution_grant(%s, p_role => 'Manager n2')$$, (select alice from ids)),
                 'WF580', null, 'RH n1 without staff status: 403');
select throws_ok(format($$select app_public.role_attribution_delete(%s)$$,
                        (select min(id) from app_public.role_attributions where account_id = (select alice from ids))),
                 'WF580', null, 'nor deletes one: 403');
select is((app_public.account_role_attributions((select alice from ids)) ->> 'can_edit')::boolean, false,
          'and is told it cannot edit them');

select tests.authenticate_as('mgr1');
select throws_ok(format($$select app_public.role_attribution_grant(%s, p_role => 'Manager n2')$$, (select alice from ids)),
                 'WF580', null, 'a manager of E1 (an employee of its reach, no right to write): 403');

select tests.authenticate_as('staff');
select throws_ok(format($$select app_public.role_attribution_grant(%s, p_role => 'Intérimaire')$$, (select alice from ids)),
                 'WN001', null, 'a staff account without any perimeter: 404, the account is not confirmed');

-- The staff RH n2 of E2.
select tests.authenticate_as('rh2');
select throws_ok(format($$select app_public.role_attribution_grant(%s, p_role => 'Manager n2')$$, (select alice from ids)),
                 'WN001', null, 'an employee of E1, outside the perimeter of a staff RH n2 of E2: 404');
select throws_ok(format($$select app_public.role_attribution_grant(%s, p_role => 'Manager n1')$$, (select rh1_noemp from ids)),
                 'WN580', null, 'an account without record, for an editor restricted to establishments: 404');
select throws_ok(format($$select app_public.role_attribution_grant(%s, p_role => 'Admin', p_establishments => array[%s]::int[])$$,
                        (select chloe from ids), (select e2 from ids)), 'WF582', null, 'no role ranked above its own');
select throws_ok(format($$select app_public.role_attribution_grant(%s, p_role => 'Manager n1', p_establishments => array[%s]::int[])$$,
                        (select chloe from ids), (select e1 from ids)), 'WF582', null, 'no establishment outside its perimeter');
select throws_ok(format($$select app_public.role_attribution_grant(%s, p_role => 'Manager n1')$$, (select chloe from ids)),
                 'WF582', null, 'no role over the whole association when its own is restricted');
select lives_ok(format($$select app_public.role_attribution_grant(%s, p_role => 'Manager n1', p_establishments => array[%s]::int[])$$,
                       (select chloe from ids), (select e2 from ids)), 'Manager n1 on E2: within its rank and perimeter');
select is((select count(*)::int from app_public.role_attributions where account_id = (select chloe from ids)), 2,
          'only the allowed grant was written');

-- Policies: a non-staff request role writes nothing directly.
select tests.authenticate_as('rh1');
do $$ begin perform set_config('role', 'wfm_api', true); end $$;
select throws_ok(format($$insert into app_public.role_attributions (account_id, role_id) values (%s, 1)$$, (select alice from ids)),
                 '42501', null, 'the policy refuses an attribution written by a non-staff account');

-- Change and delete, audited.
select tests.authenticate_as('admin');
select is((app_public.role_attribution_change(
             (select ra.id from app_public.role_attributions ra join app_public.roles r on r.id = ra.role_id
              where ra.account_id = (select alice from ids) and r.name = 'Manager n1'),
             p_start_date => '2026-12-01', p_end_date => '2027-06-30',
             p_establishments => array[(select e1 from ids), (select e2 from ids)])
           -> 'establishments'),
          jsonb_build_array((select e1 from ids), (select e2 from ids)), 'the Admin changes the dates and establishments');
select throws_ok(format($$select app_public.role_attribution_change(%s, p_start_date => '2027-01-01', p_end_date => '2026-01-01')$$,
                        (select ra.id from app_public.role_attributions ra where ra.account_id = (select alice from ids) and ra.role_id = 5)),
                 'WV580', null, 'a change is validated as a grant');
select lives_ok(format('select app_public.role_attribution_delete(%s)',
                       (select ra.id from app_public.role_attributions ra where ra.account_id = (select alice from ids) and ra.role_id = 5)),
                'the Admin deletes the attribution');
select throws_ok('select app_public.role_attribution_delete(2147483647)', 'WN580', null, 'an unknown attribution: 404');

-- Reads: the policies of role_attributions (one's own, the directory readers).
select tests.authenticate_as('rh2');
select is((app_public.role_attributions_search(p_account => (select chloe from ids), p_role => 'Manager n1') ->> 'count')::int, 1,
          'a directory reader finds an attribution by account and role');
select is((app_public.role_attributions_search(p_establishment => (select e1 from ids), p_role => 'Manager n1') -> 'results' -> 0 ->> 'account_username'),
          'mgr1', 'the establishment filter keeps the attributions covering it');
select is((app_public.role_attribution_get((select min(id) from app_public.role_attributions where account_id = (select chloe from ids) and role_id = 5))
           ->> 'can_edit')::boolean, true, 'the staff RH n2 may edit the attribution it granted');
select set_config('tests.chloe_attribution',
                  (select min(id)::text from app_public.role_attributions where account_id = (select chloe from ids)), true);
select tests.authenticate_as('alice');
select is((app_public.role_attributions_search() ->> 'count')::int,
          (select count(*)::int from app_public.role_attributions where account_id = (select alice from ids)),
          'an employee reads only its own attributions');
select throws_ok(format('select app_public.role_attribution_get(%s)', current_setting('tests.chloe_attribution')),
                 'WN580', null, 'a colleague''s attribution: 404');

select tests.as_owner();
select is((select array_agg(verb order by id) from app_private.audit_log
           where model = 'role_attribution' and target_id in (select ra_id from (select (after ->> 'id')::int as ra_id
             from app_private.audit_log where model = 'role_attribution' and after ->> 'account_id' = (select alice from ids)::text) x)),
          array['Creation', 'Modification', 'Suppression'], 'creation, change and deletion each leave an audit line');
select is((select after -> 'establishments' from app_private.audit_log
           where model = 'role_attribution' and verb = 'Modification' order by id desc limit 1),
          jsonb_build_array((select e1 from ids), (select e2 from ids)), 'the line carries the establishments');
select ok(not app_hidden.account_in_role_reach(null) and not app_hidden.account_in_role_reach(2147483647),
          'the reach guard answers false for a NULL or unknown account');

select * from finish();
rollback;
