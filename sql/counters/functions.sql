-- The counter journal seen from absences (SPEC rule 9, CONTRACT section 7).
--
-- An active absence (pending, validated, cancellation requested) holds, on each counter
-- its type consumes and for each civil year of its period, its share of the count:
--   * in Planifiés (planned) while it is a request, or while it has not started;
--   * in Pris (taken) once it is granted and started (date_start <= today).
-- A pending request that already started stays in Planifiés until it is granted: a refusal
-- or a withdrawal then only releases it, and nothing is ever taken by a request that was
-- not granted. An inactive absence (refused, cancelled, withdrawn) holds nothing.
--
-- app_private.absence_sync_counters moves the journal from what the absence holds to what
-- it must hold, after locking every counter concerned (ordered by id, so parallel requests
-- serialise without deadlock) and checking that no counter it debits more goes below zero.

-- Remaining of a counter (acquired - taken - planned), from the journal.
-- plpgsql: its plan is kept by the connection (a security definer SQL function is never
-- inlined, and was planned again at each of its calls).
create or replace function app_private.counter_remaining(p_counter_id int) returns numeric
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  return (select coalesce(sum(case when m.bucket = 'acquired' then m.quantity else -m.quantity end), 0)::numeric(8,2)
          from app_private.counter_movements m where m.counter_id = p_counter_id);
end;
$$;

-- The one check of a request on a counter, with its one wording (SPEC Absences, declaration
-- rule 9): the declaration rules (app_private.absence_rule_counters) and the journal
-- (app_private.absence_sync_counters) both ask it. Null when the request passes.
create or replace function app_private.counter_request_error(p_code text, p_year int, p_counter_id int,
                                                             p_counter_unit text, p_type_unit text, p_type_name text,
                                                             p_requested numeric, p_held numeric)
returns text
language plpgsql stable as $$
declare
  v_available numeric;
begin
  if p_counter_unit <> p_type_unit then
    return format('Le compteur %s est tenu en %s alors que le motif « %s » se pose en %s : demande refusée.',
                  p_code, case when p_counter_unit = 'hour' then 'heures' else 'jours' end, p_type_name,
                  case when p_type_unit = 'hour' then 'heures' else 'jours' end);
  end if;
  if p_counter_id is null then
    return format('Aucun compteur %s ouvert pour %s : le motif « %s » ne peut pas être posé sur cette année.',
                  p_code, p_year, p_type_name);
  end if;
  if p_requested is null then
    return null;
  end if;
  v_available := app_private.counter_remaining(p_counter_id) + coalesce(p_held, 0);
  if p_requested > v_available then
    return format('Solde insuffisant sur le compteur %s %s : demande de %s, solde disponible de %s.',
                  p_code, p_year, app_hidden.quantity_fr(p_requested, p_counter_unit),
                  app_hidden.quantity_fr(v_available, p_counter_unit));
  end if;
  return null;
end;
$$;
comment on function app_private.counter_request_error(text, integer, integer, text, text, text, numeric, numeric) is
'SPEC Absences, declaration rule 9: the message refusing p_requested on counter p_code of p_year for the
type p_type_name (units that differ, no open counter, or more than its remaining plus p_held, what the
absence already holds on it), or null; p_requested null checks the unit and the opening only.';

-- What an absence must hold now: one line per (counter, bucket).
-- p_plan: the "plan" of app_private.absence_evaluate for this very row, evaluated without any
-- error in the same transaction (the creation): its lines are open counters in the type's unit,
-- in the order of app_private.absence_counter_plan, so they are read from it instead of counting
-- the period again; null: counted here.
drop function if exists app_private.absence_counter_target(app_public.absences, date);
create or replace function app_private.absence_counter_target(p_absence app_public.absences, p_today date,
                                                              p_plan jsonb default null)
