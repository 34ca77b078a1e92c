-- Absences, rules 12, 13, 14 and 19: who files for whom and the birth state, retroactivity,
-- withdrawal by the owner, perimeter filtering.
begin;
select plan(44);
select tests.freeze('2026-11-16 10:00+01');

create function pg_temp.body(p_employee text, p_type text, p_start date, p_end date default null,
                             p_extra jsonb default '{}') returns jsonb
language sql stable as $$
  select jsonb_build_object('employee', tests.id('employees', p_employee),
                            'type', (select t.id from app_public.absence_types t where t.code = p_type),
                            'date_start', p_start, 'date_end', coalesce(p_end, p_start)) || p_extra;
$$;
create function pg_temp.abs(p_employee text, p_start date) returns int language sql stable security definer as $$
  select a.id from app_public.absences a where a.employee_id = tests.id('employees', p_employee) and a.date_start = p_start
  order by a.id desc limit 1;
$$;
create function pg_temp.status(p_id int) returns text language sql stable security definer as $$
  select a.status from app_public.absences a where a.id = p_id;
$$;
create function pg_temp.list_ids() returns int[] language sql stable as $$
  select coalesce(array_agg((r ->> 'id')::int order by (r ->> 'id')::int), '{}')
  from jsonb_array_elements(app_public.absences_list(null, null, null, null, 1, 200) -> 'results') r;
$$;
grant execute on all functions in schema pg_temp to public;

-- Rule 12: an employee names only their own record; the status sent is ignored; the author
-- decides the birth state.
select tests.authenticate_as('alice');
select throws_ok($$select tests.absence_create(pg_temp.body('bruno', 'FOR', '2026-12-01'))$$, 'WV200',
  'Vous ne pouvez déposer une absence que pour vous-même.', 'an employee naming a colleague: 400');
select is(tests.absence_preview(pg_temp.body('bruno', 'FOR', '2026-12-01')) -> 'errors' -> 'employee' ->> 0,
  'Vous ne pouvez déposer une absence que pour vous-même.', 'under employee');
select is(tests.absence_create(pg_temp.body('alice', 'FOR', '2026-12-01', null, '{"status": "validated"}')) ->> 'status',
  'pending', 'status in the payload is ignored: an employee''s request is born pending');
select is((select submitted_at from app_public.absences where id = pg_temp.abs('alice', '2026-12-01')),
  '2026-11-16 10:00+01'::timestamptz, 'submission date kept');

select tests.authenticate_as('mgr1');
select is(tests.absence_create(pg_temp.body('alice', 'FOR', '2026-12-02')) ->> 'status', 'validated',
  'a manager''s declaration for an employee of the perimeter is born validated');
select is((select row(decided_by, decided_at, submitted_at)::text from app_public.absences
           where id = pg_temp.abs('alice', '2026-12-02')), '(,,)', 'no decider, no decision date, no submission date');
select is(tests.absence_create(pg_temp.body('mgr1', 'FOR', '2026-12-02')) ->> 'status', 'pending',
  'a manager''s request for themselves is born pending');
select throws_ok($$select tests.absence_create(pg_temp.body('david', 'FOR', '2026-12-02'))$$, 'WV200',
  'Ce salarié n’est pas dans votre périmètre : vous ne pouvez pas déclarer d’absence pour lui.',
  'a declaration outside the decision perimeter is refused under employee');
select is(tests.absence_create(pg_temp.body('chloe', 'FOR', '2026-12-03')) ->> 'status', 'validated',
  'chloe belongs to a team of E1: inside mgr1''s perimeter');
select tests.authenticate_as('da');
select throws_ok($$select tests.absence_create(pg_temp.body('alice', 'FOR', '2026-12-04'))$$, 'WV200',
  'Vous ne pouvez déposer une absence que pour vous-même.', 'the DA does not declare for others');
select tests.authenticate_as('paie');
select is(tests.absence_create(pg_temp.body('paie', 'FOR', '2026-12-04')) ->> 'status', 'pending',
  'Service Paie may still file its own absence');

-- Rule 13: retroactivity.
select tests.authenticate_as('alice');
select is(tests.absence_preview(pg_temp.body('alice', 'FOR', '2026-11-01')) -> 'errors' -> 'date_start' ->> 0,
  'Une demande ne peut pas remonter au-delà de 14 jours : la date de début doit être au plus tôt le 02/11/2026.',
  'an employee 15 days back: 400 under date_start with the limit date');
select lives_ok($$select tests.absence_create(pg_temp.body('alice', 'FOR', '2026-11-02'))$$, '14 days back is allowed');
select tests.authenticate_as('emma');
select ok(tests.absence_preview(pg_temp.body('emma', 'FOR', '2026-11-01')) -> 'errors' ? 'date_start',
  'the same bound for a temporary worker');
select tests.authenticate_as('mgr1');
select ok(tests.absence_preview(pg_temp.body('mgr1', 'FOR', '2026-11-01')) -> 'errors' ? 'date_start',
  'and for a manager asking for self');
select ok(not (tests.absence_preview(pg_temp.body('alice', 'FOR', '2025-12-01')) -> 'errors' ? 'date_start'),
  'a manager declaring for another goes back to 1 December of the previous year');
select is(tests.absence_preview(pg_temp.body('alice', 'FOR', '2025-11-30')) -> 'errors' -> 'date_start' ->> 0,
  'Une déclaration ne peut pas remonter avant le 1er décembre de l’année précédente : la date de début doit être au plus tôt le 01/12/2025.',
  'not before');

