-- The planned day and its durations, the slots a client sends (parsing and normalisation),
-- and the rules of the modulation a granted day must keep.
begin;
select plan(36);
select tests.freeze('2026-11-16 10:00+01');

-- Net durations (SPEC computation rules).
select is(app_hidden.slot_minutes(row('09:00', '17:00', '12:00', '12:30', false, null, null, false)::app_public.slot), 450,
          'an unpaid break is deducted');
select is(app_hidden.slot_minutes(row('09:00', '17:00', '12:00', '12:15', true, null, null, false)::app_public.slot), 480,
          'a paid break is not deducted (09:00-17:00 with a paid 15-minute break gives 480)');
select is(app_hidden.slot_minutes(row('21:00', '07:00', null, null, false, null, null, false)::app_public.slot), 600,
          'a night slot ends the next day');
select is(app_hidden.slots_minutes(array[row('07:00', '10:00', null, null, false, null, null, false)::app_public.slot,
                                         row('14:00', '18:00', '16:00', '16:30', false, null, null, false)::app_public.slot]),
          390, 'a day is the total of its slots');

-- The planned day: the template, replaced by a day modification.
select is((app_hidden.planned_slots(tests.id('employees', 'alice'), '2026-11-16'))[1].post_id, tests.id('posts', 'E1-J'),
          'Monday of alice: post J of her template');
select is(cardinality(app_hidden.planned_slots(tests.id('employees', 'alice'), '2026-11-21')), 0, 'Saturday of alice: rest');
insert into app_public.day_modifications (employee_id, date, slots)
values (tests.id('employees', 'alice'), '2026-11-17',
        array[row('07:00', '14:00', null, null, false, tests.id('posts', 'E1-M'), tests.id('establishments', 'E1'), false)::app_public.slot]);
select is((app_hidden.planned_slots(tests.id('employees', 'alice'), '2026-11-17'))[1].post_id, tests.id('posts', 'E1-M'),
          'a day modification replaces the template');
select is(app_hidden.day_label(app_hidden.planned_slots(tests.id('employees', 'alice'), '2026-11-16')), 'J Journée 09:00-17:00',
          'label of a planned day: code, label and hours');
select is(app_hidden.day_label('{}'), 'Repos', 'label of a rest day');

-- Parsing the slots of a request.
select is(app_hidden.parse_day_slots('[{"start_time": "10:00", "end_time": "18:00"}]', 'slots',
            tests.id('employees', 'alice'), '2026-11-18', app_hidden.planned_slots(tests.id('employees', 'alice'), '2026-11-18')),
          array[row('10:00', '18:00', null, null, false, tests.id('posts', 'E1-J'), tests.id('establishments', 'E1'), false)::app_public.slot],
          'post defaults to the planned post, establishment to the post''s');
select is(app_hidden.parse_day_slots('[{"start_time": "10:00", "end_time": "16:00"}]', 'slots',
            tests.id('employees', 'alice'), '2026-11-21', '{}'),
          array[row('10:00', '16:00', null, null, false, tests.id('posts', 'E1-J'), tests.id('establishments', 'E1'), false)::app_public.slot],
          'on a rest day the post defaults to the first post of the main establishment');
select is((app_hidden.parse_day_slots('[{"start_time": "09:00", "end_time": "12:00", "break_start_time": "12:00", "break_end_time": "12:30"}]',
             'slots', tests.id('employees', 'alice'), '2026-11-18', '{}'))[1].break_start_time, null::time,
          'a break is dropped when the slot is shortened below it');
select is((app_hidden.parse_day_slots('[{"start_time": "09:00", "end_time": "17:00", "break_start_time": "12:00", "break_end_time": "12:15", "break_paid": true}]',
             'slots', tests.id('employees', 'alice'), '2026-11-18', '{}'))[1],
          row('09:00', '17:00', '12:00', '12:15', true, tests.id('posts', 'E1-J'), tests.id('establishments', 'E1'), false)::app_public.slot,
          'a break inside its slot is kept with its paid flag');