returns table (counter_id int, code text, year int, bucket text, quantity numeric, counter_unit text, type_unit text)
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
#variable_conflict use_column
begin
  if p_absence.id is null or not coalesce(app_hidden.absence_is_active(p_absence.status), false) then
    return;
  end if;
  if p_plan is not null then
    return query
    select (x ->> 'counter_id')::int, x ->> 'code', (x ->> 'year')::int,
           app_hidden.absence_counter_bucket(p_absence.status, p_absence.date_start, p_today),
           (x ->> 'quantity')::numeric, t.unit, t.unit
    from jsonb_array_elements(p_plan) with ordinality l(x, n)
    cross join app_public.absence_types t
    where t.id = p_absence.type_id
    order by l.n;
    return;
  end if;
  return query
  select p.counter_id, p.code, p.year,
         app_hidden.absence_counter_bucket(p_absence.status, p_absence.date_start, p_today),
         p.quantity, p.counter_unit, p.type_unit
  from app_private.absence_counter_plan(row(p_absence.employee_id, p_absence.type_id, p_absence.date_start,
                                            p_absence.date_end, p_absence.start_half, p_absence.end_half,
                                            p_absence.start_time, p_absence.end_time)::app_hidden.absence_draft) p;
end;
$$;

create or replace function app_private.counter_movement(p_counter_id int, p_bucket text, p_quantity numeric, p_kind text,
                                             p_absence_id int, p_transition text)
returns void
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  if p_quantity <> 0 then
    insert into app_private.counter_movements (counter_id, bucket, quantity, kind, absence_id, transition, actor_account_id)
    values (p_counter_id, p_bucket, p_quantity, p_kind, p_absence_id, p_transition, app_hidden.current_account_id());
  end if;
end;
$$;

/*
 * Brings the journal of one absence to what it must hold (the absence may have been
 * deleted: it then holds nothing). p_transition names the cause in the journal:
 * create, edit, validate, refuse, withdraw, request_cancellation, cancel, start.
 *   edit: the old position is compensated and the new one written, so the balance moves
 *         by the difference and the journal shows both;
 *   otherwise: reservation / release (Planifiés), start + consumption (Planifiés → Pris),
 *         consumption / restitution (Pris).
 * Refuses with 400 under `counters` (nothing written: the transaction aborts) when a
 * counter is missing, its unit does not match, or a debit exceeds its remaining.
 * Returns the effects: [{"counter", "year", "column", "direction", "quantity"}].
 * p_plan: the "plan" of app_private.absence_evaluate for this very row, evaluated without any
 * error in the same transaction (the creation), handed to app_private.absence_counter_target.
 */
drop function if exists app_private.absence_sync_counters(int, text, date) cascade;
create or replace function app_private.absence_sync_counters(p_absence_id int, p_transition text, p_today date default null,
                                                             p_plan jsonb default null)
returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_today date := coalesce(p_today, app_hidden.today());
  v_absence app_public.absences;
  v_target jsonb := '[]'::jsonb;
  v_current jsonb;
  v_ids int[];
  v_effects jsonb := '[]'::jsonb;
  v_error text;
  v_moved numeric;
  r record;
