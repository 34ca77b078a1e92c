-- The team planning grid as a spreadsheet (app_public.planning_export, GET /api/planning/export/):
-- the rows are planning_read's employees in its order, one column per day (d1 = from), each cell
-- what the grid shows (app_hidden.planning_cell_label); the same perimeter and errors; from and
-- to required. And the queue's day-change export (app_public.shift_change_export): the list's rows.
begin;
select plan(16);
select tests.freeze('2026-11-16 10:00+01');

-- What a cell shows.
select is(app_hidden.planning_cell_label('[{"kind":"rest","absence":null,"pending_request":null}]'), null, 'a rest shows nothing');
select is(app_hidden.planning_cell_label('[{"kind":"work","post_code":"J","absence":null,"pending_request":null},
                                           {"kind":"work","post_code":"S","absence":null,"pending_request":null}]'),
          'J / S', 'worked posts: their codes in order');
select is(app_hidden.planning_cell_label('[{"kind":"absence","absence":{"type_code":"MAL","part":"morning"},"pending_request":null},
                                           {"kind":"work","post_code":"J","absence":null,"pending_request":null}]'),
          'MAL matin / J', 'a half-day absence: its code and half, then the worked half');
select is(app_hidden.planning_cell_label('[{"kind":"work","post_code":"J","absence":null,"pending_request":{"kind":"absence","id":1,"is_cancellation":false}}]'),
          'J (demande en attente)', 'a pending request is marked');
select is(app_hidden.planning_cell_label('[{"kind":"absence","absence":{"type_code":"CP","part":"day"},"pending_request":{"kind":"absence","id":1,"is_cancellation":true}}]'),
          'CP (annulation demandée)', 'a requested cancellation is marked');
select is(app_hidden.planning_cell_label('[{"kind":"work","post_code":"J","absence":null,"pending_request":null},
                                           {"kind":"absence","absence":{"type_code":"RDV","part":"hours","start_time":"14:00","end_time":"15:00"},"pending_request":null}]'),
          'J / RDV 14:00-15:00', 'an hourly absence with its hours');

select tests.authenticate_as('rh1');
select is((select array_agg(x.employee_name order by x.ordinality)
           from app_public.planning_export('2026-11-01', '2026-11-30', null, tests.id('establishments', 'E2'), null) with ordinality x),
          (select array_agg(e ->> 'name' order by o)
           from json_array_elements(app_public.planning_read('2026-11-01', '2026-11-30', null, tests.id('establishments', 'E2'), null) -> 'employees')
                with ordinality y(e, o)),
          'one row per employee of the planning read, in its order');
select is((select array[x.d1, x.d30, x.d31]
           from app_public.planning_export('2026-11-01', '2026-11-30', tests.id('employees', 'alice')) x),
          (select array[min(app_hidden.planning_cell_label(c -> 'blocks')) filter (where c ->> 'date' = '2026-11-01'),
                        min(app_hidden.planning_cell_label(c -> 'blocks')) filter (where c ->> 'date' = '2026-11-30'),
                        null]
           from json_array_elements(app_public.planning_read('2026-11-01', '2026-11-30', tests.id('employees', 'alice')) -> 'cells') c)::text[],
          'd1 is from, d30 the 30th day; the columns after the window are null');
select throws_ok($$select * from app_public.planning_export(null, '2026-11-30')$$, 'WV108', null, 'from is required (400 under from)');
select throws_ok($$select * from app_public.planning_export('2026-11-01', null)$$, 'WV108', null, 'to is required');
select throws_ok($$select * from app_public.planning_export('2026-11-01', '2027-01-15')$$, 'WV108', null, 'at most 62 days');

select tests.authenticate_as('alice');
select is((select array_agg(x.employee) from app_public.planning_export('2026-11-01', '2026-11-30') x),
          array[tests.id('employees', 'alice')], 'an employee: their own row only');
select tests.authenticate_as('mgr2');
select throws_ok(format($$select * from app_public.planning_export('2026-11-01', '2026-11-30', %s)$$, tests.id('employees', 'alice')),
                 'WN102', null, 'an employee outside the perimeter: 404');
select tests.authenticate_as('admin_noemp');
select lives_ok($$select * from app_public.planning_export('2026-11-01', '2026-11-07')$$,
                'an account without an employee record exports its perimeter without error');

-- The day-change export: the list's rows and errors.
select tests.as_owner();
insert into app_public.shift_change_requests (employee_id, date, reason, status)
values (tests.id('employees', 'alice'), '2026-11-19', 'urgence', 'pending'),
       (tests.id('employees', 'chloe'), '2026-11-20', 'urgence', 'pending');
select tests.authenticate_as('alice');
select is((select array_agg(x.employee) from app_public.shift_change_export('pending') x),
          array[tests.id('employees', 'alice')], 'an employee exports their own day-change requests only');
select throws_ok($$select * from app_public.shift_change_export('cancelled')$$, 'WV109', null, 'an unknown status: 400 under status');

select * from finish();
rollback;
