-- A contract added, changed or removed from the back-office goes through employee_update: its
-- rules (no overlap, dates), its perimeter (outside: 404; without the right: 403) and its audit;
-- the record's other contracts are kept, whoever reads them; a change or removal carries the
-- version of the contract list it was drawn from (409 when stale), its refusals come back under
-- the form's fields. A team member is removed through team_members_replace.
begin;
select plan(34);
select tests.freeze('2026-11-16 10:00+01');

-- alice's CDI ends on 30 November; a CDD may follow it.
update app_public.contracts set end_date = '2026-11-30' where employee_id = tests.id('employees', 'alice');
create temporary table ids as select tests.id('employees', 'alice') as alice,
  (select id from app_public.contract_types where code = 'CDD') as cdd;
grant select on ids to public;

select tests.authenticate_as('rh1');
select is(jsonb_array_length(app_public.employee_contract_add((select alice from ids),
            jsonb_build_object('type', (select cdd from ids), 'start_date', '2026-12-01', 'end_date', '2027-05-31',
                               'job_title', 'Éducatrice', 'weekly_hours', '28')) -> 'contracts'), 2,
          'HR adds a CDD after the CDI: both contracts are on the record');
select is((select count(*)::int from app_public.contracts where employee_id = (select alice from ids) and end_date = '2026-11-30'), 1,
          'the CDI is kept as it was');
select throws_ok(format($$select app_public.employee_contract_add(%s, '{"type": %s, "start_date": "2027-01-01"}')$$,
                        (select alice from ids), (select cdd from ids)), 'WV501', null, 'an overlapping contract is refused under contracts');
select throws_ok(format($$select app_public.employee_contract_add(%s, '{"type": %s, "start_date": "2027-09-01", "end_date": "2027-08-01"}')$$,
                        (select alice from ids), (select cdd from ids)), 'WV501', null, 'an end before the start is refused');
select throws_ok(format($$select app_public.employee_contract_add(%s, '"CDD"')$$, (select alice from ids)), 'WV501', null,
                 'a contract that is no object is refused');

select tests.authenticate_as('rh2');
select throws_ok(format($$select app_public.employee_contract_add(%s, '{"type": %s, "start_date": "2027-09-01"}')$$,
                        (select alice from ids), (select cdd from ids)), 'WN001', null, 'RH n2 of E2, an employee of E1: 404');
select tests.authenticate_as('mgr1');
select throws_ok(format($$select app_public.employee_contract_add(%s, '{"type": %s, "start_date": "2027-09-01"}')$$,
                        (select alice from ids), (select cdd from ids)), 'WF502', null, 'a manager of E1 without the right: 403');

select tests.as_owner();
select is((select count(*)::int from app_public.contracts where employee_id = (select alice from ids)), 2,
          'no refusal wrote anything');

-- The fields of a refusal ({"field": ["message"]}, as the HTTP layer reads the DETAIL), or null when the statement passes.
create function pg_temp.refusal_detail(p_sql text) returns jsonb language plpgsql as $f$
declare
  v_detail text;
  v_message text;
begin
  execute p_sql;
  return null;
exception when others then
  get stacked diagnostics v_detail = pg_exception_detail, v_message = message_text;
  return case when left(v_detail, 1) = '{' then v_detail::jsonb else jsonb_build_object(v_detail, jsonb_build_array(v_message)) end;
end;
$f$;
grant execute on function pg_temp.refusal_detail(text) to public;

-- Changing the CDD, then removing it.
create temporary table cdd_contract as
  select c.id, c.end_date
  from app_public.contracts c where c.employee_id = (select alice from ids) and c.start_date = '2026-12-01';
grant select on cdd_contract to public;
create temporary table audit_before as select count(*)::int as n from app_private.audit_log;
grant select on audit_before to public;

select tests.authenticate_as('rh2');
select throws_ok(format($$select app_public.employee_contract_change(%s, p_contract => %s, p_version => 'stale', p_type => %s, p_start_date => '2026-12-01')$$,
                        (select alice from ids), (select id from cdd_contract), (select cdd from ids)), 'WN001', null,
                 'a change by RH n2 of E2 to an employee of E1: 404, before the version is looked at');