-- Rule 14: withdrawal by the owner.
select tests.authenticate_as('bruno');
select throws_ok(format($$select app_public.absence_delete(%s)$$, pg_temp.abs('alice', '2026-12-01')), 'WN201', null,
  'a colleague''s row: 404');
select tests.authenticate_as('mgr1');
select throws_ok(format($$select app_public.absence_delete(%s)$$, pg_temp.abs('alice', '2026-12-01')), 'WF206', null,
  'a manager does not withdraw the employee''s pending request');
select tests.freeze('2026-11-30 10:00+01');
select tests.authenticate_as('alice');
select lives_ok(format($$select app_public.absence_delete(%s)$$, pg_temp.abs('alice', '2026-11-02')),
  'withdrawing a past pending request is allowed');
select is(pg_temp.abs('alice', '2026-11-02'), null, 'the row is erased');
select throws_ok(format($$select app_public.absence_delete(%s)$$, pg_temp.abs('alice', '2026-12-02')), 'WV210',
  'Seule une demande en attente peut être retirée : une absence accordée ne se supprime pas, demandez son annulation.',
  'a granted absence is not deleted by its owner: 400 under status');
select tests.authenticate_as('mgr1');
select lives_ok(format($$select app_public.absence_refuse(%s, 1, 'Non')$$, pg_temp.abs('alice', '2026-12-01')),
  'the other request is refused');
select tests.authenticate_as('alice');
select throws_ok(format($$select app_public.absence_delete(%s)$$, pg_temp.abs('alice', '2026-12-01')), 'WV210',
  'Seule une demande en attente peut être retirée : une demande refusée reste au dossier.',
  'deleting a refused request: 400, only a pending request is withdrawn');
select is(pg_temp.status(pg_temp.abs('alice', '2026-12-01')), 'refused', 'a refused request is never erased');
select tests.as_owner();
select throws_ok(format($$delete from app_public.absences where id = %s$$, pg_temp.abs('alice', '2026-12-01')), 'WV910', null,
  'not even by a direct delete');
select tests.freeze('2026-11-16 10:00+01');

-- Rule 19: list filtering by perimeter; a row outside answers 404.
select tests.authenticate_as('mgr1');
select lives_ok($$select tests.absence_create(pg_temp.body('bruno', 'FOR', '2026-12-07'))$$, 'bruno (E1, secondary E2)');
select tests.authenticate_as('mgr2');
select lives_ok($$select tests.absence_create(pg_temp.body('gaelle', 'FOR', '2026-12-07'))$$, 'gaelle (E2)');
select tests.authenticate_as('farid');
select ok((tests.absence_create(pg_temp.body('farid', 'FOR', '2026-12-07')) ->> 'has_recipient')::boolean,
  'farid, without main workplace, files his request (declaration is not filtered): the association-wide deciders get it');
select tests.authenticate_as('mgr3');
select lives_ok($$select tests.absence_create(pg_temp.body('david', 'FOR', '2026-12-07'))$$, 'david (E3)');

select tests.authenticate_as('mgr1');
select ok(pg_temp.abs('bruno', '2026-12-07') = any (pg_temp.list_ids()), 'mgr1 (E1) lists bruno');
select ok(not (pg_temp.abs('gaelle', '2026-12-07') = any (pg_temp.list_ids())), 'not gaelle (E2)');
select ok(not (pg_temp.abs('farid', '2026-12-07') = any (pg_temp.list_ids())), 'a worker without main workplace is invisible to a restricted manager');
select throws_ok(format($$select app_public.absence_get(%s)$$, pg_temp.abs('gaelle', '2026-12-07')), 'WN201', null,
  'a row outside the perimeter: 404 on direct read');
select tests.authenticate_as('rh2');
select ok(pg_temp.abs('bruno', '2026-12-07') = any (pg_temp.list_ids()), 'rh2 (E2) lists bruno through his secondary workplace');
select ok(pg_temp.abs('gaelle', '2026-12-07') = any (pg_temp.list_ids()), 'and gaelle');
select ok(not (pg_temp.abs('david', '2026-12-07') = any (pg_temp.list_ids())), 'not david');
select tests.authenticate_as('admin');
select ok(array[pg_temp.abs('farid', '2026-12-07'), pg_temp.abs('david', '2026-12-07')] <@ pg_temp.list_ids(),
  'an empty perimeter means the whole association');
select tests.authenticate_as('mgr3');
select ok(not (pg_temp.abs('bruno', '2026-12-07') = any (pg_temp.list_ids())), 'mgr3 (E3) does not see E1 outside on-call');
select tests.freeze('2026-11-21 10:00+01');
select ok(pg_temp.abs('bruno', '2026-12-07') = any (pg_temp.list_ids()), 'during the on-call period over E1 they do');
select tests.freeze('2026-11-16 10:00+01');
select tests.authenticate_as('paie');
select is(pg_temp.list_ids(), array[pg_temp.abs('paie', '2026-12-04')],
  'Service Paie, outside the directory branch, lists only its own absences');
select tests.authenticate_as('alice');
select ok(not (pg_temp.abs('bruno', '2026-12-07') = any (pg_temp.list_ids())), 'an employee lists only their own');
select is(jsonb_typeof(app_public.absences_list(null, null, null, null, 1, 50) -> 'results' -> 0 -> 'warnings'), 'null',
  'rows carry warnings: null');
select throws_ok($$select app_public.absences_list('bogus', null, null, null, 1, 50)$$, 'WV220', null,
  'unknown status: 400 naming the parameter');

select * from finish();
rollback;
