-- Absences, rules 1, 2, 4, 5: counting on the establishment's base, half-days, whole-day
-- types, hourly types.
begin;
select plan(36);
select tests.freeze('2026-11-16 10:00+01');

create function pg_temp.body(p_employee text, p_type text, p_start date, p_end date default null,
                             p_extra jsonb default '{}') returns jsonb
language sql stable as $$
  select jsonb_build_object('employee', tests.id('employees', p_employee),
                            'type', (select t.id from app_public.absence_types t where t.code = p_type),
                            'date_start', p_start, 'date_end', coalesce(p_end, p_start)) || p_extra;
$$;
grant execute on function pg_temp.body(text, text, date, date, jsonb) to public;

-- Rule 1: ouvrables (E1, Monday to Saturday) and ouvrés (E2, Monday to Friday).
select tests.authenticate_as('alice');
select is(tests.absence_preview(pg_temp.body('alice', 'CP', '2026-11-30', '2026-12-06')) ->> 'quantity', '6.00',
  'ouvrables: a week from Monday to Sunday counts 6 days (Sunday excluded)');
select tests.authenticate_as('chloe');
select is(tests.absence_preview(pg_temp.body('chloe', 'RTT', '2026-11-30', '2026-12-06')) ->> 'quantity', '5.00',
  'ouvrés: the same week counts 5 days (Saturday and Sunday excluded)');
select tests.authenticate_as('alice');
select is(tests.absence_preview(pg_temp.body('alice', 'CP', '2026-12-21', '2026-12-27')) ->> 'quantity', '5.00',
  'a public holiday (Christmas, Friday) is excluded');
select is(tests.absence_preview(pg_temp.body('alice', 'CP', '2026-12-06')) ->> 'quantity', '0.00',
  'a Sunday alone counts nothing');
select ok(tests.absence_preview(pg_temp.body('alice', 'CP', '2026-12-06')) -> 'warnings' ->> 0 like '%aucun jour décompté%',
  'and says so in a warning');
select is(tests.absence_preview(pg_temp.body('alice', 'CP', '2026-12-01')) ->> 'quantity', '1.00',
  'rule 4: a one-day absence counts 1 day');
select is(tests.absence_preview(pg_temp.body('alice', 'CP', '2026-12-01')) ->> 'unit', 'day', 'unit of a day type');
select tests.authenticate_as('farid');
select is(tests.absence_preview(pg_temp.body('farid', 'CP', '2026-11-30', '2026-12-05')) ->> 'quantity', '6.00',
  'no main workplace: ouvrables');
select is(app_hidden.employee_count_base(tests.id('employees', 'farid')), 'ouvrables', 'base of an employee without main workplace');
select is((select sum(quantity) from app_hidden.counted_days('ouvres', '2026-05-01', '2026-05-31', null, null)), 17.00::numeric,
  'May 2026 on ouvrés: 21 weekdays minus 1 and 8 May, Ascension (14th) and Whit Monday (25th)');

-- Half-days count half (CONTRACT 7).
select tests.authenticate_as('alice');
select is(tests.absence_preview(pg_temp.body('alice', 'MAL', '2026-12-01', '2026-12-01',
  '{"start_half": "morning", "end_half": "morning"}')) ->> 'quantity', '0.50', 'one morning counts 0.5');
select is(tests.absence_preview(pg_temp.body('alice', 'MAL', '2026-12-01', '2026-12-01',
  '{"start_half": "afternoon", "end_half": "afternoon"}')) ->> 'quantity', '0.50', 'one afternoon counts 0.5');
select is(tests.absence_preview(pg_temp.body('alice', 'MAL', '2026-12-01', '2026-12-03',
  '{"start_half": "afternoon", "end_half": "morning"}')) ->> 'quantity', '2.00',
  'from Tuesday afternoon to Thursday morning counts 2 days');

-- Rule 2: afternoon to morning of the same day is refused; morning and afternoon of the same
-- date with different types do not overlap.
select is(tests.absence_preview(pg_temp.body('alice', 'MAL', '2026-12-01', '2026-12-01',
  '{"start_half": "afternoon", "end_half": "morning"}')) -> 'errors' -> 'start_half' ->> 0,
  'Une absence d’une seule journée ne peut pas commencer l’après-midi et finir le matin.',
  'afternoon start and morning end of the same day: refused under start_half');
select is(tests.absence_preview(pg_temp.body('alice', 'MAL', '2026-12-01', '2026-12-01',
  '{"start_half": "afternoon", "end_half": "morning"}')) -> 'quantity', 'null'::jsonb, 'quantity null when refused');
select lives_ok($$select tests.absence_create(pg_temp.body('alice', 'MAL', '2026-12-02', '2026-12-02',
  '{"start_half": "morning", "end_half": "morning"}'))$$, 'a morning of sick leave');
select lives_ok($$select tests.absence_create(pg_temp.body('alice', 'FOR', '2026-12-02', '2026-12-02',
  '{"start_half": "afternoon", "end_half": "afternoon"}'))$$, 'and a training afternoon the same day do not overlap');