select throws_ok(format($$select app_public.employee_contract_remove(%s, p_contract => %s, p_version => 'stale')$$,
                        (select alice from ids), (select id from cdd_contract)), 'WN001', null, 'a removal outside the perimeter: 404');
select tests.authenticate_as('mgr1');
select throws_ok(format($$select app_public.employee_contract_change(%s, p_contract => %s, p_version => 'stale', p_type => %s, p_start_date => '2026-12-01')$$,
                        (select alice from ids), (select id from cdd_contract), (select cdd from ids)), 'WF502', null,
                 'a change by a manager without the right: 403');
select throws_ok(format($$select app_public.employee_contract_remove(%s, p_contract => %s, p_version => '%s')$$,
                        (select alice from ids), (select id from cdd_contract), app_hidden.employee_contracts_version((select alice from ids))), 'WF502', null,
                 'a removal by a manager without the right: 403');

select tests.authenticate_as('rh1');
select throws_ok(format($$select app_public.employee_contract_change(%s, p_contract => %s, p_version => 'stale', p_type => %s, p_start_date => '2026-12-01')$$,
                        (select alice from ids), (select id from cdd_contract), (select cdd from ids)), 'WC501', null,
                 'a change drawn from another contract list: 409');
select throws_ok(format($$select app_public.employee_contract_remove(%s, p_contract => %s, p_version => 'stale')$$,
                        (select alice from ids), (select id from cdd_contract)), 'WC501', null, 'a stale removal: 409');
select is(pg_temp.refusal_detail(format($$select app_public.employee_contract_change(%s, p_contract => %s, p_version => '%s', p_type => %s, p_start_date => '2026-11-15', p_end_date => '2027-05-31')$$,
                        (select alice from ids), (select id from cdd_contract), app_hidden.employee_contracts_version((select alice from ids)), (select cdd from ids))),
          '{"start_date": ["Ce contrat chevauche un autre contrat du salarié : un salarié a un seul contrat à la fois."]}'::jsonb,
          'an overlap comes back under start_date, without the rank in the rebuilt list');
select is(pg_temp.refusal_detail(format($$select app_public.employee_contract_change(%s, p_contract => %s, p_version => '%s', p_type => %s, p_start_date => '2026-12-01', p_end_date => '2026-12-31', p_trial_end_date => '2027-01-15')$$,
                        (select alice from ids), (select id from cdd_contract), app_hidden.employee_contracts_version((select alice from ids)), (select cdd from ids))),
          '{"trial_end_date": ["La fin de période d’essai dépasse la fin du contrat."]}'::jsonb,
          'a trial end after the contract end comes back under trial_end_date');
select is(pg_temp.refusal_detail(format($$select app_public.employee_contract_change(%s, p_contract => %s, p_version => '%s', p_type => %s, p_start_date => '2027-03-01', p_end_date => '2027-02-01')$$,
                        (select alice from ids), (select id from cdd_contract), app_hidden.employee_contracts_version((select alice from ids)), (select cdd from ids))),
          '{"end_date": ["La date de fin précède la date de début."]}'::jsonb, 'an end before the start comes back under end_date');
select is(pg_temp.refusal_detail(format($$select app_public.employee_contract_change(%s, p_contract => %s, p_version => '%s', p_type => %s, p_start_date => '2026-12-01', p_weekly_hours => 60)$$,
                        (select alice from ids), (select id from cdd_contract), app_hidden.employee_contracts_version((select alice from ids)), (select cdd from ids))),
          '{"weekly_hours": ["La durée hebdomadaire doit être comprise entre 0 et 48 heures."]}'::jsonb, 'too many hours come back under weekly_hours');
select is(pg_temp.refusal_detail(format($$select app_public.employee_contract_remove(%s, p_contract => %s, p_version => '%s')$$,
                        (select alice from ids), (select min(id) from app_public.contracts where employee_id <> (select alice from ids)),
                        app_hidden.employee_contracts_version((select alice from ids)))),
          '{"contract": ["Ce contrat n’appartient pas à ce salarié."]}'::jsonb, 'another employee''s contract comes back under contract');

