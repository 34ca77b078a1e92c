-- Team writes are bounded to the teams having an establishment in the writer's perimeter.
begin;
select plan(14);
select tests.freeze('2026-11-16 10:00+01');

select set_eq(
  $$select r.name from app_public.role_permissions rp join app_public.roles r on r.id = rp.role_id
    where rp.permission_code = 'employee.change_team'$$,
  array['Admin', 'RH n1', 'RH n2', 'DA', 'Manager n1', 'Manager n2'], 'encadrement writes the teams of its perimeter');
select tests.authenticate_as('rh2');
select set_eq($$select app_hidden.team_ids_in_perimeter('employee.change_team')$$, array[tests.id('teams', 'T2')],
              'RH n2 of E2 writes the team spanning E1 and E2 only');
select is_empty($$select app_hidden.team_ids_in_perimeter('employee.change_team', true)$$,
                'no team lies entirely within E2');
select throws_ok($$select app_public.team_update(tests.id('teams', 'T1'), p_name => 'X', p_sent => '{name}')$$, 'WN001', null, 'a team outside the perimeter: not found');
select throws_ok($$select app_public.team_delete(tests.id('teams', 'T2'))$$, 'WF521', null, 'deleting a team overflowing the perimeter: forbidden');
select throws_ok($$select app_public.team_member_add(tests.id('teams', 'T2'), p_employee => tests.id('employees', 'alice'))$$,
                 'WF522', null, 'adding a member outside the perimeter: forbidden');
select lives_ok($$select app_public.team_member_add(tests.id('teams', 'T2'), p_employee => tests.id('employees', 'gaelle'))$$,
                'adding a member of the perimeter');
select throws_ok($$select app_public.team_update(tests.id('teams', 'T2'), p_establishments => array[tests.id('establishments', 'E2')], p_sent => '{establishments}')$$,
                 'WV520', null, 'an establishment outside the perimeter is neither removed nor added');

do $$ begin perform set_config('role', 'wfm_api', true); end $$;
delete from app_public.teams where id = tests.id('teams', 'T2');
select tests.as_owner();
select ok(exists (select 1 from app_public.teams where id = tests.id('teams', 'T2')), 'the delete policy keeps a team overflowing the perimeter');
select tests.authenticate_as('rh2');
do $$ begin perform set_config('role', 'wfm_api', true); end $$;
select throws_ok($$insert into app_public.team_establishments (team_id, establishment_id) values (tests.id('teams', 'T2'), tests.id('establishments', 'E3'))$$,
                 '42501', null, 'the policy refuses attaching an establishment outside the perimeter');

select tests.authenticate_as('alice');
select throws_ok($$select app_public.team_update(tests.id('teams', 'T1'), p_name => 'X', p_sent => '{name}')$$, 'WF520', null, 'an employee does not write teams');
select tests.authenticate_as('mgr1');
select throws_ok($$select app_public.team_update(tests.id('teams', 'T3'), p_name => 'X', p_sent => '{name}')$$, 'WN001', null, 'a manager of E1 does not see T3 for writing');
select lives_ok($$select app_public.team_update(tests.id('teams', 'T1'), p_name => 'X', p_sent => '{name}')$$, 'a manager of E1 writes T1');
select tests.authenticate_as('admin');
select lives_ok($$select app_public.team_delete(tests.id('teams', 'T2'))$$, 'a writer of the whole association deletes any team');

select * from finish();
rollback;