select is((select count(*)::int from app_public.absences a where a.employee_id = tests.id('employees', 'alice')
           and a.date_start = '2026-12-02'), 2, 'both stored');

-- Rule 4: a whole-day type refuses a half-day, under start_half.
select is(tests.absence_preview(pg_temp.body('alice', 'CP', '2026-12-07', '2026-12-08',
  '{"end_half": "morning"}')) -> 'errors' -> 'start_half' ->> 0,
  'Le motif « Congés payés » se pose par journées entières : pas de demi-journée.', 'CP ending on a morning: refused');
select throws_ok($$select tests.absence_create(pg_temp.body('alice', 'CP', '2026-12-07', '2026-12-08',
  '{"start_half": "afternoon"}'))$$, 'WV200', null, 'creation of a half-day CP refused');
select ok(tests.absence_preview(pg_temp.body('alice', 'CP', '2026-12-07', '2026-12-08',
  '{"start_half": "morning", "end_half": "afternoon"}')) -> 'errors' = '{}'::jsonb,
  'explicit whole bounds (start in the morning, end in the afternoon) are whole days');

-- Rule 5: hourly types need start and end hours, the end after the start, one date.
select is(tests.absence_preview(pg_temp.body('alice', 'RC', '2026-12-01', '2026-12-01',
  '{"start_time": "09:00", "end_time": "11:30"}')) ->> 'quantity', '2.50', 'hours are the quantity');
select is(tests.absence_preview(pg_temp.body('alice', 'RC', '2026-12-01', '2026-12-01',
  '{"start_time": "09:00", "end_time": "11:30"}')) ->> 'unit', 'hour', 'unit of an hourly type');
select is(tests.absence_preview(pg_temp.body('alice', 'RC', '2026-12-01')) -> 'errors' -> 'start_time' ->> 0,
  'Un motif en heures demande une heure de début et une heure de fin.', 'hours missing: under start_time');
select is(tests.absence_preview(pg_temp.body('alice', 'RC', '2026-12-01', '2026-12-01',
  '{"start_time": "11:00", "end_time": "09:00"}')) -> 'errors' -> 'end_time' ->> 0,
  'L’heure de fin doit suivre l’heure de début.', 'end before start: under end_time');
select is(tests.absence_preview(pg_temp.body('alice', 'RC', '2026-12-01', '2026-12-02',
  '{"start_time": "09:00", "end_time": "11:00"}')) -> 'errors' -> 'date_end' ->> 0,
  'Une absence en heures porte sur une seule date : la date de fin doit être celle du début.', 'a second date: under date_end');
select ok(tests.absence_preview(pg_temp.body('alice', 'RC', '2026-12-01', '2026-12-01',
  '{"start_time": "09:00", "end_time": "11:00", "start_half": "morning"}')) -> 'errors' ? 'start_half',
  'no half-day on an hourly type');
select ok(tests.absence_preview(pg_temp.body('alice', 'CP', '2026-12-01', '2026-12-01',
  '{"start_time": "09:00", "end_time": "11:00"}')) -> 'errors' ? 'start_time', 'no hours on a day type');
select lives_ok($$select tests.absence_create(pg_temp.body('alice', 'RC', '2026-12-03', null,
  '{"start_time": "09:00", "end_time": "10:30"}') - 'date_end')$$, 'an hourly absence without date_end lies on its date');
select is((select counted_quantity from app_public.absences a where a.employee_id = tests.id('employees', 'alice')
           and a.date_start = '2026-12-03'), 1.50::numeric(8,2), 'stored quantity in hours');
select is((select counted_unit from app_public.absences a where a.employee_id = tests.id('employees', 'alice')
           and a.date_start = '2026-12-03'), 'hour', 'stored unit');
select lives_ok($$select tests.absence_create(pg_temp.body('alice', 'DLG_CSE', '2026-12-03', null,
  '{"start_time": "10:30", "end_time": "12:00"}') - 'date_end')$$, 'hours right after do not overlap');
select throws_ok($$select tests.absence_create(pg_temp.body('alice', 'DLG_CSE', '2026-12-03', null,
  '{"start_time": "10:00", "end_time": "11:00"}') - 'date_end')$$, 'WV200', null, 'hours inside do');

-- Unreadable input.
select is(tests.absence_preview(pg_temp.body('alice', 'CP', '2026-12-08', '2026-12-07')) -> 'errors' -> 'date_end' ->> 0,
  'La date de fin ne peut pas précéder la date de début.', 'end before start');

select is(tests.absence_preview(pg_temp.body('alice', 'CSS', '2027-01-01', '2030-12-31')) -> 'errors' -> 'date_end' ->> 0,
  'Une absence ne peut pas dépasser trois ans : déposez des périodes successives.', 'a period beyond three years is an input error');
select is(tests.absence_preview(pg_temp.body('alice', 'CSS', '1500-01-01')) -> 'errors',
  '{"date_end": ["Date hors de la plage acceptée (années 2000 à 2100)."], "date_start": ["Date hors de la plage acceptée (années 2000 à 2100)."]}'::jsonb,
  'dates outside 2000-2100 are input errors');

select * from finish();
rollback;