select is((app_hidden.parse_day_slots('[{"start_time": "14:00", "end_time": "18:00"}, {"start_time": "08:00", "end_time": "12:00"}]',
            'slots', tests.id('employees', 'alice'), '2026-11-18', '{}'))[1].start_time, '08:00'::time,
          'slots come back ordered by start time');
select is(cardinality(app_hidden.parse_day_slots('[{"start_time": null, "end_time": null}, {"start_time": "08:00", "end_time": "12:00"}]',
            'slots', tests.id('employees', 'alice'), '2026-11-18', '{}')), 1, 'an emptied row is removed from the day');
select is(app_hidden.parse_day_slots('[]', 'slots', tests.id('employees', 'alice'), '2026-11-18', '{}'), '{}'::app_public.slot[],
          'an empty list keeps the hours of the day');
select throws_ok($$select app_hidden.parse_day_slots('[{"start_time": "08:00"}]', 'slots', tests.id('employees', 'alice'), '2026-11-18', '{}')$$,
                 'WV104', null, 'a slot with one bound is incomplete');
select throws_ok($$select app_hidden.parse_day_slots('[{"start_time": "08:00", "end_time": "08:00"}]', 'slots', tests.id('employees', 'alice'), '2026-11-18', '{}')$$,
                 'WV104', null, 'a slot ending when it starts is refused');
select throws_ok($$select app_hidden.parse_day_slots('[{"start_time": "08:00", "end_time": "12:00", "break_start_time": "10:00"}]', 'slots', tests.id('employees', 'alice'), '2026-11-18', '{}')$$,
                 'WV104', null, 'a break needs both bounds');
select throws_ok($$select app_hidden.parse_day_slots('[{"start_time": "08:00", "end_time": "12:00", "post": 999999}]', 'slots', tests.id('employees', 'alice'), '2026-11-18', '{}')$$,
                 'WV104', null, 'an unknown post is refused');
select throws_ok($$select app_hidden.parse_day_slots('[{"start_time": "8h", "end_time": "12:00"}]', 'slots', tests.id('employees', 'alice'), '2026-11-18', '{}')$$,
                 'WV104', null, 'a time that is not HH:MM is refused');
select throws_ok($$select app_hidden.parse_day_slots('[{"start_time": "08:00", "end_time": "12:00"}, {"start_time": "11:00", "end_time": "15:00"}]', 'slots', tests.id('employees', 'alice'), '2026-11-18', '{}')$$,
                 'WV104', null, 'overlapping slots are refused');
select throws_ok($$select app_hidden.parse_day_slots('[{"start_time": "21:00", "end_time": "07:00"}, {"start_time": "23:00", "end_time": "01:00"}]', 'slots', tests.id('employees', 'alice'), '2026-11-18', '{}')$$,
                 'WV104', null, 'overlap is measured on real time (a slot inside a night slot crossing midnight)');
select throws_ok($$select app_hidden.parse_day_slots('[{"start_time": null, "end_time": null}]', 'slots', tests.id('employees', 'alice'), '2026-11-18', '{}')$$,
                 'WV104', 'Une demande ne peut pas retirer tous les créneaux de la journée : pour ne pas travailler ce jour-là, demandez une absence.',
                 'a request may not remove all slots of the day');
select throws_ok($$select app_hidden.parse_day_slots(jsonb_build_array(jsonb_build_object('start_time', '08:00', 'end_time', '12:00', 'post', tests.id('posts', 'E1-J'), 'establishment', 999999)), 'slots', tests.id('employees', 'alice'), '2026-11-18', '{}')$$,
                 'WV104', null, 'an unknown establishment is refused');
select throws_ok($$select app_hidden.parse_day_slots('[{"start_time": "08:00", "end_time": "09:00"}, {"start_time": "09:00", "end_time": "10:00"}, {"start_time": "10:00", "end_time": "11:00"}, {"start_time": "11:00", "end_time": "12:00"}, {"start_time": "12:00", "end_time": "13:00"}, {"start_time": "13:00", "end_time": "14:00"}, {"start_time": "14:00", "end_time": "15:00"}, {"start_time": "15:00", "end_time": "16:00"}, {"start_time": "16:00", "end_time": "17:00"}, {"start_time": "17:00", "end_time": "18:00"}]', 'slots', tests.id('employees', 'alice'), '2026-11-18', '{}')$$,
                 'WV104', null, 'at most 9 slots');

