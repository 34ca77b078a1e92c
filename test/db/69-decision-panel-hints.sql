-- The decision panel's hints: can_decide on the single reads of an absence and of a
-- day-change request (true exactly when a decision of the reader would pass its rights and
-- the request's state; never NULL), and the establishment filter of the absences' queue.
begin;
select plan(35);
select tests.freeze('2026-11-16 10:00+01');

create function pg_temp.body(p_employee text, p_type text, p_start date, p_end date default null) returns jsonb
language sql stable as $$
  select jsonb_build_object('employee', tests.id('employees', p_employee),
                            'type', (select t.id from app_public.absence_types t where t.code = p_type),
                            'date_start', p_start, 'date_end', coalesce(p_end, p_start));
$$;
-- can_decide of an absence / a day-change request as the named account reads it.
create function pg_temp.absence_hint(p_account text, p_id int) returns jsonb language plpgsql as $$
begin
  perform tests.authenticate_as(p_account);
  return app_public.absence_get(p_id) -> 'can_decide';
end;
$$;
create function pg_temp.shift_hint(p_account text, p_id int) returns jsonb language plpgsql as $$
begin
  perform tests.authenticate_as(p_account);
  return app_public.shift_change_get(p_id) -> 'can_decide';
end;
$$;
-- Employees named by the absences list as the account reads it, with an establishment filter.
create function pg_temp.listed(p_account text, p_establishment text) returns text language plpgsql as $$
declare
  v_list jsonb;
begin
  perform tests.authenticate_as(p_account);
  v_list := app_public.absences_list(p_page => 1, p_page_size => 200,
                                     p_establishment => tests.id('establishments', p_establishment));
  return (select string_agg(distinct e.key, ',' order by e.key)
          from jsonb_array_elements(v_list -> 'results') r
          join public.fixture_ids e on e.section = 'employees' and e.id = (r ->> 'employee')::int);
end;
$$;
grant execute on all functions in schema pg_temp to public;

-- Absences: a pending request of alice (E1), one of mgr1 for himself.
select tests.authenticate_as('alice');
select (tests.absence_create(pg_temp.body('alice', 'CP', '2026-11-30', '2026-12-02')) ->> 'id')::int as a1 \gset
select tests.authenticate_as('mgr1');
select (tests.absence_create(pg_temp.body('mgr1', 'CP', '2026-12-21', '2026-12-22')) ->> 'id')::int as own \gset
-- The accounts without employee record hold their roles on E3 (david).
select tests.authenticate_as('david');
select (tests.absence_create(pg_temp.body('david', 'CP', '2026-12-14')) ->> 'id')::int as d1 \gset
select (app_public.shift_change_create(p_date => '2026-11-23', p_reason => 'urgence', p_is_remote => true) ->> 'id')::int as s_david \gset

select is(pg_temp.absence_hint('mgr1', :a1), 'true'::jsonb, 'absence pending: the manager of the perimeter may decide');
select is(pg_temp.absence_hint('rh1', :a1), 'true'::jsonb, 'RH n1 (whole association) may decide');
select is(pg_temp.absence_hint('mgr1_noemp', :d1), 'true'::jsonb, 'a manager without employee record may decide (not NULL)');
select is(pg_temp.absence_hint('rh1_noemp', :d1), 'true'::jsonb, 'so may RH n1 without employee record');
select is(pg_temp.absence_hint('da', :a1), 'false'::jsonb, 'the DA reads the panel but may not decide');
select is(pg_temp.absence_hint('da_noemp', :d1), 'false'::jsonb, 'nor the DA without employee record (false, not NULL)');
select is(pg_temp.absence_hint('alice', :a1), 'false'::jsonb, 'the employee may not decide her own request');
select is(pg_temp.absence_hint('mgr1', :own), 'false'::jsonb, 'a manager may not decide his own request');
select is(pg_temp.absence_hint('admin', :own), 'true'::jsonb, 'another decider may decide it');
select tests.freeze('2026-11-21 12:00+01');
select is(pg_temp.absence_hint('mgr3', :a1), 'true'::jsonb, 'mgr3 on call for E1 may decide during the on-call period');
select tests.freeze('2026-11-16 10:00+01');

-- The hint follows what a decision does: true where it passes, false where it is refused.
select tests.authenticate_as('da');
select throws_ok(format($$select tests.absence_validate(%s, '{"version": 1}')$$, :a1), 'WF201', null,
  'the DA''s hint is false because the validation is refused');
select tests.authenticate_as('mgr1');
select throws_ok(format($$select tests.absence_validate(%s, '{"version": 1}')$$, :own), 'WF202', null,
  'and so is the manager''s own request');
select lives_ok(format($$select tests.absence_validate(%s, '{"version": 1}')$$, :a1), 'the manager validates');
select is(pg_temp.absence_hint('mgr1', :a1), 'false'::jsonb, 'a validated absence has nothing to decide');
select tests.authenticate_as('alice');
select lives_ok(format($$select app_public.absence_request_cancellation(%s)$$, :a1), 'alice asks for its cancellation');
select is(pg_temp.absence_hint('mgr1', :a1), 'true'::jsonb, 'a requested cancellation is decided: true again');
select is(pg_temp.absence_hint('da', :a1), 'false'::jsonb, 'still not by the DA');
select is(pg_temp.absence_hint('alice', :a1), 'false'::jsonb, 'nor by the employee');
select tests.authenticate_as('mgr1');
select lives_ok(format($$select app_public.absence_refuse(%s, 3, 'Service chargé')$$, :a1),
  'the manager refuses the cancellation');
select tests.authenticate_as('alice');
select (tests.absence_create(pg_temp.body('alice', 'CP', '2027-01-04', '2027-01-05')) ->> 'id')::int as a2 \gset
select tests.authenticate_as('mgr1');
select lives_ok(format($$select app_public.absence_refuse(%s, 1, 'Non')$$, :a2), 'a refused request');
select is(pg_temp.absence_hint('mgr1', :a2), 'false'::jsonb, 'a refused request has nothing to decide');

-- Day-change requests.
select tests.authenticate_as('alice');
select (app_public.shift_change_create(p_date => '2026-11-23', p_reason => 'urgence', p_is_remote => true) ->> 'id')::int as s1 \gset
select tests.authenticate_as('mgr1');
select (app_public.shift_change_create(p_date => '2026-11-24', p_reason => 'urgence', p_is_remote => true) ->> 'id')::int as s_own \gset
select is(pg_temp.shift_hint('mgr1', :s1), 'true'::jsonb, 'day change pending: the manager of the perimeter may decide');
select is(pg_temp.shift_hint('mgr1_noemp', :s_david), 'true'::jsonb, 'so may a manager without employee record');
select is(pg_temp.shift_hint('da', :s1), 'false'::jsonb, 'the DA may not decide a day change');
select is(pg_temp.shift_hint('da_noemp', :s_david), 'false'::jsonb, 'nor without employee record (false, not NULL)');
select is(pg_temp.shift_hint('alice', :s1), 'false'::jsonb, 'the requester may not decide her own request');
select is(pg_temp.shift_hint('mgr1', :s_own), 'false'::jsonb, 'a manager may not decide his own day change');
select is(pg_temp.shift_hint('rh1', :s_own), 'true'::jsonb, 'RH n1 may decide it');
select tests.authenticate_as('mgr1');
select lives_ok(format('select app_public.shift_change_refuse(%s, 1, %L)', :s1, 'Effectif insuffisant'), 'the manager refuses');
select is(pg_temp.shift_hint('mgr1', :s1), 'false'::jsonb, 'a decided day change has nothing to decide');

-- The queue's establishment filter: main or secondary workplace (bruno: E1 and E2).
select tests.authenticate_as('rh1');
select lives_ok($$select tests.absence_create(pg_temp.body('bruno', 'FOR', '2026-12-07'))$$, 'an absence of bruno (E1 + E2)');
select lives_ok($$select tests.absence_create(pg_temp.body('chloe', 'FOR', '2026-12-08'))$$, 'an absence of chloe (E2)');
select is(pg_temp.listed('rh1', 'E2'), 'bruno,chloe', 'E2: employees whose main or secondary workplace it is');
select is(pg_temp.listed('rh1', 'E1'), 'alice,bruno,mgr1', 'E1: alice, bruno and mgr1, not chloe');
select is(pg_temp.listed('mgr2', 'E1'), 'bruno', 'mgr2 (E2) filtering on E1: only bruno, of his perimeter (never alice)');

select * from finish();
rollback;