select tests.as_owner();
select is((select count(*)::int from app_public.contracts where employee_id = (select alice from ids)), 2, 'no refused change or removal wrote anything');
select is((select end_date from app_public.contracts where id = (select id from cdd_contract)), (select end_date from cdd_contract),
          'the CDD is as it was');
select is((select count(*)::int from app_private.audit_log), (select n from audit_before), 'and no audit line was written');

select tests.authenticate_as('rh1');
select is(app_public.employee_contract_change((select alice from ids),
            p_contract => (select id from cdd_contract), p_version => app_hidden.employee_contracts_version((select alice from ids)), p_type => (select cdd from ids),
            p_start_date => '2026-12-01', p_end_date => '2027-06-30', p_job_title => 'Éducatrice spécialisée', p_weekly_hours => 30)
          -> 'contracts' -> 1 ->> 'end_date', '2027-06-30', 'HR changes the CDD: the record shows its new end');
select tests.as_owner();
select is((select (end_date, job_title, weekly_hours)::text from app_public.contracts where id = (select id from cdd_contract)),
          '(2027-06-30,"Éducatrice spécialisée",30.00)', 'the CDD has its new end, job and hours; the CDI is kept');
select ok((select count(*) from app_private.audit_log) > (select n from audit_before), 'the change is in the audit log');
select tests.authenticate_as('rh1');
select is(jsonb_array_length(app_public.employee_contract_remove((select alice from ids),
            p_contract => (select id from cdd_contract), p_version => app_hidden.employee_contracts_version((select alice from ids)))
          -> 'contracts'), 1, 'HR removes the CDD with the current version: the CDI alone is left');
select tests.as_owner();
select is((select count(*)::int from app_public.contracts where id = (select id from cdd_contract)), 0, 'the CDD is deleted');

-- Removing a member of T2 (E1 and E2): Bruno stays as he was, Chloé leaves yesterday.
create temporary table t2 as select tests.id('teams', 'T2') as team, tests.id('employees', 'chloe') as chloe,
  tests.id('employees', 'bruno') as bruno, tests.id('employees', 'david') as david;
grant select on t2 to public;
create temporary table bruno_before as select ta.* from app_public.team_assignments ta, t2 where ta.team_id = t2.team and ta.employee_id = t2.bruno;
grant select on bruno_before to public;
select tests.authenticate_as('bruno');
select throws_ok(format($$select app_public.team_member_remove(%s, p_employee => %s)$$, (select team from t2), (select chloe from t2)),
                 'WF520', null, 'an employee without employee.change_team: 403');
select tests.authenticate_as('rh2');
select throws_ok(format($$select app_public.team_member_remove(%s, p_employee => %s)$$, tests.id('teams', 'T1'), tests.id('employees', 'alice')),
                 'WN001', null, 'RH n2 of E2, a team of E1 only: 404');
select is(pg_temp.refusal_detail(format($$select app_public.team_member_remove(%s, p_employee => %s)$$, (select team from t2), (select david from t2))),
          '{"employee": ["Ce salarié ne fait pas partie de cette équipe, ni aujourd’hui ni à venir."]}'::jsonb,
          'an employee who is no member comes back under employee');
select tests.as_owner();
select is((select count(*)::int from app_public.team_assignments ta, t2 where ta.team_id = t2.team and (ta.end_date is null or ta.end_date >= '2026-11-16')), 2,
          'no refusal removed a member');
select tests.authenticate_as('rh2');
select is((select count(*)::int from jsonb_array_elements(app_public.team_member_remove((select team from t2), p_employee => (select chloe from t2)) -> 'members') m
           where (m ->> 'employee')::int = (select chloe from t2) and (m ->> 'end_date' is null or (m ->> 'end_date')::date >= '2026-11-16')), 0,
          'RH n2 removes Chloé from T2: she is no current member any more');
select tests.as_owner();
select is((select max(end_date) from app_public.team_assignments ta, t2 where ta.team_id = t2.team and ta.employee_id = t2.chloe), '2026-11-15'::date,
          'Chloé left the team yesterday');
select is((select (ta.start_date, ta.end_date)::text from app_public.team_assignments ta, t2 where ta.team_id = t2.team and ta.employee_id = t2.bruno),
          (select (start_date, end_date)::text from bruno_before), 'Bruno stays as he was');

select * from finish();
rollback;