-- Same day: compared in normal form, by start time.
select ok(app_hidden.same_slots(
            array[row('09:00', '17:00', null, null, true, 1, 1, null)::app_public.slot],
            array[row('09:00', '17:00', null, null, false, 1, 1, false)::app_public.slot]),
          'a paid flag without break and a missing option do not make a day different');
select ok(not app_hidden.same_slots(
            array[row('09:00', '17:00', '12:00', '12:30', false, 1, 1, false)::app_public.slot],
            array[row('09:00', '17:00', '12:00', '12:30', true, 1, 1, false)::app_public.slot]),
          'a break turned paid makes the day different');

-- Rules of the modulation.
select is(app_hidden.modulation_errors(tests.id('employees', 'alice'), '2026-11-18',
            array[row('09:00', '17:00', '12:00', '12:30', false, tests.id('posts', 'E1-J'), tests.id('establishments', 'E1'), false)::app_public.slot]),
          '{}'::jsonb, 'a usual day keeps every rule');
select ok(app_hidden.modulation_errors(tests.id('employees', 'alice'), '2026-11-18',
            array[row('07:00', '20:30', '12:00', '12:30', false, tests.id('posts', 'E1-J'), tests.id('establishments', 'E1'), false)::app_public.slot])
          ? 'daily_duration', 'more than 12 h of net work: daily_duration');
select ok(app_hidden.modulation_errors(tests.id('employees', 'bruno'), '2026-11-19',
            array[row('09:00', '17:00', '12:00', '12:30', false, tests.id('posts', 'E1-J'), tests.id('establishments', 'E1'), false)::app_public.slot])
          ? 'rest_period', 'less than 11 h after the night of the day before (ends 07:00): rest_period');
select ok(app_hidden.modulation_errors(tests.id('employees', 'alice'), '2026-11-18',
            array[row('13:00', '23:00', '18:00', '18:30', false, tests.id('posts', 'E1-J'), tests.id('establishments', 'E1'), false)::app_public.slot])
          ? 'rest_period', 'less than 11 h before the next day (09:00): rest_period');
select ok(app_hidden.modulation_errors(tests.id('employees', 'alice'), '2026-11-18',
            array[row('08:00', '15:00', null, null, false, tests.id('posts', 'E1-J'), tests.id('establishments', 'E1'), false)::app_public.slot])
          ? 'break_required', 'more than 6 h without a pause of 20 minutes: break_required');
select is(app_hidden.modulation_errors(tests.id('employees', 'alice'), '2026-11-18',
            array[row('08:00', '12:00', null, null, false, tests.id('posts', 'E1-J'), tests.id('establishments', 'E1'), false)::app_public.slot,
                  row('12:30', '16:00', null, null, false, tests.id('posts', 'E1-J'), tests.id('establishments', 'E1'), false)::app_public.slot]),
          '{}'::jsonb, 'a gap of 30 minutes between two slots is a pause');
select ok(app_hidden.modulation_errors(tests.id('employees', 'alice'), '2026-11-18',
            array[row('08:00', '15:00', '11:00', '11:15', true, tests.id('posts', 'E1-J'), tests.id('establishments', 'E1'), false)::app_public.slot])
          ? 'break_required', 'a pause of 15 minutes is too short');

-- A day covered by a granted absence is not worked: no rest constraint with it.
select tests.as_owner();
insert into app_public.absences (employee_id, type_id, date_start, date_end, status)
values (tests.id('employees', 'bruno'), (select id from app_public.absence_types where code = 'CP'), '2026-11-18', '2026-11-18', 'validated');
select is(app_hidden.modulation_errors(tests.id('employees', 'bruno'), '2026-11-19',
            array[row('09:00', '17:00', '12:00', '12:30', false, tests.id('posts', 'E1-J'), tests.id('establishments', 'E1'), false)::app_public.slot]),
          '{}'::jsonb, 'the night before is covered by a granted absence: the rest is kept');

select * from finish();
rollback;
