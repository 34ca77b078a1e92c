-- On-call periods hand out only what SPEC Permissions rule 9 says (issue 11, finding 3): a period
-- extends the perimeter of the holder's existing manager role (the queue and the decisions:
-- absences.view_absence_queue, absences.decide_absence, planning.decide_shift_change) over its
-- establishments, nothing else; and the author grants only over establishments it covers
-- itself (an author's own on-call period does not widen what it may hand out).
begin;
select plan(13);
select tests.freeze('2026-11-16 10:00+01');

-- A DA of E1 puts the RH n2 of E2 on call over E1 for a day.
select tests.authenticate_as('da');
select lives_ok(format($$select app_public.on_call_period_create(
  p_account => %s, p_start_at => '2026-11-16 08:00+01', p_end_at => '2026-11-17 08:00+01', p_establishments => array[%s])$$,
  tests.id('accounts', 'rh2'), tests.id('establishments', 'E1')), 'a DA of E1 puts the RH n2 of E2 on call over E1');
select tests.as_owner();

create function pg_temp.may(p_permission text, p_employee text) returns boolean language sql stable as $$
  select app_hidden.may(tests.id('accounts', 'rh2'), p_permission, tests.id('employees', p_employee), '2026-11-16 12:00+01');
$$;
select ok(pg_temp.may('absences.view_absence_queue', 'alice'), 'the period extends the queue of the RH n2 over E1');
select ok(pg_temp.may('absences.decide_absence', 'alice'), 'and the absence decisions');
select ok(pg_temp.may('planning.decide_shift_change', 'alice'), 'and the day-change decisions');
select ok(not pg_temp.may('employee.view_social_security_number', 'alice'), 'not the social security numbers of E1');
select ok(not pg_temp.may('absences.view_absencedocument_file', 'alice'), 'not the medical documents of E1');
select ok(not pg_temp.may('employee.change_employee_record', 'alice'), 'not the employee records of E1');
select ok(not pg_temp.may('employee.view_payroll', 'alice'), 'not payroll');

-- Over HTTP-visible functions: the RH n2 reads alice's record without her number.
select tests.authenticate_as('rh2');
select ok(not (app_public.employee_get(tests.id('employees', 'alice')) ? 'social_security_number'),
  'the RH n2 on call over E1 does not read the social security number of an employee of E1');
select throws_ok(format($$select tests.employee_update(%s, '{"first_name": "Alicia"}'::jsonb)$$,
  tests.id('employees', 'alice')), 'WN001', null, 'nor writes her record (outside its write perimeter: 404)');

-- mgr3 (Manager n1 of E3) is on call for E1 from 2026-11-20 18:00 to 2026-11-23 08:00 (fixture):
-- during it, mgr3 decides over E1 but does not hand E1 out to others.
select tests.freeze('2026-11-21 12:00+01');
select ok(app_hidden.may(tests.id('accounts', 'mgr3'), 'absences.decide_absence', tests.id('employees', 'alice')),
  'mgr3 on call decides over E1');
select tests.authenticate_as('mgr3');
select throws_ok(format($$select app_public.on_call_period_create(
  p_account => %s, p_start_at => '2026-11-21 18:00+01', p_end_at => '2026-11-22 08:00+01', p_establishments => array[%s])$$,
  tests.id('accounts', 'mgr1'), tests.id('establishments', 'E1')), 'WV540', null,
  'an author on call over E1 may not put somebody else on call over E1');
select ok(not app_hidden.may(tests.id('accounts', 'mgr3'), 'events.change_event', tests.id('employees', 'alice')),
  'nor write events there');

select * from finish();
rollback;