begin
  select * into v_absence from app_public.absences a where a.id = p_absence_id;
  for r in select * from app_private.absence_counter_target(v_absence, v_today, p_plan) loop
    if r.counter_unit <> r.type_unit or r.counter_id is null then
      perform app_hidden.invalid('counters', app_private.counter_request_error(
        r.code, r.year, r.counter_id, r.counter_unit, r.type_unit,
        (select t.name from app_public.absence_types t where t.id = v_absence.type_id), null, null), 'WV301');
    end if;
    v_target := v_target || jsonb_build_object('counter_id', r.counter_id, 'code', r.code, 'year', r.year,
                                               'bucket', r.bucket, 'quantity', r.quantity);
  end loop;
  -- A fresh absence holds nothing yet (its id is new, and the journal is keyed by it).
  if p_transition = 'create' then
    v_current := '[]'::jsonb;
  else
    select coalesce(jsonb_agg(jsonb_build_object('counter_id', n.counter_id, 'code', n.code, 'year', n.year,
                                                 'bucket', n.bucket, 'quantity', n.quantity)), '[]'::jsonb)
      into v_current
    from app_private.absence_counter_nets(array[p_absence_id]) n;
  end if;

  v_ids := array(select distinct (x ->> 'counter_id')::int from jsonb_array_elements(v_target || v_current) x order by 1);
  if cardinality(v_ids) = 0 then
    return v_effects;
  end if;
  -- Serialise movements per counter.
  perform 1 from app_public.counters c where c.id = any (v_ids) order by c.id for update;

  -- Per counter and bucket: target (t) and current (c) positions.
  for r in
    with t as (
      select (x ->> 'counter_id')::int as counter_id, x ->> 'bucket' as bucket, (x ->> 'quantity')::numeric as quantity
      from jsonb_array_elements(v_target) x
    ), c as (
      select (x ->> 'counter_id')::int as counter_id, x ->> 'bucket' as bucket, (x ->> 'quantity')::numeric as quantity
      from jsonb_array_elements(v_current) x
    ), per_counter as (
      select k.id as counter_id, k.code, k.year::int as year, kk.unit,
             coalesce((select sum(t.quantity) from t where t.counter_id = k.id and t.bucket = 'planned'), 0) as tp,
             coalesce((select sum(t.quantity) from t where t.counter_id = k.id and t.bucket = 'taken'), 0) as tt,
             coalesce((select sum(c.quantity) from c where c.counter_id = k.id and c.bucket = 'planned'), 0) as cp,
             coalesce((select sum(c.quantity) from c where c.counter_id = k.id and c.bucket = 'taken'), 0) as ct
      from app_public.counters k join app_public.counter_kinds kk on kk.code = k.code
      where k.id = any (v_ids)
    )
    select * from per_counter order by counter_id
  loop
    -- Never overdraw: a counter debited more must keep a remaining >= 0.
    if r.tp + r.tt > r.cp + r.ct then
      v_error := app_private.counter_request_error(r.code, r.year, r.counter_id, r.unit, r.unit, null,
                                                   r.tp + r.tt, r.cp + r.ct);
      if v_error is not null then
        perform app_hidden.invalid('counters', v_error, 'WV301');
      end if;
    end if;

    if p_transition = 'edit' then
      if r.tp <> r.cp then
        perform app_private.counter_movement(r.counter_id, 'planned', -r.cp, 'compensation', p_absence_id, p_transition);
        perform app_private.counter_movement(r.counter_id, 'planned', r.tp, 'reservation', p_absence_id, p_transition);
      end if;
      if r.tt <> r.ct then
        perform app_private.counter_movement(r.counter_id, 'taken', -r.ct, 'compensation', p_absence_id, p_transition);
        perform app_private.counter_movement(r.counter_id, 'taken', r.tt, 'consumption', p_absence_id, p_transition);
      end if;
    else
      -- Planifiés → Pris first (the start of a reservation), then what remains.
      v_moved := least(greatest(r.cp - r.tp, 0), greatest(r.tt - r.ct, 0));
      -- The four lines of app_private.counter_movement in one insert, in the same order (those of
      -- quantity 0 are not written).
      insert into app_private.counter_movements (counter_id, bucket, quantity, kind, absence_id, transition, actor_account_id)
      select r.counter_id, m.bucket, m.quantity, m.kind, p_absence_id, p_transition, app_hidden.current_account_id()
      from (values (1, 'planned', -v_moved, 'start'),
                   (2, 'taken', v_moved, 'consumption'),
                   (3, 'planned', r.tp - r.cp + v_moved,
                    case when r.tp - r.cp + v_moved > 0 then 'reservation' else 'release' end),
                   (4, 'taken', r.tt - r.ct - v_moved,
                    case when r.tt - r.ct - v_moved > 0 then 'consumption' else 'restitution' end)) m(n, bucket, quantity, kind)
      where m.quantity <> 0
      order by m.n;
    end if;

    if r.tp <> r.cp then
      v_effects := v_effects || jsonb_build_object('counter', r.code, 'year', r.year, 'column', 'planned',
        'direction', case when r.tp > r.cp then 'debit' else 'credit' end,
        'quantity', app_hidden.fmt_quantity(abs(r.tp - r.cp)));
    end if;
    if r.tt <> r.ct then
      v_effects := v_effects || jsonb_build_object('counter', r.code, 'year', r.year, 'column', 'taken',
        'direction', case when r.tt > r.ct then 'debit' else 'credit' end,
        'quantity', app_hidden.fmt_quantity(abs(r.tt - r.ct)));
    end if;
  end loop;
  return v_effects;
