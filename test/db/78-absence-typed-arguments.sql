-- The typed surface of the absence creation and transitions, as a GraphQL caller reaches it
-- (no route schema in front): what ajv refuses on REST (a missing field, a text over its limit,
-- a missing version, an hour out of the HH:MM format) is refused by SQL under the same field,
-- never by a database error.
begin;
select plan(19);
select tests.freeze('2026-11-16 10:00+01');

create function pg_temp.type_id(p_code text) returns int language sql stable as $$
  select t.id from app_public.absence_types t where t.code = p_code;
$$;
grant execute on all functions in schema pg_temp to public;

select tests.authenticate_as('alice');
select is(app_public.absence_create(p_employee => tests.id('employees', 'alice'), p_type => pg_temp.type_id('FOR'),
                                    p_date_start => '2026-12-01', p_comment => '  Formation interne  ') ->> 'comment',
          'Formation interne', 'a creation with typed arguments; the comment is trimmed');
select is((select a.date_end from app_public.absences a
           where a.employee_id = tests.id('employees', 'alice') and a.date_start = '2026-12-01'),
          '2026-12-01'::date, 'without date_end, the absence lies on its first date');
select is(app_public.absence_preview(null, pg_temp.type_id('FOR'), '2026-12-02') ->> 'quantity', '1.00',
          'a preview with typed arguments; without employee, for the caller''s own record');
select is(app_public.absence_preview(tests.id('employees', 'alice'), null, '2026-12-02') -> 'errors' -> 'type',
          '["Ce champ est obligatoire."]'::jsonb, 'a preview without type: the error under type');
select throws_ok(format($$select app_public.absence_create(%s, null, '2026-12-02')$$, tests.id('employees', 'alice')),
  'WV200', 'Ce champ est obligatoire.', 'a missing type: 400 under type, as the route schema would');
select throws_ok(format($$select app_public.absence_create(%s, %s, '2026-12-02', p_comment => repeat('x', 2001))$$,
                        tests.id('employees', 'alice'), pg_temp.type_id('FOR')),
  'WV200', 'Au plus 2000 caractères.', 'a comment over the limit: 400 under comment, not a CHECK violation');
select is(app_public.absence_create(tests.id('employees', 'alice'), pg_temp.type_id('FOR'), '2026-12-03',
                                    p_comment => repeat('x', 2000)) ->> 'status',
          'pending', 'a comment at the limit is taken');

select tests.authenticate_as('mgr1');
select throws_ok(format($$select app_public.absence_refuse(%s, null, 'Non')$$,
                        (select (r ->> 'id')::int from jsonb_array_elements(app_public.absences_list('pending', tests.id('employees', 'alice'), '2026-12-01', '2026-12-01', 1, 10) -> 'results') r)),
  'WV001', 'Ce champ est obligatoire.', 'a refusal without version: 400 under version');
select throws_ok(format($$select app_public.absence_refuse(%s, 1, repeat('x', 2001))$$,
                        (select (r ->> 'id')::int from jsonb_array_elements(app_public.absences_list('pending', tests.id('employees', 'alice'), '2026-12-01', '2026-12-01', 1, 10) -> 'results') r)),
  'WV001', 'Au plus 2000 caractères.', 'a refusal reason over the limit: 400 under reason');
select throws_ok(format($$select app_public.absence_validate(%s, 1, repeat('x', 2001))$$,
                        (select (r ->> 'id')::int from jsonb_array_elements(app_public.absences_list('pending', tests.id('employees', 'alice'), '2026-12-01', '2026-12-01', 1, 10) -> 'results') r)),
  'WV001', 'Au plus 2000 caractères.', 'a validation reason over the limit: 400 under reason');
select throws_ok(format($$select app_public.absence_validate(%s, null)$$,
                        (select (r ->> 'id')::int from jsonb_array_elements(app_public.absences_list('pending', tests.id('employees', 'alice'), '2026-12-01', '2026-12-01', 1, 10) -> 'results') r)),
  'WV001', 'Ce champ est obligatoire.', 'a validation without version: 400 under version');
select is(app_public.absence_refuse(
            (select (r ->> 'id')::int from jsonb_array_elements(app_public.absences_list('pending', tests.id('employees', 'alice'), '2026-12-01', '2026-12-01', 1, 10) -> 'results') r),
            p_version => 1, p_reason => '  Effectif insuffisant ') ->> 'decision_reason',
          'Effectif insuffisant', 'a refusal with typed arguments; the reason is trimmed');

-- The hours of a validation stay JSON values: an absent hour keeps the stored one, a null
-- clears it (the rules refuse it), a value the route's format refuses is refused under its field.
select tests.authenticate_as('alice');
select is(tests.absence_create(jsonb_build_object('employee', tests.id('employees', 'alice'), 'type', pg_temp.type_id('DON'),
                                                  'date_start', '2026-12-15', 'start_time', '09:00', 'end_time', '10:00')) ->> 'status',
          'pending', 'an hourly request (blood donation)');
select tests.authenticate_as('mgr1');
select throws_ok(format($$select app_public.absence_validate(%s, 1, p_start_time => '"25:00"')$$,
                        (select (r ->> 'id')::int from jsonb_array_elements(app_public.absences_list('pending', tests.id('employees', 'alice'), '2026-12-15', '2026-12-15', 1, 10) -> 'results') r)),
  'WV001', 'Heure invalide : format attendu HH:MM.', 'an hour out of the format: 400 under start_time, as the route schema');
select throws_ok(format($$select app_public.absence_validate(%s, 1, 'Sans heures', p_start_time => 'null')$$,
                        (select (r ->> 'id')::int from jsonb_array_elements(app_public.absences_list('pending', tests.id('employees', 'alice'), '2026-12-15', '2026-12-15', 1, 10) -> 'results') r)),
  'WV200', null, 'a null start_time clears the stored hour: the hourly rule refuses it');
select is((select jsonb_build_object('status', x ->> 'status', 'start_time', x ->> 'start_time', 'end_time', x ->> 'end_time')
           from app_public.absence_validate(
                  (select (r ->> 'id')::int from jsonb_array_elements(app_public.absences_list('pending', tests.id('employees', 'alice'), '2026-12-15', '2026-12-15', 1, 10) -> 'results') r),
                  p_version => 1) x),
          '{"status": "validated", "start_time": "09:00", "end_time": "10:00"}'::jsonb,
          'without the hours, the stored ones are kept: validated as requested');

-- A validated absence of alice's, declared by her manager, for the cancellation request.
select is(app_public.absence_create(tests.id('employees', 'alice'), pg_temp.type_id('FOR'), '2026-12-08') ->> 'status',
          'validated', 'a declaration by the manager');
select tests.authenticate_as('alice');
select throws_ok(format($$select app_public.absence_request_cancellation(%s, p_comment => repeat('x', 2001))$$,
                        (select (r ->> 'id')::int from jsonb_array_elements(app_public.absences_list('validated', null, '2026-12-08', '2026-12-08', 1, 10) -> 'results') r)),
  'WV001', 'Au plus 2000 caractères.', 'a cancellation comment over the limit: 400 under comment');
select is(app_public.absence_request_cancellation(
            (select (r ->> 'id')::int from jsonb_array_elements(app_public.absences_list('validated', null, '2026-12-08', '2026-12-08', 1, 10) -> 'results') r),
            p_comment => ' Plus besoin ') ->> 'cancellation_comment',
          'Plus besoin', 'a cancellation request with typed arguments; no version is needed');

select * from finish();
rollback;