end;
$$;

-- Effects of a draft compared with what an absence holds (preview): the same shape as the
-- effects of absence_sync_counters, without writing anything. p_plan is the "plan" of
-- app_private.absence_evaluate, p_bucket the column the draft would use.
create or replace function app_private.absence_counter_effects(p_plan jsonb, p_bucket text, p_absence_id int)
returns jsonb
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  with t as (
    select x ->> 'code' as code, (x ->> 'year')::int as year, p_bucket as bucket, (x ->> 'quantity')::numeric as quantity
    from jsonb_array_elements(coalesce(p_plan, '[]'::jsonb)) x
  ), c as (
    select n.code, n.year, n.bucket, n.quantity from app_private.absence_counter_nets(array[p_absence_id]) n
  ), keys as (
    select code, year, bucket from t union select code, year, bucket from c
  ), diff as (
    select k.code, k.year, k.bucket,
           coalesce((select sum(t.quantity) from t where t.code = k.code and t.year = k.year and t.bucket = k.bucket), 0)
           - coalesce((select sum(c.quantity) from c where c.code = k.code and c.year = k.year and c.bucket = k.bucket), 0)
             as delta
    from keys k
  )
  select coalesce(jsonb_agg(jsonb_build_object('counter', d.code, 'year', d.year, 'column', d.bucket,
                                               'direction', case when d.delta > 0 then 'debit' else 'credit' end,
                                               'quantity', app_hidden.fmt_quantity(abs(d.delta)))
                            order by d.code, d.year, d.bucket desc), '[]'::jsonb)
  from diff d where d.delta <> 0;
$$;

-- What granting a cancellation would recredit (cancellation_counter_effects), per absence.
-- force_generic_plan: docs/architecture.md, Performance notes.
create or replace function app_private.absence_cancellation_effects(p_absence_ids int[])
returns table (absence_id int, effects jsonb)
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp
set plan_cache_mode = force_generic_plan as $$
#variable_conflict use_column
begin
  return query
    select n.absence_id,
           jsonb_agg(jsonb_build_object('counter', n.code, 'year', n.year, 'column', n.bucket, 'direction', 'credit',
                                        'quantity', app_hidden.fmt_quantity(n.quantity))
                     order by n.code, n.year, n.bucket desc)
    from app_private.absence_counter_nets(p_absence_ids) n
    where n.quantity > 0
    group by n.absence_id;
end;
$$;

-- Daily job: granted absences that started move from Planifiés to Pris. Idempotent (an
-- absence already moved holds nothing in Planifiés). Returns the number of absences moved;
-- an absence whose counter was closed meanwhile is left as it is (a warning is logged).
create or replace function app_private.consume_started_absences(p_today date) returns int
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_id int;
  v_count int := 0;
begin
  for v_id in
    select a.id from app_public.absences a
    where a.status in ('validated', 'cancellation_requested') and a.date_start <= p_today
      and exists (select 1 from app_private.counter_movements m
                  where m.absence_id = a.id and m.bucket = 'planned'
                  group by m.counter_id having sum(m.quantity) > 0)
    order by a.id
  loop
    begin
      perform app_private.absence_sync_counters(v_id, 'start', p_today);
      v_count := v_count + 1;
    exception when sqlstate 'WV301' then
      -- A counter closed since the reservation: this absence stays in Planifiés (its
      -- reservation is visible and released by a cancellation); the others move on.
      raise warning 'consume_started_absences: absence % not moved: %', v_id, sqlerrm;
    end;
  end loop;
  return v_count;
end;
$$;

-- Balances of an employee's counters for a year, summed over the journal.
-- force_generic_plan: docs/architecture.md, Performance notes.
create or replace function app_private.counter_balances_of(p_employee int, p_year int)
returns table (id int, code text, name text, unit text, year int, is_active boolean,
               acquired numeric, taken numeric, planned numeric)
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp
set plan_cache_mode = force_generic_plan as $$
#variable_conflict use_column
begin
  return query
    select c.id, c.code, k.name, k.unit, c.year::int, c.is_active,
           coalesce(sum(m.quantity) filter (where m.bucket = 'acquired'), 0)::numeric(8,2),
           coalesce(sum(m.quantity) filter (where m.bucket = 'taken'), 0)::numeric(8,2),
           coalesce(sum(m.quantity) filter (where m.bucket = 'planned'), 0)::numeric(8,2)
    from app_public.counters c
    join app_public.counter_kinds k on k.code = c.code
    left join app_private.counter_movements m on m.counter_id = c.id
    where c.employee_id = p_employee and c.year = p_year
    group by c.id, k.name, k.unit, k.position
    order by k.position, c.code;
end;
$$;

-- GET /api/counters/?employee=&year=: the employee reads their own; holders of
-- absences.view_absence_queue read their perimeter; anybody else gets 404.
create or replace function app_public.counters_read(p_employee int default null, p_year int default null) returns jsonb
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_employee int := coalesce(p_employee, app_hidden.current_employee_id());
  v_year int := coalesce(p_year, extract(year from app_hidden.today())::int);
begin
  if v_employee is null
     or not exists (select 1 from app_public.employees e where e.id = v_employee)
     or not (app_hidden.is_current_employee(v_employee)
             or exists (select 1 from app_hidden.perimeter_employee_ids('absences.view_absence_queue') x(id)
                        where x.id = v_employee)) then
    perform app_hidden.not_found('Salarié introuvable.');
  end if;
  if v_year not between app_hidden.first_accepted_year() and app_hidden.last_accepted_year() then
    perform app_hidden.invalid('year', format('Année invalide : entre %s et %s.', app_hidden.first_accepted_year(),
                                              app_hidden.last_accepted_year()), 'WV302');
  end if;
  return coalesce((
    select jsonb_object_agg(b.code, jsonb_build_object(
             'id', b.id, 'code', b.code, 'name', b.name, 'unit', b.unit, 'year', b.year, 'is_active', b.is_active,
             'acquired', app_hidden.fmt_quantity(b.acquired), 'taken', app_hidden.fmt_quantity(b.taken),
             'planned', app_hidden.fmt_quantity(b.planned),
             'remaining', app_hidden.fmt_quantity(b.acquired - b.taken - b.planned),
             'labels', jsonb_build_object('acquired', 'Acquis', 'taken', 'Pris', 'planned', 'Planifiés',
                                          'remaining', 'Restant'))
           -- The counter's year (issue 27, sql/counters/year.sql: defined later in sql/ORDER).
           || app_private.counter_year_facts(b.id, app_hidden.today()))
    from app_private.counter_balances_of(v_employee, v_year) b), '{}'::jsonb);
end;
$$;
comment on function app_public.counters_read(integer, integer) is
'SPEC Counters, GET /api/counters/?employee=&year=: the counters of an employee for a civil year
(default: the caller, this year), keyed by counter code with Acquis, Pris, Planifiés and Restant; the
employee reads their own, holders of absences.view_absence_queue their perimeter, anybody else gets 404.';
