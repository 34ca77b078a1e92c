--! Previous: sha1:be54f61baec79dd512c8d2770c1e7c2b4036e655
--! Hash: sha1:d05cf0fd4b0505256c1f324ab5349783e7178e9a
--! Message: Issue 26 point 1: typed arguments for the API's write functions (p_sent for PATCH), in_timestamptz dropped

-- Written by `npm run db:current` from sql/ORDER: edit sql/, never this file, and run it again.
-- The sql/ files changed since the last committed migration (migrations/sql-state.json), in list order.

--! Included core/arguments.sql
-- Typed arguments (docs/architecture.md, "One input contract", "Typed arguments"): an API
-- function takes one typed argument per key of its body. Two things a typed argument cannot
-- say are written once here:
--
-- * whether a key was sent at all. A write that keeps what the body leaves out (PATCH, PUT,
--   the correction preview of an absence) cannot tell an absent key from a null one by its
--   argument; it takes the body's keys in `p_sent text[]` (the REST router passes them, manifest
--   `from: 'body-keys'`). A caller that gives no list (GraphQL) sends the arguments it gives
--   non-null: only a list can clear a value.
-- * the checks of a list of ids that the route schema makes (integers, no repeat), for a caller
--   that reaches the function without it (GraphQL).

-- Was the key sent? Never NULL (app_private.never_null_guards).
create or replace function app_hidden.sent(p_sent text[], p_key text, p_given boolean) returns boolean
language sql immutable parallel safe as $$
  select case when p_sent is null then coalesce(p_given, false) else coalesce(p_key = any (p_sent), false) end;
$$;

-- The refusal of a list of ids that the route schema would not accept (a null item, an id
-- twice), in the words of the former JSON reader; null when the list is acceptable (or null).
create or replace function app_hidden.id_list_refusal(p_ids int[]) returns text
language sql immutable parallel safe as $$
  select case
    when array_position(p_ids, null) is not null then 'Une liste d''identifiants (nombres entiers) est attendue.'
    when cardinality(p_ids) <> (select count(distinct i) from unnest(p_ids) i) then 'La liste contient des doublons.'
  end;
$$;

-- A text argument as the rules read it: trimmed, an empty text counting as none.
create or replace function app_hidden.trimmed(p_text text) returns text
language sql immutable parallel safe as $$
  select nullif(btrim(p_text), '');
$$;

-- The keys a write takes as sent: the list given, or (no list: GraphQL) the keys of the
-- arguments given non-null (p_keys and p_given pair up). For a function that hands "was it
-- sent?" to helpers which no longer see the arguments (the absence draft).
create or replace function app_hidden.keys_sent(p_sent text[], p_keys text[], p_given boolean[]) returns text[]
language sql immutable parallel safe as $$
  select coalesce(p_sent, array(select k from unnest(p_keys, p_given) u(k, g) where g));
$$;
--! EndIncluded core/arguments.sql
--! Included absences/rules.sql
-- Declaration and write rules of absences (SPEC, Absences, rules 1-17): counting, half-days,
-- hours, overlap, caps, splitting, contract types, counters, retroactivity, agreement
-- warnings and notice periods. One evaluation function serves creation, correction,
-- validation with requalification and preview, so every path applies the same rules.

-- What an absence would be: the fields the rules read.
do $$
begin
  if to_regtype('app_hidden.absence_draft') is null then
    create type app_hidden.absence_draft as (
      employee_id int,
      type_id int,
      date_start date,
      date_end date,
      start_half text,
      end_half text,
      start_time time,
      end_time time
    );
  end if;
end;
$$;

-- Counting base of an employee: the base of the main workplace; none → ouvrables.
-- plpgsql: its plan is kept by the connection (a security definer SQL function is never
-- inlined, and was planned again at each of its calls).
create or replace function app_hidden.employee_count_base(p_employee int) returns text
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  return coalesce((select es.count_base
                   from app_public.employees e
                   join app_public.establishments es on es.id = e.main_establishment_id
                   where e.id = p_employee), 'ouvrables');
end;
$$;

-- A counted day: not a Sunday, not a public holiday, and not a Saturday on the ouvrés base.
create or replace function app_hidden.is_counted_day(p_day date, p_base text) returns boolean
language sql immutable parallel safe as $$
  select extract(isodow from p_day) <> 7
     and (p_base = 'ouvrables' or extract(isodow from p_day) <> 6)
     and app_hidden.is_public_holiday(p_day) is not true;
$$;

-- Counted days of a period per civil year; a half-day bound counts half (CONTRACT 7:
-- start_half 'afternoon' = the morning of date_start is worked; end_half 'morning' = the
-- afternoon of date_end is worked). A loop, not a query: its cost is known to the planner
-- of the queries that call it (a generate_series of unknown bounds made them look huge).
create or replace function app_hidden.counted_days(p_base text, p_start date, p_end date, p_start_half text, p_end_half text)
returns table (year int, quantity numeric)
language plpgsql immutable parallel safe rows 2 as $$
declare
  v_holidays date[];
  v_day date := p_start;
  v_year int;
begin
  if p_start is null or p_end is null or p_end < p_start then
    return;
  end if;
  select array_agg(h.day) into v_holidays
  from generate_series(extract(year from p_start)::int, extract(year from p_end)::int) y,
       lateral app_public.public_holidays(y) h;
  while v_day <= p_end loop
    if extract(isodow from v_day) <> 7
       and (p_base = 'ouvrables' or extract(isodow from v_day) <> 6)
       and not (v_day = any (v_holidays)) then
      if v_year is distinct from extract(year from v_day)::int then
        if v_year is not null then
          return next;
        end if;
        v_year := extract(year from v_day)::int;
        year := v_year;
        quantity := 0;
      end if;
      quantity := quantity + 1
                  - case when v_day = p_start and p_start_half = 'afternoon' then 0.5 else 0 end
                  - case when v_day = p_end and p_end_half = 'morning' then 0.5 else 0 end;
    end if;
    v_day := v_day + 1;
  end loop;
  if v_year is not null then
    return next;
  end if;
end;
$$;

-- The n-th counted day after p_from (p_from excluded).
create or replace function app_hidden.add_working_days(p_from date, p_n int, p_base text) returns date
language plpgsql immutable parallel safe as $$
declare
  v_day date := p_from;
  v_left int := greatest(p_n, 1);
begin
  loop
    v_day := v_day + 1;
    if app_hidden.is_counted_day(v_day, p_base) then
      v_left := v_left - 1;
      exit when v_left = 0;
    end if;
  end loop;
  return v_day;
end;
$$;

-- Hours between two times of one day, as a decimal with two digits.
create or replace function app_hidden.hours_between(p_start time, p_end time) returns numeric
language sql immutable parallel safe as $$
  select round((extract(epoch from (p_end - p_start)) / 3600)::numeric, 2);
$$;

-- Time covered by an absence (same expression as app_public.absences.period).
create or replace function app_hidden.absence_period(p_start date, p_end date, p_start_half text, p_end_half text,
                                          p_start_time time, p_end_time time) returns tsrange
language sql immutable parallel safe as $$
  select case when p_start_time is not null then
           tsrange(p_start + p_start_time, p_start + p_end_time)
         else
           tsrange(p_start + case when p_start_half = 'afternoon' then time '12:00' else time '00:00' end,
                   (p_end + case when p_end_half = 'morning' then 0 else 1 end)
                     + case when p_end_half = 'morning' then time '12:00' else time '00:00' end)
         end;
$$;

-- Quantity of an absence per civil year: counted days on the employee's base, or hours
-- (an hourly absence lies on one date).
create or replace function app_hidden.absence_shares(p_employee int, p_unit text, p_start date, p_end date,
                                          p_start_half text, p_end_half text,
                                          p_start_time time, p_end_time time)
returns table (year int, quantity numeric)
language sql stable as $$
  select extract(year from p_start)::int, app_hidden.hours_between(p_start_time, p_end_time)
  where p_unit = 'hour' and p_start_time is not null and p_end_time is not null
  union all
  select c.year, c.quantity
  from app_hidden.counted_days(app_hidden.employee_count_base(p_employee), p_start, p_end, p_start_half, p_end_half) c
  where p_unit = 'day';
$$;

-- Texts of messages and notification bodies.
create or replace function app_hidden.quantity_fr(p_quantity numeric, p_unit text) returns text
-- stable, like the to_char wrappers it calls: an immutable SQL function calling a stable one is never
-- inlined, and was parsed and planned at each call.
language sql stable as $$
  select app_hidden.fmt_quantity(p_quantity) || ' '
         || case when p_unit = 'hour' then case when p_quantity <= 1 then 'heure' else 'heures' end
                 else case when p_quantity <= 1 then 'jour' else 'jours' end end;
$$;

-- 1.5 → "1 h 30"
create or replace function app_hidden.hours_fr(p_hours numeric) returns text
language sql immutable as $$
  select floor(p_hours)::int || ' h ' || lpad(round((p_hours - floor(p_hours)) * 60)::int::text, 2, '0');
$$;

-- '1 month' → "1 mois", '72 hours' → "72 heures", '60 days' → "60 jours", '1 year' → "1 an".
create or replace function app_hidden.interval_fr(p_interval interval) returns text
language sql immutable as $$
  select case
    when extract(year from p_interval) >= 1 and extract(month from p_interval) = 0 and extract(day from p_interval) = 0 then
      extract(year from p_interval)::int || case when extract(year from p_interval) > 1 then ' ans' else ' an' end
    when extract(year from p_interval) * 12 + extract(month from p_interval) > 0 then
      (extract(year from p_interval) * 12 + extract(month from p_interval))::int || ' mois'
    when extract(day from p_interval) > 0 then
      extract(day from p_interval)::int || case when extract(day from p_interval) > 1 then ' jours' else ' jour' end
    else
      (extract(epoch from p_interval) / 3600)::int || ' heures'
  end;
$$;

-- "le 20/11/2026", "le 20/11/2026 (matin)", "le 20/11/2026 de 09:00 à 11:00",
-- "du 20/11/2026 (après-midi) au 24/11/2026".
create or replace function app_hidden.absence_period_fr(p_start date, p_end date, p_start_half text, p_end_half text,
                                             p_start_time time, p_end_time time) returns text
-- stable, like the to_char wrappers it calls: an immutable SQL function calling a stable one is never
-- inlined, and was parsed and planned at each call.
language sql stable as $$
  select case
    when p_start_time is not null then
      format('le %s de %s à %s', app_hidden.fr_date(p_start), to_char(p_start_time, 'HH24:MI'), to_char(p_end_time, 'HH24:MI'))
    when p_start = p_end then
      'le ' || app_hidden.fr_date(p_start)
      || case when p_start_half = 'afternoon' then ' (après-midi)' when p_end_half = 'morning' then ' (matin)' else '' end
    else
      'du ' || app_hidden.fr_date(p_start) || case when p_start_half = 'afternoon' then ' (après-midi)' else '' end
      || ' au ' || app_hidden.fr_date(p_end) || case when p_end_half = 'morning' then ' (matin)' else '' end
  end;
$$;

-- "l'absence n° 12 (Congés payés, du 20/11/2026 au 24/11/2026)"
create or replace function app_hidden.absence_label(p_absence app_public.absences) returns text
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select format('l''absence n° %s (%s, %s)', p_absence.id, t.name,
                app_hidden.absence_period_fr(p_absence.date_start, p_absence.date_end, p_absence.start_half,
                                             p_absence.end_half, p_absence.start_time, p_absence.end_time))
  from app_public.absence_types t where t.id = p_absence.type_id;
$$;

-- The active statuses: drawn in the planning, counted, overlapping refused.
create or replace function app_hidden.absence_is_active(p_status text) returns boolean
language sql immutable parallel safe as $$
  select p_status in ('pending', 'validated', 'cancellation_requested');
$$;

-- The counter bucket an active absence holds on business date p_today: a granted absence
-- (validated or cancellation requested) that has started is Pris, anything else Planifiés.
create or replace function app_hidden.absence_counter_bucket(p_status text, p_date_start date, p_today date) returns text
language sql immutable parallel safe as $$
  select case when p_status in ('validated', 'cancellation_requested') and p_date_start <= p_today
              then 'taken' else 'planned' end;
$$;

-- Counters an absence would move: one line per consumable counter associated with the
-- type and per civil year of the period (an absence spanning two years moves each year's
-- counter for its share). counter_id is null when the counter of that year is not open.
-- p_shares: the draft's quantity per civil year, [{"year", "quantity"}], when the caller has
-- already counted it (app_private.absence_evaluate); null: counted here.
-- force_generic_plan: docs/architecture.md, Performance notes.
drop function if exists app_private.absence_counter_plan(app_hidden.absence_draft);
create or replace function app_private.absence_counter_plan(p_draft app_hidden.absence_draft, p_shares jsonb default null)
returns table (code text, counter_unit text, type_unit text, year int, quantity numeric, counter_id int)
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp
set plan_cache_mode = force_generic_plan as $$
#variable_conflict use_column
begin
  return query
    select ca.counter_code, k.unit, t.unit, s.year, s.quantity, c.id
    from app_public.absence_types t
    join app_public.counter_associations ca on ca.absence_type_id = t.id and ca.is_active
    join app_public.counter_kinds k on k.code = ca.counter_code and k.is_consumable
    cross join lateral (
      select (x ->> 'year')::int as year, (x ->> 'quantity')::numeric as quantity
      from jsonb_array_elements(p_shares) x
      union all
      select sh.year, sh.quantity
      from app_hidden.absence_shares(p_draft.employee_id, t.unit, p_draft.date_start, p_draft.date_end,
                                     p_draft.start_half, p_draft.end_half, p_draft.start_time, p_draft.end_time) sh
      where p_shares is null) s
    left join app_public.counters c on c.employee_id = p_draft.employee_id and c.code = ca.counter_code
                                    and c.year = s.year and c.is_active
    where t.id = p_draft.type_id and s.quantity > 0
    order by ca.counter_code, s.year;
end;
$$;

-- Net journal position of absences per counter and bucket (what they hold now).
-- force_generic_plan: docs/architecture.md, Performance notes.
create or replace function app_private.absence_counter_nets(p_absence_ids int[])
returns table (absence_id int, counter_id int, code text, year int, bucket text, quantity numeric)
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp
set plan_cache_mode = force_generic_plan as $$
#variable_conflict use_column
begin
  return query
    select m.absence_id, c.id, c.code, c.year::int, m.bucket, sum(m.quantity)::numeric(8,2)
    from app_private.counter_movements m
    join app_public.counters c on c.id = m.counter_id
    where m.absence_id = any (p_absence_ids)
    group by m.absence_id, c.id, c.code, c.year, m.bucket
    having sum(m.quantity) <> 0
    order by m.absence_id, c.code, c.year, m.bucket;
end;
$$;

-- The draft of a stored absence corrected by typed values (PATCH, the correction preview, the
-- validation's correction): a key sent (p_sent, the keys as app_hidden.keys_sent resolves them)
-- wins, null included; a key not sent keeps the stored value. The employee never changes.
drop function if exists app_hidden.absence_draft_of(jsonb, app_public.absences);
create or replace function app_hidden.absence_draft_of(p_base app_public.absences, p_sent text[], p_type int,
                                                       p_date_start date, p_date_end date, p_start_half text,
                                                       p_end_half text, p_start_time time, p_end_time time)
returns app_hidden.absence_draft
language plpgsql stable as $$
declare
  d app_hidden.absence_draft;
begin
  d.employee_id := p_base.employee_id;
  d.type_id := case when app_hidden.sent(p_sent, 'type', false) then p_type else p_base.type_id end;
  d.date_start := case when app_hidden.sent(p_sent, 'date_start', false) then p_date_start else p_base.date_start end;
  d.date_end := case when app_hidden.sent(p_sent, 'date_end', false) then p_date_end else p_base.date_end end;
  d.start_half := case when app_hidden.sent(p_sent, 'start_half', false) then p_start_half else p_base.start_half end;
  d.end_half := case when app_hidden.sent(p_sent, 'end_half', false) then p_end_half else p_base.end_half end;
  d.start_time := case when app_hidden.sent(p_sent, 'start_time', false) then p_start_time else p_base.start_time end;
  d.end_time := case when app_hidden.sent(p_sent, 'end_time', false) then p_end_time else p_base.end_time end;
  return d;
end;
$$;

-- After a requalification or an adjustment, fields the new type cannot carry are dropped
-- unless the correction sends them (p_sent; then the rules refuse them): an hourly type has no
-- half-day, a day type has no hours, and a whole-day type is taken whole ("an adjustment must
-- take it whole"). An unchanged absence keeps what it has (a half-day stored before the rule
-- stays as it is).
drop function if exists app_hidden.absence_draft_normalize(app_hidden.absence_draft, jsonb, app_public.absences);
create or replace function app_hidden.absence_draft_normalize(p_draft app_hidden.absence_draft, p_sent text[],
                                                   p_base app_public.absences)
returns app_hidden.absence_draft
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  d app_hidden.absence_draft := p_draft;
  v_type app_public.absence_types;
  v_adjusted boolean;
begin
  select * into v_type from app_public.absence_types t where t.id = d.type_id;
  if not found then
    return d;
  end if;
  v_adjusted := p_base.id is null
    or d.type_id is distinct from p_base.type_id
    or d.date_start is distinct from p_base.date_start
    or d.date_end is distinct from p_base.date_end;
  if not v_adjusted then
    return d;
  end if;
  if v_type.unit = 'hour' then
    if not app_hidden.sent(p_sent, 'start_half', false) then d.start_half := null; end if;
    if not app_hidden.sent(p_sent, 'end_half', false) then d.end_half := null; end if;
  else
    if not app_hidden.sent(p_sent, 'start_time', false) then d.start_time := null; end if;
    if not app_hidden.sent(p_sent, 'end_time', false) then d.end_time := null; end if;
    if not v_type.half_day_allowed then
      if not app_hidden.sent(p_sent, 'start_half', false) then d.start_half := null; end if;
      if not app_hidden.sent(p_sent, 'end_half', false) then d.end_half := null; end if;
    end if;
  end if;
  return d;
end;
$$;

-- Events of the employee that the period meets: [{id, title, start_at, end_at}].
-- plpgsql: its plan is kept by the connection (a security definer SQL function is never
-- inlined, and was planned again at each of its calls).
create or replace function app_private.absence_event_conflicts(p_employee int, p_period tsrange) returns jsonb
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  return (select coalesce(jsonb_agg(jsonb_build_object('id', e.id, 'title', e.title, 'start_at', e.start_at, 'end_at', e.end_at)
                            order by e.start_at, e.id), '[]'::jsonb)
  from app_public.event_participants p
  join app_public.events e on e.id = p.event_id
  where p.employee_id = p_employee
    and tstzrange(e.start_at, e.end_at)
        && tstzrange(lower(p_period) at time zone app_hidden.business_timezone(),
                     upper(p_period) at time zone app_hidden.business_timezone()));
end;
$$;

-- "du 20/11/2026 15:00 au 20/11/2026 16:00" for an event.
create or replace function app_hidden.event_period_fr(p_start timestamptz, p_end timestamptz) returns text
language sql stable as $$
  select format('du %s %s au %s %s',
                app_hidden.fr_date(app_hidden.business_date(p_start)),
                to_char(p_start at time zone app_hidden.business_timezone(), 'HH24:MI'),
                app_hidden.fr_date(app_hidden.business_date(p_end)),
                to_char(p_end at time zone app_hidden.business_timezone(), 'HH24:MI'));
$$;

-- The declaration rules, one function each (docs/architecture.md, "Where each rule lives").
-- Each returns its outcome {"errors": {field: [message]}, "warnings": [message]} (a few add
-- what the caller needs next: "plan", "events"); app_private.absence_evaluate composes them in
-- the order of the messages. They take the rows the evaluation already read (type, employee)
-- instead of reading them again, answer an empty outcome when what they need is missing, and
-- run as their caller (absence_evaluate, security definer). The rules that read no table are
-- one SQL expression (inlined into the caller's), those that query are plpgsql (plans kept by
-- the connection): docs/architecture.md, Performance notes.

-- An outcome with nothing to say.
-- stable like jsonb_build_object: a function declared less volatile than its body is never
-- inlined, and a SQL function that is not inlined is planned again in every transaction.
create or replace function app_hidden.rule_outcome(p_errors jsonb default '{}'::jsonb, p_warnings jsonb default '[]'::jsonb)
returns jsonb
language sql stable parallel safe as $$
  select jsonb_build_object('errors', coalesce(p_errors, '{}'::jsonb), 'warnings', coalesce(p_warnings, '[]'::jsonb));
$$;

-- The messages of one field, in order, without the rules that said nothing (null when none).
create or replace function app_hidden.messages(variadic p_messages text[]) returns jsonb
language sql stable parallel safe as $$
  select nullif(to_jsonb(array_remove(p_messages, null)), '[]'::jsonb);
$$;

-- One outcome from several, in their order: each field's messages and the warnings follow
-- those of the outcomes before (a null outcome is a rule that was not called).
create or replace function app_hidden.outcomes_merge(p_outcomes jsonb[]) returns jsonb
language plpgsql stable parallel safe as $$
declare
  v_errors jsonb := '{}'::jsonb;
  v_warnings jsonb := '[]'::jsonb;
  v_outcome jsonb;
  v_field text;
  v_messages jsonb;
begin
  foreach v_outcome in array p_outcomes loop
    continue when v_outcome is null;
    if v_outcome -> 'errors' <> '{}'::jsonb then
      for v_field, v_messages in select e.key, e.value from jsonb_each(v_outcome -> 'errors') e loop
        v_errors := v_errors || jsonb_build_object(v_field, coalesce(v_errors -> v_field, '[]'::jsonb) || v_messages);
      end loop;
    end if;
    v_warnings := v_warnings || coalesce(v_outcome -> 'warnings', '[]'::jsonb);
  end loop;
  return app_hidden.rule_outcome(v_errors, v_warnings);
end;
$$;

create or replace function app_private.absence_rule_identity(p_draft app_hidden.absence_draft,
                                                             p_employee_found boolean, p_type_found boolean)
returns jsonb
language sql stable as $$
  select app_hidden.rule_outcome(jsonb_strip_nulls(jsonb_build_object(
    'employee', app_hidden.messages(case when (p_draft).employee_id is null then 'Ce champ est obligatoire.'
                                         when p_employee_found is not true then 'Salarié introuvable.' end),
    'type', app_hidden.messages(case when (p_draft).type_id is null then 'Ce champ est obligatoire.'
                                     when p_type_found is not true then 'Motif d''absence inconnu ou inactif.' end))));
$$;
comment on function app_private.absence_rule_identity(app_hidden.absence_draft, boolean, boolean) is
'SPEC Absences, fields employee and type: both are required; p_employee_found and p_type_found say
whether the employee, and an active type, were found (otherwise refused under its field).';

create or replace function app_private.absence_rule_period(p_draft app_hidden.absence_draft) returns jsonb
language sql stable as $$
  -- A draft without date_end lies on one date.
  select app_hidden.rule_outcome(jsonb_strip_nulls(jsonb_build_object(
    'date_start', app_hidden.messages(
      case when (p_draft).date_start is null then 'Ce champ est obligatoire.' end,
      case when extract(year from (p_draft).date_start)
                not between app_hidden.first_accepted_year() and app_hidden.last_accepted_year()
           then format('Date hors de la plage acceptée (années %s à %s).',
                       app_hidden.first_accepted_year(), app_hidden.last_accepted_year()) end),
    'date_end', app_hidden.messages(
      case when extract(year from coalesce((p_draft).date_end, (p_draft).date_start))
                not between app_hidden.first_accepted_year() and app_hidden.last_accepted_year()
           then format('Date hors de la plage acceptée (années %s à %s).',
                       app_hidden.first_accepted_year(), app_hidden.last_accepted_year()) end,
      case when (p_draft).date_start is not null
                and coalesce((p_draft).date_end, (p_draft).date_start) < (p_draft).date_start
           then 'La date de fin ne peut pas précéder la date de début.'
           when coalesce((p_draft).date_end, (p_draft).date_start) - (p_draft).date_start > app_hidden.absence_max_days()
           then 'Une absence ne peut pas dépasser trois ans : déposez des périodes successives.' end),
    'start_half', app_hidden.messages(
      case when (p_draft).start_half not in ('morning', 'afternoon') then 'Valeurs possibles : morning, afternoon ou null.' end),
    'end_half', app_hidden.messages(
      case when (p_draft).end_half not in ('morning', 'afternoon') then 'Valeurs possibles : morning, afternoon ou null.' end))));
$$;
comment on function app_private.absence_rule_period(app_hidden.absence_draft) is
'SPEC Absences, fields date_start and date_end: the start is required, both dates lie in the accepted
years, the end does not precede the start, one absence spans at most app_hidden.absence_max_days(), and
the half-day bounds are morning, afternoon or null.';

create or replace function app_private.absence_rule_hourly(p_draft app_hidden.absence_draft, p_type app_public.absence_types)
returns jsonb
language sql stable as $$
  -- Nothing to say without a type and a start (the identity and period rules say it).
  select app_hidden.rule_outcome(jsonb_strip_nulls(jsonb_build_object(
    'start_half', app_hidden.messages(
      case when (p_type).id is not null and (p_draft).date_start is not null and (p_type).unit = 'hour'
                and ((p_draft).start_half is not null or (p_draft).end_half is not null)
           then format('Le motif « %s » se pose en heures : pas de demi-journée.', (p_type).name) end),
    'start_time', app_hidden.messages(
      case when (p_type).id is null or (p_draft).date_start is null then null
           when (p_type).unit = 'hour' and ((p_draft).start_time is null or (p_draft).end_time is null)
           then 'Un motif en heures demande une heure de début et une heure de fin.'
           when (p_type).unit <> 'hour' and ((p_draft).start_time is not null or (p_draft).end_time is not null)
           then format('Le motif « %s » se pose en jours : retirez les heures de début et de fin.', (p_type).name) end),
    'end_time', app_hidden.messages(
      case when (p_type).id is not null and (p_draft).date_start is not null and (p_type).unit = 'hour'
                and (p_draft).end_time <= (p_draft).start_time
           then 'L''heure de fin doit suivre l''heure de début.' end),
    'date_end', app_hidden.messages(
      case when (p_type).id is not null and (p_draft).date_start is not null and (p_type).unit = 'hour'
                and coalesce((p_draft).date_end, (p_draft).date_start) <> (p_draft).date_start
           then 'Une absence en heures porte sur une seule date : la date de fin doit être celle du début.' end))));
$$;
comment on function app_private.absence_rule_hourly(app_hidden.absence_draft, app_public.absence_types) is
'SPEC Absences, declaration rule 5: an hourly type needs start and end hours, the end after the start,
on a single date and without half-day; a type counted in days takes no hours.';

create or replace function app_private.absence_rule_half_days(p_draft app_hidden.absence_draft, p_type app_public.absence_types)
returns jsonb
language sql stable as $$
  select app_hidden.rule_outcome(jsonb_strip_nulls(jsonb_build_object(
    'start_half', app_hidden.messages(
      case when (p_type).id is null or (p_draft).date_start is null or (p_type).unit = 'hour' then null
           when (p_draft).date_start = coalesce((p_draft).date_end, (p_draft).date_start)
                and (p_draft).start_half = 'afternoon' and (p_draft).end_half = 'morning'
           then 'Une absence d''une seule journée ne peut pas commencer l''après-midi et finir le matin.'
           when not (p_type).half_day_allowed and ((p_draft).start_half = 'afternoon' or (p_draft).end_half = 'morning')
           then format('Le motif « %s » se pose par journées entières : pas de demi-journée.', (p_type).name) end))));
$$;
comment on function app_private.absence_rule_half_days(app_hidden.absence_draft, app_public.absence_types) is
'SPEC Absences, declaration rules 2 and 4: one day cannot start in the afternoon and end in the morning,
and a whole-day type (half-day possible false) refuses a half-day bound, under start_half.';

create or replace function app_private.absence_rule_count(p_quantity numeric, p_base text) returns jsonb
language sql stable as $$
  select app_hidden.rule_outcome(p_warnings => case when p_quantity = 0 then jsonb_build_array(format(
    'Cette période ne compte aucun jour décompté (base %s : dimanches et jours fériés exclus%s).',
    case when p_base = 'ouvres' then 'jours ouvrés' else 'jours ouvrables' end,
    case when p_base = 'ouvres' then ', samedis exclus' else '' end)) end);
$$;
comment on function app_private.absence_rule_count(numeric, text) is
'SPEC Absences, declaration rule 1: a period that counts no day on the employee''s base (Sundays and
public holidays excluded, Saturdays too on the ouvrés base) is accepted with a warning.';

create or replace function app_private.absence_rule_retroactivity(p_draft app_hidden.absence_draft, p_retro text, p_today date)
returns jsonb
language sql stable as $$
  select app_hidden.rule_outcome(jsonb_strip_nulls(jsonb_build_object('date_start', app_hidden.messages(
    case when p_retro = 'employee' and (p_draft).date_start < app_hidden.employee_retroactivity_limit(p_today)
         then format('Une demande ne peut pas remonter au-delà de %s jours : la date de début doit être au plus tôt le %s.',
                     app_hidden.retroactivity_days(), app_hidden.fr_date(app_hidden.employee_retroactivity_limit(p_today)))
         when p_retro = 'manager' and (p_draft).date_start < app_hidden.manager_retroactivity_limit(p_today)
         then format('Une déclaration ne peut pas remonter avant le 1er décembre de l''année précédente : la date de début doit être au plus tôt le %s.',
                     app_hidden.fr_date(app_hidden.manager_retroactivity_limit(p_today))) end))));
$$;
comment on function app_private.absence_rule_retroactivity(app_hidden.absence_draft, text, date) is
'SPEC Absences, declaration rule 13: an employee''s own request starts no earlier than
app_hidden.employee_retroactivity_limit(today); a declaration for another no earlier than
app_hidden.manager_retroactivity_limit(today) (1 December of the previous year); p_retro null: no bound.';

create or replace function app_private.absence_rule_contract_types(p_draft app_hidden.absence_draft,
                                                                   p_type app_public.absence_types)
returns jsonb
language plpgsql stable as $$
declare
  v_allowed text;
  v_contract record;
begin
  if p_type.id is null or p_draft.date_start is null or p_draft.employee_id is null then
    return app_hidden.rule_outcome();
  end if;
  select string_agg(ct.code, ', ' order by ct.code) into v_allowed
  from app_public.absence_type_contract_types x
  join app_public.contract_types ct on ct.id = x.contract_type_id
  where x.absence_type_id = p_type.id;
  if v_allowed is null then
    return app_hidden.rule_outcome();
  end if;
  -- The contract in force on the first day.
  select ct.id, ct.code into v_contract
  from app_public.contracts c join app_public.contract_types ct on ct.id = c.contract_type_id
  where c.employee_id = p_draft.employee_id and c.start_date <= p_draft.date_start
    and (c.end_date is null or c.end_date >= p_draft.date_start)
  order by c.start_date desc limit 1;
  if v_contract.id is null then
    return app_hidden.rule_outcome(jsonb_build_object('type', jsonb_build_array(format(
      'Le motif « %s » est réservé aux contrats %s ; aucun contrat n''est en vigueur le %s.',
      p_type.name, v_allowed, app_hidden.fr_date(p_draft.date_start)))));
  elsif not exists (select 1 from app_public.absence_type_contract_types x
                    where x.absence_type_id = p_type.id and x.contract_type_id = v_contract.id) then
    return app_hidden.rule_outcome(jsonb_build_object('type', jsonb_build_array(format(
      'Le motif « %s » est réservé aux contrats %s ; le contrat en vigueur le %s est : %s.',
      p_type.name, v_allowed, app_hidden.fr_date(p_draft.date_start), v_contract.code))));
  end if;
  return app_hidden.rule_outcome();
end;
$$;
comment on function app_private.absence_rule_contract_types(app_hidden.absence_draft, app_public.absence_types) is
'SPEC Absences, declaration rule 8: a type listing contract types is refused, under type, when the
contract in force on the first day is not among them (the message names the contract held, or none).';

create or replace function app_private.absence_rule_overlap(p_draft app_hidden.absence_draft, p_period tsrange,
                                                            p_exclude_id int)
returns jsonb
language plpgsql stable as $$
begin
  return app_hidden.rule_outcome(coalesce(
    (select jsonb_build_object('date_start', jsonb_agg(format('Cette période chevauche %s.', app_hidden.absence_label(a))
                                                       order by a.date_start, a.id))
     from app_public.absences a
     where a.employee_id = p_draft.employee_id and app_hidden.absence_is_active(a.status)
       and a.id is distinct from p_exclude_id and a.period && p_period
     having count(*) > 0),
    '{}'::jsonb));
end;
$$;
comment on function app_private.absence_rule_overlap(app_hidden.absence_draft, tsrange, integer) is
'SPEC Absences, declaration rules 2 and 3: a period (p_period, app_hidden.absence_period) meeting another
active absence of the employee is refused, naming each one and its number; the morning and the
afternoon of one date do not overlap. p_exclude_id: the absence itself.';

create or replace function app_private.absence_rule_annual_cap(p_draft app_hidden.absence_draft,
                                                               p_type app_public.absence_types, p_exclude_id int)
returns jsonb
language plpgsql stable as $$
declare
  v_errors jsonb := '{}'::jsonb;
  v_warnings jsonb := '[]'::jsonb;
  v_total numeric;
  v_message text;
  s record;
begin
  if p_type.annual_cap is null then
    return app_hidden.rule_outcome();
  end if;
  for s in
    select x.year, x.quantity from app_hidden.absence_shares(p_draft.employee_id, p_type.unit, p_draft.date_start, p_draft.date_end,
                                                            p_draft.start_half, p_draft.end_half, p_draft.start_time, p_draft.end_time) x
  loop
    select s.quantity + coalesce(sum(o.quantity), 0) into v_total
    from app_public.absences a
    cross join lateral app_hidden.absence_shares(a.employee_id, p_type.unit, a.date_start, a.date_end, a.start_half,
                                                 a.end_half, a.start_time, a.end_time) o
    where a.employee_id = p_draft.employee_id and a.type_id = p_type.id and app_hidden.absence_is_active(a.status)
      and a.id is distinct from p_exclude_id
      and a.date_start <= make_date(s.year, 12, 31) and a.date_end >= make_date(s.year, 1, 1)
      and o.year = s.year;
    if v_total > p_type.annual_cap then
      v_message := format(
        'Plafond annuel dépassé pour le motif « %s » sur l''année %s : demande de %s, total de %s avec cette demande, pour un plafond de %s.',
        p_type.name, s.year, app_hidden.quantity_fr(s.quantity, p_type.unit), app_hidden.quantity_fr(v_total, p_type.unit),
        app_hidden.quantity_fr(p_type.annual_cap, p_type.unit));
      if p_type.cap_overrun = 'refuse' then
        v_errors := app_hidden.add_error(v_errors, 'date_end', v_message);
      else
        v_warnings := v_warnings || to_jsonb(v_message);
      end if;
    end if;
  end loop;
  return app_hidden.rule_outcome(v_errors, v_warnings);
end;
$$;
comment on function app_private.absence_rule_annual_cap(app_hidden.absence_draft, app_public.absence_types, integer) is
'SPEC Absences, declaration rules 6 and 17: the quantity of the type over each civil year, across the
employee''s active absences, above the annual cap is refused under date_end (overrun Refuser, giving the
request, the year total and the cap) or accepted with that warning (Avertir).';

create or replace function app_private.absence_rule_non_splittable(p_draft app_hidden.absence_draft,
                                                                   p_type app_public.absence_types, p_base text,
                                                                   p_period tsrange, p_exclude_id int)
returns jsonb
language plpgsql stable as $$
declare
  v_other app_public.absences;
begin
  if p_type.id is null or p_type.splittable then
    return app_hidden.rule_outcome();
  end if;
  -- Another period of the same civil year separated by a gap (a counted day between them).
  select a.* into v_other from app_public.absences a
  where a.employee_id = p_draft.employee_id and a.type_id = p_type.id and app_hidden.absence_is_active(a.status)
    and a.id is distinct from p_exclude_id
    and extract(year from a.date_start) in (extract(year from p_draft.date_start), extract(year from p_draft.date_end))
    and not (a.period && p_period)
    and exists (select 1
                from generate_series(least(a.date_end, p_draft.date_end) + 1,
                                     greatest(a.date_start, p_draft.date_start) - 1, interval '1 day') g
                where app_hidden.is_counted_day(g::date, p_base))
  order by a.date_start limit 1;
  if not found then
    return app_hidden.rule_outcome();
  end if;
  return app_hidden.rule_outcome(p_warnings => jsonb_build_array(format(
    'Le motif « %s » n''est pas fractionnable : %s, de la même année, est séparée de cette période.',
    p_type.name, app_hidden.absence_label(v_other))));
end;
$$;
comment on function app_private.absence_rule_non_splittable(app_hidden.absence_draft, app_public.absence_types, text, tsrange, integer) is
'SPEC Absences, declaration rule 7: for a non-splittable type, another period of the same civil year
separated from this one by a counted day (on base p_base) gives a warning; contiguous periods do not.';

create or replace function app_private.absence_rule_counters(p_draft app_hidden.absence_draft,
                                                             p_type app_public.absence_types, p_exclude_id int,
                                                             p_shares jsonb default null)
returns jsonb
language plpgsql stable as $$
declare
  v_errors jsonb := '{}'::jsonb;
  v_plan jsonb := '[]'::jsonb;
  v_held numeric;
  v_error text;
  r record;
begin
  if p_type.id is null or p_draft.employee_id is null then
    return app_hidden.rule_outcome() || jsonb_build_object('plan', v_plan);
  end if;
  for r in select * from app_private.absence_counter_plan(p_draft, p_shares) loop
    v_held := 0;
    if p_exclude_id is not null and r.counter_id is not null then
      -- What the absence itself holds on the counter is released by its new position.
      select coalesce(sum(n.quantity), 0) into v_held
      from app_private.absence_counter_nets(array[p_exclude_id]) n where n.counter_id = r.counter_id;
    end if;
    v_error := app_private.counter_request_error(r.code, r.year, r.counter_id, r.counter_unit, r.type_unit, p_type.name,
                                                 r.quantity, v_held);
    if v_error is not null then
      v_errors := app_hidden.add_error(v_errors, 'counters', v_error);
    end if;
    if r.counter_unit = r.type_unit and r.counter_id is not null then
      v_plan := v_plan || jsonb_build_object('counter_id', r.counter_id, 'code', r.code, 'year', r.year,
                                             'quantity', r.quantity);
    end if;
  end loop;
  return app_hidden.rule_outcome(v_errors) || jsonb_build_object('plan', v_plan);
end;
$$;
comment on function app_private.absence_rule_counters(app_hidden.absence_draft, app_public.absence_types, integer, jsonb) is
'SPEC Absences, declaration rule 9: each counter the type consumes needs an open counter for each civil
year of the period, in the unit of the type, with enough remaining (app_private.counter_request_error),
else an error under counters; "plan" lists the movements the absence would make. p_shares: the count
per year when the caller has it (app_private.absence_counter_plan).';

create or replace function app_private.absence_rule_agreement_warnings(p_draft app_hidden.absence_draft,
                                                                       p_type app_public.absence_types,
                                                                       p_is_polyvalent boolean,
                                                                       p_quantity numeric, p_exclude_id int)
returns jsonb
language plpgsql stable as $$
declare
  v_warnings jsonb := '[]'::jsonb;
  v_count int;
  v_total numeric;
  v_trial_end date;
begin
  if p_type.id is null then
    return app_hidden.rule_outcome();
  end if;
  if p_type.warn_max_hours_per_absence is not null and p_quantity > p_type.warn_max_hours_per_absence then
    v_warnings := v_warnings || to_jsonb(format(
      'Motif « %s » : %s demandées, au-delà des %s (trajet compris) prévues par l''accord.',
      p_type.name, app_hidden.quantity_fr(p_quantity, 'hour'), app_hidden.hours_fr(p_type.warn_max_hours_per_absence)));
  end if;
  if p_type.warn_max_per_quarter is not null then
    select count(*) into v_count from app_public.absences a
    where a.employee_id = p_draft.employee_id and a.type_id = p_type.id and app_hidden.absence_is_active(a.status)
      and a.id is distinct from p_exclude_id
      and date_trunc('quarter', a.date_start) = date_trunc('quarter', p_draft.date_start);
    if v_count + 1 > p_type.warn_max_per_quarter then
      v_warnings := v_warnings || to_jsonb(format(
        'Motif « %s » : l''accord en prévoit %s par trimestre civil ; %s autre(s) absence(s) de ce motif existe(nt) déjà au %se trimestre %s.',
        p_type.name, p_type.warn_max_per_quarter, v_count, extract(quarter from p_draft.date_start),
        extract(year from p_draft.date_start)));
    end if;
  end if;
  if p_type.warn_max_hours_per_year is not null then
    select p_quantity + coalesce(sum(a.counted_quantity), 0) into v_total from app_public.absences a
    where a.employee_id = p_draft.employee_id and a.type_id = p_type.id and app_hidden.absence_is_active(a.status)
      and a.id is distinct from p_exclude_id
      and extract(year from a.date_start) = extract(year from p_draft.date_start);
    if v_total > p_type.warn_max_hours_per_year then
      v_warnings := v_warnings || to_jsonb(format(
        'Motif « %s » : %s sur l''année %s avec cette demande, au-delà des %s par an prévues par l''accord.',
        p_type.name, app_hidden.quantity_fr(v_total, p_type.unit), extract(year from p_draft.date_start),
        app_hidden.quantity_fr(p_type.warn_max_hours_per_year, p_type.unit)));
    end if;
  end if;
  if p_type.warn_min_duration is not null and p_type.warn_max_duration is not null then
    if p_draft.date_end + 1 < p_draft.date_start + p_type.warn_min_duration or p_draft.date_end + 1 > p_draft.date_start + p_type.warn_max_duration then
      v_warnings := v_warnings || to_jsonb(format(
        'Motif « %s » : l''accord prévoit une durée de %s à %s.', p_type.name,
        app_hidden.interval_fr(p_type.warn_min_duration), app_hidden.interval_fr(p_type.warn_max_duration)));
    end if;
  elsif p_type.warn_max_duration is not null and p_draft.date_end + 1 > p_draft.date_start + p_type.warn_max_duration then
    v_warnings := v_warnings || to_jsonb(format(
      'Motif « %s » : durée supérieure aux %s prévus par l''accord.', p_type.name,
      app_hidden.interval_fr(p_type.warn_max_duration)));
  elsif p_type.warn_min_duration is not null and p_draft.date_end + 1 < p_draft.date_start + p_type.warn_min_duration then
    v_warnings := v_warnings || to_jsonb(format(
      'Motif « %s » : durée inférieure aux %s prévus par l''accord.', p_type.name,
      app_hidden.interval_fr(p_type.warn_min_duration)));
  end if;
  if p_type.warn_min_seniority is not null
     and coalesce((select min(c.start_date) from app_public.contracts c where c.employee_id = p_draft.employee_id), p_draft.date_start)
         + p_type.warn_min_seniority > p_draft.date_start then
    v_warnings := v_warnings || to_jsonb(format(
      'Motif « %s » : moins de %s d''ancienneté au %s (condition de l''accord).', p_type.name,
      app_hidden.interval_fr(p_type.warn_min_seniority), app_hidden.fr_date(p_draft.date_start)));
  end if;
  if p_is_polyvalent then
    select c.trial_end_date into v_trial_end from app_public.contracts c
    where c.employee_id = p_draft.employee_id and c.trial_end_date is not null
      and c.start_date <= p_draft.date_end and c.trial_end_date >= p_draft.date_start
    order by c.start_date desc limit 1;
    if found then
      v_warnings := v_warnings || to_jsonb(format(
        'Absence pendant la période d''essai d''un agent polyvalent (fin de la période d''essai le %s).',
        app_hidden.fr_date(v_trial_end)));
    end if;
  end if;
  return app_hidden.rule_outcome(p_warnings => v_warnings);
end;
$$;
comment on function app_private.absence_rule_agreement_warnings(app_hidden.absence_draft, app_public.absence_types, boolean, numeric, integer) is
'SPEC Absences, declaration rule 16: the agreement rules of the type only warn, never refuse (hours per
absence, absences per civil quarter, hours per year, duration bounds, seniority, trial period of a
polyvalent agent: p_is_polyvalent). p_quantity is the count of the draft.';

create or replace function app_private.absence_rule_notice_periods(p_draft app_hidden.absence_draft,
                                                                   p_type app_public.absence_types, p_base text,
                                                                   p_notice_from timestamptz)
returns jsonb
language plpgsql stable as $$
declare
  v_warnings jsonb := '[]'::jsonb;
  v_filed_on date := app_hidden.business_date(p_notice_from);
  v_limit date;
  v_notice interval;
  v_start_at timestamptz;
begin
  if p_notice_from is null or p_type.id is null then
    return app_hidden.rule_outcome();
  end if;
  if p_type.notice_working_days is not null then
    v_limit := app_hidden.add_working_days(v_filed_on, p_type.notice_working_days, p_base);
    if p_draft.date_start < v_limit then
      v_warnings := v_warnings || to_jsonb(format(
        'Délai de prévenance de %s jours %s non respecté pour le motif « %s » : demande du %s pour le %s.',
        p_type.notice_working_days, case when p_base = 'ouvres' then 'ouvrés' else 'ouvrables' end, p_type.name,
        app_hidden.fr_date(v_filed_on), app_hidden.fr_date(p_draft.date_start)));
    end if;
  end if;
  v_notice := p_type.notice_period;
  if p_type.notice_period_long is not null
     and not exists (select 1 from app_public.absences a
                     join app_public.absence_types t on t.id = a.type_id
                     where a.employee_id = p_draft.employee_id and t.code in ('MAT', 'ADO')
                       and app_hidden.absence_is_active(a.status)
                       and a.date_end between p_draft.date_start - app_hidden.notice_follow_days() and p_draft.date_start - 1) then
    -- Parental leave that does not directly follow a maternity or adoption leave.
    v_notice := p_type.notice_period_long;
  end if;
  if v_notice is not null then
    v_start_at := (p_draft.date_start + coalesce(p_draft.start_time, case when p_draft.start_half = 'afternoon' then time '12:00' else time '00:00' end))
                  at time zone app_hidden.business_timezone();
    if p_notice_from + v_notice > v_start_at then
      v_warnings := v_warnings || to_jsonb(format(
        'Délai de prévenance de %s non respecté pour le motif « %s » : demande du %s pour le %s.',
        app_hidden.interval_fr(v_notice), p_type.name, app_hidden.fr_date(v_filed_on), app_hidden.fr_date(p_draft.date_start)));
    end if;
  end if;
  return app_hidden.rule_outcome(p_warnings => v_warnings);
end;
$$;
comment on function app_private.absence_rule_notice_periods(app_hidden.absence_draft, app_public.absence_types, text, timestamptz) is
'SPEC Absences, declaration rule 16: the notice periods of the type (working days on base p_base, or a
duration; parental leave takes the long one unless it directly follows a maternity or adoption leave)
come out as warnings, for an employee''s own request only (p_notice_from: when it was filed; null: none).';

create or replace function app_private.absence_rule_event_conflicts(p_draft app_hidden.absence_draft, p_period tsrange)
returns jsonb
language plpgsql stable as $$
declare
  v_events jsonb := app_private.absence_event_conflicts(p_draft.employee_id, p_period);
begin
  if v_events = '[]'::jsonb then
    return app_hidden.rule_outcome() || jsonb_build_object('events', v_events);
  end if;
  return app_hidden.rule_outcome(p_warnings => (
           select coalesce(jsonb_agg(format('Conflit avec l''événement « %s » %s.', x.e ->> 'title',
                                            app_hidden.event_period_fr((x.e ->> 'start_at')::timestamptz,
                                                                       (x.e ->> 'end_at')::timestamptz))
                                     order by x.n), '[]'::jsonb)
           from jsonb_array_elements(v_events) with ordinality x(e, n)))
         || jsonb_build_object('events', v_events);
end;
$$;
comment on function app_private.absence_rule_event_conflicts(app_hidden.absence_draft, tsrange) is
'SPEC Events: an event of the employee during the absence is an alert, not a refusal: one warning per
event; "events" lists them for the alerts sent after the write.';

/*
 * Evaluates a draft against every declaration rule: reads the employee and the type once,
 * then composes the rule functions above in the order of their messages. Returns
 *   {"quantity": numeric|null, "unit": "day"|"hour"|null, "errors": {field: [msg]},
 *    "warnings": [msg], "plan": [{"counter_id", "code", "year", "quantity"}],
 *    "events": [{"id", "title", "start_at", "end_at"}]}
 * quantity is null when a rule refuses the absence (a counters error alone keeps it).
 *   p_exclude_id : the absence itself (edit, preview of a row, validation): excluded from
 *                  overlap, caps and splitting, and its own counter position is available.
 *   p_retro      : 'employee', 'manager' or null (app_private.absence_rule_retroactivity).
 *   p_notice_from: submission time of an employee's own request (notice periods), or null.
 *   p_today      : the business date.
 */
create or replace function app_private.absence_evaluate(p_draft app_hidden.absence_draft, p_exclude_id int, p_retro text,
                                             p_notice_from timestamptz, p_today date)
returns jsonb
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  d app_hidden.absence_draft := p_draft;
  v_errors jsonb;
  v_type app_public.absence_types;
  v_employee_found boolean := false;
  v_is_polyvalent boolean;
  v_base text;
  v_quantity numeric;
  v_shares jsonb;
  v_period tsrange;
  v_outcome jsonb;
  v_counters jsonb;
  v_events jsonb;
begin
  if d.employee_id is not null then
    select true, e.is_polyvalent into v_employee_found, v_is_polyvalent from app_public.employees e where e.id = d.employee_id;
  end if;
  if d.type_id is not null then
    select * into v_type from app_public.absence_types t where t.id = d.type_id and t.is_active;
  end if;
  if d.date_end is null then
    d.date_end := d.date_start;
  end if;
  v_outcome := app_hidden.outcomes_merge(array[
    app_private.absence_rule_identity(d, v_employee_found, v_type.id is not null),
    app_private.absence_rule_period(d),
    app_private.absence_rule_hourly(d, v_type),
    app_private.absence_rule_half_days(d, v_type)]);
  v_errors := v_outcome -> 'errors';

  -- Without a readable period and type, no other rule can run.
  if v_employee_found is not true or v_type.id is null or d.date_start is null
     or v_errors ?| array['date_start', 'date_end', 'start_half', 'end_half', 'start_time', 'end_time'] then
    return jsonb_build_object('quantity', null, 'unit', v_type.unit, 'errors', v_errors, 'warnings', '[]'::jsonb,
                              'plan', '[]'::jsonb, 'events', '[]'::jsonb);
  end if;

  -- Count (rules 1 and 5): app_hidden.absence_shares on the base read once, per civil year
  -- (the counters rule takes the shares instead of counting again).
  v_base := app_hidden.employee_count_base(d.employee_id);
  if v_type.unit = 'hour' then
    v_quantity := app_hidden.hours_between(d.start_time, d.end_time);
    v_shares := jsonb_build_array(jsonb_build_object('year', extract(year from d.date_start)::int, 'quantity', v_quantity));
  else
    select coalesce(sum(c.quantity), 0), coalesce(jsonb_agg(jsonb_build_object('year', c.year, 'quantity', c.quantity)), '[]'::jsonb)
      into v_quantity, v_shares
    from app_hidden.counted_days(v_base, d.date_start, d.date_end, d.start_half, d.end_half) c;
  end if;
  v_period := app_hidden.absence_period(d.date_start, d.date_end, d.start_half, d.end_half, d.start_time, d.end_time);

  -- The other rules, in the order of their messages. A rule that the type or the call rules out
  -- (its outcome would be empty) is not called: docs/architecture.md, Performance notes.
  v_counters := app_private.absence_rule_counters(d, v_type, p_exclude_id, v_shares);
  v_events := app_private.absence_rule_event_conflicts(d, v_period);
  v_outcome := app_hidden.outcomes_merge(array[
    v_outcome,
    case when v_quantity = 0 then app_private.absence_rule_count(v_quantity, v_base) end,
    case when p_retro is not null then app_private.absence_rule_retroactivity(d, p_retro, p_today) end,
    app_private.absence_rule_contract_types(d, v_type),
    app_private.absence_rule_overlap(d, v_period, p_exclude_id),
    case when v_type.annual_cap is not null then app_private.absence_rule_annual_cap(d, v_type, p_exclude_id) end,
    case when not v_type.splittable then app_private.absence_rule_non_splittable(d, v_type, v_base, v_period, p_exclude_id) end,
    v_counters,
    app_private.absence_rule_agreement_warnings(d, v_type, v_is_polyvalent, v_quantity, p_exclude_id),
    case when p_notice_from is not null then app_private.absence_rule_notice_periods(d, v_type, v_base, p_notice_from) end,
    v_events]);
  v_errors := v_outcome -> 'errors';

  return jsonb_build_object(
    'quantity', case when exists (select 1 from jsonb_object_keys(v_errors) k where k <> 'counters') then null
                     else v_quantity end,
    'unit', v_type.unit,
    'errors', v_errors,
    'warnings', v_outcome -> 'warnings',
    'plan', v_counters -> 'plan',
    'events', v_events -> 'events');
end;
$$;
--! EndIncluded absences/rules.sql
--! Included documents/functions.sql
-- Documents: absence documents (justificatifs) and honorability certificates.
--
-- Files live in the storage directory (outside any web root); rows hold their metadata.
-- The HTTP layer streams uploads to storage, checks their type by content and their size,
-- and hands the metadata {filename, content_type, size_bytes, storage_key, sha256} to SQL
-- in the same transaction. Deleting a row queues its file in app_private.storage_garbage;
-- files are removed after commit (request handler or worker), so a rolled-back deletion
-- never loses a file. Consultation is not audited.

-- May the caller read the content of this employee's documents? The employee concerned,
-- or a holder of absences.view_absencedocument_file whose perimeter covers the record
-- (main or secondary workplace, team assignment, on-call extension).
-- Never NULL (app_private.never_null_guards): false for a caller without an employee record
-- outside the right, or for a NULL record.
create or replace function app_hidden.can_read_document_file(p_employee int) returns boolean
language sql stable as $$
  select app_hidden.is_current_employee(p_employee)
      or app_hidden.may(app_hidden.current_account_id(), 'absences.view_absencedocument_file', p_employee);
$$;

-- Employees whose absences the caller reads through /api/absences/ (SPEC, Permissions
-- rule 3): their own, and for the manager workspace the queue perimeter.
create or replace function app_hidden.absence_api_reader_ids() returns setof int
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp rows 200 as $$
begin
  return query
    select app_hidden.current_employee_id() where app_hidden.current_employee_id() is not null
    union
    select app_hidden.perimeter_employee_ids('absences.view_absence_queue');
end;
$$;

-- Errors of uploaded-file metadata under p_field ({} when fine). The HTTP layer already
-- checked the bytes; this guards every other caller of the API functions.
create or replace function app_hidden.document_metadata_errors(p_files jsonb, p_field text) returns jsonb
language plpgsql immutable as $$
declare
  v_errors jsonb := '{}'::jsonb;
  f jsonb;
begin
  if p_files is null or jsonb_typeof(p_files) = 'null' then
    return v_errors;
  end if;
  if jsonb_typeof(p_files) <> 'array' then
    return app_hidden.add_error(v_errors, p_field, 'Les fichiers se déposent dans un corps multipart/form-data.');
  end if;
  for f in select * from jsonb_array_elements(p_files) loop
    if jsonb_typeof(f) <> 'object'
       or coalesce(f ->> 'storage_key', '') !~ '^[0-9a-f]{32}$'
       or coalesce(f ->> 'sha256', '') !~ '^[0-9a-f]{64}$'
       or length(coalesce(f ->> 'filename', '')) not between 1 and 255
       or coalesce(f ->> 'size_bytes', '') !~ '^[0-9]{1,9}$' then
      v_errors := app_hidden.add_error(v_errors, p_field, 'Fichier illisible : déposez-le de nouveau.');
    elsif f ->> 'content_type' not in ('application/pdf', 'image/jpeg', 'image/png') then
      v_errors := app_hidden.add_error(v_errors, p_field,
        'Format de fichier non accepté : seuls les fichiers PDF, JPG et PNG sont acceptés.');
    elsif (f ->> 'size_bytes')::int > app_hidden.document_max_bytes() or (f ->> 'size_bytes')::int < 1 then
      v_errors := app_hidden.add_error(v_errors, p_field, format('Fichier trop volumineux : %s Mo au plus par fichier.',
                                                                 app_hidden.document_max_bytes() / (1024 * 1024)));
    end if;
  end loop;
  return v_errors;
end;
$$;

-- Adds documents to an absence (as the caller: the insert policy applies).
create or replace function app_hidden.absence_documents_insert(p_absence_id int, p_files jsonb) returns int
language plpgsql volatile as $$
declare
  v_count int;
begin
  -- Most filings carry no document: no insert to start (and its row-level-security check).
  if p_files is null or p_files in ('null'::jsonb, '[]'::jsonb) then
    return 0;
  end if;
  insert into app_public.absence_documents (absence_id, filename, content_type, size_bytes, storage_key, sha256,
                                            uploaded_at, uploaded_by, uploaded_by_name)
  select p_absence_id, f ->> 'filename', f ->> 'content_type', (f ->> 'size_bytes')::int, f ->> 'storage_key',
         f ->> 'sha256', app_hidden.now(), app_hidden.current_account_id(),
         coalesce(app_hidden.account_display_name(app_hidden.current_account_id()), 'Inconnu')
  from jsonb_array_elements(coalesce(nullif(p_files, 'null'::jsonb), '[]'::jsonb)) f;
  get diagnostics v_count = row_count;
  return v_count;
end;
$$;

-- Files removed after commit: takes (and forgets) up to p_limit queued keys. The caller
-- removes the files before committing; if it fails, the keys stay queued.
create or replace function app_private.storage_garbage_take(p_limit int default 500) returns setof text
language sql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
  delete from app_private.storage_garbage g
  where g.storage_key in (select x.storage_key from app_private.storage_garbage x
                          order by x.queued_at limit p_limit for update skip locked)
  returning g.storage_key;
$$;

-- Stored files that no row names (the orphan sweep of the worker job purge_storage_garbage):
-- among p_keys, those of no absence document, honorability certificate or employee
-- attachment. Such files come from uploads whose commit outcome the server could not know
-- (kept, since the row may exist) or from a process killed mid-upload. plpgsql: the
-- attachments table is created after this file.
create or replace function app_private.storage_keys_unreferenced(p_keys text[]) returns setof text
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  return query
    select k.key
      from unnest(coalesce(p_keys, '{}'::text[])) as k(key)
     where k.key is not null
       and not exists (select 1 from app_public.absence_documents d where d.storage_key = k.key)
       and not exists (select 1 from app_public.honorability_certificates h where h.storage_key = k.key)
       and not exists (select 1 from app_public.employee_attachments e where e.storage_key = k.key);
end;
$$;

create or replace function app_private.tg__storage_garbage() returns trigger
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  if tg_op = 'DELETE' or old.storage_key is distinct from new.storage_key then
    insert into app_private.storage_garbage (storage_key) values (old.storage_key) on conflict do nothing;
  end if;
  return null;
end;
$$;

-- GET /api/absence-documents/<id>/file/: the metadata the handler needs to stream the file.
-- 404 when the document is outside the caller's reading (or absent), 403 when the caller
-- reads the absence but not the content.
create or replace function app_public.absence_document_file(p_id int) returns jsonb
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v record;
begin
  select d.filename, d.content_type, d.size_bytes, d.storage_key, a.employee_id into v
  from app_public.absence_documents d
  join app_public.absences a on a.id = d.absence_id
  where d.id = p_id and a.employee_id in (select app_hidden.absence_api_reader_ids());
  if not found then
    perform app_hidden.not_found('Document introuvable.', 'WN401');
  end if;
  if not app_hidden.can_read_document_file(v.employee_id) then
    perform app_hidden.forbidden('Vous n''avez pas le droit de lire le contenu de ce justificatif.', 'WF401');
  end if;
  return jsonb_build_object('filename', v.filename, 'content_type', v.content_type, 'size_bytes', v.size_bytes,
                            'storage_key', v.storage_key);
end;
$$;
comment on function app_public.absence_document_file(integer) is
'SPEC Documents and other routes, GET /api/absence-documents/<id>/file/ and Permissions rule 5: what the
HTTP handler needs to stream one absence document; 404 when the document is absent or outside what the
caller reads, 403 when the caller reads the absence but not the content.';

-- Honorability certificates ------------------------------------------------------------

create or replace function app_hidden.honorability_json(p_employee int, p_public_url text) returns jsonb
language sql stable as $$
  select jsonb_build_object('employee', h.employee_id, 'filename', h.filename, 'content_type', h.content_type,
                            'size_bytes', h.size_bytes, 'uploaded_at', h.uploaded_at, 'uploaded_by', h.uploaded_by_name)
         || case when app_hidden.can_read_document_file(h.employee_id)
                 then jsonb_build_object('file', coalesce(rtrim(p_public_url, '/'), '')
                                                 || '/api/employees/' || h.employee_id || '/honorability-certificate/file/')
                 else '{}'::jsonb end
  from app_public.honorability_certificates h
  where h.employee_id = p_employee;
$$;

-- Who deposits a certificate: the employee, the manager perimeter (queue readers, without
-- the right to read the content) and HR (employee.change_employee_record).
create or replace function app_hidden.can_deposit_honorability(p_employee int) returns boolean
language sql stable as $$
  select app_hidden.is_current_employee(p_employee)
      or app_hidden.may(app_hidden.current_account_id(), 'absences.view_absence_queue', p_employee)
      or app_hidden.may(app_hidden.current_account_id(), 'employee.change_employee_record', p_employee);
$$;

create or replace function app_hidden.honorability_target(p_employee int) returns void
language plpgsql stable as $$
begin
  -- The record must be readable (directory, own, payroll perimeter): otherwise 404.
  if not exists (select 1 from app_public.employees e where e.id = p_employee) then
    perform app_hidden.not_found('Salarié introuvable.');
  end if;
end;
$$;

-- A refusal about an employee's record (SPEC Errors: "404: row outside perimeter or a
-- colleague's row"): 404 unless the record is the caller's own or lies in the perimeter of a
-- permission the caller holds (whatever that permission is), and only then 403 with the
-- message. So a refusal never tells a caller that a record it cannot reach exists, or holds a
-- certificate.
create or replace function app_hidden.refuse_outside_or_forbid(p_employee int, p_message text, p_code text)
returns void
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  if app_hidden.is_current_employee(p_employee)
     or exists (select 1 from app_public.permissions p
                where app_hidden.may(app_hidden.current_account_id(), p.code, p_employee)) then
    perform app_hidden.forbidden(p_message, p_code);
  end if;
  perform app_hidden.not_found('Salarié introuvable dans votre périmètre.');
end;
$$;

-- GET /api/employees/<id>/honorability-certificate/
create or replace function app_public.honorability_certificate_get(p_employee int, p_public_url text default null) returns jsonb
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v jsonb;
begin
  perform app_hidden.honorability_target(p_employee);
  v := app_hidden.honorability_json(p_employee, p_public_url);
  if v is null then
    perform app_hidden.not_found('Aucune attestation d''honorabilité n''a été déposée pour ce salarié.', 'WN402');
  end if;
  return v;
end;
$$;
comment on function app_public.honorability_certificate_get(integer, text) is
'SPEC Documents, GET /api/employees/<id>/honorability-certificate/: the metadata of the employee''s
honorability certificate (the file key only for readers of the content, Permissions rule 5); 404 when
the record is not readable or no certificate was deposited.';

-- PUT /api/employees/<id>/honorability-certificate/ (multipart, one file under `file`).
-- p_file: the stored files' metadata the multipart reader lists under "file" (SQL accepts
-- only files of this request, sql/documents/uploads.sql).
drop function if exists app_public.honorability_certificate_put(int, jsonb, text);
create or replace function app_public.honorability_certificate_put(p_employee int, p_file jsonb, p_public_url text default null)
returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_errors jsonb;
  f jsonb := nullif(p_file, 'null'::jsonb);
begin
  perform app_hidden.honorability_target(p_employee);
  if not app_hidden.can_deposit_honorability(p_employee) then
    perform app_hidden.refuse_outside_or_forbid(p_employee,
      'Vous n''avez pas le droit de déposer l''attestation d''honorabilité de ce salarié.', 'WF402');
  end if;
  v_errors := app_hidden.document_metadata_errors(f, 'file');
  if v_errors = '{}'::jsonb and (f is null or jsonb_typeof(f) <> 'array' or jsonb_array_length(f) <> 1) then
    v_errors := app_hidden.add_error(v_errors, 'file', 'Déposez exactement un fichier (PDF, JPG ou PNG).');
  end if;
  perform app_hidden.raise_errors(v_errors);
  f := f -> 0;
  insert into app_public.honorability_certificates (employee_id, filename, content_type, size_bytes, storage_key,
                                                    sha256, uploaded_at, uploaded_by, uploaded_by_name)
  values (p_employee, f ->> 'filename', f ->> 'content_type', (f ->> 'size_bytes')::int, f ->> 'storage_key',
          f ->> 'sha256', app_hidden.now(), app_hidden.current_account_id(),
          coalesce(app_hidden.account_display_name(app_hidden.current_account_id()), 'Inconnu'))
  on conflict (employee_id) do update
    set filename = excluded.filename, content_type = excluded.content_type, size_bytes = excluded.size_bytes,
        storage_key = excluded.storage_key, sha256 = excluded.sha256, uploaded_at = excluded.uploaded_at,
        uploaded_by = excluded.uploaded_by, uploaded_by_name = excluded.uploaded_by_name;
  return app_hidden.honorability_json(p_employee, p_public_url);
end;
$$;
comment on function app_public.honorability_certificate_put(integer, jsonb, text) is
'SPEC Documents and Limits, PUT /api/employees/<id>/honorability-certificate/: deposits or replaces the
honorability certificate of an employee (exactly one PDF, JPG or PNG file); without the right to
deposit, 404 outside the caller''s perimeter and 403 inside it. Returns the certificate.';

-- DELETE /api/employees/<id>/honorability-certificate/
create or replace function app_public.honorability_certificate_delete(p_employee int) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  perform app_hidden.honorability_target(p_employee);
  if not app_hidden.can_deposit_honorability(p_employee) then
    perform app_hidden.refuse_outside_or_forbid(p_employee,
      'Vous n''avez pas le droit de retirer l''attestation d''honorabilité de ce salarié.', 'WF402');
  end if;
  if not exists (select 1 from app_public.honorability_certificates h where h.employee_id = p_employee) then
    perform app_hidden.not_found('Aucune attestation d''honorabilité n''a été déposée pour ce salarié.', 'WN402');
  end if;
  delete from app_public.honorability_certificates h where h.employee_id = p_employee;
  return null;
end;
$$;
comment on function app_public.honorability_certificate_delete(integer) is
'SPEC Documents, DELETE /api/employees/<id>/honorability-certificate/: removes the honorability
certificate of an employee (its file is deleted after commit); same refusals as the deposit, 404 when
none was deposited.';

-- GET /api/employees/<id>/honorability-certificate/file/
create or replace function app_public.honorability_certificate_file(p_employee int) returns jsonb
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v app_public.honorability_certificates;
begin
  perform app_hidden.honorability_target(p_employee);
  -- A reader without the right: 404 outside its perimeter, 403 inside, in both cases before
  -- saying whether a certificate exists.
  if not app_hidden.can_read_document_file(p_employee) then
    perform app_hidden.refuse_outside_or_forbid(p_employee,
      'Vous n''avez pas le droit de lire le contenu de cette attestation.', 'WF401');
  end if;
  select * into v from app_public.honorability_certificates h where h.employee_id = p_employee;
  if not found then
    perform app_hidden.not_found('Aucune attestation d''honorabilité n''a été déposée pour ce salarié.', 'WN402');
  end if;
  return jsonb_build_object('filename', v.filename, 'content_type', v.content_type, 'size_bytes', v.size_bytes,
                            'storage_key', v.storage_key);
end;
$$;
comment on function app_public.honorability_certificate_file(integer) is
'SPEC Documents and other routes, GET /api/employees/<id>/honorability-certificate/file/ and Permissions
rule 5: what the HTTP handler needs to stream the certificate; a reader without the right gets 404
outside its perimeter and 403 inside it, before learning whether a certificate exists.';

-- The request handlers purge the files of a request right after its commit, as the
-- authenticator (no acting account); the worker purges what they could not.
grant execute on function app_private.storage_garbage_take(int) to wfm_authenticator;
--! EndIncluded documents/functions.sql
--! Included absences/api.sql
-- The absence API (/api/absences/): one function per route and per state transition.
-- Each runs as wfm_api (security definer): reads and writes go through the policies, so a
-- row outside the caller's perimeter is simply not found. Rules live in
-- app_private.absence_evaluate (declaration rules) and app_private.absence_sync_counters
-- (counter journal); notifications go through the notification service in the same
-- transaction (a failed notification aborts the write).

-- Texts ---------------------------------------------------------------------------------

-- "« Congés payés » du 20/11/2026 au 24/11/2026"
-- (plpgsql: its plan is kept by the connection; a security definer SQL function is planned at
-- each call.)
create or replace function app_hidden.absence_subject(p_absence app_public.absences) returns text
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  return (select format('« %s » %s', t.name,
                        app_hidden.absence_period_fr(p_absence.date_start, p_absence.date_end, p_absence.start_half,
                                                     p_absence.end_half, p_absence.start_time, p_absence.end_time))
          from app_public.absence_types t where t.id = p_absence.type_id);
end;
$$;

-- Guards shared by the transitions ------------------------------------------------------

-- The absence, locked, as the caller may write it (outside: 404).
create or replace function app_hidden.absence_lock(p_id int) returns app_public.absences
language plpgsql volatile as $$
declare
  v app_public.absences;
begin
  select * into v from app_public.absences a
  where a.id = p_id and a.employee_id in (select app_hidden.absence_api_reader_ids())
  for update;
  if not found then
    perform app_hidden.not_found('Absence introuvable.', 'WN201');
  end if;
  return v;
end;
$$;

-- A decision sends the version it read; a stale one answers 409 before any other check.
create or replace function app_hidden.absence_check_version(p_absence app_public.absences, p_version int, p_required boolean)
returns void
language plpgsql stable as $$
begin
  if p_version is not null then
    if p_version <> p_absence.version then
      perform app_hidden.conflict(
        'Quelqu''un d''autre a déjà traité cette absence (version périmée) : rechargez la file et recommencez.', 'WC201');
    end if;
  elsif p_required then
    perform app_hidden.invalid('version', 'Ce champ est obligatoire.');
  end if;
end;
$$;

drop function if exists app_hidden.absence_check_version(app_public.absences, jsonb, boolean);

-- A comment or a reason over the limit of sql/core/input_contract.sql: the route schema
-- refuses it first; a GraphQL caller gets the same answer under the field.
create or replace function app_hidden.absence_check_text_length(p_field text, p_value text) returns void
language plpgsql immutable as $$
begin
  if char_length(p_value) > app_hidden.comment_max_length() then
    perform app_hidden.invalid(p_field, app_hidden.max_length_message(app_hidden.comment_max_length()));
  end if;
end;
$$;

-- The caller decides absences of this employee: the permission through a role, the
-- perimeter, and never their own request.
create or replace function app_hidden.absence_check_decider(p_absence app_public.absences) returns void
language plpgsql stable as $$
begin
  if not app_hidden.current_account_has('absences.decide_absence') then
    perform app_hidden.forbidden('Votre rôle ne permet pas de décider des demandes d''absence.', 'WF201');
  end if;
  if not app_hidden.may(app_hidden.current_account_id(), 'absences.decide_absence', p_absence.employee_id) then
    perform app_hidden.forbidden('Ce salarié est hors de votre périmètre de décision.', 'WF201');
  end if;
  if p_absence.employee_id = app_hidden.current_employee_id() then
    perform app_hidden.forbidden('Vous ne pouvez pas décider de votre propre demande d''absence.', 'WF202');
  end if;
end;
$$;

-- Whether the caller decides the absences of this employee, as absence_check_decider rules:
-- the right over the employee's perimeter, never on its own absence. Never NULL. Read by the
-- decision panel's hint (below) and the back-office's abilities (sql/backoffice/absences.sql).
create or replace function app_hidden.may_decide_absence_of(p_employee int) returns boolean
language sql stable as $$
  select coalesce(app_hidden.may(app_hidden.current_account_id(), 'absences.decide_absence', p_employee)
                  and app_hidden.is_current_employee(p_employee) is false, false);
$$;

-- The hint of the decision panel (GET detail's can_decide): would a decision of the caller
-- pass absence_check_decider, on a state a decision accepts (a pending request or a
-- requested cancellation)? Never NULL. The transitions check again.
create or replace function app_hidden.absence_decidable(p_absence app_public.absences) returns boolean
language sql stable as $$
  select coalesce(p_absence.status in ('pending', 'cancellation_requested')
                  and app_hidden.current_account_has('absences.decide_absence')
                  and app_hidden.may_decide_absence_of(p_absence.employee_id), false);
$$;

-- Manager-side corrections and previews of a row: never one's own absence, and only
-- inside the manager workspace's perimeter.
create or replace function app_hidden.absence_check_corrector(p_absence app_public.absences) returns void
language plpgsql stable as $$
begin
  if p_absence.employee_id = app_hidden.current_employee_id() then
    if app_hidden.current_account_has('absences.view_absence_queue') then
      perform app_hidden.forbidden(
        'Vous ne pouvez pas corriger votre propre absence : retirez-la et déposez une nouvelle demande.', 'WF204');
    end if;
    perform app_hidden.forbidden(
      'La correction d''une absence est réservée à l''encadrement : retirez votre demande en attente ou demandez l''annulation d''une absence accordée.',
      'WF203');
  end if;
  if not app_hidden.may(app_hidden.current_account_id(), 'absences.view_absence_queue', p_absence.employee_id) then
    perform app_hidden.forbidden('La correction d''une absence est réservée à l''encadrement de son périmètre.', 'WF203');
  end if;
end;
$$;

-- May the caller file for this employee? For oneself always; for another, inside the
-- decision perimeter (a declaration). Returns the error under `employee`, or null.
create or replace function app_hidden.absence_filer_error(p_employee int) returns text
language sql stable as $$
  select case
    when p_employee is null or p_employee = app_hidden.current_employee_id() then null
    when app_hidden.employee_name(p_employee) is null then 'Salarié introuvable.'
    when app_hidden.may(app_hidden.current_account_id(), 'absences.decide_absence', p_employee) then null
    when app_hidden.current_account_has('absences.decide_absence') then
      'Ce salarié n''est pas dans votre périmètre : vous ne pouvez pas déclarer d''absence pour lui.'
    else 'Vous ne pouvez déposer une absence que pour vous-même.'
  end;
$$;

-- Writes that (re)check the rules across an employee's absences (overlap, annual caps,
-- splitting) take this lock first: parallel requests for one employee then see each other
-- and answer with the rule's message instead of racing (the exclusion constraint and the
-- counter row locks stay as the last guards).
create or replace function app_hidden.absence_lock_employee(p_employee int) returns void
language sql volatile as $$
  select pg_advisory_xact_lock(hashtext('absences:employee:' || p_employee));
$$;

-- The event-versus-absence alert: the author, and the employee when different.
create or replace function app_private.absence_alert_events(p_absence app_public.absences, p_events jsonb) returns void
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  e jsonb;
  v_recipient int;
begin
  for e in select * from jsonb_array_elements(coalesce(p_events, '[]'::jsonb)) loop
    for v_recipient in
      select distinct x from unnest(array[p_absence.author_account_id,
                                          app_private.employee_account_id(p_absence.employee_id)]) x
      where x is not null
    loop
      perform app_private.notify(v_recipient, 'Conflit entre une absence et un événement',
        format('L''absence %s de %s chevauche l''événement « %s » %s.', app_hidden.absence_subject(p_absence),
               app_hidden.employee_name(p_absence.employee_id), e ->> 'title',
               app_hidden.event_period_fr((e ->> 'start_at')::timestamptz, (e ->> 'end_at')::timestamptz)),
        'warning', 'absence', p_absence.id);
    end loop;
  end loop;
end;
$$;

-- Notifies the employee concerned (when they have an account).
create or replace function app_private.absence_notify_employee(p_absence app_public.absences, p_title text, p_body text,
                                                    p_level text)
returns void
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_account int := app_private.employee_account_id(p_absence.employee_id);
begin
  if v_account is not null then
    perform app_private.notify(v_account, p_title, p_body, p_level, 'absence', p_absence.id);
  end if;
end;
$$;

-- Grants a cancellation (decision or "Supprimer l'absence"): the row stays, with status
-- cancelled; its documents are deleted; its counters are recredited; the planning no
-- longer draws it.
create or replace function app_hidden.absence_cancel(p_absence app_public.absences, p_decision boolean)
returns app_public.absences
language plpgsql volatile as $$
declare
  v app_public.absences;
begin
  perform app_private.set_audit_verb('Annulation');
  update app_public.absences a set
    status = 'cancelled',
    version = a.version + 1,
    cancelled_by = app_hidden.current_account_id(),
    cancelled_at = app_hidden.now(),
    cancellation_decided_at = case when p_decision then app_hidden.now() else a.cancellation_decided_at end,
    cancellation_decided_by = case when p_decision then app_hidden.current_account_id() else a.cancellation_decided_by end
  where a.id = p_absence.id
  returning * into v;
  perform app_private.set_audit_verb('');
  delete from app_public.absence_documents d where d.absence_id = v.id;
  perform app_private.absence_sync_counters(v.id, 'cancel');
  return v;
end;
$$;

-- The retroactive window of a decider (app_hidden.manager_retroactivity_limit), applied when a
-- decider grants a cancellation or cancels a granted absence.
create or replace function app_hidden.absence_check_decider_window(p_absence app_public.absences) returns void
language plpgsql stable as $$
declare
  v_limit date := app_hidden.manager_retroactivity_limit(app_hidden.today());
begin
  if p_absence.date_start < v_limit then
    perform app_hidden.invalid('date_start', format(
      'Cette absence commence avant le %s : elle est hors de la période sur laquelle une décision peut revenir (1er décembre de l''année précédente).',
      app_hidden.fr_date(v_limit)), 'WV213');
  end if;
end;
$$;

-- Routes --------------------------------------------------------------------------------

-- GET /api/absences/?status=&employee=&from=&to=&establishment=&type=
-- establishment: the employee's main or secondary workplace (the back-office list's filter,
-- as for day-change requests); type: the absence type. Both come last so that positional
-- calls of the first signature keep their meaning.
drop function if exists app_public.absences_list(text, int, date, date, int, int, text);
-- The list's total and page of ids, for app_public.absences_list (jsonb, GraphQL and the
-- back-office) and app_public.absences_list_text (the REST route). Neither security definer nor
-- SET: it runs as its callers (wfm_api) with their plan_cache_mode, force_generic_plan, so that
-- its statements and those of its callees (perimeter, policies) keep their plans; the lists whose
-- index depends on each call's values are EXECUTEd, that is planned with those values
-- (docs/architecture.md, Performance notes).
create or replace function app_hidden.absences_list_page(p_status text, p_employee int, p_from date, p_to date,
                                                         p_page int, p_page_size int, p_establishment int, p_type int,
                                                         out o_count int, out o_ids int[])
language plpgsql stable as $$
declare
  v_limit int;
  v_offset int;
  -- Employees whose absences the list shows; null for the whole association (no filter).
  v_readers int[] := app_hidden.absences_list_readers();
begin
  -- The whole association's queue (one state, no other filter): the same plan at every call,
  -- the total a sum of the kept counts (app_private.absence_status_counts) of that state, the
  -- page a backward index-only scan of (status, date_start, id) that stops at its limit. The
  -- checks in the order of the general statement below: page, then filters.
  if v_readers is null and p_status is not null and p_employee is null and p_from is null and p_to is null
     and p_type is null and p_establishment is null then
    v_limit := app_hidden.page_limit(p_page_size);
    v_offset := app_hidden.page_offset(p_page, p_page_size);
    perform app_hidden.absences_filters_check(p_status, null, null);
    select coalesce(sum(c.n), 0)::int into o_count
    from app_private.absence_status_counts c
    where c.status = p_status;
    o_ids := array(select a.id from app_public.absences a
                   where a.status = p_status
                   order by a.date_start desc, a.id desc
                   limit v_limit offset v_offset);
    return;
  end if;
  -- Filters and perimeter: app_hidden.absences_selection (sql/absences/export.sql), shared
  -- with the export. Filtered by state and employee only, the total is a sum of the kept counts
  -- (app_private.absence_status_counts) rather than a count of every matching row.
  if p_from is null and p_to is null and p_type is null and p_establishment is null then
    execute 'select coalesce(sum(c.n), 0)::int
             from app_private.absence_status_counts c
             where ($1 is null or c.employee_id = any ($1))
               and ($2 is null or c.status = $2)
               and ($3 is null or c.employee_id = $3)'
      into o_count using v_readers, p_status, p_employee;
  end if;
  -- Not materialized: the page alone reads the index in date order and stops at its limit
  -- (the selection's filter check still runs: an unknown status is a 400 either way).
  execute 'with visible as not materialized (
             select a.id, a.date_start
             from app_hidden.absences_selection($1, $2, $3, $4, $5, $6, $7) a
           )
           select coalesce($8, (select count(*) from visible)),
                  array(select v.id from visible v order by v.date_start desc, v.id desc
                        limit app_hidden.page_limit($9) offset app_hidden.page_offset($10, $9))'
    into o_count, o_ids
    using v_readers, p_status, p_employee, p_from, p_to, p_establishment, p_type, o_count, p_page_size, p_page;
end;
$$;

create or replace function app_public.absences_list(p_status text default null, p_employee int default null,
                                         p_from date default null, p_to date default null,
                                         p_page int default 1, p_page_size int default 50,
                                         p_public_url text default null,
                                         p_establishment int default null, p_type int default null)
returns jsonb
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp
-- force_generic_plan: for every statement it runs, nested ones included (app_hidden.absences_list_page).
set plan_cache_mode = force_generic_plan as $$
declare
  v_count int;
  v_ids int[];
begin
  select p.o_count, p.o_ids into v_count, v_ids
  from app_hidden.absences_list_page(p_status, p_employee, p_from, p_to, p_page, p_page_size, p_establishment, p_type) p;
  return jsonb_build_object('count', v_count, 'results', app_hidden.absences_json(v_ids, p_public_url, true));
end;
$$;
comment on function app_public.absences_list(text, integer, date, date, integer, integer, text, integer, integer) is
'SPEC Absences, GET /api/absences/ and Permissions rules 3 and 19: the absences the caller reads (its
own; for the manager workspace, the absences.view_absence_queue perimeter) filtered by status (an
unknown one gives 400 under status), employee, date window, establishment (main or secondary workplace)
and type, newest first; one page with the count, warnings null on every row.';

-- The same list for the REST route (GET /api/absences/): the total, and the page's records as the
-- JSON text absences_list holds under results, byte for byte (app_hidden.absences_list_json_text),
-- which the service sends as it comes (no jsonb built, printed, parsed and serialised again).
create or replace function app_public.absences_list_text(p_status text default null, p_employee int default null,
                                                         p_from date default null, p_to date default null,
                                                         p_page int default 1, p_page_size int default 50,
                                                         p_public_url text default null,
                                                         p_establishment int default null, p_type int default null,
                                                         out count int, out results text)
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp
set plan_cache_mode = force_generic_plan as $$
declare
  v_ids int[];
begin
  select p.o_count, p.o_ids into count, v_ids
  from app_hidden.absences_list_page(p_status, p_employee, p_from, p_to, p_page, p_page_size, p_establishment, p_type) p;
  results := app_hidden.absences_list_json_text(v_ids, p_public_url);
end;
$$;

-- GET /api/absences/<id>/: the record, its documents, whether the caller may decide it now
-- (can_decide), and for the employee and the queue perimeter the planned day of the first day.
create or replace function app_public.absence_get(p_id int, p_public_url text default null) returns jsonb
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v app_public.absences;
begin
  select * into v from app_public.absences a
  where a.id = p_id and a.employee_id in (select app_hidden.absence_api_reader_ids());
  if not found then
    perform app_hidden.not_found('Absence introuvable.', 'WN201');
  end if;
  return app_hidden.absence_json(v.id, p_public_url)
         || jsonb_build_object('can_decide', app_hidden.absence_decidable(v))
         || case when v.employee_id = app_hidden.current_employee_id()
                   or app_hidden.may(app_hidden.current_account_id(), 'absences.view_absence_queue', v.employee_id)
                 then jsonb_build_object('planned_day', app_hidden.planned_day_json(v.employee_id, v.date_start))
                 else '{}'::jsonb end;
end;
$$;
comment on function app_public.absence_get(integer, text) is
'SPEC Absences, GET /api/absences/<id>/: one absence the caller reads (else 404) with its documents (the
file key only for readers of the content, Permissions rule 5), whether the caller may decide it now
(can_decide) and, for the employee and the queue perimeter, the planned day of its first day.';

-- POST /api/absences/: an employee's request for themselves is born pending (deciders
-- notified); a manager's declaration for an employee of the decision perimeter is born
-- validated (nobody notified, no decision date). The author decides the state, not the role.
-- Typed arguments, one per field of the body (the route schema has checked their types);
-- the rules check what a GraphQL caller may still send (missing fields, a long comment).
drop function if exists app_public.absence_create(jsonb, text);
create or replace function app_public.absence_create(
  p_employee int, p_type int, p_date_start date, p_date_end date default null,
  p_start_half text default null, p_end_half text default null,
  p_start_time time default null, p_end_time time default null,
  p_comment text default null, p_add_documents jsonb default null, p_public_url text default null) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp
-- force_generic_plan for every statement it runs, nested ones included (docs/architecture.md, Performance notes).
set plan_cache_mode = force_generic_plan as $$
declare
  v_account int := app_hidden.current_account_id();
  v_today date := app_hidden.today();
  v_now timestamptz := app_hidden.now();
  -- A creation without date_end lies on one date (hourly types, single days).
  d app_hidden.absence_draft := row(p_employee, p_type, p_date_start, coalesce(p_date_end, p_date_start),
                                    p_start_half, p_end_half, p_start_time, p_end_time);
  v_comment text := nullif(btrim(p_comment), '');
  v_own boolean;
  v_filer_error text;
  v_eval jsonb;
  v_errors jsonb;
  v_absence app_public.absences;
  v_has_recipient boolean;
  v_subject text;
  v_name text;
begin
  v_filer_error := app_hidden.absence_filer_error(d.employee_id);
  if v_filer_error is not null then
    perform app_hidden.invalid('employee', v_filer_error, 'WV200');
  end if;
  v_own := d.employee_id = app_hidden.current_employee_id();
  if d.employee_id is not null then
    perform app_hidden.absence_lock_employee(d.employee_id);
  end if;
  v_eval := app_private.absence_evaluate(d, null, case when v_own then 'employee' else 'manager' end,
                                         case when v_own then v_now end, v_today);
  v_errors := (v_eval -> 'errors') || app_hidden.document_metadata_errors(p_add_documents, 'add_documents');
  if char_length(v_comment) > app_hidden.comment_max_length() then
    v_errors := app_hidden.add_error(v_errors, 'comment', app_hidden.max_length_message(app_hidden.comment_max_length()));
  end if;
  if v_errors <> '{}'::jsonb then
    perform app_hidden.invalid_fields(v_errors, 'WV200');
  end if;

  insert into app_public.absences (employee_id, type_id, date_start, date_end, start_half, end_half, start_time,
                                   end_time, comment, status, counted_quantity, counted_unit, author_account_id,
                                   submitted_at, warnings)
  values (d.employee_id, d.type_id, d.date_start, d.date_end, d.start_half, d.end_half, d.start_time, d.end_time,
          v_comment, case when v_own then 'pending' else 'validated' end,
          (v_eval ->> 'quantity')::numeric, v_eval ->> 'unit', v_account,
          case when v_own then v_now end, v_eval -> 'warnings')
  returning * into v_absence;

  perform app_hidden.absence_documents_insert(v_absence.id, p_add_documents);
  -- The counters' target is the plan evaluated above (no error: its counters are open, in the type's unit).
  perform app_private.absence_sync_counters(v_absence.id, 'create', v_today, v_eval -> 'plan');
  perform app_private.absence_alert_events(v_absence, v_eval -> 'events');

  if v_own then
    v_subject := app_hidden.absence_subject(v_absence);
    v_name := app_hidden.employee_name(v_absence.employee_id);
    v_has_recipient := app_private.notify_filing(
      v_absence.employee_id, v_absence.date_start, 'absences.decide_absence', v_account,
      'Nouvelle demande d''absence',
      format('%s demande une absence %s (%s).', v_name, v_subject,
             app_hidden.quantity_fr(v_absence.counted_quantity, v_absence.counted_unit)),
      'Demande d''absence sans valideur',
      format('La demande d''absence %s de %s n''a aucun valideur : aucun compte habilité à décider des absences ne couvre ce salarié. Un administrateur doit la traiter.',
             v_subject, v_name),
      'absence', v_absence.id);
  end if;

  return app_hidden.absence_json(v_absence.id, p_public_url)
         || jsonb_build_object('has_recipient', v_has_recipient);
end;
$$;
comment on function app_public.absence_create(integer, integer, date, date, text, text, time, time, text, jsonb, text) is
'SPEC Absences, POST /api/absences/ and declaration rules 1-13: files an absence. The request of an
employee for their own record is born pending (counters reserved, deciders notified); the declaration of
a manager for an employee of the decision perimeter is born validated (nobody notified): the author
decides the state, not the role. Returns the absence with its warnings.';

-- The preview answer of CONTRACT section 4.
create or replace function app_hidden.absence_preview_answer(p_eval jsonb, p_effects jsonb) returns jsonb
-- stable, like the to_char wrappers it calls: an immutable SQL function calling a stable one is never
-- inlined, and was parsed and planned at each call.
language sql stable as $$
  select jsonb_build_object(
    'quantity', app_hidden.fmt_quantity((p_eval ->> 'quantity')::numeric),
    'unit', p_eval -> 'unit',
    'counter_effects', coalesce(p_effects, '[]'::jsonb),
    'warnings', coalesce(p_eval -> 'warnings', '[]'::jsonb),
    'errors', coalesce(p_eval -> 'errors', '{}'::jsonb));
$$;

-- POST /api/absences/preview/: what a creation would do, without writing anything. Always
-- answers (errors are part of the answer). Without `employee`, the caller's own record.
-- The typed arguments of absence_create (the comment, which changes nothing, aside).
drop function if exists app_public.absence_preview(jsonb);
create or replace function app_public.absence_preview(
  p_employee int, p_type int, p_date_start date, p_date_end date default null,
  p_start_half text default null, p_end_half text default null,
  p_start_time time default null, p_end_time time default null) returns jsonb
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  d app_hidden.absence_draft := row(p_employee, p_type, p_date_start, coalesce(p_date_end, p_date_start),
                                    p_start_half, p_end_half, p_start_time, p_end_time);
  v_today date := app_hidden.today();
  v_filer_error text;
  v_own boolean;
  v_eval jsonb;
  v_bucket text;
begin
  d.employee_id := coalesce(d.employee_id, app_hidden.current_employee_id());
  v_filer_error := app_hidden.absence_filer_error(d.employee_id);
  if v_filer_error is not null then
    return app_hidden.absence_preview_answer(
      jsonb_build_object('quantity', null,
                         'unit', (select t.unit from app_public.absence_types t where t.id = d.type_id and t.is_active),
                         'warnings', '[]'::jsonb,
                         'errors', jsonb_build_object('employee', jsonb_build_array(v_filer_error))),
      '[]'::jsonb);
  end if;
  v_own := d.employee_id = app_hidden.current_employee_id();
  v_eval := app_private.absence_evaluate(d, null, case when v_own then 'employee' else 'manager' end,
                                         case when v_own then app_hidden.now() end, v_today);
  v_bucket := case when not coalesce(v_own, false) and d.date_start <= v_today then 'taken' else 'planned' end;
  return app_hidden.absence_preview_answer(v_eval, app_private.absence_counter_effects(v_eval -> 'plan', v_bucket, null));
end;
$$;
comment on function app_public.absence_preview(integer, integer, date, date, text, text, time, time) is
'SPEC Absences, POST /api/absences/preview/ and preview rules 1-4: what creating this body would do
(quantity, unit, counter_effects, warnings, errors keyed by the field to correct), writing nothing;
without employee, for the caller''s own record.';

-- The correction keys of an absence, in the order of app_hidden.absence_draft_of's arguments.
create or replace function app_hidden.absence_correction_keys() returns text[]
language sql immutable parallel safe as $$
  select array['type', 'date_start', 'date_end', 'start_half', 'end_half', 'start_time', 'end_time'];
$$;

-- POST /api/absences/<id>/preview/: what a correction would do (manager side). The row
-- excludes itself from overlap, caps and splitting; effects are the difference with what
-- it holds now. The body of a creation, typed, with the keys sent (p_sent): a key left out
-- keeps the stored value; the employee never changes.
drop function if exists app_public.absence_preview_row(int, jsonb);
create or replace function app_public.absence_preview_row(
  p_id int, p_type int default null, p_date_start date default null, p_date_end date default null,
  p_start_half text default null, p_end_half text default null, p_start_time time default null,
  p_end_time time default null, p_sent text[] default null) returns jsonb
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v app_public.absences;
  d app_hidden.absence_draft;
  v_sent text[] := app_hidden.keys_sent(p_sent, app_hidden.absence_correction_keys(),
    array[p_type is not null, p_date_start is not null, p_date_end is not null, p_start_half is not null,
          p_end_half is not null, p_start_time is not null, p_end_time is not null]);
  v_today date := app_hidden.today();
  v_eval jsonb;
  v_bucket text;
begin
  select * into v from app_public.absences a
  where a.id = p_id and a.employee_id in (select app_hidden.absence_api_reader_ids());
  if not found then
    perform app_hidden.not_found('Absence introuvable.', 'WN201');
  end if;
  perform app_hidden.absence_check_corrector(v);
  d := app_hidden.absence_draft_normalize(
    app_hidden.absence_draft_of(v, v_sent, p_type, p_date_start, p_date_end, p_start_half, p_end_half, p_start_time, p_end_time),
    v_sent, v);
  v_eval := app_private.absence_evaluate(d, v.id, 'manager',
                                         case when v.author_account_id = app_private.employee_account_id(v.employee_id)
                                              then v.submitted_at end, v_today);
  v_bucket := app_hidden.absence_counter_bucket(v.status, d.date_start, v_today);
  return app_hidden.absence_preview_answer(v_eval, app_private.absence_counter_effects(v_eval -> 'plan', v_bucket, v.id));
end;
$$;
comment on function app_public.absence_preview_row(integer, integer, date, date, text, text, time, time, text[]) is
'SPEC Absences, POST /api/absences/<id>/preview/ (manager side): what correcting this absence with the
keys sent (p_sent) would do, writing nothing; the row excludes itself from overlap, cap and splitting,
and counter effects are the difference with what it holds now.';

-- PATCH /api/absences/<id>/ (manager side): corrections of the period, the type, the hours
-- or the comment rerun every declaration rule and compensate the counters; documents may
-- be added (add_documents) and removed (remove_document_ids, which must belong to it).
-- Typed arguments with the keys sent (p_sent): a key left out keeps the stored value.
drop function if exists app_public.absence_update(int, jsonb, text);
create or replace function app_public.absence_update(
  p_id int, p_type int default null, p_date_start date default null, p_date_end date default null,
  p_start_half text default null, p_end_half text default null, p_start_time time default null,
  p_end_time time default null, p_comment text default null, p_version int default null,
  p_remove_document_ids int[] default null, p_add_documents jsonb default null, p_sent text[] default null,
  p_public_url text default null) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v app_public.absences;
  v_new app_public.absences;
  d app_hidden.absence_draft;
  v_sent text[] := app_hidden.keys_sent(p_sent, app_hidden.absence_correction_keys() || 'comment'::text,
    array[p_type is not null, p_date_start is not null, p_date_end is not null, p_start_half is not null,
          p_end_half is not null, p_start_time is not null, p_end_time is not null, p_comment is not null]);
  v_comment text := app_hidden.trimmed(p_comment);
  v_add_documents jsonb := nullif(p_add_documents, 'null'::jsonb);
  v_today date := app_hidden.today();
  v_period_changed boolean;
  v_comment_changed boolean;
  v_remove int[] := p_remove_document_ids;
  v_errors jsonb := '{}'::jsonb;
  v_eval jsonb;
  v_bad int;
begin
  v := app_hidden.absence_lock(p_id);
  perform app_hidden.absence_check_corrector(v);
  perform app_hidden.absence_check_version(v, p_version, false);

  d := app_hidden.absence_draft_normalize(
    app_hidden.absence_draft_of(v, v_sent, p_type, p_date_start, p_date_end, p_start_half, p_end_half, p_start_time, p_end_time),
    v_sent, v);
  v_period_changed := row(d.type_id, d.date_start, d.date_end, d.start_half, d.end_half, d.start_time, d.end_time)
    is distinct from row(v.type_id, v.date_start, v.date_end, v.start_half, v.end_half, v.start_time, v.end_time);
  v_comment_changed := app_hidden.sent(v_sent, 'comment', false) and v_comment is distinct from v.comment;

  if v.status in ('refused', 'cancelled') then
    perform app_hidden.invalid('status', format('Une absence %s ne se modifie plus.',
      case when v.status = 'refused' then 'refusée' else 'annulée' end), 'WV210');
  end if;
  if v.status = 'cancellation_requested' and (v_period_changed or v_comment_changed) then
    perform app_hidden.invalid('status',
      'Une demande d''annulation est en cours : décidez-la avant de corriger cette absence.', 'WV210');
  end if;
  -- Correcting, and removing a document (a medical certificate may be the proof of the
  -- absence), need the right to correct: depositing is open to the queue perimeter.
  if (v_period_changed or v_comment_changed or coalesce(cardinality(v_remove), 0) > 0)
     and not app_hidden.may(app_hidden.current_account_id(), 'absences.decide_absence', v.employee_id) then
    perform app_hidden.forbidden(
      case when v_period_changed or v_comment_changed
           then 'Votre rôle ne permet pas de corriger une absence ; vous pouvez seulement y déposer des justificatifs.'
           else 'Votre rôle ne permet pas de retirer un justificatif ; vous pouvez seulement en déposer.' end, 'WF201');
  end if;

  select x into v_bad from unnest(v_remove) x
  where not exists (select 1 from app_public.absence_documents doc where doc.id = x and doc.absence_id = v.id)
  limit 1;
  if v_bad is not null then
    v_errors := app_hidden.add_error(v_errors, 'remove_document_ids',
      format('Le document n° %s n''appartient pas à cette absence : rien n''a été modifié.', v_bad));
  end if;
  v_errors := v_errors || app_hidden.document_metadata_errors(v_add_documents, 'add_documents');
  if v_period_changed then
    perform app_hidden.absence_lock_employee(v.employee_id);
    v_eval := app_private.absence_evaluate(d, v.id, 'manager',
                                           case when v.author_account_id = app_private.employee_account_id(v.employee_id)
                                                then v.submitted_at end, v_today);
    v_errors := (v_eval -> 'errors') || v_errors;
  end if;
  if v_errors <> '{}'::jsonb then
    perform app_hidden.invalid_fields(v_errors, 'WV200');
  end if;

  if not v_period_changed and not v_comment_changed and coalesce(cardinality(v_remove), 0) = 0
     and coalesce(jsonb_array_length(v_add_documents), 0) = 0 then
    return app_hidden.absence_json(v.id, p_public_url);
  end if;

  perform app_private.set_audit_verb(case when v_period_changed or v_comment_changed then 'Correction' else 'Modification' end);
  update app_public.absences a set
    type_id = d.type_id, date_start = d.date_start, date_end = d.date_end, start_half = d.start_half,
    end_half = d.end_half, start_time = d.start_time, end_time = d.end_time,
    comment = case when v_comment_changed then v_comment else a.comment end,
    counted_quantity = case when v_period_changed then (v_eval ->> 'quantity')::numeric else a.counted_quantity end,
    counted_unit = case when v_period_changed then v_eval ->> 'unit' else a.counted_unit end,
    warnings = case when v_period_changed then v_eval -> 'warnings' else a.warnings end,
    corrected_by = case when v_period_changed or v_comment_changed then app_hidden.current_account_id() else a.corrected_by end,
    version = a.version + 1
  where a.id = v.id
  returning * into v_new;
  perform app_private.set_audit_verb('');

  delete from app_public.absence_documents doc where doc.absence_id = v.id and doc.id = any (v_remove);
  perform app_hidden.absence_documents_insert(v.id, v_add_documents);
  if v_period_changed then
    perform app_private.absence_sync_counters(v.id, 'edit', v_today);
    perform app_private.absence_alert_events(v_new, v_eval -> 'events');
  end if;
  return app_hidden.absence_json(v.id, p_public_url);
end;
$$;
comment on function app_public.absence_update(integer, integer, date, date, text, text, time, time, text, integer, integer[], jsonb, text[], text) is
'SPEC Absences, PATCH /api/absences/<id>/ and declaration rules 1-11 and 18 (manager side; an employee
gets 403): corrects the period, type, hours or comment (the keys sent, p_sent), rerunning every
declaration rule and compensating the counters, and adds (add_documents) or removes
(remove_document_ids, which must belong to it) documents. Returns the absence with its warnings and
documents.';

-- POST /api/absences/<id>/documents/ (multipart add_documents): the employee concerned
-- and the manager perimeter deposit documents on an absence that is not refused or
-- cancelled (e.g. after a missing-document reminder).
drop function if exists app_public.absence_add_documents(int, jsonb, text);
create or replace function app_public.absence_add_documents(p_id int, p_add_documents jsonb, p_public_url text default null)
returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v app_public.absences;
  v_errors jsonb;
begin
  v := app_hidden.absence_lock(p_id);
  if v.status in ('refused', 'cancelled') then
    perform app_hidden.invalid('status', format('Une absence %s ne reçoit plus de justificatif.',
      case when v.status = 'refused' then 'refusée' else 'annulée' end), 'WV210');
  end if;
  v_errors := app_hidden.document_metadata_errors(p_add_documents, 'add_documents');
  if v_errors = '{}'::jsonb and coalesce(jsonb_array_length(nullif(p_add_documents, 'null'::jsonb)), 0) = 0 then
    v_errors := app_hidden.add_error(v_errors, 'add_documents', 'Déposez au moins un fichier (PDF, JPG ou PNG).');
  end if;
  perform app_hidden.raise_errors(v_errors);
  perform app_private.set_audit_verb('Modification');
  update app_public.absences a set version = a.version + 1 where a.id = v.id;
  perform app_private.set_audit_verb('');
  perform app_hidden.absence_documents_insert(v.id, p_add_documents);
  return app_hidden.absence_json(v.id, p_public_url);
end;
$$;
comment on function app_public.absence_add_documents(integer, jsonb, text) is
'SPEC Absences, documents (Permissions rule 5, declaration rule 18): the employee concerned or the
manager perimeter deposits documents (add_documents) on an absence that is neither refused nor
cancelled, for example after a missing-document reminder. Returns the absence.';

-- DELETE /api/absences/<id>/
--   owner: a pending request is withdrawn (row erased, reservation released); any other
--          state answers 400 under status (a granted absence is cancelled on request);
--   decider of the perimeter: "Supprimer l'absence" on a granted absence cancels it (the
--          row stays, cancelled; documents deleted; counters recredited; employee told).
create or replace function app_public.absence_delete(p_id int) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v app_public.absences;
begin
  v := app_hidden.absence_lock(p_id);
  if v.employee_id = app_hidden.current_employee_id() then
    if v.status <> 'pending' then
      perform app_hidden.invalid('status', case v.status
        when 'validated' then 'Seule une demande en attente peut être retirée : une absence accordée ne se supprime pas, demandez son annulation.'
        when 'cancellation_requested' then 'Seule une demande en attente peut être retirée : l''annulation de cette absence est déjà demandée.'
        when 'refused' then 'Seule une demande en attente peut être retirée : une demande refusée reste au dossier.'
        else 'Seule une demande en attente peut être retirée : cette absence est annulée.' end, 'WV210');
    end if;
    delete from app_public.absences a where a.id = v.id;
    perform app_private.absence_sync_counters(v.id, 'withdraw');
    return null;
  end if;

  if v.status = 'pending' then
    perform app_hidden.forbidden(
      'Seul le salarié concerné peut retirer une demande en attente ; pour l''écarter, refusez-la.', 'WF206');
  end if;
  if v.status <> 'validated' then
    perform app_hidden.invalid('status', case v.status
      when 'cancellation_requested' then 'Une demande d''annulation est en cours : accordez-la ou refusez-la.'
      when 'refused' then 'Une demande refusée n''est jamais effacée.'
      else 'Cette absence est déjà annulée.' end, 'WV210');
  end if;
  perform app_hidden.absence_check_decider(v);
  perform app_hidden.absence_check_decider_window(v);
  v := app_hidden.absence_cancel(v, false);
  perform app_private.absence_notify_employee(v, 'Absence annulée',
    format('Votre absence %s a été annulée par %s.', app_hidden.absence_subject(v),
           app_hidden.account_display_name(app_hidden.current_account_id())), 'warning');
  return null;
end;
$$;
comment on function app_public.absence_delete(integer) is
'SPEC Absences, DELETE /api/absences/<id>/ and declaration rule 14: the owner withdraws a pending request
(row erased, counter reservation released; any other state gives 400 under status); a decider of the
perimeter cancels a granted absence (Supprimer l''absence: kept on file as cancelled, documents deleted,
counters recredited, employee notified).';

-- POST /api/absences/<id>/validate/ {version, date_end?, type?, start_time?, end_time?, reason?}
--   pending → validated, with an optional correction (end date, requalification, hours)
--             that reruns every declaration rule; a correction needs a reason;
--   cancellation_requested → cancelled (the cancellation is granted; it is not corrected).
-- Typed arguments, one per key of the body (an absent key is null), except the hours: they
-- stay jsonb because an absent key must be told from a null there. An absent start_time or
-- end_time keeps the stored hour, a JSON null clears it (the rules then refuse an hourly type
-- without hours), and a granted cancellation refuses a correction key sent, null included.
-- date_end and type are not nullable in the route schema: null is "not sent".
drop function if exists app_public.absence_validate(int, jsonb, text);
create or replace function app_public.absence_validate(p_id int, p_version int, p_reason text default null,
                                                      p_date_end date default null, p_type int default null,
                                                      p_start_time jsonb default null, p_end_time jsonb default null,
                                                      p_public_url text default null) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v app_public.absences;
  v_new app_public.absences;
  d app_hidden.absence_draft;
  -- The correction's keys sent (the draft functions tell a key sent from one absent): the
  -- hours when given (a JSON null included), date_end and type when not null.
  v_sent text[] := app_hidden.keys_sent(null, array['date_end', 'type', 'start_time', 'end_time'],
                                        array[p_date_end is not null, p_type is not null, p_start_time is not null,
                                              p_end_time is not null]);
  v_reason text := nullif(btrim(p_reason), '');
  v_today date := app_hidden.today();
  v_corrected boolean;
  v_eval jsonb;
begin
  v := app_hidden.absence_lock(p_id);
  perform app_hidden.absence_check_version(v, p_version, true);
  perform app_hidden.absence_check_decider(v);

  if v.status = 'cancellation_requested' then
    -- The first correction key sent, in the order of v_sent.
    if cardinality(v_sent) > 0 then
      perform app_hidden.invalid(v_sent[1], 'Une annulation ne se corrige pas : accordez-la ou refusez-la.', 'WV212');
    end if;
    perform app_hidden.absence_check_decider_window(v);
    v := app_hidden.absence_cancel(v, true);
    perform app_private.absence_notify_employee(v, 'Annulation d''absence acceptée',
      format('Votre demande d''annulation de l''absence %s a été acceptée : l''absence est annulée.',
             app_hidden.absence_subject(v)), 'info');
    return app_hidden.absence_json(v.id, p_public_url);
  end if;
  if v.status <> 'pending' then
    perform app_hidden.invalid('status', 'Seule une demande en attente peut être décidée.', 'WV210');
  end if;
  perform app_hidden.absence_check_text_length('reason', v_reason);
  -- The route schema's format time-hm, for a GraphQL caller (a JSON value of any kind).
  if not app_hidden.json_time_ok(p_start_time) then
    perform app_hidden.invalid('start_time', app_hidden.time_format_message());
  end if;
  if not app_hidden.json_time_ok(p_end_time) then
    perform app_hidden.invalid('end_time', app_hidden.time_format_message());
  end if;

  d := app_hidden.absence_draft_normalize(
    app_hidden.absence_draft_of(v, v_sent, p_type, null, p_date_end, null, null,
                                (p_start_time #>> '{}')::time, (p_end_time #>> '{}')::time),
    v_sent, v);
  v_corrected := row(d.type_id, d.date_start, d.date_end, d.start_half, d.end_half, d.start_time, d.end_time)
    is distinct from row(v.type_id, v.date_start, v.date_end, v.start_half, v.end_half, v.start_time, v.end_time);
  if v_corrected then
    if v_reason is null then
      perform app_hidden.invalid('reason',
        'Un motif est obligatoire quand la décision corrige la demande (date de fin, motif d''absence ou heures).', 'WV211');
    end if;
    perform app_hidden.absence_lock_employee(v.employee_id);
    v_eval := app_private.absence_evaluate(d, v.id, 'manager',
                                           case when v.author_account_id = app_private.employee_account_id(v.employee_id)
                                                then v.submitted_at end, v_today);
    if v_eval -> 'errors' <> '{}'::jsonb then
      perform app_hidden.invalid_fields(v_eval -> 'errors', 'WV200');
    end if;
  end if;

  perform app_private.set_audit_verb('Validation');
  update app_public.absences a set
    type_id = d.type_id, date_start = d.date_start, date_end = d.date_end, start_half = d.start_half,
    end_half = d.end_half, start_time = d.start_time, end_time = d.end_time,
    counted_quantity = case when v_corrected then (v_eval ->> 'quantity')::numeric else a.counted_quantity end,
    counted_unit = case when v_corrected then v_eval ->> 'unit' else a.counted_unit end,
    warnings = case when v_corrected then v_eval -> 'warnings' else a.warnings end,
    status = 'validated',
    decided_by = app_hidden.current_account_id(),
    decided_at = app_hidden.now(),
    decision_reason = v_reason,
    version = a.version + 1
  where a.id = v.id
  returning * into v_new;
  perform app_private.set_audit_verb('');
  perform app_private.absence_sync_counters(v.id, 'validate', v_today);
  if v_corrected then
    perform app_private.absence_alert_events(v_new, v_eval -> 'events');
  end if;
  perform app_private.absence_notify_employee(v_new, 'Demande d''absence validée',
    case when v_corrected then
      format('Votre demande d''absence %s a été validée avec modification : %s accordé(e) (%s). Motif : %s',
             app_hidden.absence_subject(v), app_hidden.absence_subject(v_new),
             app_hidden.quantity_fr(v_new.counted_quantity, v_new.counted_unit), v_reason)
    else
      format('Votre demande d''absence %s a été validée.', app_hidden.absence_subject(v_new))
      || coalesce(' Motif : ' || v_reason, '')
    end, 'info');
  return app_hidden.absence_json(v.id, p_public_url);
end;
$$;
comment on function app_public.absence_validate(integer, integer, text, date, integer, jsonb, jsonb, text) is
'SPEC Absences, POST /api/absences/<id>/validate/ and declaration rules 10, 11, 15 and 20: with the
current version (else 409), a holder of absences.decide_absence who is not the author validates a
pending absence, optionally correcting end date, type or hours (every declaration rule rerun, a reason
required), or grants a requested cancellation (cancelled, counters recredited). The requester is
notified.';

-- POST /api/absences/<id>/refuse/ {version, reason}
--   pending → refused (the reservation is released; the request stays on file);
--   cancellation_requested → validated (the cancellation is refused; counters unchanged).
drop function if exists app_public.absence_refuse(int, jsonb, text);
create or replace function app_public.absence_refuse(p_id int, p_version int, p_reason text default null,
                                                     p_public_url text default null) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v app_public.absences;
  v_reason text := nullif(btrim(p_reason), '');
begin
  v := app_hidden.absence_lock(p_id);
  perform app_hidden.absence_check_version(v, p_version, true);
  perform app_hidden.absence_check_decider(v);
  if v.status not in ('pending', 'cancellation_requested') then
    perform app_hidden.invalid('status', 'Seule une demande en attente peut être décidée.', 'WV210');
  end if;
  if v_reason is null then
    perform app_hidden.invalid('reason', 'Un refus doit être motivé : indiquez la raison.', 'WV211');
  end if;
  perform app_hidden.absence_check_text_length('reason', v_reason);

  perform app_private.set_audit_verb('Refus');
  if v.status = 'pending' then
    update app_public.absences a set
      status = 'refused', decided_by = app_hidden.current_account_id(), decided_at = app_hidden.now(),
      decision_reason = v_reason, version = a.version + 1
    where a.id = v.id
    returning * into v;
    perform app_private.set_audit_verb('');
    perform app_private.absence_sync_counters(v.id, 'refuse');
    perform app_private.absence_notify_employee(v, 'Demande d''absence refusée',
      format('Votre demande d''absence %s a été refusée. Motif : %s', app_hidden.absence_subject(v), v_reason), 'error');
  else
    update app_public.absences a set
      status = 'validated', cancellation_decided_at = app_hidden.now(),
      cancellation_decided_by = app_hidden.current_account_id(), cancellation_decision_reason = v_reason,
      version = a.version + 1
    where a.id = v.id
    returning * into v;
    perform app_private.set_audit_verb('');
    perform app_private.absence_notify_employee(v, 'Annulation d''absence refusée',
      format('Votre demande d''annulation de l''absence %s a été refusée : l''absence est maintenue. Motif : %s',
             app_hidden.absence_subject(v), v_reason), 'error');
  end if;
  return app_hidden.absence_json(v.id, p_public_url);
end;
$$;
comment on function app_public.absence_refuse(integer, integer, text, text) is
'SPEC Absences, POST /api/absences/<id>/refuse/: with the current version (else 409) and a non-empty
reason, a holder of absences.decide_absence refuses a pending absence (reservation released, the request
stays on file) or a requested cancellation (the absence stays validated, counters unchanged). The
requester is notified.';

-- POST /api/absences/<id>/request-cancellation/ {comment?, version?}: the owner of a
-- granted absence starting no earlier than app_hidden.employee_retroactivity_limit asks for
-- its cancellation. It stays drawn and counted until a decider grants it; the deciders are
-- notified.
drop function if exists app_public.absence_request_cancellation(int, jsonb, text);
create or replace function app_public.absence_request_cancellation(p_id int, p_version int default null,
                                                                   p_comment text default null,
                                                                   p_public_url text default null)
returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v app_public.absences;
  v_limit date := app_hidden.employee_retroactivity_limit(app_hidden.today());
  v_comment text := nullif(btrim(p_comment), '');
begin
  v := app_hidden.absence_lock(p_id);
  if v.employee_id is distinct from app_hidden.current_employee_id() then
    perform app_hidden.forbidden('Seul le salarié concerné peut demander l''annulation de son absence.', 'WF205');
  end if;
  perform app_hidden.absence_check_version(v, p_version, false);
  if v.status <> 'validated' then
    perform app_hidden.invalid('status', case v.status
      when 'cancellation_requested' then 'L''annulation de cette absence est déjà demandée.'
      when 'pending' then 'Seule une absence accordée peut faire l''objet d''une demande d''annulation : retirez plutôt votre demande en attente.'
      else 'Seule une absence accordée peut faire l''objet d''une demande d''annulation.' end, 'WV210');
  end if;
  if v.date_start < v_limit then
    perform app_hidden.invalid('date_start', format(
      'L''annulation ne peut plus être demandée : l''absence a commencé avant le %s (%s jours au plus).',
      app_hidden.fr_date(v_limit), app_hidden.retroactivity_days()), 'WV214');
  end if;

  perform app_hidden.absence_check_text_length('comment', v_comment);
  perform app_private.set_audit_verb('Demande d''annulation');
  update app_public.absences a set
    status = 'cancellation_requested', cancellation_comment = v_comment,
    cancellation_requested_at = app_hidden.now(), cancellation_decided_at = null, cancellation_decided_by = null,
    cancellation_decision_reason = null, version = a.version + 1
  where a.id = v.id
  returning * into v;
  perform app_private.set_audit_verb('');
  perform app_private.notify_deciders(v.employee_id, v.date_start, 'absences.decide_absence',
    app_hidden.current_account_id(), 'Demande d''annulation d''absence',
    format('%s demande l''annulation de son absence %s.', app_hidden.employee_name(v.employee_id),
           app_hidden.absence_subject(v)) || coalesce(' Commentaire : ' || v.cancellation_comment, ''),
    'absence', v.id);
  return app_hidden.absence_json(v.id, p_public_url);
end;
$$;
comment on function app_public.absence_request_cancellation(integer, integer, text, text) is
'SPEC Absences, POST /api/absences/<id>/request-cancellation/ and declaration rule 15: the owner of a
granted absence starting no earlier than the employee retroactivity limit (SPEC Limits) asks for its
cancellation; it stays drawn in the planning and counted until a decider rules, and the deciders are
notified.';
--! EndIncluded absences/api.sql
--! Included employees/helpers.sql
-- Helpers shared by the employee, referential, team, event, on-call and payroll API
-- functions: reading a JSON object field by field (a wrong type answers 400 under the field:
-- the items of the JSON lists the API functions take, contracts, team assignments and
-- members, and the back-office's own forms, sql/backoffice/), the caller's establishment scope,
-- staff status, names across RLS, search patterns. An API function's body arrives as typed
-- arguments (sql/core/arguments.sql), not through these readers.

-- A field as text: null when absent or null; 400 under the field when not a string.
create or replace function app_hidden.in_text(p_body jsonb, p_key text, p_field text default null) returns text
language plpgsql immutable as $$
declare
  v jsonb := p_body -> p_key;
begin
  if v is null or jsonb_typeof(v) = 'null' then
    return null;
  end if;
  if jsonb_typeof(v) <> 'string' then
    perform app_hidden.invalid(coalesce(p_field, p_key), 'Une chaîne de caractères est attendue.');
  end if;
  return v #>> '{}';
end;
$$;

-- A trimmed text field; an empty string counts as null.
create or replace function app_hidden.in_trimmed(p_body jsonb, p_key text, p_field text default null) returns text
language sql immutable as $$
  select nullif(btrim(app_hidden.in_text(p_body, p_key, p_field)), '');
$$;

create or replace function app_hidden.in_int(p_body jsonb, p_key text, p_field text default null) returns int
language plpgsql immutable as $$
declare
  v jsonb := p_body -> p_key;
begin
  if v is null or jsonb_typeof(v) = 'null' then
    return null;
  end if;
  if jsonb_typeof(v) <> 'number' or (v #>> '{}') !~ '^-?[0-9]{1,9}$' then
    perform app_hidden.invalid(coalesce(p_field, p_key), 'Un nombre entier est attendu.');
  end if;
  return (v #>> '{}')::int;
end;
$$;

create or replace function app_hidden.in_numeric(p_body jsonb, p_key text, p_field text default null) returns numeric
language plpgsql immutable as $$
declare
  v jsonb := p_body -> p_key;
begin
  if v is null or jsonb_typeof(v) = 'null' then
    return null;
  end if;
  if jsonb_typeof(v) = 'number' then
    return (v #>> '{}')::numeric;
  end if;
  if jsonb_typeof(v) = 'string' and (v #>> '{}') ~ '^-?[0-9]{1,6}(\.[0-9]{1,2})?$' then
    return (v #>> '{}')::numeric;
  end if;
  perform app_hidden.invalid(coalesce(p_field, p_key), 'Un nombre est attendu (par exemple 35 ou "35.00").');
end;
$$;

create or replace function app_hidden.in_bool(p_body jsonb, p_key text, p_field text default null) returns boolean
language plpgsql immutable as $$
declare
  v jsonb := p_body -> p_key;
begin
  if v is null or jsonb_typeof(v) = 'null' then
    return null;
  end if;
  if jsonb_typeof(v) <> 'boolean' then
    perform app_hidden.invalid(coalesce(p_field, p_key), 'Un booléen (true ou false) est attendu.');
  end if;
  return v::boolean;
end;
$$;

-- A date YYYY-MM-DD read from any JSON object; p_field names the field in the error.
create or replace function app_hidden.in_date(p_body jsonb, p_key text, p_field text default null) returns date
language plpgsql immutable as $$
declare
  v jsonb := p_body -> p_key;
  v_text text;
begin
  if v is null or jsonb_typeof(v) = 'null' then
    return null;
  end if;
  v_text := v #>> '{}';
  if jsonb_typeof(v) <> 'string' or v_text !~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}$' then
    perform app_hidden.invalid(coalesce(p_field, p_key), 'Date invalide : format attendu AAAA-MM-JJ.');
  end if;
  begin
    return v_text::date;
  exception when others then
    perform app_hidden.invalid(coalesce(p_field, p_key), format('Date invalide : %s n''existe pas.', v_text));
  end;
end;
$$;

drop function if exists app_hidden.in_timestamptz(jsonb, text, text);

-- A JSON array field (null when absent or null; 400 when not an array).
create or replace function app_hidden.in_array(p_body jsonb, p_key text, p_field text default null) returns jsonb
language plpgsql immutable as $$
declare
  v jsonb := p_body -> p_key;
begin
  if v is null or jsonb_typeof(v) = 'null' then
    return null;
  end if;
  if jsonb_typeof(v) <> 'array' then
    perform app_hidden.invalid(coalesce(p_field, p_key), 'Une liste est attendue.');
  end if;
  return v;
end;
$$;

-- A list of ids; duplicates are refused.
create or replace function app_hidden.in_ids(p_body jsonb, p_key text, p_field text default null) returns int[]
language plpgsql immutable as $$
declare
  v jsonb := app_hidden.in_array(p_body, p_key, p_field);
  v_ids int[];
begin
  if v is null then
    return null;
  end if;
  if exists (select 1 from jsonb_array_elements(v) x
             where jsonb_typeof(x) <> 'number' or (x #>> '{}') !~ '^[0-9]{1,9}$') then
    perform app_hidden.invalid(coalesce(p_field, p_key), 'Une liste d''identifiants (nombres entiers) est attendue.');
  end if;
  v_ids := array(select (x #>> '{}')::int from jsonb_array_elements(v) x);
  if cardinality(v_ids) <> (select count(distinct i) from unnest(v_ids) i) then
    perform app_hidden.invalid(coalesce(p_field, p_key), 'La liste contient des doublons.');
  end if;
  return v_ids;
end;
$$;

-- "%text%" for ILIKE, with the wildcards of the text escaped.
create or replace function app_hidden.like_pattern(p_search text) returns text
language sql immutable as $$
  select '%' || replace(replace(replace(btrim(p_search), '\', '\\'), '%', '\%'), '_', '\_') || '%';
$$;

-- Lower-case ASCII slug for usernames: accents removed, other characters dropped.
create or replace function app_hidden.ascii_slug(p_text text) returns text
language sql immutable as $$
  select regexp_replace(
           replace(replace(replace(replace(
             translate(lower(coalesce(p_text, '')),
                       'àáâãäåçèéêëìíîïñòóôõöùúûüýÿ’'' ',
                       'aaaaaaceeeeiiiinooooouuuuyy---'),
             'æ', 'ae'), 'œ', 'oe'), 'ß', 'ss'), '--', '-'),
           '[^a-z0-9.\-]', '', 'g');
$$;

create or replace function app_hidden.current_account_is_superuser() returns boolean
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select coalesce((select a.is_superuser and a.is_active
                   from app_public.accounts a where a.id = app_hidden.current_account_id()), false);
$$;

-- The establishments of "scope=perimeter" (null = the whole association): those on which the
-- account holds absences.view_absence_queue (encadrement) or employee.view_payroll (payroll),
-- as app_hidden.permission_scope computes them (dated role attributions, a role without
-- establishment covering everything, on-call extensions start inclusive, end exclusive);
-- for an account holding neither, its own workplaces (main, secondary, teams of the day).
create or replace function app_hidden.scope_establishment_ids(p_account int default null, p_at timestamptz default null)
returns int[]
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_account int := coalesce(p_account, app_hidden.current_account_id());
  v_at timestamptz := coalesce(p_at, app_hidden.now());
  v_queue record;
  v_payroll record;
  v_employee int;
begin
  select * into v_queue from app_hidden.permission_scope(v_account, 'absences.view_absence_queue', v_at);
  select * into v_payroll from app_hidden.permission_scope(v_account, 'employee.view_payroll', v_at);
  if v_queue.whole or v_payroll.whole then
    return null;
  end if;
  if cardinality(v_queue.establishment_ids) > 0 or cardinality(v_payroll.establishment_ids) > 0 then
    return array(select unnest(v_queue.establishment_ids) union select unnest(v_payroll.establishment_ids));
  end if;
  select a.employee_id into v_employee from app_public.accounts a where a.id = v_account and a.is_active;
  if v_employee is null then
    return '{}';
  end if;
  return array(select app_hidden.employee_establishments(v_employee, app_hidden.business_date(v_at)));
end;
$$;

-- Is the establishment within a scope (null scope = everything)?
-- Never NULL: a NULL establishment is within the whole association only.
create or replace function app_hidden.in_scope(p_establishment int, p_scope int[]) returns boolean
language sql immutable as $$
  select p_scope is null or coalesce(p_establishment = any (p_scope), false);
$$;

-- Names of employees by id, whatever the caller may read of their records: used to name the
-- participants of an event the caller sees, or the holder of an on-call period.
create or replace function app_hidden.employee_names(p_ids int[]) returns table (id int, name text)
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select e.id, e.first_name || ' ' || e.last_name from app_public.employees e where e.id = any (p_ids);
$$;

-- Display names of accounts (employee name, else username), whatever the caller may read.
create or replace function app_hidden.account_names(p_ids int[]) returns table (id int, name text)
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select a.id, coalesce(e.first_name || ' ' || e.last_name, a.username)
  from app_public.accounts a left join app_public.employees e on e.id = a.employee_id
  where a.id = any (p_ids);
$$;

-- An audit trigger for tables whose line belongs to a parent (join tables without id):
-- tg_argv[0] is the model, tg_argv[1] the column holding the target id.
create or replace function app_private.tg__audit_child() returns trigger
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_model text := tg_argv[0];
  v_column text := tg_argv[1];
begin
  if tg_op = 'INSERT' then
    perform app_private.write_audit('Creation', v_model, (to_jsonb(new) ->> v_column)::bigint, null, to_jsonb(new));
    return new;
  elsif tg_op = 'UPDATE' then
    perform app_private.write_audit(coalesce(nullif(current_setting('app.audit_verb', true), ''), 'Modification'),
                                    v_model, (to_jsonb(new) ->> v_column)::bigint, to_jsonb(old), to_jsonb(new));
    return new;
  else
    perform app_private.write_audit('Suppression', v_model, (to_jsonb(old) ->> v_column)::bigint, to_jsonb(old), null);
    return old;
  end if;
end;
$$;

-- Does the acting account cover every right this account holds (issue 11)? Its contact
-- address receives the password-reset links, so changing it hands the account over: only an
-- editor who could do everything the account does may change it. Covered when the editor is
-- a superuser, or: the account is not a superuser; staff only under a staff editor; each role
-- the account holds (active or future) is matched by an editor's role of the same or a higher
-- rank among the manager roles (Admin > RH n1 > RH n2 > DA > Manager n1 > Manager n2; Admin
-- is the only one above RH n1); and each permission the account holds (roles and explicit
-- grants), over its establishments, lies within the editor's scope of that permission (or of
-- employee.change_account_activation for employee.change_interim_account_activation).
-- Never NULL (app_private.never_null_guards): an unknown or NULL account is covered (nothing
-- to take over), no acting account covers nothing.
create or replace function app_hidden.account_rights_covered(p_account int) returns boolean
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_editor int := app_hidden.current_account_id();
  v_target app_public.accounts;
  v_now timestamptz := app_hidden.now();
  v_today date := app_hidden.today();
begin
  select * into v_target from app_public.accounts a where a.id = p_account;
  if not found then
    return true;
  end if;
  if app_hidden.current_account_is_superuser() then
    return true;
  end if;
  if v_editor is null or v_target.is_superuser
     or (v_target.is_staff and not app_hidden.current_account_is_staff()) then
    return false;
  end if;
  -- Ranks: a manager-workspace role of the account needs an editor's role ranked at least as high.
  if exists (select 1 from app_public.role_attributions ra
             join app_public.roles r on r.id = ra.role_id
             where ra.account_id = p_account and r.opens_manager_workspace and r.name <> 'Service Paie'
               and (ra.end_date is null or ra.end_date >= v_today)
               and not exists (select 1 from app_public.role_attributions er
                               join app_public.roles eroles on eroles.id = er.role_id
                               where er.account_id = v_editor and eroles.opens_manager_workspace
                                 and eroles.name <> 'Service Paie'
                                 and app_hidden.date_in(v_today, er.start_date, er.end_date)
                                 and eroles.precedence <= r.precedence)) then
    return false;
  end if;
  -- Permissions, over their establishments (a role outside the manager workspace, or without
  -- establishments, covers the whole association).
  return not exists (
    with held as (
      select rp.permission_code as permission,
             not r.opens_manager_workspace
             or not exists (select 1 from app_public.role_attribution_establishments rae where rae.attribution_id = ra.id)
               as whole,
             array(select rae.establishment_id from app_public.role_attribution_establishments rae
                   where rae.attribution_id = ra.id) as establishment_ids
      from app_public.role_attributions ra
      join app_public.roles r on r.id = ra.role_id
      join app_public.role_permissions rp on rp.role_id = ra.role_id
      where ra.account_id = p_account and (ra.end_date is null or ra.end_date >= v_today)
      union all
      select ap.permission_code, true, '{}'::int[] from app_public.account_permissions ap where ap.account_id = p_account
    )
    select 1 from held h
    where not exists (
      -- Opening any account covers opening temporary workers' accounts.
      select 1
      from unnest(case when h.permission = 'employee.change_interim_account_activation'
                       then array[h.permission, 'employee.change_account_activation'] else array[h.permission] end) q(p)
      cross join lateral app_hidden.permission_scope(v_editor, q.p, v_now) s
      where s.whole or (not h.whole and h.establishment_ids <@ s.establishment_ids)));
end;
$$;
--! EndIncluded employees/helpers.sql
--! Included employees/api.sql
-- /api/employees/: the directory (list, detail) and the employee record (create, update).
--
-- Reading (RLS of sql/org/policies.sql): holders of employee.view_employee_directory read the
-- whole directory; Service Paie reads the people of its payroll perimeter; every account
-- reads its own record. scope=perimeter restricts a list to the employees attached (main,
-- secondary workplace, team of the day) to the caller's establishments
-- (app_hidden.scope_establishment_ids: its absences.view_absence_queue or employee.view_payroll
-- perimeter, on-call extensions included; else its own workplaces).
--
-- The key social_security_number is present only for readers holding
-- employee.view_social_security_number on that employee; any write carrying the key by
-- another caller is refused (403) before anything is written.

-- JSON of employees, set-based (one statement whatever the number of ids), with the
-- caller's rights.
create or replace function app_hidden.employees_json(p_ids int[]) returns table (id int, doc jsonb)
language sql stable as $$
  with emp as (
    select e.* from app_public.employees e where e.id = any (p_ids)
  ),
  ssn_readable as (
    select x.id from app_hidden.perimeter_employee_ids('employee.view_social_security_number') x(id)
    where x.id = any (p_ids)
  ),
  secondaries as (
    select ses.employee_id, jsonb_agg(ses.establishment_id order by ses.establishment_id) as list
    from app_public.employee_secondary_establishments ses
    where ses.employee_id = any (p_ids)
    group by ses.employee_id
  ),
  assignments as (
    select ta.employee_id,
           jsonb_agg(jsonb_build_object('id', ta.id, 'team', ta.team_id, 'team_name', t.name,
                                        'start_date', ta.start_date, 'end_date', ta.end_date)
                     order by ta.start_date nulls first, ta.id) as list
    from app_public.team_assignments ta
    join app_public.teams t on t.id = ta.team_id
    where ta.employee_id = any (p_ids)
    group by ta.employee_id
  ),
  contracts as (
    select c.employee_id,
           jsonb_agg(jsonb_build_object('id', c.id, 'type', c.contract_type_id, 'type_code', ct.code,
                                        'type_name', ct.name, 'start_date', c.start_date, 'end_date', c.end_date,
                                        'trial_end_date', c.trial_end_date, 'job_title', c.job_title,
                                        'weekly_hours', app_hidden.fmt_quantity(c.weekly_hours))
                     order by c.start_date, c.id) as list
    from app_public.contracts c
    join app_public.contract_types ct on ct.id = c.contract_type_id
    where c.employee_id = any (p_ids)
    group by c.employee_id
  )
  select emp.id,
         jsonb_build_object(
           'id', emp.id,
           'first_name', emp.first_name,
           'last_name', emp.last_name,
           'name', emp.first_name || ' ' || emp.last_name,
           'professional_email', emp.professional_email,
           'birth_date', emp.birth_date,
           'is_polyvalent', emp.is_polyvalent,
           'main_establishment', emp.main_establishment_id,
           'main_establishment_name', est.name,
           'secondary_establishments', coalesce(sec.list, '[]'::jsonb),
           'teams', coalesce(asg.list, '[]'::jsonb),
           'contracts', coalesce(con.list, '[]'::jsonb),
           'account', case when acc.id is not null
                           then jsonb_build_object('id', acc.id, 'username', acc.username, 'is_active', acc.is_active) end,
           'created_at', emp.created_at,
           'updated_at', emp.updated_at)
         || case when emp.id in (select r.id from ssn_readable r)
                 then jsonb_build_object('social_security_number', ssn.social_security_number)
                 else '{}'::jsonb end
  from emp
  left join app_public.establishments est on est.id = emp.main_establishment_id
  left join app_public.employee_social_security_numbers ssn on ssn.employee_id = emp.id
  left join secondaries sec on sec.employee_id = emp.id
  left join assignments asg on asg.employee_id = emp.id
  left join contracts con on con.employee_id = emp.id
  left join app_public.accounts acc on acc.employee_id = emp.id;
$$;

-- GET /api/employees/
create or replace function app_public.employees_list(p_scope text default null, p_search text default null,
                                          p_establishment int default null, p_team int default null,
                                          p_page int default 1, p_page_size int default 50)
returns jsonb
language sql stable as $$
  with scope as (
    select app_hidden.scope_establishment_ids() as ids where p_scope = 'perimeter'
  ),
  scope_employees as (
    select x.id from scope, lateral app_hidden.employees_of_establishments(scope.ids, app_hidden.today()) x(id)
    where scope.ids is not null
  ),
  establishment_employees as (
    select x.id from app_hidden.employees_of_establishments(array[p_establishment], app_hidden.today()) x(id)
    where p_establishment is not null
  ),
  filtered as (
    select e.id, e.first_name, e.last_name
    from app_public.employees e
    where (p_scope is distinct from 'perimeter' or (select s.ids from scope s) is null
           or e.id in (select se.id from scope_employees se))
      and (p_establishment is null or e.id in (select ee.id from establishment_employees ee))
      and (p_team is null or exists (select 1 from app_public.team_assignments ta
                                     where ta.employee_id = e.id and ta.team_id = p_team
                                       and app_hidden.date_in(app_hidden.today(), ta.start_date, ta.end_date)))
      and (coalesce(btrim(p_search), '') = ''
           or e.first_name || ' ' || e.last_name ilike app_hidden.like_pattern(p_search)
           or e.last_name || ' ' || e.first_name ilike app_hidden.like_pattern(p_search)
           or e.professional_email ilike app_hidden.like_pattern(p_search))
  ),
  page as (
    select f.id, row_number() over (order by lower(f.last_name), lower(f.first_name), f.id) as ord
    from filtered f
    order by ord
    limit app_hidden.page_limit(p_page_size) offset app_hidden.page_offset(p_page, p_page_size)
  )
  select jsonb_build_object(
    'count', (select count(*) from filtered),
    'results', coalesce((select jsonb_agg(j.doc order by p.ord)
                         from page p
                         join app_hidden.employees_json(array(select pg.id from page pg)) j on j.id = p.id),
                        '[]'::jsonb));
$$;
comment on function app_public.employees_list(text, text, integer, integer, integer, integer) is
'SPEC Documents and other routes, GET /api/employees/: one page of the employee records the caller reads
(directory holders all, Service Paie its payroll perimeter, everyone their own), by name, searchable,
filtered by establishment or team of today; scope=perimeter keeps those attached to the caller''s
establishments. The social security number only for its readers.';

-- GET /api/employees/<id>/
create or replace function app_public.employee_get(p_id int) returns jsonb
language plpgsql stable as $$
declare
  v_doc jsonb;
begin
  select j.doc into v_doc from app_hidden.employees_json(array[p_id]) j;
  if v_doc is null then
    perform app_hidden.not_found('Salarié introuvable.');
  end if;
  return v_doc;
end;
$$;
comment on function app_public.employee_get(integer) is
'SPEC Permissions (employee.view_employee_directory, employee.view_social_security_number), GET
/api/employees/<id>/: one employee record the caller reads (else 404) with workplaces, teams, contracts
and account; the social security number only for its readers.';

-- The contact address of an employee's account changed: the old address is told by e-mail
-- (outbox) and the account in the application, so a takeover does not go unnoticed. (The
-- employee audit line carries the addresses before and after.)
create or replace function app_private.tell_email_changed(p_employee int, p_old text, p_new text) returns void
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_account int := app_private.employee_account_id(p_employee);
  v_by text := coalesce(app_hidden.account_display_name(app_hidden.current_account_id()), 'Inconnu');
  v_body text;
begin
  if v_account is null then
    return;
  end if;
  v_body := format('L''adresse e-mail de votre compte a été modifiée par %s le %s : %s. '
                   'Si vous n''êtes pas à l''origine de ce changement, prévenez immédiatement votre service RH.',
                   v_by, app_hidden.fr_date(app_hidden.today()), coalesce(p_new, 'aucune adresse'));
  perform app_private.notify(v_account, 'Adresse e-mail modifiée', v_body, 'warning', 'employee', p_employee);
  if p_old is not null then
    insert into app_private.email_outbox (kind, to_address, subject, body_text, account_id)
    values ('email_changed', p_old, 'Adresse e-mail de votre compte modifiée',
            E'Bonjour,\n\n' || v_body || E'\n\nCe message est envoyé à votre ancienne adresse.', v_account);
  end if;
end;
$$;

-- Opens the account of a new employee record: no usable password (null hash), the username
-- given or derived from the name (first.last, then first.last2, ...), Salarié granted by the
-- accounts trigger, and the set-password invitation queued when a professional e-mail exists.
create or replace function app_private.open_employee_account(p_employee_id int, p_username text) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_employee app_public.employees;
  v_base text;
  v_username text := p_username;
  v_suffix int := 1;
  v_account_id int;
  v_invited boolean;
begin
  select * into v_employee from app_public.employees e where e.id = p_employee_id;
  if v_username is null then
    v_base := left(trim(both '.-' from app_hidden.ascii_slug(v_employee.first_name) || '.'
                                      || app_hidden.ascii_slug(v_employee.last_name)),
                  app_hidden.username_max_length() - 10);  -- room for the suffix of a homonym
    if length(v_base) < app_hidden.username_min_length() then
      v_base := 'salarie' || p_employee_id;
    end if;
    perform pg_advisory_xact_lock(hashtext('username:' || v_base));
    v_username := v_base;
    while app_private.username_taken(v_username) loop
      v_suffix := v_suffix + 1;
      v_username := v_base || v_suffix;
    end loop;
  end if;
  insert into app_public.accounts (username, employee_id) values (v_username, p_employee_id)
  returning id into v_account_id;
  insert into app_private.account_secrets (account_id, password_hash) values (v_account_id, null);
  v_invited := app_private.queue_invitation(v_account_id);
  return jsonb_build_object('id', v_account_id, 'username', v_username, 'invitation_queued', v_invited);
end;
$$;

-- The writes of the record's lists and number, once its rules have accepted the body.

-- The number sent (null removes it).
create or replace function app_hidden.employee_ssn_write(p_id int, p_number text) returns void
language plpgsql volatile as $$
begin
  if p_number is null then
    delete from app_public.employee_social_security_numbers s where s.employee_id = p_id;
  else
    insert into app_public.employee_social_security_numbers (employee_id, social_security_number)
    values (p_id, p_number)
    on conflict (employee_id) do update set social_security_number = excluded.social_security_number
    where app_public.employee_social_security_numbers.social_security_number is distinct from excluded.social_security_number;
  end if;
end;
$$;

-- The secondary workplaces become the list sent.
create or replace function app_hidden.employee_secondary_workplaces_write(p_id int, p_secondaries int[]) returns void
language plpgsql volatile as $$
begin
  delete from app_public.employee_secondary_establishments ses
  where ses.employee_id = p_id and not ses.establishment_id = any (p_secondaries);
  insert into app_public.employee_secondary_establishments (employee_id, establishment_id)
  select p_id, s.id from unnest(p_secondaries) s(id)
  on conflict do nothing;
end;
$$;

-- The contracts become the list sent: an item with id updates that contract, an item without
-- id creates one, a contract left out is deleted.
create or replace function app_hidden.employee_contracts_write(p_id int, p_contracts jsonb) returns void
language plpgsql volatile as $$
declare
  v_item jsonb;
  v_item_id int;
begin
  delete from app_public.contracts c
  where c.employee_id = p_id
    and not c.id in (select (x ->> 'id')::int from jsonb_array_elements(p_contracts) x where x ? 'id' and x ->> 'id' is not null);
  for v_item in select x from jsonb_array_elements(p_contracts) x loop
    v_item_id := app_hidden.in_int(v_item, 'id', 'contracts');
    if v_item_id is null then
      insert into app_public.contracts (employee_id, contract_type_id, start_date, end_date, trial_end_date, job_title, weekly_hours)
      values (p_id, app_hidden.in_int(v_item, 'type'), app_hidden.in_date(v_item, 'start_date'),
              app_hidden.in_date(v_item, 'end_date'), app_hidden.in_date(v_item, 'trial_end_date'),
              app_hidden.in_trimmed(v_item, 'job_title'), app_hidden.in_numeric(v_item, 'weekly_hours'));
    else
      update app_public.contracts c
      set contract_type_id = app_hidden.in_int(v_item, 'type'), start_date = app_hidden.in_date(v_item, 'start_date'),
          end_date = app_hidden.in_date(v_item, 'end_date'), trial_end_date = app_hidden.in_date(v_item, 'trial_end_date'),
          job_title = app_hidden.in_trimmed(v_item, 'job_title'), weekly_hours = app_hidden.in_numeric(v_item, 'weekly_hours')
      where c.id = v_item_id
        and (c.contract_type_id, c.start_date, c.end_date, c.trial_end_date, c.job_title, c.weekly_hours)
            is distinct from (app_hidden.in_int(v_item, 'type'), app_hidden.in_date(v_item, 'start_date'),
                              app_hidden.in_date(v_item, 'end_date'), app_hidden.in_date(v_item, 'trial_end_date'),
                              app_hidden.in_trimmed(v_item, 'job_title'), app_hidden.in_numeric(v_item, 'weekly_hours'));
    end if;
  end loop;
end;
$$;

-- The team assignments become the list sent (same replacement as the contracts).
create or replace function app_hidden.employee_team_assignments_write(p_id int, p_teams jsonb) returns void
language plpgsql volatile as $$
declare
  v_item jsonb;
  v_item_id int;
begin
  delete from app_public.team_assignments ta
  where ta.employee_id = p_id
    and not ta.id in (select (x ->> 'id')::int from jsonb_array_elements(p_teams) x where x ? 'id' and x ->> 'id' is not null);
  for v_item in select x from jsonb_array_elements(p_teams) x loop
    v_item_id := app_hidden.in_int(v_item, 'id', 'teams');
    if v_item_id is null then
      insert into app_public.team_assignments (employee_id, team_id, start_date, end_date)
      values (p_id, app_hidden.in_int(v_item, 'team'), app_hidden.in_date(v_item, 'start_date'), app_hidden.in_date(v_item, 'end_date'));
    else
      update app_public.team_assignments ta
      set team_id = app_hidden.in_int(v_item, 'team'), start_date = app_hidden.in_date(v_item, 'start_date'),
          end_date = app_hidden.in_date(v_item, 'end_date')
      where ta.id = v_item_id
        and (ta.team_id, ta.start_date, ta.end_date)
            is distinct from (app_hidden.in_int(v_item, 'team'), app_hidden.in_date(v_item, 'start_date'),
                              app_hidden.in_date(v_item, 'end_date'));
    end if;
  end loop;
end;
$$;

-- Validation and write of the record, shared by creation (p_id null), PUT and PATCH: the
-- typed values of the body (p_sent: the keys it sent; a key left out keeps the record's value,
-- the lists contracts and teams are JSON lists read item by item), each rule of
-- sql/employees/rules.sql asked, every refusal answered together (400 WV501), then the writes.
-- Runs as the API function's role (wfm_api): every write goes through the policies.
drop function if exists app_hidden.employee_save(int, jsonb, boolean);
create or replace function app_hidden.employee_save(
  p_id int, p_partial boolean, p_sent text[], p_first_name text, p_last_name text, p_professional_email text,
  p_birth_date date, p_is_polyvalent boolean, p_main_establishment int, p_secondary_establishments int[],
  p_social_security_number text, p_contracts jsonb, p_teams jsonb, p_username text) returns int
language plpgsql volatile as $$
declare
  v_creating boolean := p_id is null;
  v_scope int[] := app_hidden.perimeter_establishment_ids('employee.change_employee_record');
  v_ssn_sent boolean := app_hidden.sent(p_sent, 'social_security_number', p_social_security_number is not null);
  v_email_sent boolean := app_hidden.sent(p_sent, 'professional_email', p_professional_email is not null);
  v_birth_date_sent boolean := app_hidden.sent(p_sent, 'birth_date', p_birth_date is not null);
  v_main_sent boolean := app_hidden.sent(p_sent, 'main_establishment', p_main_establishment is not null);
  v_old app_public.employees;
  v_errors jsonb := '{}';
  v_id int := p_id;
  v_first_name text;
  v_last_name text;
  v_name_required boolean;
  v_email text;
  v_birth_date date;
  v_polyvalent boolean;
  v_main int;
  v_secondaries int[] := p_secondary_establishments;
  v_old_secondaries int[];
  v_ssn text;
  v_contracts jsonb := nullif(p_contracts, 'null'::jsonb);
  v_teams jsonb := nullif(p_teams, 'null'::jsonb);
begin
  if not v_creating then
    select * into v_old from app_public.employees e where e.id = p_id;
    if not found then
      perform app_hidden.not_found('Salarié introuvable.');
    end if;
  end if;
  -- The key itself is refused to whoever may not read the number (before anything else).
  if v_ssn_sent then
    perform app_hidden.employee_refuse_ssn_key(p_id);
  end if;
  perform app_hidden.employee_refuse_record_write(p_id);
  -- What the route schema refuses, for a caller that reaches the function without it (GraphQL).
  if app_hidden.id_list_refusal(v_secondaries) is not null then
    perform app_hidden.invalid('secondary_establishments', app_hidden.id_list_refusal(v_secondaries));
  end if;
  if jsonb_typeof(v_contracts) <> 'array' then
    perform app_hidden.invalid('contracts', 'Une liste est attendue.');
  end if;
  if jsonb_typeof(v_teams) <> 'array' then
    perform app_hidden.invalid('teams', 'Une liste est attendue.');
  end if;

  -- A name is required when creating, replacing (PUT) or sent; else the record's stays (and is
  -- checked as it is).
  v_first_name := app_hidden.trimmed(p_first_name);
  v_name_required := v_creating or not p_partial or app_hidden.sent(p_sent, 'first_name', p_first_name is not null);
  if not v_name_required then
    v_first_name := v_old.first_name;
  end if;
  v_errors := app_hidden.add_refusals(v_errors, 'first_name',
    app_hidden.employee_name_refusal(v_first_name, v_name_required, 'Le prénom est obligatoire.'));
  v_last_name := app_hidden.trimmed(p_last_name);
  v_name_required := v_creating or not p_partial or app_hidden.sent(p_sent, 'last_name', p_last_name is not null);
  if not v_name_required then
    v_last_name := v_old.last_name;
  end if;
  v_errors := app_hidden.add_refusals(v_errors, 'last_name',
    app_hidden.employee_name_refusal(v_last_name, v_name_required, 'Le nom est obligatoire.'));

  v_email := case when v_email_sent then app_hidden.trimmed(p_professional_email) else v_old.professional_email end;
  v_errors := app_hidden.add_refusals(v_errors, 'professional_email', coalesce(
    app_hidden.employee_email_refusal(case when v_email_sent then v_email end),
    app_hidden.employee_email_takeover_refusal(p_id, v_old.professional_email, v_email)));

  v_birth_date := case when v_birth_date_sent then p_birth_date else v_old.birth_date end;
  v_errors := app_hidden.add_refusals(v_errors, 'birth_date',
    app_hidden.employee_birth_date_refusal(case when v_birth_date_sent then v_birth_date end));

  v_polyvalent := coalesce(p_is_polyvalent, v_old.is_polyvalent, false);

  v_main := case when v_main_sent then p_main_establishment else v_old.main_establishment_id end;
  v_errors := app_hidden.add_refusals(v_errors, 'main_establishment', coalesce(
    app_hidden.establishment_unknown_refusal(case when v_main_sent then v_main end),
    app_hidden.employee_main_workplace_perimeter_refusal(
      v_main, v_creating or v_main is distinct from v_old.main_establishment_id, v_scope)));

  v_old_secondaries := case when v_creating then '{}'::int[]
                            else array(select ses.establishment_id from app_public.employee_secondary_establishments ses
                                       where ses.employee_id = p_id) end;
  if v_secondaries is not null then
    v_errors := app_hidden.add_refusals(v_errors, 'secondary_establishments', coalesce(
      app_hidden.employee_secondary_workplaces_unknown_refusal(v_secondaries),
      app_hidden.employee_main_not_secondary_refusal(v_main, v_secondaries),
      app_hidden.employee_secondary_workplaces_perimeter_refusal(v_secondaries, v_old_secondaries, v_scope)));
  end if;

  if v_ssn_sent then
    v_ssn := upper(replace(app_hidden.trimmed(p_social_security_number), ' ', ''));
    v_errors := app_hidden.add_refusals(v_errors, 'social_security_number', app_hidden.employee_ssn_refusal(v_ssn));
  end if;

  if app_hidden.sent(p_sent, 'username', p_username is not null) then
    v_errors := app_hidden.add_refusals(v_errors, 'username', app_hidden.employee_username_refusal(
      v_creating, case when v_creating then app_hidden.trimmed(p_username) end));
  end if;

  if v_contracts is not null then
    v_errors := app_hidden.add_error_list(v_errors, 'contracts', app_hidden.employee_contracts_refusals(p_id, v_contracts));
  end if;

  if v_teams is not null then
    v_errors := app_hidden.add_error_list(v_errors, 'teams', app_hidden.employee_team_assignments_refusals(p_id, v_teams, v_scope));
  end if;

  perform app_hidden.invalid_fields(v_errors, 'WV501') where v_errors <> '{}'::jsonb;

  -- Writes.
  if v_creating then
    insert into app_public.employees (first_name, last_name, professional_email, birth_date, is_polyvalent,
                                      main_establishment_id)
    values (v_first_name, v_last_name, v_email, v_birth_date, v_polyvalent, v_main);
    -- Not RETURNING: the new row is not yet in the snapshot the read policy consults.
    v_id := currval(pg_get_serial_sequence('app_public.employees', 'id'));
  else
    update app_public.employees e
    set first_name = v_first_name, last_name = v_last_name, professional_email = v_email,
        birth_date = v_birth_date, is_polyvalent = v_polyvalent, main_establishment_id = v_main
    where e.id = p_id
      and (e.first_name, e.last_name, e.professional_email, e.birth_date, e.is_polyvalent, e.main_establishment_id)
          is distinct from (v_first_name, v_last_name, v_email, v_birth_date, v_polyvalent, v_main);
    if v_email is distinct from v_old.professional_email then
      perform app_private.tell_email_changed(p_id, v_old.professional_email, v_email);
    end if;
  end if;
  if v_ssn_sent then
    if v_creating then
      perform app_hidden.employee_refuse_ssn_on_created_record(v_id);
    end if;
    perform app_hidden.employee_ssn_write(v_id, v_ssn);
  end if;
  if v_secondaries is not null then
    perform app_hidden.employee_secondary_workplaces_write(v_id, v_secondaries);
  end if;
  if v_contracts is not null then
    perform app_hidden.employee_contracts_write(v_id, v_contracts);
  end if;
  if v_teams is not null then
    perform app_hidden.employee_team_assignments_write(v_id, v_teams);
  end if;
  return v_id;
end;
$$;

-- POST /api/employees/: the record, its contracts and assignments, and its account (no
-- usable password; invitation queued when a professional e-mail exists). p_sent: the keys
-- the body sent (the number's key, even null, is refused to whoever may not read it).
drop function if exists app_public.employee_create(jsonb);
create or replace function app_public.employee_create(
  p_first_name text, p_last_name text, p_professional_email text default null, p_birth_date date default null,
  p_is_polyvalent boolean default null, p_main_establishment int default null, p_secondary_establishments int[] default null,
  p_social_security_number text default null, p_contracts jsonb default null, p_teams jsonb default null,
  p_username text default null, p_sent text[] default null) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_id int;
  v_account jsonb;
  v_doc jsonb;
begin
  v_id := app_hidden.employee_save(null, false, p_sent, p_first_name, p_last_name, p_professional_email, p_birth_date,
                                   p_is_polyvalent, p_main_establishment, p_secondary_establishments,
                                   p_social_security_number, p_contracts, p_teams, p_username);
  v_account := app_private.open_employee_account(v_id, app_hidden.trimmed(p_username));
  select j.doc into v_doc from app_hidden.employees_json(array[v_id]) j;
  return v_doc || jsonb_build_object('account', (v_account - 'invitation_queued') || jsonb_build_object('is_active', true),
                                     'invitation_queued', (v_account ->> 'invitation_queued')::boolean);
end;
$$;
comment on function app_public.employee_create(text, text, text, date, boolean, integer, integer[], text, jsonb, jsonb, text, text[]) is
'SPEC Permissions (employee.change_employee_record) and Authentication rule 4, POST /api/employees/: HR
creates an employee record with its contracts and team assignments, and opens its account (Salarié, no
usable password; a set-password invitation queued when a professional e-mail is given). Returns the
record with invitation_queued.';

-- PATCH /api/employees/<id>/: only the keys sent (p_sent).
drop function if exists app_public.employee_update(int, jsonb);
create or replace function app_public.employee_update(
  p_id int, p_first_name text default null, p_last_name text default null, p_professional_email text default null,
  p_birth_date date default null, p_is_polyvalent boolean default null, p_main_establishment int default null,
  p_secondary_establishments int[] default null, p_social_security_number text default null,
  p_contracts jsonb default null, p_teams jsonb default null, p_sent text[] default null) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_doc jsonb;
begin
  perform app_hidden.employee_save(p_id, true, p_sent, p_first_name, p_last_name, p_professional_email, p_birth_date,
                                   p_is_polyvalent, p_main_establishment, p_secondary_establishments,
                                   p_social_security_number, p_contracts, p_teams, null);
  select j.doc into v_doc from app_hidden.employees_json(array[p_id]) j;
  return v_doc;
end;
$$;
comment on function app_public.employee_update(integer, text, text, text, date, boolean, integer, integer[], text, jsonb, jsonb, text[]) is
'SPEC Permissions (employee.change_employee_record, employee.view_social_security_number), PATCH
/api/employees/<id>/: HR changes the keys sent (p_sent) of a record of its perimeter (a list sent replaces
contracts or team assignments; 404 outside the perimeter; the social security number key from a
non-reader gives 403).';

-- PUT /api/employees/<id>/: first_name and last_name required; other keys as PATCH (lists
-- absent stay as they are).
drop function if exists app_public.employee_replace(int, jsonb);
create or replace function app_public.employee_replace(
  p_id int, p_first_name text default null, p_last_name text default null, p_professional_email text default null,
  p_birth_date date default null, p_is_polyvalent boolean default null, p_main_establishment int default null,
  p_secondary_establishments int[] default null, p_social_security_number text default null,
  p_contracts jsonb default null, p_teams jsonb default null, p_sent text[] default null) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_doc jsonb;
begin
  perform app_hidden.employee_save(p_id, false, p_sent, p_first_name, p_last_name, p_professional_email, p_birth_date,
                                   p_is_polyvalent, p_main_establishment, p_secondary_establishments,
                                   p_social_security_number, p_contracts, p_teams, null);
  select j.doc into v_doc from app_hidden.employees_json(array[p_id]) j;
  return v_doc;
end;
$$;
comment on function app_public.employee_replace(integer, text, text, text, date, boolean, integer, integer[], text, jsonb, jsonb, text[]) is
'SPEC Permissions (employee.change_employee_record), PUT /api/employees/<id>/: as PATCH, with first_name
and last_name required; lists not sent stay as they are.';
--! EndIncluded employees/api.sql
--! Included employees/annexes.sql
-- /api/employees/<pk>/emergency-contacts/ and /api/employees/<pk>/attachments/.
-- The employee reads their own; employee.view_* holders read their perimeter; HR
-- (employee.change_*) writes. An unreadable record, or a record outside the permission's
-- perimeter, answers 404; a caller without the permission at all, 403.

create or replace function app_hidden.employee_annex_access(p_employee int, p_view_permission text, p_change_permission text,
                                                 p_write boolean)
returns void
language plpgsql stable as $$
declare
  v_me int := app_hidden.current_account_id();
begin
  if not exists (select 1 from app_public.employees e where e.id = p_employee) then
    perform app_hidden.not_found('Salarié introuvable.');
  end if;
  if p_write then
    if not app_hidden.current_account_has(p_change_permission) then
      perform app_hidden.forbidden('Vous n''avez pas le droit de modifier ces informations de la fiche salarié.', 'WF560');
    end if;
    if not app_hidden.may(v_me, p_change_permission, p_employee) then
      perform app_hidden.not_found('Salarié introuvable dans votre périmètre.');
    end if;
    return;
  end if;
  if p_employee = app_hidden.current_employee_id() then
    return;
  end if;
  if not (app_hidden.current_account_has(p_view_permission) or app_hidden.current_account_has(p_change_permission)) then
    perform app_hidden.forbidden('Vous n''avez pas le droit de lire ces informations de la fiche salarié.', 'WF560');
  end if;
  if not (app_hidden.may(v_me, p_view_permission, p_employee) or app_hidden.may(v_me, p_change_permission, p_employee)) then
    perform app_hidden.not_found('Salarié introuvable dans votre périmètre.');
  end if;
end;
$$;

-- Emergency contacts -----------------------------------------------------------------------

create or replace function app_hidden.emergency_contact_json(c app_public.employee_emergency_contacts) returns jsonb
language sql immutable as $$
  select jsonb_build_object('id', c.id, 'employee', c.employee_id, 'name', c.name, 'relationship', c.relationship,
                            'phone', c.phone, 'alternate_phone', c.alternate_phone, 'email', c.email,
                            'position', c.position);
$$;

-- Thresholds of the annexes, named once.
create or replace function app_hidden.emergency_contacts_max() returns int
language sql immutable as $$ select 10 $$;
comment on function app_hidden.emergency_contacts_max() is
'Emergency contacts: at most 10 per employee.';

-- Problems of one contact, as (field, message) pairs (texts as sent: trimmed here).
create or replace function app_hidden.emergency_contact_refusals(p_name text, p_relationship text, p_phone text,
                                                                 p_alternate_phone text, p_email text)
returns table (field text, message text)
language plpgsql immutable as $$
declare
  v_phone_pattern constant text := app_hidden.phone_pattern();
  v text;
begin
  v := app_hidden.trimmed(p_name);
  if v is null then
    return query select 'name'::text, 'Le nom du contact est obligatoire.'::text;
  elsif char_length(v) > app_hidden.name_max_length() then
    return query select 'name'::text, app_hidden.max_length_message(app_hidden.name_max_length());
  end if;
  if char_length(btrim(p_relationship)) > app_hidden.relationship_max_length() then
    return query select 'relationship'::text, app_hidden.max_length_message(app_hidden.relationship_max_length());
  end if;
  v := app_hidden.trimmed(p_phone);
  if v is null then
    return query select 'phone'::text, 'Le numéro de téléphone est obligatoire.'::text;
  elsif v !~ v_phone_pattern then
    return query select 'phone'::text, 'Numéro de téléphone invalide (exemple : 06 12 34 56 78 ou +33 6 12 34 56 78).'::text;
  end if;
  v := app_hidden.trimmed(p_alternate_phone);
  if v is not null and v !~ v_phone_pattern then
    return query select 'alternate_phone'::text, 'Numéro de téléphone invalide (exemple : 06 12 34 56 78 ou +33 6 12 34 56 78).'::text;
  end if;
  v := app_hidden.trimmed(p_email);
  if v is not null and app_hidden.email_acceptable(v) is not true then
    return query select 'email'::text, 'Adresse e-mail invalide.'::text;
  end if;
end;
$$;

-- Problems of one contact object of the list of PUT .../emergency-contacts/ (a JSON list: a
-- GraphQL caller gives it without the route schema): an object whose fields are texts, then
-- emergency_contact_refusals.
drop function if exists app_hidden.emergency_contact_problems(jsonb);
create or replace function app_hidden.emergency_contact_item_problems(p_item jsonb) returns table (field text, message text)
language plpgsql immutable as $$
declare
  v text;
  v_bad boolean := false;
begin
  if jsonb_typeof(p_item) is distinct from 'object' then
    return query select 'non_field_errors'::text, 'Un objet est attendu.'::text;
    return;
  end if;
  foreach v in array array['name', 'relationship', 'phone', 'alternate_phone', 'email'] loop
    if p_item ? v and jsonb_typeof(p_item -> v) not in ('string', 'null') then
      field := v;
      message := 'Une chaîne de caractères est attendue.';
      v_bad := true;
      return next;
    end if;
  end loop;
  if v_bad then
    return;
  end if;
  return query select * from app_hidden.emergency_contact_refusals(p_item ->> 'name', p_item ->> 'relationship', p_item ->> 'phone',
                                                                  p_item ->> 'alternate_phone', p_item ->> 'email');
end;
$$;

-- GET /api/employees/<pk>/emergency-contacts/
create or replace function app_public.emergency_contacts_list(p_employee int, p_page int default 1, p_page_size int default 50)
returns jsonb
language plpgsql stable as $$
begin
  perform app_hidden.employee_annex_access(p_employee, 'employee.view_emergency_contact',
                                           'employee.change_emergency_contact', false);
  return jsonb_build_object(
    'count', (select count(*) from app_public.employee_emergency_contacts c where c.employee_id = p_employee),
    'results', coalesce((select jsonb_agg(app_hidden.emergency_contact_json(c) order by c.position, c.id)
                         from (select * from app_public.employee_emergency_contacts c
                               where c.employee_id = p_employee
                               order by c.position, c.id
                               limit app_hidden.page_limit(p_page_size) offset app_hidden.page_offset(p_page, p_page_size)) c), '[]'::jsonb));
end;
$$;
comment on function app_public.emergency_contacts_list(integer, integer, integer) is
'SPEC Permissions, GET /api/employees/<pk>/emergency-contacts/: one page of an employee''s emergency
contacts; the employee reads their own, holders of employee.view_emergency_contact or
change_emergency_contact their perimeter (404 outside it, 403 without the permission).';

-- PUT /api/employees/<pk>/emergency-contacts/ {"contacts": [...]}: the list replaces the
-- employee's contacts, in that order (an item with id updates that contact, one without id
-- creates a contact, a contact left out is deleted); at most 10.
drop function if exists app_public.emergency_contacts_replace(int, jsonb);
create or replace function app_public.emergency_contacts_replace(p_employee int, p_contacts jsonb) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_items jsonb := nullif(p_contacts, 'null'::jsonb);
  v_item jsonb;
  v_errors jsonb := '{}';
  v_problem record;
  v_id int;
  i int;
begin
  perform app_hidden.employee_annex_access(p_employee, 'employee.view_emergency_contact',
                                           'employee.change_emergency_contact', true);
  perform pg_advisory_xact_lock(hashtext('emergency-contacts:' || p_employee));
  if v_items is null then
    perform app_hidden.invalid('contacts', 'La liste des contacts est obligatoire (une liste vide les supprime tous).', 'WV560');
  end if;
  if jsonb_typeof(v_items) <> 'array' then
    perform app_hidden.invalid('contacts', 'Une liste est attendue.');
  end if;
  if jsonb_array_length(v_items) > app_hidden.emergency_contacts_max() then
    perform app_hidden.invalid('contacts', format('Au plus %s contacts d''urgence par salarié.', app_hidden.emergency_contacts_max()), 'WV560');
  end if;
  for i in 0 .. jsonb_array_length(v_items) - 1 loop
    v_item := v_items -> i;
    for v_problem in select * from app_hidden.emergency_contact_item_problems(v_item) loop
      v_errors := app_hidden.add_error(v_errors, 'contacts', format('Contact n° %s : %s', i + 1,
        case v_problem.field when 'non_field_errors' then '' when 'name' then 'nom : ' when 'relationship' then 'lien : '
                             when 'phone' then 'téléphone : ' when 'alternate_phone' then 'autre téléphone : '
                             else 'e-mail : ' end || lower(left(v_problem.message, 1)) || substr(v_problem.message, 2)));
    end loop;
    if jsonb_typeof(v_item) = 'object' and v_item ? 'id' and jsonb_typeof(v_item -> 'id') <> 'null' then
      if jsonb_typeof(v_item -> 'id') <> 'number'
         or not exists (select 1 from app_public.employee_emergency_contacts c
                        where c.employee_id = p_employee and c.id::text = v_item ->> 'id') then
        v_errors := app_hidden.add_error(v_errors, 'contacts', format('Contact n° %s : ce contact n''appartient pas à ce salarié.', i + 1));
      end if;
    end if;
  end loop;
  perform app_hidden.invalid_fields(v_errors, 'WV560') where v_errors <> '{}'::jsonb;

  delete from app_public.employee_emergency_contacts c
  where c.employee_id = p_employee
    and not c.id::text in (select x ->> 'id' from jsonb_array_elements(v_items) x where x ->> 'id' is not null);
  for i in 0 .. jsonb_array_length(v_items) - 1 loop
    v_item := v_items -> i;
    v_id := (v_item ->> 'id')::int;
    if v_id is null then
      insert into app_public.employee_emergency_contacts (employee_id, name, relationship, phone, alternate_phone, email, position)
      values (p_employee, btrim(v_item ->> 'name'), nullif(btrim(v_item ->> 'relationship'), ''), btrim(v_item ->> 'phone'),
              nullif(btrim(v_item ->> 'alternate_phone'), ''), nullif(btrim(v_item ->> 'email'), ''), i + 1);
    else
      update app_public.employee_emergency_contacts c
      set name = btrim(v_item ->> 'name'), relationship = nullif(btrim(v_item ->> 'relationship'), ''),
          phone = btrim(v_item ->> 'phone'), alternate_phone = nullif(btrim(v_item ->> 'alternate_phone'), ''),
          email = nullif(btrim(v_item ->> 'email'), ''), position = i + 1
      where c.id = v_id
        and (c.name, c.relationship, c.phone, c.alternate_phone, c.email, c.position)
            is distinct from (btrim(v_item ->> 'name'), nullif(btrim(v_item ->> 'relationship'), ''), btrim(v_item ->> 'phone'),
                              nullif(btrim(v_item ->> 'alternate_phone'), ''), nullif(btrim(v_item ->> 'email'), ''), i + 1);
    end if;
  end loop;
  return jsonb_build_object(
    'count', (select count(*) from app_public.employee_emergency_contacts c where c.employee_id = p_employee),
    'next', null, 'previous', null,
    'results', coalesce((select jsonb_agg(app_hidden.emergency_contact_json(c) order by c.position, c.id)
                         from app_public.employee_emergency_contacts c where c.employee_id = p_employee), '[]'::jsonb));
end;
$$;
comment on function app_public.emergency_contacts_replace(integer, jsonb) is
'SPEC Permissions, PUT /api/employees/<pk>/emergency-contacts/: a holder of
employee.change_emergency_contact on the employee replaces the list in that order (an item with id
updates, one without creates, one left out is deleted; at most 10).';

-- POST /api/employees/<pk>/emergency-contacts/: adds one contact at the end of the list.
drop function if exists app_public.emergency_contact_create(int, jsonb);
create or replace function app_public.emergency_contact_create(p_employee int, p_name text, p_phone text,
                                                               p_relationship text default null, p_alternate_phone text default null,
                                                               p_email text default null) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_errors jsonb := '{}';
  v_problem record;
  v_position int;
  v_row app_public.employee_emergency_contacts;
begin
  perform app_hidden.employee_annex_access(p_employee, 'employee.view_emergency_contact',
                                           'employee.change_emergency_contact', true);
  for v_problem in select * from app_hidden.emergency_contact_refusals(p_name, p_relationship, p_phone, p_alternate_phone, p_email) loop
    v_errors := app_hidden.add_error(v_errors, v_problem.field, v_problem.message);
  end loop;
  perform app_hidden.invalid_fields(v_errors, 'WV560') where v_errors <> '{}'::jsonb;
  -- Serialise concurrent additions to the same record (the ten-contact bound holds under races).
  perform pg_advisory_xact_lock(hashtext('emergency-contacts:' || p_employee));
  select coalesce(max(c.position), 0) + 1 into v_position
  from app_public.employee_emergency_contacts c where c.employee_id = p_employee;
  if v_position > app_hidden.emergency_contacts_max() then
    perform app_hidden.invalid(null, format('Au plus %s contacts d''urgence par salarié : modifiez ou supprimez-en un.',
                                            app_hidden.emergency_contacts_max()), 'WV560');
  end if;
  insert into app_public.employee_emergency_contacts (employee_id, name, relationship, phone, alternate_phone, email, position)
  values (p_employee, btrim(p_name), app_hidden.trimmed(p_relationship), btrim(p_phone),
          app_hidden.trimmed(p_alternate_phone), app_hidden.trimmed(p_email), v_position)
  returning * into v_row;
  return app_hidden.emergency_contact_json(v_row);
end;
$$;
comment on function app_public.emergency_contact_create(integer, text, text, text, text, text) is
'SPEC Permissions, POST /api/employees/<pk>/emergency-contacts/: a holder of
employee.change_emergency_contact on the employee adds one contact at the end of the list.';

-- Attachments ------------------------------------------------------------------------------

create or replace function app_hidden.employee_attachment_json(a app_public.employee_attachments, p_public_url text) returns jsonb
language sql immutable as $$
  select jsonb_build_object(
    'id', a.id, 'employee', a.employee_id, 'title', a.title, 'filename', a.filename,
    'content_type', a.content_type, 'size_bytes', a.size_bytes, 'uploaded_at', a.uploaded_at,
    'uploaded_by', a.uploaded_by, 'uploaded_by_name', a.uploaded_by_name,
    'file', rtrim(coalesce(p_public_url, ''), '/') || format('/api/employees/%s/attachments/%s/file/', a.employee_id, a.id));
$$;

-- GET /api/employees/<pk>/attachments/
create or replace function app_public.employee_attachments_list(p_employee int, p_public_url text default null,
                                                     p_page int default 1, p_page_size int default 50)
returns jsonb
language plpgsql stable as $$
begin
  perform app_hidden.employee_annex_access(p_employee, 'employee.view_employee_attachment',
                                           'employee.change_employee_attachment', false);
  return jsonb_build_object(
    'count', (select count(*) from app_public.employee_attachments a where a.employee_id = p_employee),
    'results', coalesce((select jsonb_agg(app_hidden.employee_attachment_json(a, p_public_url) order by a.uploaded_at desc, a.id desc)
                         from (select * from app_public.employee_attachments a
                               where a.employee_id = p_employee
                               order by a.uploaded_at desc, a.id desc
                               limit app_hidden.page_limit(p_page_size) offset app_hidden.page_offset(p_page, p_page_size)) a), '[]'::jsonb));
end;
$$;
comment on function app_public.employee_attachments_list(integer, text, integer, integer) is
'SPEC Permissions, GET /api/employees/<pk>/attachments/: one page of an employee''s attachments; the
employee reads their own, holders of employee.view_employee_attachment or change_employee_attachment
their perimeter (404 outside it, 403 without the permission).';

-- POST /api/employees/<pk>/attachments/ (multipart: one file under "file", optional title).
-- p_file: the stored files' metadata the multipart reader lists under "file" (SQL accepts only
-- files of this request, sql/documents/uploads.sql).
drop function if exists app_public.employee_attachment_create(int, jsonb, text);
create or replace function app_public.employee_attachment_create(p_employee int, p_file jsonb, p_title text default null,
                                                                 p_public_url text default null)
returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_files jsonb := nullif(p_file, 'null'::jsonb);
  v_file jsonb;
  v_title text;
  v_row app_public.employee_attachments;
begin
  perform app_hidden.employee_annex_access(p_employee, 'employee.view_employee_attachment',
                                           'employee.change_employee_attachment', true);
  if jsonb_typeof(v_files) <> 'array' then
    perform app_hidden.invalid('file', 'Une liste est attendue.');
  end if;
  if v_files is null or jsonb_array_length(v_files) = 0 then
    perform app_hidden.invalid('file', 'Joignez un fichier PDF, JPG ou PNG (corps multipart/form-data, champ « file »).', 'WV560');
  elsif jsonb_array_length(v_files) > 1 then
    perform app_hidden.invalid('file', 'Une pièce jointe porte un seul fichier : déposez-les un par un.', 'WV560');
  end if;
  v_file := v_files -> 0;
  v_title := coalesce(app_hidden.trimmed(p_title), v_file ->> 'filename');
  if char_length(v_title) > app_hidden.attachment_title_max_length() then
    perform app_hidden.invalid('title', app_hidden.max_length_message(app_hidden.attachment_title_max_length()), 'WV560');
  end if;
  insert into app_public.employee_attachments (employee_id, title, filename, content_type, size_bytes, storage_key, sha256,
                                               uploaded_by, uploaded_by_name)
  values (p_employee, left(v_title, app_hidden.attachment_title_max_length()), v_file ->> 'filename', v_file ->> 'content_type', (v_file ->> 'size_bytes')::int,
          v_file ->> 'storage_key', v_file ->> 'sha256', app_hidden.current_account_id(),
          app_hidden.account_display_name(app_hidden.current_account_id()))
  returning * into v_row;
  return app_hidden.employee_attachment_json(v_row, p_public_url);
end;
$$;
comment on function app_public.employee_attachment_create(integer, jsonb, text, text) is
'SPEC Permissions, POST /api/employees/<pk>/attachments/: a holder of employee.change_employee_attachment
on the employee deposits one file with an optional title.';

-- PUT /api/employees/<pk>/attachments/<id>/ {"title"}
drop function if exists app_public.employee_attachment_update(int, int, jsonb, text);
create or replace function app_public.employee_attachment_update(p_employee int, p_id int, p_title text,
                                                                 p_public_url text default null)
returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_title text := app_hidden.trimmed(p_title);
  v_row app_public.employee_attachments;
begin
  perform app_hidden.employee_annex_access(p_employee, 'employee.view_employee_attachment',
                                           'employee.change_employee_attachment', true);
  select * into v_row from app_public.employee_attachments a where a.id = p_id and a.employee_id = p_employee for update;
  if not found then
    perform app_hidden.not_found('Pièce jointe introuvable.');
  end if;
  if v_title is null then
    perform app_hidden.invalid('title', 'Le titre est obligatoire.', 'WV560');
  elsif char_length(v_title) > app_hidden.attachment_title_max_length() then
    perform app_hidden.invalid('title', app_hidden.max_length_message(app_hidden.attachment_title_max_length()), 'WV560');
  end if;
  update app_public.employee_attachments a set title = v_title
  where a.id = p_id and a.title is distinct from v_title
  returning * into v_row;
  if not found then
    select * into v_row from app_public.employee_attachments a where a.id = p_id;
  end if;
  return app_hidden.employee_attachment_json(v_row, p_public_url);
end;
$$;
comment on function app_public.employee_attachment_update(integer, integer, text, text) is
'SPEC Permissions, PUT /api/employees/<pk>/attachments/<id>/: a holder of
employee.change_employee_attachment on the employee renames an attachment (title).';

-- DELETE /api/employees/<pk>/attachments/<id>/ (the file is removed after commit).
create or replace function app_public.employee_attachment_delete(p_employee int, p_id int) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  perform app_hidden.employee_annex_access(p_employee, 'employee.view_employee_attachment',
                                           'employee.change_employee_attachment', true);
  delete from app_public.employee_attachments a where a.id = p_id and a.employee_id = p_employee;
  if not found then
    perform app_hidden.not_found('Pièce jointe introuvable.');
  end if;
  return null;
end;
$$;
comment on function app_public.employee_attachment_delete(integer, integer) is
'SPEC Permissions, DELETE /api/employees/<pk>/attachments/<id>/: a holder of
employee.change_employee_attachment on the employee deletes an attachment; its file is removed after
commit.';

-- GET /api/employees/<pk>/attachments/<id>/file/: what the download handler needs.
create or replace function app_public.employee_attachment_file(p_employee int, p_id int) returns jsonb
language plpgsql stable as $$
declare
  v_row app_public.employee_attachments;
begin
  perform app_hidden.employee_annex_access(p_employee, 'employee.view_employee_attachment',
                                           'employee.change_employee_attachment', false);
  select * into v_row from app_public.employee_attachments a where a.id = p_id and a.employee_id = p_employee;
  if not found then
    perform app_hidden.not_found('Pièce jointe introuvable.');
  end if;
  return jsonb_build_object('filename', v_row.filename, 'content_type', v_row.content_type,
                            'size_bytes', v_row.size_bytes, 'storage_key', v_row.storage_key);
end;
$$;
comment on function app_public.employee_attachment_file(integer, integer) is
'SPEC Permissions, GET /api/employees/<pk>/attachments/<id>/file/: what the HTTP handler needs to stream
an attachment, under the reading rules of the attachment list.';
--! EndIncluded employees/annexes.sql
--! Included referentials/api.sql
-- /api/divisions/, /api/establishments/, /api/contract-types/: readable by every
-- authenticated account; written by staff accounts only (others 403). scope=perimeter
-- restricts divisions and establishments to the caller's establishments
-- (app_hidden.scope_establishment_ids).

create or replace function app_hidden.require_staff() returns void
language plpgsql stable as $$
begin
  if not app_hidden.current_account_is_staff() then
    perform app_hidden.forbidden('Les référentiels s''écrivent par les comptes du personnel d''administration uniquement.', 'WF510');
  end if;
end;
$$;

-- Where an establishment is still used, whatever the caller may read.
create or replace function app_private.establishment_usage(p_id int) returns text[]
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select array_remove(array[
    case when exists (select 1 from app_public.employees e where e.main_establishment_id = p_id)
           or exists (select 1 from app_public.employee_secondary_establishments s where s.establishment_id = p_id)
         then 'salariés' end,
    case when exists (select 1 from app_public.posts p where p.establishment_id = p_id) then 'postes' end,
    case when exists (select 1 from app_public.team_establishments t where t.establishment_id = p_id) then 'équipes' end,
    case when exists (select 1 from app_public.role_attribution_establishments r where r.establishment_id = p_id)
         then 'attributions de rôle' end,
    case when exists (select 1 from app_public.on_call_period_establishments o where o.establishment_id = p_id)
         then 'astreintes' end,
    case when exists (select 1 from app_public.events ev where ev.establishment_id = p_id) then 'événements' end
  ], null);
$$;

create or replace function app_private.contract_type_usage(p_id int) returns text[]
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select array_remove(array[
    case when exists (select 1 from app_public.contracts c where c.contract_type_id = p_id) then 'contrats' end,
    case when exists (select 1 from app_public.absence_type_contract_types a where a.contract_type_id = p_id)
         then 'motifs d''absence' end
  ], null);
$$;

-- Divisions --------------------------------------------------------------------------------

create or replace function app_hidden.divisions_json(p_ids int[]) returns table (id int, doc jsonb)
language sql stable as $$
  select d.id,
         jsonb_build_object('id', d.id, 'name', d.name,
                            'establishments', coalesce(est.list, '[]'::jsonb),
                            'created_at', d.created_at, 'updated_at', d.updated_at)
  from app_public.divisions d
  left join (select e.division_id, jsonb_agg(e.id order by e.id) as list
             from app_public.establishments e where e.division_id = any (p_ids)
             group by e.division_id) est on est.division_id = d.id
  where d.id = any (p_ids);
$$;

create or replace function app_public.divisions_list(p_scope text default null, p_page int default 1, p_page_size int default 50)
returns jsonb
language sql stable as $$
  with scope as (
    select app_hidden.scope_establishment_ids() as ids where p_scope = 'perimeter'
  ),
  filtered as (
    select d.id, d.name from app_public.divisions d
    where p_scope is distinct from 'perimeter' or (select s.ids from scope s) is null
       or exists (select 1 from app_public.establishments e
                  where e.division_id = d.id and e.id = any (coalesce((select s.ids from scope s), '{}')))
  ),
  page as (
    select f.id, row_number() over (order by lower(f.name), f.id) as ord
    from filtered f order by ord limit app_hidden.page_limit(p_page_size) offset app_hidden.page_offset(p_page, p_page_size)
  )
  select jsonb_build_object(
    'count', (select count(*) from filtered),
    'results', coalesce((select jsonb_agg(j.doc order by p.ord)
                         from page p join app_hidden.divisions_json(array(select pg.id from page pg)) j on j.id = p.id),
                        '[]'::jsonb));
$$;
comment on function app_public.divisions_list(text, integer, integer) is
'SPEC Permissions rule 6 and Documents and other routes, GET /api/divisions/: one page of the divisions
by name, each with its establishments, for every authenticated account; scope=perimeter keeps those with
an establishment in the caller''s perimeter (opt-in).';

create or replace function app_public.division_get(p_id int) returns jsonb
language plpgsql stable as $$
declare
  v_doc jsonb;
begin
  select j.doc into v_doc from app_hidden.divisions_json(array[p_id]) j;
  if v_doc is null then
    perform app_hidden.not_found('Division introuvable.');
  end if;
  return v_doc;
end;
$$;
comment on function app_public.division_get(integer) is
'SPEC Permissions rule 6, GET /api/divisions/<id>/: one division with its establishments, readable by
every authenticated account (404 when absent).';

-- The name of a division written (creation, PUT, or a PATCH that sends it): required, at most
-- name_max_length(), borne once whatever the case. Returns it trimmed.
drop function if exists app_hidden.division_name(jsonb, int);
create or replace function app_hidden.division_name(p_name text, p_id int) returns text
language plpgsql stable as $$
declare
  v_name text := app_hidden.trimmed(p_name);
begin
  if v_name is null then
    perform app_hidden.invalid('name', 'Le nom est obligatoire.', 'WV510');
  elsif char_length(v_name) > app_hidden.name_max_length() then
    perform app_hidden.invalid('name', app_hidden.max_length_message(app_hidden.name_max_length()), 'WV510');
  elsif exists (select 1 from app_public.divisions d where lower(d.name) = lower(v_name) and d.id is distinct from p_id) then
    perform app_hidden.invalid('name', format('Une division s''appelle déjà « %s ».', v_name), 'WV510');
  end if;
  return v_name;
end;
$$;

-- PUT and PATCH of a division (p_partial: only the keys sent).
create or replace function app_hidden.division_save(p_id int, p_partial boolean, p_sent text[], p_name text) returns void
language plpgsql volatile as $$
declare
  v_name text;
begin
  perform app_hidden.require_staff();
  perform 1 from app_public.divisions d where d.id = p_id for update;
  if not found then
    perform app_hidden.not_found('Division introuvable.');
  end if;
  if not p_partial or app_hidden.sent(p_sent, 'name', p_name is not null) then
    v_name := app_hidden.division_name(p_name, p_id);
    update app_public.divisions d set name = v_name where d.id = p_id and d.name is distinct from v_name;
  end if;
end;
$$;

drop function if exists app_public.division_create(jsonb);
create or replace function app_public.division_create(p_name text) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_id int;
begin
  perform app_hidden.require_staff();
  insert into app_public.divisions (name) values (app_hidden.division_name(p_name, null)) returning id into v_id;
  return app_public.division_get(v_id);
end;
$$;
comment on function app_public.division_create(text) is
'SPEC Permissions rule 6, POST /api/divisions/: a staff account creates a division (name required, at
most 150 characters, unique whatever the case); others get 403.';

-- PATCH /api/divisions/<id>/
drop function if exists app_public.division_update(int, jsonb);
create or replace function app_public.division_update(p_id int, p_name text default null, p_sent text[] default null) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  perform app_hidden.division_save(p_id, true, p_sent, p_name);
  return app_public.division_get(p_id);
end;
$$;
comment on function app_public.division_update(integer, text, text[]) is
'SPEC Permissions rule 6, PATCH /api/divisions/<id>/: a staff account renames a division (only the keys
sent, p_sent; same name rules as the creation); others get 403.';

-- PUT /api/divisions/<id>/ (name required)
drop function if exists app_public.division_replace(int, jsonb);
create or replace function app_public.division_replace(p_id int, p_name text default null, p_sent text[] default null) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  perform app_hidden.division_save(p_id, false, p_sent, p_name);
  return app_public.division_get(p_id);
end;
$$;
comment on function app_public.division_replace(integer, text, text[]) is
'SPEC Permissions rule 6, PUT /api/divisions/<id>/: a staff account rewrites a division (name required);
others get 403.';

-- Deleting a division detaches its establishments (they stay, without division).
create or replace function app_public.division_delete(p_id int) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  perform app_hidden.require_staff();
  delete from app_public.divisions d where d.id = p_id;
  if not found then
    perform app_hidden.not_found('Division introuvable.');
  end if;
  return null;
end;
$$;
comment on function app_public.division_delete(integer) is
'SPEC Permissions rule 6, DELETE /api/divisions/<id>/: a staff account deletes a division; its
establishments stay, without division. Others get 403.';

-- Establishments ---------------------------------------------------------------------------

create or replace function app_hidden.establishments_json(p_ids int[]) returns table (id int, doc jsonb)
language sql stable as $$
  select e.id,
         jsonb_build_object('id', e.id, 'name', e.name, 'count_base', e.count_base,
                            'division', e.division_id, 'division_name', d.name,
                            'created_at', e.created_at, 'updated_at', e.updated_at)
  from app_public.establishments e
  left join app_public.divisions d on d.id = e.division_id
  where e.id = any (p_ids);
$$;

create or replace function app_public.establishments_list(p_scope text default null, p_division int default null,
                                               p_page int default 1, p_page_size int default 50)
returns jsonb
language sql stable as $$
  with scope as (
    select app_hidden.scope_establishment_ids() as ids where p_scope = 'perimeter'
  ),
  filtered as (
    select e.id, e.name from app_public.establishments e
    where (p_scope is distinct from 'perimeter' or (select s.ids from scope s) is null
           or e.id = any (coalesce((select s.ids from scope s), '{}')))
      and (p_division is null or e.division_id = p_division)
  ),
  page as (
    select f.id, row_number() over (order by lower(f.name), f.id) as ord
    from filtered f order by ord limit app_hidden.page_limit(p_page_size) offset app_hidden.page_offset(p_page, p_page_size)
  )
  select jsonb_build_object(
    'count', (select count(*) from filtered),
    'results', coalesce((select jsonb_agg(j.doc order by p.ord)
                         from page p join app_hidden.establishments_json(array(select pg.id from page pg)) j on j.id = p.id),
                        '[]'::jsonb));
$$;
comment on function app_public.establishments_list(text, integer, integer, integer) is
'SPEC Permissions rule 6 and Documents and other routes, GET /api/establishments/: one page of the
establishments by name (optionally of one division) for every authenticated account; scope=perimeter
keeps those of the caller''s perimeter (opt-in).';

create or replace function app_public.establishment_get(p_id int) returns jsonb
language plpgsql stable as $$
declare
  v_doc jsonb;
begin
  select j.doc into v_doc from app_hidden.establishments_json(array[p_id]) j;
  if v_doc is null then
    perform app_hidden.not_found('Établissement introuvable.');
  end if;
  return v_doc;
end;
$$;
comment on function app_public.establishment_get(integer) is
'SPEC Permissions rule 6, GET /api/establishments/<id>/: one establishment with its count base (ouvrables
or ouvres, declaration rule 1) and division, readable by every authenticated account.';

-- Establishment rules shared by this API and the organisation import (sql/org/import.sql).
create or replace function app_hidden.establishment_name_taken(p_name text, p_except int default null) returns boolean
language sql stable as $$
  select exists (select 1 from app_public.establishments e where lower(e.name) = lower(p_name) and e.id is distinct from p_except);
$$;
comment on function app_hidden.establishment_name_taken(text, integer) is
'Establishments: a name is borne by one establishment only, case-insensitively (p_except: the one being renamed).';

create or replace function app_hidden.count_base_known(p_base text) returns boolean
language sql immutable as $$ select p_base in ('ouvrables', 'ouvres') $$;
comment on function app_hidden.count_base_known(text) is
'SPEC Absences, declaration rule 1 and CONTRACT section 6: an establishment counts leave in jours ouvrables
(Monday to Saturday) or ouvrés (Monday to Friday).';

-- Creation and update (PUT: name required; PATCH: only the keys sent, p_sent).
drop function if exists app_hidden.establishment_save(int, jsonb, boolean);
create or replace function app_hidden.establishment_save(p_id int, p_partial boolean, p_sent text[],
                                                         p_name text, p_count_base text, p_division int) returns int
language plpgsql volatile as $$
declare
  v_old app_public.establishments;
  v_errors jsonb := '{}';
  v_name text := app_hidden.trimmed(p_name);
  v_base text;
  v_division int;
  v_division_sent boolean := app_hidden.sent(p_sent, 'division', p_division is not null);
  v_id int := p_id;
begin
  perform app_hidden.require_staff();
  if p_id is not null then
    select * into v_old from app_public.establishments e where e.id = p_id for update;
    if not found then
      perform app_hidden.not_found('Établissement introuvable.');
    end if;
  end if;
  if (p_id is null or not p_partial or app_hidden.sent(p_sent, 'name', p_name is not null)) and v_name is null then
    v_errors := app_hidden.add_error(v_errors, 'name', 'Le nom est obligatoire.');
  else
    v_name := coalesce(v_name, v_old.name);
    if char_length(v_name) > app_hidden.name_max_length() then
      v_errors := app_hidden.add_error(v_errors, 'name', app_hidden.max_length_message(app_hidden.name_max_length()));
    elsif app_hidden.establishment_name_taken(v_name, p_id) then
      v_errors := app_hidden.add_error(v_errors, 'name', format('Un établissement s''appelle déjà « %s ».', v_name));
    end if;
  end if;
  v_base := coalesce(p_count_base, v_old.count_base, 'ouvrables');
  if app_hidden.count_base_known(v_base) is not true then
    v_errors := app_hidden.add_error(v_errors, 'count_base',
      'Base de décompte invalide : « ouvrables » (lundi au samedi) ou « ouvres » (lundi au vendredi).');
  end if;
  v_division := case when v_division_sent then p_division else v_old.division_id end;
  if v_division_sent and v_division is not null
     and not exists (select 1 from app_public.divisions d where d.id = v_division) then
    v_errors := app_hidden.add_error(v_errors, 'division', format('Division n° %s introuvable.', v_division));
  end if;
  perform app_hidden.invalid_fields(v_errors, 'WV510') where v_errors <> '{}'::jsonb;
  if p_id is null then
    insert into app_public.establishments (name, count_base, division_id) values (v_name, v_base, v_division)
    returning id into v_id;
  else
    update app_public.establishments e set name = v_name, count_base = v_base, division_id = v_division
    where e.id = p_id and (e.name, e.count_base, e.division_id) is distinct from (v_name, v_base, v_division);
  end if;
  return v_id;
end;
$$;

drop function if exists app_public.establishment_create(jsonb);
create or replace function app_public.establishment_create(p_name text, p_count_base text default null, p_division int default null)
returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_id int;
begin
  -- Two statements: the read sees the write (a stable function keeps its caller's snapshot).
  v_id := app_hidden.establishment_save(null, false, null, p_name, p_count_base, p_division);
  return app_public.establishment_get(v_id);
end;
$$;
comment on function app_public.establishment_create(text, text, integer) is
'SPEC Permissions rule 6, POST /api/establishments/: a staff account creates an establishment (name
required and unique, count base ouvrables or ouvres for declaration rule 1, optional division); all
field errors at once; others get 403.';

-- PATCH /api/establishments/<id>/
drop function if exists app_public.establishment_update(int, jsonb);
create or replace function app_public.establishment_update(p_id int, p_name text default null, p_count_base text default null,
                                                           p_division int default null, p_sent text[] default null)
returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_id int;
begin
  -- Two statements: the read sees the write (a stable function keeps its caller's snapshot).
  v_id := app_hidden.establishment_save(p_id, true, p_sent, p_name, p_count_base, p_division);
  return app_public.establishment_get(v_id);
end;
$$;
comment on function app_public.establishment_update(integer, text, text, integer, text[]) is
'SPEC Permissions rule 6, PATCH /api/establishments/<id>/: a staff account changes the keys sent (p_sent)
of an establishment (name, count base, division), under the creation rules; others get 403.';

-- PUT /api/establishments/<id>/ (name required)
drop function if exists app_public.establishment_replace(int, jsonb);
create or replace function app_public.establishment_replace(p_id int, p_name text default null, p_count_base text default null,
                                                            p_division int default null, p_sent text[] default null)
returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_id int;
begin
  -- Two statements: the read sees the write (a stable function keeps its caller's snapshot).
  v_id := app_hidden.establishment_save(p_id, false, p_sent, p_name, p_count_base, p_division);
  return app_public.establishment_get(v_id);
end;
$$;
comment on function app_public.establishment_replace(integer, text, text, integer, text[]) is
'SPEC Permissions rule 6, PUT /api/establishments/<id>/: a staff account rewrites an establishment (name
required; a division not sent stays), under the creation rules; others get 403.';

create or replace function app_public.establishment_delete(p_id int) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_usage text[];
begin
  perform app_hidden.require_staff();
  perform 1 from app_public.establishments e where e.id = p_id for update;
  if not found then
    perform app_hidden.not_found('Établissement introuvable.');
  end if;
  v_usage := app_private.establishment_usage(p_id);
  if cardinality(v_usage) > 0 then
    perform app_hidden.invalid(null, format('Cet établissement est encore utilisé (%s) : il ne peut pas être supprimé.',
                                            array_to_string(v_usage, ', ')), 'WV511');
  end if;
  delete from app_public.establishments e where e.id = p_id;
  return null;
end;
$$;
comment on function app_public.establishment_delete(integer) is
'SPEC Permissions rule 6, DELETE /api/establishments/<id>/: a staff account deletes an establishment that
nothing uses any more (employees, posts, teams, role attributions, on-call periods, events; else 400
naming the uses); others get 403.';

-- Contract types ---------------------------------------------------------------------------

create or replace function app_hidden.contract_type_json(t app_public.contract_types) returns jsonb
language sql immutable as $$
  select jsonb_build_object('id', t.id, 'code', t.code, 'name', t.name, 'is_temporary_work', t.is_temporary_work);
$$;

create or replace function app_public.contract_types_list(p_page int default 1, p_page_size int default 50) returns jsonb
language sql stable as $$
  select jsonb_build_object(
    'count', (select count(*) from app_public.contract_types),
    'results', coalesce((select jsonb_agg(app_hidden.contract_type_json(t) order by t.id)
                         from (select * from app_public.contract_types t order by t.id
                               limit app_hidden.page_limit(p_page_size) offset app_hidden.page_offset(p_page, p_page_size)) t), '[]'::jsonb));
$$;
comment on function app_public.contract_types_list(integer, integer) is
'SPEC Permissions rule 6, GET /api/contract-types/: one page of the contract types (code, name, temporary
work), readable by every authenticated account.';

create or replace function app_public.contract_type_get(p_id int) returns jsonb
language plpgsql stable as $$
declare
  v_row app_public.contract_types;
begin
  select * into v_row from app_public.contract_types t where t.id = p_id;
  if not found then
    perform app_hidden.not_found('Type de contrat introuvable.');
  end if;
  return app_hidden.contract_type_json(v_row);
end;
$$;
comment on function app_public.contract_type_get(integer) is
'SPEC Permissions rule 6, GET /api/contract-types/<id>/: one contract type, readable by every
authenticated account (404 when absent).';

-- Creation and update of a contract type (PUT: code and name required; PATCH: only the keys
-- sent, p_sent).
drop function if exists app_hidden.contract_type_save(int, jsonb, boolean);
create or replace function app_hidden.contract_type_save(p_id int, p_partial boolean, p_sent text[],
                                                         p_code text, p_name text, p_is_temporary_work boolean) returns int
language plpgsql volatile as $$
declare
  v_old app_public.contract_types;
  v_errors jsonb := '{}';
  v_writes_code boolean := p_id is null or not p_partial or app_hidden.sent(p_sent, 'code', p_code is not null);
  v_writes_name boolean := p_id is null or not p_partial or app_hidden.sent(p_sent, 'name', p_name is not null);
  v_code text := app_hidden.trimmed(p_code);
  v_name text := app_hidden.trimmed(p_name);
  v_temporary boolean;
  v_id int := p_id;
begin
  perform app_hidden.require_staff();
  if p_id is not null then
    select * into v_old from app_public.contract_types t where t.id = p_id for update;
    if not found then
      perform app_hidden.not_found('Type de contrat introuvable.');
    end if;
  end if;
  if v_writes_code and v_code is null then
    v_errors := app_hidden.add_error(v_errors, 'code', 'Le code est obligatoire.');
  elsif not v_writes_code then
    v_code := v_old.code;  -- the code is not being written
  elsif v_code !~ '^[A-Za-z0-9À-ÖØ-öø-ÿ][A-Za-z0-9À-ÖØ-öø-ÿ _+''\-]{0,29}$' then
    v_errors := app_hidden.add_error(v_errors, 'code', 'Code invalide : 1 à 30 caractères, lettres, chiffres, espaces et _ + '' -.');
  elsif exists (select 1 from app_public.contract_types t where lower(t.code) = lower(v_code) and t.id is distinct from p_id) then
    v_errors := app_hidden.add_error(v_errors, 'code', format('Le code « %s » est déjà utilisé.', v_code));
  end if;
  if v_writes_name and v_name is null then
    v_errors := app_hidden.add_error(v_errors, 'name', 'Le libellé est obligatoire.');
  else
    v_name := coalesce(v_name, v_old.name);
    if char_length(v_name) > app_hidden.name_max_length() then
      v_errors := app_hidden.add_error(v_errors, 'name', app_hidden.max_length_message(app_hidden.name_max_length()));
    end if;
  end if;
  v_temporary := coalesce(p_is_temporary_work, v_old.is_temporary_work, false);
  perform app_hidden.invalid_fields(v_errors, 'WV510') where v_errors <> '{}'::jsonb;
  if p_id is null then
    insert into app_public.contract_types (code, name, is_temporary_work) values (v_code, v_name, v_temporary)
    returning id into v_id;
  else
    update app_public.contract_types t set code = v_code, name = v_name, is_temporary_work = v_temporary
    where t.id = p_id and (t.code, t.name, t.is_temporary_work) is distinct from (v_code, v_name, v_temporary);
  end if;
  return v_id;
end;
$$;

drop function if exists app_public.contract_type_create(jsonb);
create or replace function app_public.contract_type_create(p_code text, p_name text, p_is_temporary_work boolean default null)
returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_id int;
begin
  -- Two statements: the read sees the write (a stable function keeps its caller's snapshot).
  v_id := app_hidden.contract_type_save(null, false, null, p_code, p_name, p_is_temporary_work);
  return app_public.contract_type_get(v_id);
end;
$$;
comment on function app_public.contract_type_create(text, text, boolean) is
'SPEC Permissions rule 6, POST /api/contract-types/: a staff account creates a contract type (code unique
whatever the case, name required, is_temporary_work); all field errors at once; others get 403.';

-- PATCH /api/contract-types/<id>/
drop function if exists app_public.contract_type_update(int, jsonb);
create or replace function app_public.contract_type_update(p_id int, p_code text default null, p_name text default null,
                                                           p_is_temporary_work boolean default null, p_sent text[] default null)
returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_id int;
begin
  -- Two statements: the read sees the write (a stable function keeps its caller's snapshot).
  v_id := app_hidden.contract_type_save(p_id, true, p_sent, p_code, p_name, p_is_temporary_work);
  return app_public.contract_type_get(v_id);
end;
$$;
comment on function app_public.contract_type_update(integer, text, text, boolean, text[]) is
'SPEC Permissions rule 6, PATCH /api/contract-types/<id>/: a staff account changes the keys sent (p_sent)
of a contract type, under the creation rules; others get 403.';

-- PUT /api/contract-types/<id>/ (code and name required)
drop function if exists app_public.contract_type_replace(int, jsonb);
create or replace function app_public.contract_type_replace(p_id int, p_code text default null, p_name text default null,
                                                            p_is_temporary_work boolean default null, p_sent text[] default null)
returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_id int;
begin
  -- Two statements: the read sees the write (a stable function keeps its caller's snapshot).
  v_id := app_hidden.contract_type_save(p_id, false, p_sent, p_code, p_name, p_is_temporary_work);
  return app_public.contract_type_get(v_id);
end;
$$;
comment on function app_public.contract_type_replace(integer, text, text, boolean, text[]) is
'SPEC Permissions rule 6, PUT /api/contract-types/<id>/: a staff account rewrites a contract type (code
and name required); others get 403.';

create or replace function app_public.contract_type_delete(p_id int) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_usage text[];
begin
  perform app_hidden.require_staff();
  perform 1 from app_public.contract_types t where t.id = p_id for update;
  if not found then
    perform app_hidden.not_found('Type de contrat introuvable.');
  end if;
  v_usage := app_private.contract_type_usage(p_id);
  if cardinality(v_usage) > 0 then
    perform app_hidden.invalid(null, format('Ce type de contrat est encore utilisé (%s) : il ne peut pas être supprimé.',
                                            array_to_string(v_usage, ', ')), 'WV511');
  end if;
  delete from app_public.contract_types t where t.id = p_id;
  return null;
end;
$$;
comment on function app_public.contract_type_delete(integer) is
'SPEC Permissions rule 6, DELETE /api/contract-types/<id>/: a staff account deletes a contract type no
contract and no absence type uses (else 400 naming the uses); others get 403.';
--! EndIncluded referentials/api.sql
--! Included teams/api.sql
-- /api/teams/: read by every authenticated account; written (create, edit, delete, replace
-- members, add a member) with employee.change_team (encadrement). A team without any
-- establishment in the writer's perimeter answers 404; deleting a team that also spans
-- establishments outside the perimeter, or adding a member outside it, answers 403.

-- JSON of teams, set-based. Members (p_members): current and future assignments the caller
-- may read.
create or replace function app_hidden.teams_json(p_ids int[], p_members boolean) returns table (id int, doc jsonb)
language sql stable as $$
  with establishments as (
    select te.team_id, jsonb_agg(te.establishment_id order by te.establishment_id) as ids,
           jsonb_agg(e.name order by te.establishment_id) as names
    from app_public.team_establishments te
    join app_public.establishments e on e.id = te.establishment_id
    where te.team_id = any (p_ids)
    group by te.team_id
  ),
  members as (
    select ta.team_id,
           jsonb_agg(jsonb_build_object('id', ta.id, 'employee', ta.employee_id,
                                        'employee_name', emp.first_name || ' ' || emp.last_name,
                                        'start_date', ta.start_date, 'end_date', ta.end_date)
                     order by lower(emp.last_name), lower(emp.first_name), ta.start_date nulls first) as list
    from app_public.team_assignments ta
    join app_public.employees emp on emp.id = ta.employee_id
    where p_members and ta.team_id = any (p_ids)
      and (ta.end_date is null or ta.end_date >= app_hidden.today())
    group by ta.team_id
  )
  select t.id,
         jsonb_build_object('id', t.id, 'name', t.name,
                            'establishments', coalesce(est.ids, '[]'::jsonb),
                            'establishment_names', coalesce(est.names, '[]'::jsonb),
                            'created_at', t.created_at, 'updated_at', t.updated_at)
         || case when p_members then jsonb_build_object('members', coalesce(m.list, '[]'::jsonb)) else '{}'::jsonb end
  from app_public.teams t
  left join establishments est on est.team_id = t.id
  left join members m on m.team_id = t.id
  where t.id = any (p_ids);
$$;

-- GET /api/teams/
create or replace function app_public.teams_list(p_scope text default null, p_establishment int default null,
                                      p_search text default null, p_page int default 1, p_page_size int default 50)
returns jsonb
language sql stable as $$
  with scope as (
    select app_hidden.scope_establishment_ids() as ids where p_scope = 'perimeter'
  ),
  filtered as (
    select t.id, t.name from app_public.teams t
    where (p_scope is distinct from 'perimeter' or (select s.ids from scope s) is null
           or exists (select 1 from app_public.team_establishments te
                      where te.team_id = t.id and te.establishment_id = any (coalesce((select s.ids from scope s), '{}'))))
      and (p_establishment is null or exists (select 1 from app_public.team_establishments te
                                              where te.team_id = t.id and te.establishment_id = p_establishment))
      and (coalesce(btrim(p_search), '') = '' or t.name ilike app_hidden.like_pattern(p_search))
  ),
  page as (
    select f.id, row_number() over (order by lower(f.name), f.id) as ord
    from filtered f order by ord limit app_hidden.page_limit(p_page_size) offset app_hidden.page_offset(p_page, p_page_size)
  )
  select jsonb_build_object(
    'count', (select count(*) from filtered),
    'results', coalesce((select jsonb_agg(j.doc order by p.ord)
                         from page p join app_hidden.teams_json(array(select pg.id from page pg), false) j on j.id = p.id),
                        '[]'::jsonb));
$$;
comment on function app_public.teams_list(text, integer, text, integer, integer) is
'SPEC Permissions rule 7, GET /api/teams/: one page of the teams (without members), readable by every
authenticated account, searchable and filtered by establishment; scope=perimeter keeps those with an
establishment in the caller''s perimeter.';

-- GET /api/teams/<id>/
create or replace function app_public.team_get(p_id int) returns jsonb
language plpgsql stable as $$
declare
  v_doc jsonb;
begin
  select j.doc into v_doc from app_hidden.teams_json(array[p_id], true) j;
  if v_doc is null then
    perform app_hidden.not_found('Équipe introuvable.');
  end if;
  return v_doc;
end;
$$;
comment on function app_public.team_get(integer) is
'SPEC Permissions rule 7, GET /api/teams/<id>/: one team with its establishments and its current and
future members (404 when absent).';

-- A team the caller may write: the permission (403 without it) and at least one of the
-- team's establishments in the perimeter (404 otherwise). Locks the team row.
create or replace function app_hidden.team_for_write(p_id int) returns app_public.teams
language plpgsql volatile as $$
declare
  v_team app_public.teams;
begin
  if not app_hidden.current_account_has('employee.change_team') then
    perform app_hidden.forbidden('Vous n''avez pas le droit de modifier les équipes.', 'WF520');
  end if;
  if not p_id in (select app_hidden.team_ids_in_perimeter('employee.change_team')) then
    perform app_hidden.not_found('Équipe introuvable dans votre périmètre.');
  end if;
  select * into v_team from app_public.teams t where t.id = p_id for update;
  if not found then
    perform app_hidden.not_found('Équipe introuvable dans votre périmètre.');
  end if;
  return v_team;
end;
$$;

-- Name and establishments of a creation or an update (PUT/creation: both required; PATCH: the
-- keys sent, p_sent). A null list of establishments leaves them as they are.
drop function if exists app_hidden.team_save(int, jsonb, boolean);
create or replace function app_hidden.team_save(p_id int, p_partial boolean, p_sent text[], p_name text, p_establishments int[])
returns int
language plpgsql volatile as $$
declare
  v_team app_public.teams;
  v_scope int[] := app_hidden.perimeter_establishment_ids('employee.change_team');
  v_errors jsonb := '{}';
  v_name text := app_hidden.trimmed(p_name);
  v_establishments int[] := p_establishments;
  v_old_establishments int[] := '{}';
  v_outside text;
  v_id int := p_id;
begin
  if p_id is null then
    if not app_hidden.current_account_has('employee.change_team') then
      perform app_hidden.forbidden('Vous n''avez pas le droit de créer une équipe.', 'WF520');
    end if;
  else
    v_team := app_hidden.team_for_write(p_id);
    v_old_establishments := array(select te.establishment_id from app_public.team_establishments te where te.team_id = p_id);
  end if;

  if (p_id is null or not p_partial or app_hidden.sent(p_sent, 'name', p_name is not null)) and v_name is null then
    v_errors := app_hidden.add_error(v_errors, 'name', 'Le nom de l''équipe est obligatoire.');
  else
    v_name := coalesce(v_name, v_team.name);
    if char_length(v_name) > app_hidden.name_max_length() then
      v_errors := app_hidden.add_error(v_errors, 'name', app_hidden.max_length_message(app_hidden.name_max_length()));
    end if;
  end if;

  if app_hidden.id_list_refusal(v_establishments) is not null then
    perform app_hidden.invalid('establishments', app_hidden.id_list_refusal(v_establishments));
  end if;
  if v_establishments is null and (p_id is null or not p_partial) then
    v_errors := app_hidden.add_error(v_errors, 'establishments', 'Choisissez au moins un établissement.');
  elsif v_establishments is not null then
    if cardinality(v_establishments) = 0 then
      v_errors := app_hidden.add_error(v_errors, 'establishments', 'Choisissez au moins un établissement.');
    elsif exists (select 1 from unnest(v_establishments) x(id)
                  where not exists (select 1 from app_public.establishments e where e.id = x.id)) then
      v_errors := app_hidden.add_error(v_errors, 'establishments',
        format('Établissement introuvable : %s.', (select string_agg(x.id::text, ', ') from unnest(v_establishments) x(id)
                                                   where not exists (select 1 from app_public.establishments e where e.id = x.id))));
    elsif v_scope is not null then
      select string_agg(e.name, ', ' order by e.name) into v_outside
      from ((select unnest(v_establishments) except select unnest(v_old_establishments))
            union
            (select unnest(v_old_establishments) except select unnest(v_establishments))) d(id)
      join app_public.establishments e on e.id = d.id
      where not d.id = any (v_scope);
      if v_outside is not null then
        v_errors := app_hidden.add_error(v_errors, 'establishments',
          format('Hors de votre périmètre : %s. Vous ne pouvez ni ajouter ni retirer cet établissement.', v_outside));
      end if;
    end if;
  end if;
  perform app_hidden.invalid_fields(v_errors, 'WV520') where v_errors <> '{}'::jsonb;

  if p_id is null then
    insert into app_public.teams (name) values (v_name) returning id into v_id;
  else
    update app_public.teams t set name = v_name where t.id = p_id and t.name is distinct from v_name;
  end if;
  if v_establishments is not null then
    delete from app_public.team_establishments te
    where te.team_id = v_id and not te.establishment_id = any (v_establishments);
    insert into app_public.team_establishments (team_id, establishment_id)
    select v_id, x.id from unnest(v_establishments) x(id)
    on conflict do nothing;
  end if;
  return v_id;
end;
$$;

-- POST /api/teams/
drop function if exists app_public.team_create(jsonb);
create or replace function app_public.team_create(p_name text, p_establishments int[]) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_id int;
begin
  -- Two statements: the read sees the write (a stable function keeps its caller's snapshot).
  v_id := app_hidden.team_save(null, false, null, p_name, p_establishments);
  return app_public.team_get(v_id);
end;
$$;
comment on function app_public.team_create(text, integer[]) is
'SPEC Permissions rule 7, POST /api/teams/: a holder of employee.change_team creates a team (name and
establishments required; an establishment outside its perimeter is refused under establishments).';

-- PATCH /api/teams/<id>/: only the keys sent.
drop function if exists app_public.team_update(int, jsonb);
create or replace function app_public.team_update(p_id int, p_name text default null, p_establishments int[] default null,
                                                  p_sent text[] default null) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_id int;
begin
  -- Two statements: the read sees the write (a stable function keeps its caller's snapshot).
  v_id := app_hidden.team_save(p_id, true, p_sent, p_name, p_establishments);
  return app_public.team_get(v_id);
end;
$$;
comment on function app_public.team_update(integer, text, integer[], text[]) is
'SPEC Permissions rule 7, PATCH /api/teams/<id>/: the keys sent (p_sent) of a team with an establishment
in the writer''s perimeter (else 404; 403 without employee.change_team).';

-- PUT /api/teams/<id>/: name and establishments required.
drop function if exists app_public.team_replace(int, jsonb);
create or replace function app_public.team_replace(p_id int, p_name text default null, p_establishments int[] default null,
                                                   p_sent text[] default null) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_id int;
begin
  -- Two statements: the read sees the write (a stable function keeps its caller's snapshot).
  v_id := app_hidden.team_save(p_id, false, p_sent, p_name, p_establishments);
  return app_public.team_get(v_id);
end;
$$;
comment on function app_public.team_replace(integer, text, integer[], text[]) is
'SPEC Permissions rule 7, PUT /api/teams/<id>/: as PATCH, with name and establishments required.';

-- DELETE /api/teams/<id>/: refused (403) when the team also spans establishments outside the
-- perimeter. Its assignments go with it (each deletion is audited).
create or replace function app_public.team_delete(p_id int) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_outside text;
  v_scope int[] := app_hidden.perimeter_establishment_ids('employee.change_team');
begin
  perform app_hidden.team_for_write(p_id);
  if v_scope is not null then
    select string_agg(e.name, ', ' order by e.name) into v_outside
    from app_public.team_establishments te join app_public.establishments e on e.id = te.establishment_id
    where te.team_id = p_id and not te.establishment_id = any (v_scope);
    if v_outside is not null then
      perform app_hidden.forbidden(format('Cette équipe s''étend aussi hors de votre périmètre (%s) : '
                                          'seul un responsable de tous ses établissements peut la supprimer.', v_outside), 'WF521');
    end if;
  end if;
  delete from app_public.teams t where t.id = p_id;
  return null;
end;
$$;
comment on function app_public.team_delete(integer) is
'SPEC Permissions rule 7, DELETE /api/teams/<id>/: deletes a team of the writer''s perimeter and its
assignments (each audited); 403 when the team also spans establishments outside the perimeter, 404 when
none is inside.';

-- One member (employee required, start_date default today, end_date): the employee exists
-- and the dates are in order; else 400 under p_field, the message prefixed by p_label.
create or replace function app_hidden.team_member_check(p_employee int, p_start_date date, p_end_date date,
                                                        p_field text, p_label text) returns void
language plpgsql stable as $$
begin
  if p_employee is null then
    perform app_hidden.invalid(p_field, p_label || 'le salarié est obligatoire.', 'WV520');
  end if;
  if not exists (select 1 from app_hidden.employee_names(array[p_employee])) then
    perform app_hidden.invalid(p_field, p_label || format('salarié n° %s introuvable.', p_employee), 'WV520');
  end if;
  if p_end_date < coalesce(p_start_date, app_hidden.today()) then
    perform app_hidden.invalid(p_field, p_label || 'la date de fin précède la date de début.', 'WV520');
  end if;
end;
$$;

-- One item of the members list of PUT /api/teams/<id>/members/ (a JSON object, checked as the
-- route schema checks it: a GraphQL caller gives the list as JSON), read and checked;
-- has_start tells a start_date sent as null (no start) from one left out (kept).
drop function if exists app_hidden.team_member_input(jsonb, text, text);
create or replace function app_hidden.team_member_input(p_item jsonb, p_field text, p_label text)
returns table (employee_id int, start_date date, end_date date, has_start boolean)
language plpgsql stable as $$
begin
  if jsonb_typeof(p_item) is distinct from 'object' then
    perform app_hidden.invalid(p_field, p_label || 'un objet est attendu.', 'WV520');
  end if;
  employee_id := app_hidden.in_int(p_item, 'employee', p_field);
  start_date := app_hidden.in_date(p_item, 'start_date', p_field);
  end_date := app_hidden.in_date(p_item, 'end_date', p_field);
  has_start := p_item ? 'start_date';
  perform app_hidden.team_member_check(employee_id, start_date, end_date, p_field, p_label);
  return next;
end;
$$;

create or replace function app_hidden.require_member_in_perimeter(p_employee int) returns void
language plpgsql stable as $$
begin
  if not app_hidden.may(app_hidden.current_account_id(), 'employee.change_team', p_employee) then
    perform app_hidden.forbidden(format('%s n''est pas dans votre périmètre : vous ne pouvez pas l''ajouter à cette équipe.',
                                        (select n.name from app_hidden.employee_names(array[p_employee]) n)), 'WF522');
  end if;
end;
$$;

-- POST /api/teams/<id>/members/ {"employee", "start_date"?, "end_date"?}
drop function if exists app_public.team_member_add(int, jsonb);
create or replace function app_public.team_member_add(p_id int, p_employee int, p_start_date date default null,
                                                      p_end_date date default null) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  perform app_hidden.team_for_write(p_id);
  perform app_hidden.team_member_check(p_employee, p_start_date, p_end_date, 'employee', '');
  perform app_hidden.require_member_in_perimeter(p_employee);
  if exists (select 1 from app_public.team_assignments ta
             where ta.team_id = p_id and ta.employee_id = p_employee
               and daterange(ta.start_date, ta.end_date, '[]')
                   && daterange(coalesce(p_start_date, app_hidden.today()), p_end_date, '[]')) then
    perform app_hidden.invalid('employee', 'Ce salarié fait déjà partie de cette équipe sur cette période.', 'WV520');
  end if;
  insert into app_public.team_assignments (employee_id, team_id, start_date, end_date)
  values (p_employee, p_id, coalesce(p_start_date, app_hidden.today()), p_end_date);
  return app_public.team_get(p_id);
end;
$$;
comment on function app_public.team_member_add(integer, integer, date, date) is
'SPEC Permissions rule 7, POST /api/teams/<id>/members/: adds an employee of the writer''s perimeter to a
team of its perimeter (403 outside), from today unless a start is given.';

-- PUT /api/teams/<id>/members/ {"members": [{"employee", "start_date"?, "end_date"?}, ...]}:
-- the list becomes the team's current and future members. A member kept keeps its
-- assignment (dates updated when sent); a new member starts today unless a start is given;
-- a member left out leaves the team yesterday (an assignment not yet started is deleted).
-- The members are a JSON list (each item's start_date may be left out, which keeps it: a
-- typed list could not say so).
drop function if exists app_public.team_members_replace(int, jsonb);
create or replace function app_public.team_members_replace(p_id int, p_members jsonb) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_items jsonb := nullif(p_members, 'null'::jsonb);
  v_member record;
  v_today date := app_hidden.today();
  v_current app_public.team_assignments;
  v_employees int[] := '{}';
  i int;
begin
  perform app_hidden.team_for_write(p_id);
  if v_items is null then
    perform app_hidden.invalid('members', 'La liste des membres est obligatoire (une liste vide retire tous les membres).', 'WV520');
  end if;
  if jsonb_typeof(v_items) <> 'array' then
    perform app_hidden.invalid('members', 'Une liste est attendue.');
  end if;
  for i in 0 .. jsonb_array_length(v_items) - 1 loop
    select * into v_member from app_hidden.team_member_input(v_items -> i, 'members', format('Membre n° %s : ', i + 1));
    if v_member.employee_id = any (v_employees) then
      perform app_hidden.invalid('members', format('Membre n° %s : ce salarié figure déjà dans la liste.', i + 1), 'WV520');
    end if;
    v_employees := v_employees || v_member.employee_id;
  end loop;

  -- Members who leave.
  for v_current in
    select * from app_public.team_assignments ta
    where ta.team_id = p_id and (ta.end_date is null or ta.end_date >= v_today)
      and not ta.employee_id = any (v_employees)
  loop
    if v_current.start_date is not null and v_current.start_date >= v_today then
      delete from app_public.team_assignments ta where ta.id = v_current.id;
    else
      update app_public.team_assignments ta set end_date = v_today - 1 where ta.id = v_current.id;
    end if;
  end loop;

  -- Members who stay or arrive.
  v_current := null;
  for i in 0 .. jsonb_array_length(v_items) - 1 loop
    select * into v_member from app_hidden.team_member_input(v_items -> i, 'members', format('Membre n° %s : ', i + 1));
    select * into v_current from app_public.team_assignments ta
    where ta.team_id = p_id and ta.employee_id = v_member.employee_id
      and (ta.end_date is null or ta.end_date >= v_today)
    order by ta.start_date nulls first
    limit 1
    for update;
    if v_current.id is null then
      perform app_hidden.require_member_in_perimeter(v_member.employee_id);
      insert into app_public.team_assignments (employee_id, team_id, start_date, end_date)
      values (v_member.employee_id, p_id, coalesce(v_member.start_date, v_today), v_member.end_date);
    elsif (v_member.has_start and v_current.start_date is distinct from v_member.start_date)
          or v_current.end_date is distinct from v_member.end_date then
      if v_member.end_date < coalesce(case when v_member.has_start then v_member.start_date else v_current.start_date end, v_member.end_date) then
        perform app_hidden.invalid('members', format('Membre n° %s : la date de fin précède la date de début.', i + 1), 'WV520');
      end if;
      update app_public.team_assignments ta
      set start_date = case when v_member.has_start then v_member.start_date else ta.start_date end,
          end_date = v_member.end_date
      where ta.id = v_current.id;
    end if;
    v_current := null;
  end loop;
  return app_public.team_get(p_id);
end;
$$;
comment on function app_public.team_members_replace(integer, jsonb) is
'SPEC Permissions rule 7, PUT /api/teams/<id>/members/: the list becomes the team''s current and future
members; a member kept keeps its assignment, a new one starts today unless a start is given, one left
out leaves yesterday (an assignment not yet started is deleted).';
--! EndIncluded teams/api.sql
--! Included events/api.sql
-- /api/events/ and /api/events/participant-options/.
--
-- Without a parameter, lists are restricted to the caller's perimeter: events of an
-- establishment of app_hidden.scope_establishment_ids, events with a participant attached to
-- one of them, and the events the caller created or takes part in. scope=all lifts the
-- restriction (within what the caller may read).
--
-- Conflict alert: creating or updating an event whose participant has an absence (pending,
-- validated or cancellation requested) overlapping the event answers a `warnings` list and,
-- inside the same transaction, notifies through app_private.notify the author and the
-- deciders of the participant's absences (the participant is not notified of their own
-- absence). An update notifies only the conflicts it creates. Warnings and alerts name only
-- the absences the author reads; participants added are of the author's perimeter (404).

create or replace function app_hidden.events_json(p_ids int[]) returns table (id int, doc jsonb)
language sql stable as $$
  with participants as (
    select ep.event_id,
           jsonb_agg(jsonb_build_object('employee', ep.employee_id, 'employee_name', n.name)
                     order by n.name, ep.employee_id) as list
    from app_public.event_participants ep
    join app_hidden.employee_names(array(select x.employee_id from app_public.event_participants x
                                         where x.event_id = any (p_ids))) n on n.id = ep.employee_id
    where ep.event_id = any (p_ids)
    group by ep.event_id
  ),
  authors as (
    select * from app_hidden.account_names(array(select ev.created_by from app_public.events ev where ev.id = any (p_ids)))
  )
  select ev.id,
         jsonb_build_object('id', ev.id, 'title', ev.title, 'description', ev.description,
                            'establishment', ev.establishment_id, 'establishment_name', est.name,
                            'start_at', ev.start_at, 'end_at', ev.end_at,
                            'participants', coalesce(p.list, '[]'::jsonb),
                            'created_by', ev.created_by, 'created_by_name', au.name,
                            'created_at', ev.created_at, 'updated_at', ev.updated_at,
                            'warnings', null)
  from app_public.events ev
  left join app_public.establishments est on est.id = ev.establishment_id
  left join participants p on p.event_id = ev.id
  left join authors au on au.id = ev.created_by
  where ev.id = any (p_ids);
$$;

-- GET /api/events/?scope=&from=&to=&establishment=&employee=
create or replace function app_public.events_list(p_scope text default null, p_from date default null, p_to date default null,
                                       p_establishment int default null, p_employee int default null,
                                       p_page int default 1, p_page_size int default 50)
returns jsonb
language sql stable as $$
  with scope as (
    select app_hidden.scope_establishment_ids() as ids where p_scope is distinct from 'all'
  ),
  scope_employees as (
    select x.id from scope, lateral app_hidden.employees_of_establishments(scope.ids, app_hidden.today()) x(id)
    where scope.ids is not null
  ),
  filtered as (
    select ev.id, ev.start_at from app_public.events ev
    where (p_scope = 'all' or (select s.ids from scope s) is null
           or ev.establishment_id = any (coalesce((select s.ids from scope s), '{}'))
           or ev.created_by = app_hidden.current_account_id()
           or exists (select 1 from app_public.event_participants ep
                      where ep.event_id = ev.id
                        and (ep.employee_id = app_hidden.current_employee_id()
                             or ep.employee_id in (select se.id from scope_employees se))))
      and (p_from is null or ev.end_at > (p_from::timestamp at time zone app_hidden.business_timezone()))
      and (p_to is null or ev.start_at < ((p_to + 1)::timestamp at time zone app_hidden.business_timezone()))
      and (p_establishment is null or ev.establishment_id = p_establishment)
      and (p_employee is null or exists (select 1 from app_public.event_participants ep
                                         where ep.event_id = ev.id and ep.employee_id = p_employee))
  ),
  page as (
    select f.id, row_number() over (order by f.start_at, f.id) as ord
    from filtered f order by ord limit app_hidden.page_limit(p_page_size) offset app_hidden.page_offset(p_page, p_page_size)
  )
  select jsonb_build_object(
    'count', (select count(*) from filtered),
    'results', coalesce((select jsonb_agg(j.doc order by p.ord)
                         from page p join app_hidden.events_json(array(select pg.id from page pg)) j on j.id = p.id),
                        '[]'::jsonb));
$$;
comment on function app_public.events_list(text, date, date, integer, integer, integer, integer) is
'SPEC Documents and other routes, GET /api/events/: one page of the events the caller reads, by start;
without scope, restricted to its perimeter (events of its establishments or with a participant attached
to them, and those it created or takes part in); scope=all lifts that restriction; filters by window,
establishment and participant.';

-- GET /api/events/<id>/
create or replace function app_public.event_get(p_id int) returns jsonb
language plpgsql stable as $$
declare
  v_doc jsonb;
begin
  select j.doc into v_doc from app_hidden.events_json(array[p_id]) j;
  if v_doc is null then
    perform app_hidden.not_found('Événement introuvable.');
  end if;
  return v_doc;
end;
$$;
comment on function app_public.event_get(integer) is
'SPEC Events (GET /api/events/<id>/): one event the caller reads, with its participants and author (404
otherwise).';

-- GET /api/events/participant-options/?scope=&search=: the employees the caller may invite.
-- Without a parameter, the employees of its events.change_event perimeter; scope=all, every
-- employee it reads in the directory.
create or replace function app_public.event_participant_options(p_scope text default null, p_search text default null,
                                                     p_page int default 1, p_page_size int default 50)
returns jsonb
language plpgsql stable as $$
begin
  if not app_hidden.current_account_has('events.change_event') then
    perform app_hidden.forbidden('Vous n''avez pas le droit de créer des événements.', 'WF530');
  end if;
  return (
    with perimeter as (
      select x.id from app_hidden.perimeter_employee_ids('events.change_event') x(id) where p_scope is distinct from 'all'
    ),
    filtered as (
      select e.id, e.first_name, e.last_name, e.main_establishment_id from app_public.employees e
      where (p_scope = 'all' or e.id in (select p.id from perimeter p))
        and (coalesce(btrim(p_search), '') = ''
             or e.first_name || ' ' || e.last_name ilike app_hidden.like_pattern(p_search)
             or e.last_name || ' ' || e.first_name ilike app_hidden.like_pattern(p_search))
    ),
    page as (
      select f.*, row_number() over (order by lower(f.last_name), lower(f.first_name), f.id) as ord
      from filtered f order by ord limit app_hidden.page_limit(p_page_size) offset app_hidden.page_offset(p_page, p_page_size)
    )
    select jsonb_build_object(
      'count', (select count(*) from filtered),
      'results', coalesce((select jsonb_agg(jsonb_build_object('id', p.id, 'name', p.first_name || ' ' || p.last_name,
                                                               'main_establishment', p.main_establishment_id,
                                                               'main_establishment_name', est.name) order by p.ord)
                           from page p left join app_public.establishments est on est.id = p.main_establishment_id),
                          '[]'::jsonb)));
end;
$$;
comment on function app_public.event_participant_options(text, text, integer, integer) is
'SPEC Documents and other routes, GET /api/events/participant-options/: the employees the caller may
invite, searchable; without scope, those of its events.change_event perimeter; scope=all, every employee
it reads in the directory. 403 without events.change_event.';

-- Absences of the event's participants that overlap it (whatever the caller may read).
create or replace function app_private.event_absence_conflicts(p_event_id int)
returns table (employee_id int, absence_id int, status text, date_start date, date_end date)
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select a.employee_id, a.id, a.status, a.date_start, a.date_end
  from app_public.events ev
  join app_public.event_participants ep on ep.event_id = ev.id
  join app_public.absences a on a.employee_id = ep.employee_id
  where ev.id = p_event_id
    and a.status in ('pending', 'validated', 'cancellation_requested')
    and a.period && tsrange(ev.start_at at time zone app_hidden.business_timezone(),
                            ev.end_at at time zone app_hidden.business_timezone())
  order by a.date_start, a.id;
$$;

create or replace function app_hidden.event_conflict_text(p_employee int, p_status text, p_start date, p_end date) returns text
language sql stable as $$
  select format('%s a une absence %s %s qui chevauche cet événement.',
                (select n.name from app_hidden.employee_names(array[p_employee]) n),
                case p_status when 'pending' then 'en attente de décision'
                              when 'cancellation_requested' then 'validée (annulation demandée)'
                              else 'validée' end,
                case when p_start = p_end then 'le ' || app_hidden.fr_date(p_start)
                     else format('du %s au %s', app_hidden.fr_date(p_start), app_hidden.fr_date(p_end)) end);
$$;

-- Warnings of the event, and the alerts of the conflicts not in p_known (absence ids).
create or replace function app_private.event_conflicts_alert(p_event_id int, p_known int[]) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_author int := app_hidden.current_account_id();
  v_event app_public.events;
  v_conflict record;
  v_text text;
  v_warnings jsonb := '[]';
  v_recipient int;
begin
  select * into v_event from app_public.events ev where ev.id = p_event_id;
  -- Only the absences the author reads are named, in the warnings and in the alerts.
  for v_conflict in select c.* from app_private.event_absence_conflicts(p_event_id) c
                    where c.employee_id in (select app_hidden.absence_api_reader_ids()) loop
    v_text := app_hidden.event_conflict_text(v_conflict.employee_id, v_conflict.status,
                                             v_conflict.date_start, v_conflict.date_end);
    v_warnings := v_warnings || to_jsonb(v_text);
    if v_conflict.absence_id = any (coalesce(p_known, '{}')) then
      continue;
    end if;
    for v_recipient in
      select r from (select v_author as r
                     union
                     select app_private.route_deciders(v_conflict.employee_id,
                                                       greatest(v_conflict.date_start,
                                                                app_hidden.business_date(v_event.start_at)),
                                                       'absences.decide_absence', v_author)) x
      where r is not null and r is distinct from app_private.employee_account_id(v_conflict.employee_id)
    loop
      perform app_private.notify(v_recipient, 'Conflit entre un événement et une absence',
        format('%s a une absence %s %s qui chevauche l''événement « %s » du %s.',
               app_hidden.employee_name(v_conflict.employee_id),
               case v_conflict.status when 'pending' then 'en attente de décision'
                                      when 'cancellation_requested' then 'validée (annulation demandée)'
                                      else 'validée' end,
               case when v_conflict.date_start = v_conflict.date_end then 'le ' || app_hidden.fr_date(v_conflict.date_start)
                    else format('du %s au %s', app_hidden.fr_date(v_conflict.date_start), app_hidden.fr_date(v_conflict.date_end)) end,
               v_event.title, app_hidden.fr_date(app_hidden.business_date(v_event.start_at))),
        'warning', 'event', p_event_id);
    end loop;
  end loop;
  return v_warnings;
end;
$$;

-- Who may write an event: the permission and, for an existing one, the writable perimeter
-- (else 403; unknown: 404). Returns the event, locked (creation: an empty row).
create or replace function app_hidden.event_lock_for_write(p_id int) returns app_public.events
language plpgsql volatile as $$
declare
  v_old app_public.events;
begin
  if p_id is not null then
    select * into v_old from app_public.events ev where ev.id = p_id;
    if not found then
      perform app_hidden.not_found('Événement introuvable.');
    end if;
  end if;
  if not app_hidden.current_account_has('events.change_event') then
    perform app_hidden.forbidden('Vous n''avez pas le droit de créer ou de modifier des événements.', 'WF530');
  end if;
  if p_id is not null then
    if not p_id in (select app_hidden.writable_event_ids()) then
      perform app_hidden.forbidden('Vous ne modifiez que les événements que vous avez créés ou ceux d''un établissement de votre périmètre.', 'WF531');
    end if;
    perform 1 from app_public.events ev where ev.id = p_id for update;
  end if;
  return v_old;
end;
$$;

-- The rules of an event's fields and its write (creation: p_old.id null), from the values it
-- will have (a PATCH passes the kept ones). p_establishment_sent: the caller names the
-- establishment (only a named one is checked against the perimeter). Participants null: kept
-- (none at creation). Returns the event id.
create or replace function app_hidden.event_write(p_old app_public.events, p_title text, p_description text,
                                                  p_establishment int, p_establishment_sent boolean,
                                                  p_start timestamptz, p_end timestamptz, p_participants int[])
returns int
language plpgsql volatile as $$
declare
  v_errors jsonb := '{}';
  v_title text := nullif(btrim(p_title), '');
  v_description text := nullif(btrim(p_description), '');
  v_participants int[] := p_participants;
  v_missing text;
  v_id int := p_old.id;
begin
  if v_title is null then
    v_errors := app_hidden.add_error(v_errors, 'title', 'Le titre est obligatoire.');
  elsif char_length(v_title) > app_hidden.event_title_max_length() then
    v_errors := app_hidden.add_error(v_errors, 'title', app_hidden.max_length_message(app_hidden.event_title_max_length()));
  end if;
  if char_length(v_description) > app_hidden.event_description_max_length() then
    v_errors := app_hidden.add_error(v_errors, 'description', app_hidden.max_length_message(app_hidden.event_description_max_length()));
  end if;

  if p_start is null then
    v_errors := app_hidden.add_error(v_errors, 'start_at', 'Le début est obligatoire.');
  end if;
  if p_end is null then
    v_errors := app_hidden.add_error(v_errors, 'end_at', 'La fin est obligatoire.');
  elsif p_end <= p_start then
    v_errors := app_hidden.add_error(v_errors, 'end_at', 'La fin doit suivre le début.');
  end if;

  if p_establishment_sent and p_establishment is not null then
    if not exists (select 1 from app_public.establishments e where e.id = p_establishment) then
      v_errors := app_hidden.add_error(v_errors, 'establishment', format('Établissement n° %s introuvable.', p_establishment));
    elsif p_establishment is distinct from p_old.establishment_id
          and not app_hidden.event_establishment_allowed(p_establishment) then
      v_errors := app_hidden.add_error(v_errors, 'establishment', 'Cet établissement n''est pas dans votre périmètre.');
    end if;
  end if;

  if v_participants is null and p_old.id is null then
    v_participants := '{}';
  end if;
  if cardinality(v_participants) > 500 then
    v_errors := app_hidden.add_error(v_errors, 'participants', 'Au plus 500 participants.');
  elsif v_participants is not null then
    -- Participants are employees the author reads in the directory.
    select string_agg(x.id::text, ', ' order by x.id) into v_missing
    from unnest(v_participants) x(id)
    where not exists (select 1 from app_public.employees e where e.id = x.id);
    if v_missing is not null then
      v_errors := app_hidden.add_error(v_errors, 'participants', format('Salarié introuvable : %s.', v_missing));
    end if;
  end if;
  perform app_hidden.invalid_fields(v_errors, 'WV530') where v_errors <> '{}'::jsonb;
  -- A participant added is oneself or an employee of the events.change_event perimeter: an
  -- employee outside is not found (the conflict warnings would otherwise reveal absences).
  -- Participants already on the event stay.
  select string_agg(x.id::text, ', ' order by x.id) into v_missing
  from unnest(v_participants) x(id)
  where not app_hidden.is_current_employee(x.id)
    and not exists (select 1 from app_public.event_participants ep where ep.event_id = p_old.id and ep.employee_id = x.id)
    and not exists (select 1 from app_hidden.perimeter_employee_ids('events.change_event') pe(id) where pe.id = x.id);
  if v_missing is not null then
    perform app_hidden.not_found(format('Salarié introuvable dans votre périmètre : %s.', v_missing), 'WN530');
  end if;

  if p_old.id is null then
    insert into app_public.events (title, description, establishment_id, start_at, end_at, created_by)
    values (v_title, v_description, p_establishment, p_start, p_end, app_hidden.current_account_id());
    -- Not RETURNING: the new row is not yet in the snapshot the read policy consults.
    v_id := currval(pg_get_serial_sequence('app_public.events', 'id'));
  else
    update app_public.events ev
    set title = v_title, description = v_description, establishment_id = p_establishment, start_at = p_start, end_at = p_end
    where ev.id = p_old.id
      and (ev.title, ev.description, ev.establishment_id, ev.start_at, ev.end_at)
          is distinct from (v_title, v_description, p_establishment, p_start, p_end);
  end if;
  if v_participants is not null then
    delete from app_public.event_participants ep where ep.event_id = v_id and not ep.employee_id = any (v_participants);
    insert into app_public.event_participants (event_id, employee_id)
    select v_id, x.id from unnest(v_participants) x(id)
    on conflict do nothing;
  end if;
  return v_id;
end;
$$;

-- PUT and PATCH of an event (p_partial: only the keys sent change, p_sent; a key sent as null
-- clears it): the values event_write checks, the kept ones for the keys not sent.
drop function if exists app_hidden.event_save(int, jsonb, boolean);
create or replace function app_hidden.event_save(p_id int, p_partial boolean, p_sent text[], p_title text,
                                                 p_description text, p_establishment int, p_start_at timestamptz,
                                                 p_end_at timestamptz, p_participants int[]) returns int
language plpgsql volatile as $$
declare
  v_old app_public.events := app_hidden.event_lock_for_write(p_id);
  v_establishment_sent boolean := app_hidden.sent(p_sent, 'establishment', p_establishment is not null);
begin
  if app_hidden.id_list_refusal(p_participants) is not null then
    perform app_hidden.invalid('participants', app_hidden.id_list_refusal(p_participants));
  end if;
  return app_hidden.event_write(
    v_old,
    case when not p_partial or app_hidden.sent(p_sent, 'title', p_title is not null) then p_title else v_old.title end,
    case when app_hidden.sent(p_sent, 'description', p_description is not null) then p_description else v_old.description end,
    case when v_establishment_sent then p_establishment else v_old.establishment_id end,
    v_establishment_sent,
    case when app_hidden.sent(p_sent, 'start_at', p_start_at is not null) then p_start_at else v_old.start_at end,
    case when app_hidden.sent(p_sent, 'end_at', p_end_at is not null) then p_end_at else v_old.end_at end,
    p_participants);
end;
$$;

-- POST /api/events/: typed arguments, one per key of the body (absent: null). A GraphQL
-- caller may send what the route schema refuses: a participant list with a null or twice
-- the same id is refused as the route's body would be.
drop function if exists app_public.event_create(jsonb);
create or replace function app_public.event_create(p_title text, p_start_at timestamptz, p_end_at timestamptz,
                                                   p_description text default null, p_establishment int default null,
                                                   p_participants int[] default null) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_old app_public.events := app_hidden.event_lock_for_write(null);
  v_id int;
  v_warnings jsonb;
begin
  if app_hidden.id_list_refusal(p_participants) is not null then
    perform app_hidden.invalid('participants', app_hidden.id_list_refusal(p_participants));
  end if;
  v_id := app_hidden.event_write(v_old, p_title, p_description, p_establishment, p_establishment is not null,
                                 p_start_at, p_end_at, p_participants);
  v_warnings := app_private.event_conflicts_alert(v_id, '{}');
  return app_public.event_get(v_id) || jsonb_build_object('warnings', v_warnings);
end;
$$;
comment on function app_public.event_create(text, timestamptz, timestamptz, text, integer, integer[]) is
'SPEC Events rule 4, POST /api/events/: a holder of events.change_event creates an event whose
participants are itself or employees of its perimeter (else 404); an overlapping absence of a
participant answers in warnings and alerts its author and deciders in the same transaction.';

-- The absence conflicts the event has before a PUT or PATCH (only those it creates are alerted).
create or replace function app_hidden.event_known_conflicts(p_id int) returns int[]
language sql stable as $$
  select array(select c.absence_id from app_private.event_absence_conflicts(p_id) c
               where p_id in (select app_hidden.readable_event_ids()));
$$;

-- PATCH /api/events/<id>/: only the keys sent (p_sent).
drop function if exists app_public.event_update(int, jsonb);
create or replace function app_public.event_update(p_id int, p_title text default null, p_start_at timestamptz default null,
                                                   p_end_at timestamptz default null, p_description text default null,
                                                   p_establishment int default null, p_participants int[] default null,
                                                   p_sent text[] default null) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_known int[] := app_hidden.event_known_conflicts(p_id);
  v_warnings jsonb;
begin
  perform app_hidden.event_save(p_id, true, p_sent, p_title, p_description, p_establishment, p_start_at, p_end_at, p_participants);
  v_warnings := app_private.event_conflicts_alert(p_id, v_known);
  return app_public.event_get(p_id) || jsonb_build_object('warnings', v_warnings);
end;
$$;
comment on function app_public.event_update(integer, text, timestamptz, timestamptz, text, integer, integer[], text[]) is
'SPEC Events rule 4, PATCH /api/events/<id>/: a holder of events.change_event changes the keys sent
(p_sent) of an event it created or of an establishment of its perimeter (else 403); only the absence
conflicts the update creates are alerted.';

-- PUT /api/events/<id>/: title, start_at and end_at required.
drop function if exists app_public.event_replace(int, jsonb);
create or replace function app_public.event_replace(p_id int, p_title text default null, p_start_at timestamptz default null,
                                                    p_end_at timestamptz default null, p_description text default null,
                                                    p_establishment int default null, p_participants int[] default null,
                                                    p_sent text[] default null) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_known int[] := app_hidden.event_known_conflicts(p_id);
  v_warnings jsonb;
begin
  perform app_hidden.event_save(p_id, false, p_sent, p_title, p_description, p_establishment, p_start_at, p_end_at, p_participants);
  v_warnings := app_private.event_conflicts_alert(p_id, v_known);
  return app_public.event_get(p_id) || jsonb_build_object('warnings', v_warnings);
end;
$$;
comment on function app_public.event_replace(integer, text, timestamptz, timestamptz, text, integer, integer[], text[]) is
'SPEC Events rule 4, PUT /api/events/<id>/: as PATCH, with title, start_at and end_at required.';

-- DELETE /api/events/<id>/
create or replace function app_public.event_delete(p_id int) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  if not exists (select 1 from app_public.events ev where ev.id = p_id) then
    perform app_hidden.not_found('Événement introuvable.');
  end if;
  if not app_hidden.current_account_has('events.change_event') then
    perform app_hidden.forbidden('Vous n''avez pas le droit de supprimer des événements.', 'WF530');
  end if;
  if not p_id in (select app_hidden.writable_event_ids()) then
    perform app_hidden.forbidden('Vous ne supprimez que les événements que vous avez créés ou ceux d''un établissement de votre périmètre.', 'WF531');
  end if;
  delete from app_public.events ev where ev.id = p_id;
  return null;
end;
$$;
comment on function app_public.event_delete(integer) is
'SPEC Events, DELETE /api/events/<id>/: a holder of events.change_event deletes an event it created or of
an establishment of its perimeter (else 403; 404 when not read).';
--! EndIncluded events/api.sql
--! Included on_call/api.sql
-- /api/on-call-periods/: Admin, RH, DA and managers read and write the periods of their
-- perimeter; Service Paie reads only; Salarié and Intérimaire have no access (403).
-- A period touching the perimeter is readable; it is written only when all its
-- establishments lie in the writer's perimeter (otherwise 403).

create or replace function app_hidden.on_call_periods_json(p_ids int[]) returns table (id int, doc jsonb)
language sql stable as $$
  with establishments as (
    select ope.period_id, jsonb_agg(ope.establishment_id order by ope.establishment_id) as ids,
           jsonb_agg(e.name order by ope.establishment_id) as names
    from app_public.on_call_period_establishments ope
    join app_public.establishments e on e.id = ope.establishment_id
    where ope.period_id = any (p_ids)
    group by ope.period_id
  ),
  holders as (
    select * from app_hidden.account_names(array(select op.account_id from app_public.on_call_periods op
                                                 where op.id = any (p_ids)))
  )
  select op.id,
         jsonb_build_object('id', op.id, 'account', op.account_id, 'account_name', h.name,
                            'start_at', op.start_at, 'end_at', op.end_at,
                            'establishments', coalesce(est.ids, '[]'::jsonb),
                            'establishment_names', coalesce(est.names, '[]'::jsonb),
                            'comment', op.comment,
                            'is_current', op.start_at <= app_hidden.now() and app_hidden.now() < op.end_at,
                            'created_at', op.created_at, 'updated_at', op.updated_at)
  from app_public.on_call_periods op
  left join establishments est on est.period_id = op.id
  left join holders h on h.id = op.account_id
  where op.id = any (p_ids);
$$;

create or replace function app_hidden.require_on_call_access(p_write boolean) returns void
language plpgsql stable as $$
begin
  if not app_hidden.current_account_has('on_call.view_on_call_period')
     and not app_hidden.current_account_has('on_call.change_on_call_period') then
    perform app_hidden.forbidden('Vous n''avez pas accès aux astreintes.', 'WF540');
  end if;
  if p_write and not app_hidden.current_account_has('on_call.change_on_call_period') then
    perform app_hidden.forbidden('Vous consultez les astreintes sans pouvoir les modifier.', 'WF540');
  end if;
end;
$$;

-- Periods shown by the screens: those with an establishment in the caller's perimeter, and
-- the caller's own periods.
create or replace function app_hidden.on_call_screen_ids() returns setof int
language sql stable as $$
  select app_hidden.on_call_period_ids_in_perimeter('on_call.view_on_call_period')
  union
  select app_hidden.on_call_period_ids_in_perimeter('on_call.change_on_call_period')
  union
  select op.id from app_public.on_call_periods op where op.account_id = app_hidden.current_account_id();
$$;

-- GET /api/on-call-periods/?from=&to=&account=&establishment=
create or replace function app_public.on_call_periods_list(p_from date default null, p_to date default null,
                                                p_account int default null, p_establishment int default null,
                                                p_page int default 1, p_page_size int default 50)
returns jsonb
language plpgsql stable as $$
begin
  perform app_hidden.require_on_call_access(false);
  return (
    with filtered as (
      select op.id, op.start_at from app_public.on_call_periods op
      where op.id in (select app_hidden.on_call_screen_ids())
        and (p_from is null or op.end_at > (p_from::timestamp at time zone app_hidden.business_timezone()))
        and (p_to is null or op.start_at < ((p_to + 1)::timestamp at time zone app_hidden.business_timezone()))
        and (p_account is null or op.account_id = p_account)
        and (p_establishment is null or exists (select 1 from app_public.on_call_period_establishments ope
                                                where ope.period_id = op.id and ope.establishment_id = p_establishment))
    ),
    page as (
      select f.id, row_number() over (order by f.start_at, f.id) as ord
      from filtered f order by ord limit app_hidden.page_limit(p_page_size) offset app_hidden.page_offset(p_page, p_page_size)
    )
    select jsonb_build_object(
      'count', (select count(*) from filtered),
      'results', coalesce((select jsonb_agg(j.doc order by p.ord)
                           from page p join app_hidden.on_call_periods_json(array(select pg.id from page pg)) j on j.id = p.id),
                          '[]'::jsonb)));
end;
$$;
comment on function app_public.on_call_periods_list(date, date, integer, integer, integer, integer) is
'SPEC Permissions rule 9, GET /api/on-call-periods/: one page of the on-call periods with an
establishment in the caller''s perimeter, and its own, by start; filters by window, account and
establishment. Salarié and Intérimaire get 403.';

-- GET /api/on-call-periods/<id>/
create or replace function app_public.on_call_period_get(p_id int) returns jsonb
language plpgsql stable as $$
declare
  v_doc jsonb;
begin
  perform app_hidden.require_on_call_access(false);
  if p_id in (select app_hidden.on_call_screen_ids()) then
    select j.doc into v_doc from app_hidden.on_call_periods_json(array[p_id]) j;
  end if;
  if v_doc is null then
    perform app_hidden.not_found('Astreinte introuvable.');
  end if;
  return v_doc;
end;
$$;
comment on function app_public.on_call_period_get(integer) is
'SPEC Permissions rule 9, GET /api/on-call-periods/<id>/: one on-call period the caller''s screens show
(else 404), with is_current; Salarié and Intérimaire get 403.';

-- Can this account be on call at that time: does it hold a manager role whose perimeter the
-- period extends? ('unknown', 'inactive', 'no_role' or 'ok')
create or replace function app_private.on_call_eligibility(p_account int, p_at timestamptz) returns text
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select case when a.id is null then 'unknown'
              when not a.is_active then 'inactive'
              when not exists (select 1 from app_public.role_attributions ra
                               join app_public.role_permissions rp on rp.role_id = ra.role_id
                               where ra.account_id = a.id and rp.permission_code = 'absences.view_absence_queue'
                                 and app_hidden.date_in(app_hidden.business_date(p_at), ra.start_date, ra.end_date))
                then 'no_role'
              else 'ok' end
  from (select 1) x left join app_public.accounts a on a.id = p_account;
$$;

-- Another period of the same account overlapping [start, end), whatever the caller reads.
create or replace function app_private.on_call_overlap(p_account int, p_start timestamptz, p_end timestamptz, p_except int)
returns table (id int, start_at timestamptz, end_at timestamptz)
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select op.id, op.start_at, op.end_at from app_public.on_call_periods op
  where op.account_id = p_account and op.id is distinct from p_except
    and tstzrange(op.start_at, op.end_at) && tstzrange(p_start, p_end)
  order by op.start_at limit 1;
$$;

-- Creation and update of a period (PUT and creation: every key but the comment required;
-- PATCH: only the keys sent, p_sent; a null list of establishments leaves them as they are).
drop function if exists app_hidden.on_call_period_save(int, jsonb, boolean);
create or replace function app_hidden.on_call_period_save(p_id int, p_partial boolean, p_sent text[], p_account int,
                                                          p_start_at timestamptz, p_end_at timestamptz,
                                                          p_establishments int[], p_comment text) returns int
language plpgsql volatile as $$
declare
  v_old app_public.on_call_periods;
  v_scope int[] := app_hidden.perimeter_establishment_ids('on_call.change_on_call_period');
  v_errors jsonb := '{}';
  v_account int;
  v_start timestamptz;
  v_end timestamptz;
  v_comment text;
  v_establishments int[] := p_establishments;
  v_old_establishments int[] := '{}';
  v_outside text;
  v_eligibility text;
  v_overlap record;
  v_id int := p_id;
begin
  perform app_hidden.require_on_call_access(p_id is null);
  if p_id is not null then
    if not p_id in (select app_hidden.on_call_screen_ids()) then
      perform app_hidden.not_found('Astreinte introuvable.');
    end if;
    perform app_hidden.require_on_call_access(true);
    if not p_id in (select app_hidden.on_call_period_ids_in_perimeter('on_call.change_on_call_period', true)) then
      perform app_hidden.forbidden('Cette astreinte couvre aussi des établissements hors de votre périmètre : '
                                   'vous ne pouvez pas la modifier.', 'WF541');
    end if;
    select * into v_old from app_public.on_call_periods op where op.id = p_id for update;
    v_old_establishments := array(select ope.establishment_id from app_public.on_call_period_establishments ope
                                  where ope.period_id = p_id);
  end if;

  if app_hidden.id_list_refusal(v_establishments) is not null then
    perform app_hidden.invalid('establishments', app_hidden.id_list_refusal(v_establishments));
  end if;

  v_account := case when app_hidden.sent(p_sent, 'account', p_account is not null) then p_account else v_old.account_id end;
  v_start := case when app_hidden.sent(p_sent, 'start_at', p_start_at is not null) then p_start_at else v_old.start_at end;
  v_end := case when app_hidden.sent(p_sent, 'end_at', p_end_at is not null) then p_end_at else v_old.end_at end;
  if v_account is null then
    v_errors := app_hidden.add_error(v_errors, 'account', 'Le compte d''astreinte est obligatoire.');
  end if;
  if v_start is null then
    v_errors := app_hidden.add_error(v_errors, 'start_at', 'Le début est obligatoire.');
  end if;
  if v_end is null then
    v_errors := app_hidden.add_error(v_errors, 'end_at', 'La fin est obligatoire.');
  elsif v_end <= v_start then
    v_errors := app_hidden.add_error(v_errors, 'end_at', 'La fin doit suivre le début.');
  end if;
  if v_account is not null and v_start is not null
     and (v_account is distinct from v_old.account_id or v_start is distinct from v_old.start_at) then
    v_eligibility := app_private.on_call_eligibility(v_account, v_start);
    if v_eligibility = 'unknown' then
      v_errors := app_hidden.add_error(v_errors, 'account', format('Compte n° %s introuvable.', v_account));
    elsif v_eligibility = 'inactive' then
      v_errors := app_hidden.add_error(v_errors, 'account', 'Ce compte est fermé.');
    elsif v_eligibility = 'no_role' then
      v_errors := app_hidden.add_error(v_errors, 'account',
        'Ce compte ne détient aucun rôle d''encadrement à cette date : une astreinte étend le périmètre d''un rôle existant.');
    end if;
  end if;
  if v_account is not null and v_end > v_start then
    select * into v_overlap from app_private.on_call_overlap(v_account, v_start, v_end, p_id);
    if v_overlap.id is not null then
      v_errors := app_hidden.add_error(v_errors, 'start_at',
        format('Ce compte est déjà d''astreinte sur cette période (astreinte n° %s, du %s au %s).', v_overlap.id,
               to_char(v_overlap.start_at at time zone app_hidden.business_timezone(), 'DD/MM/YYYY HH24:MI'),
               to_char(v_overlap.end_at at time zone app_hidden.business_timezone(), 'DD/MM/YYYY HH24:MI')));
    end if;
  end if;

  v_comment := case when app_hidden.sent(p_sent, 'comment', p_comment is not null) then app_hidden.trimmed(p_comment)
                    else v_old.comment end;
  if char_length(v_comment) > app_hidden.on_call_comment_max_length() then
    v_errors := app_hidden.add_error(v_errors, 'comment', app_hidden.max_length_message(app_hidden.on_call_comment_max_length()));
  end if;

  if v_establishments is null and (p_id is null or not p_partial) then
    v_errors := app_hidden.add_error(v_errors, 'establishments', 'Choisissez au moins un établissement.');
  elsif v_establishments is not null then
    if cardinality(v_establishments) = 0 then
      v_errors := app_hidden.add_error(v_errors, 'establishments', 'Choisissez au moins un établissement.');
    elsif exists (select 1 from unnest(v_establishments) x(id)
                  where not exists (select 1 from app_public.establishments e where e.id = x.id)) then
      v_errors := app_hidden.add_error(v_errors, 'establishments',
        format('Établissement introuvable : %s.', (select string_agg(x.id::text, ', ') from unnest(v_establishments) x(id)
                                                   where not exists (select 1 from app_public.establishments e where e.id = x.id))));
    elsif v_scope is not null then
      select string_agg(e.name, ', ' order by e.name) into v_outside
      from unnest(v_establishments) x(id) join app_public.establishments e on e.id = x.id
      where not x.id = any (v_scope);
      if v_outside is not null then
        v_errors := app_hidden.add_error(v_errors, 'establishments', format('Hors de votre périmètre : %s.', v_outside));
      end if;
    end if;
  end if;
  perform app_hidden.invalid_fields(v_errors, 'WV540') where v_errors <> '{}'::jsonb;

  begin
    if p_id is null then
      insert into app_public.on_call_periods (account_id, start_at, end_at, comment)
      values (v_account, v_start, v_end, v_comment);
      -- Not RETURNING: the new row is not yet in the snapshot the read policy consults.
      v_id := currval(pg_get_serial_sequence('app_public.on_call_periods', 'id'));
    else
      update app_public.on_call_periods op
      set account_id = v_account, start_at = v_start, end_at = v_end, comment = v_comment
      where op.id = p_id and (op.account_id, op.start_at, op.end_at, op.comment)
                             is distinct from (v_account, v_start, v_end, v_comment);
    end if;
  exception when exclusion_violation then
    -- A concurrent write took the interval between the check above and this write.
    perform app_hidden.invalid('start_at', 'Ce compte est déjà d''astreinte sur cette période.', 'WV540');
  end;
  if v_establishments is not null then
    delete from app_public.on_call_period_establishments ope
    where ope.period_id = v_id and not ope.establishment_id = any (v_establishments);
    insert into app_public.on_call_period_establishments (period_id, establishment_id)
    select v_id, x.id from unnest(v_establishments) x(id)
    on conflict do nothing;
  end if;
  return v_id;
end;
$$;

-- POST /api/on-call-periods/
drop function if exists app_public.on_call_period_create(jsonb);
create or replace function app_public.on_call_period_create(p_account int, p_start_at timestamptz, p_end_at timestamptz,
                                                            p_establishments int[], p_comment text default null) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_id int;
begin
  -- Two statements: the read sees the write (a stable function keeps its caller's snapshot).
  v_id := app_hidden.on_call_period_save(null, false, null, p_account, p_start_at, p_end_at, p_establishments, p_comment);
  return app_public.on_call_period_get(v_id);
end;
$$;
comment on function app_public.on_call_period_create(integer, timestamptz, timestamptz, integer[], text) is
'SPEC Permissions rule 9, POST /api/on-call-periods/: a writer of on-call periods (not Service Paie)
creates one for an active account holding a manager role, all its establishments in the writer''s
perimeter (else 403), not overlapping another period of that account; it extends that role''s perimeter
from start (inclusive) to end (exclusive).';

-- PATCH /api/on-call-periods/<id>/: only the keys sent (p_sent).
drop function if exists app_public.on_call_period_update(int, jsonb);
create or replace function app_public.on_call_period_update(p_id int, p_account int default null, p_start_at timestamptz default null,
                                                            p_end_at timestamptz default null, p_establishments int[] default null,
                                                            p_comment text default null, p_sent text[] default null) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_id int;
begin
  -- Two statements: the read sees the write (a stable function keeps its caller's snapshot).
  v_id := app_hidden.on_call_period_save(p_id, true, p_sent, p_account, p_start_at, p_end_at, p_establishments, p_comment);
  return app_public.on_call_period_get(v_id);
end;
$$;
comment on function app_public.on_call_period_update(integer, integer, timestamptz, timestamptz, integer[], text, text[]) is
'SPEC Permissions rule 9, PATCH /api/on-call-periods/<id>/: changes the keys sent (p_sent) of a period
whose establishments all lie in the writer''s perimeter (else 403), under the creation rules.';

-- PUT /api/on-call-periods/<id>/: account, start_at, end_at and establishments required.
drop function if exists app_public.on_call_period_replace(int, jsonb);
create or replace function app_public.on_call_period_replace(p_id int, p_account int default null, p_start_at timestamptz default null,
                                                             p_end_at timestamptz default null, p_establishments int[] default null,
                                                             p_comment text default null, p_sent text[] default null) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_id int;
begin
  -- Two statements: the read sees the write (a stable function keeps its caller's snapshot).
  v_id := app_hidden.on_call_period_save(p_id, false, p_sent, p_account, p_start_at, p_end_at, p_establishments, p_comment);
  return app_public.on_call_period_get(v_id);
end;
$$;
comment on function app_public.on_call_period_replace(integer, integer, timestamptz, timestamptz, integer[], text, text[]) is
'SPEC Permissions rule 9, PUT /api/on-call-periods/<id>/: as PATCH, with account, start_at, end_at and
establishments required.';

-- DELETE /api/on-call-periods/<id>/
create or replace function app_public.on_call_period_delete(p_id int) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  perform app_hidden.require_on_call_access(false);
  if not p_id in (select app_hidden.on_call_screen_ids()) then
    perform app_hidden.not_found('Astreinte introuvable.');
  end if;
  perform app_hidden.require_on_call_access(true);
  if not p_id in (select app_hidden.on_call_period_ids_in_perimeter('on_call.change_on_call_period', true)) then
    perform app_hidden.forbidden('Cette astreinte couvre aussi des établissements hors de votre périmètre : '
                                 'vous ne pouvez pas la supprimer.', 'WF541');
  end if;
  delete from app_public.on_call_periods op where op.id = p_id;
  return null;
end;
$$;
comment on function app_public.on_call_period_delete(integer) is
'SPEC Permissions rule 9, DELETE /api/on-call-periods/<id>/: deletes a period whose establishments all
lie in the writer''s perimeter (else 403).';
--! EndIncluded on_call/api.sql
--! Included calendar/api.sql
-- iCalendar feeds (issue 16): the owner lists, creates, rotates and revokes its feeds; a
-- calendar client reads one with its secret address (GET /api/feeds/<secret>.ics), under the
-- owner's rights: the same policies and perimeter helpers as the planning and the queue.
-- SQL decides what each event says (kinds, perimeter, which reason is shown); the HTTP layer
-- only writes it as RFC 5545 (src/http/icalendar.ts).

-- The window of every feed: 3 months back, 12 months ahead of today (business date).
create or replace function app_hidden.calendar_feed_window(out date_from date, out date_to date)
language sql stable as $$
  select (app_hidden.today() - interval '3 months')::date, (app_hidden.today() + interval '12 months')::date;
$$;

create or replace function app_hidden.calendar_feed_label(p_kind text) returns text
language sql immutable as $$
  select case p_kind when 'planning' then 'Mon planning' when 'perimeter' then 'Absences de mon périmètre' end;
$$;

-- May the acting account hold a feed of this kind? "planning": any account (its own days and
-- on-call periods); "perimeter": the queue readers (absences.view_absence_queue). Never NULL.
create or replace function app_hidden.calendar_feed_allowed(p_kind text) returns boolean
language sql stable as $$
  select coalesce(case p_kind
                    when 'planning' then app_hidden.current_account_id() is not null
                    when 'perimeter' then app_hidden.current_account_has('absences.view_absence_queue')
                  end, false);
$$;

-- An unknown kind is an input error (400 under kind); a kind the account may not hold, 403.
create or replace function app_hidden.calendar_feed_check(p_kind text) returns void
language plpgsql stable as $$
begin
  if p_kind is null or p_kind not in ('planning', 'perimeter') then
    perform app_hidden.invalid('kind', 'Choisissez « planning » (mon planning) ou « perimeter » (absences de mon périmètre).', 'WV701');
  end if;
  if not app_hidden.calendar_feed_allowed(p_kind) then
    perform app_hidden.forbidden('Le flux des absences du périmètre est réservé aux lecteurs des demandes d''absence.', 'WF701');
  end if;
end;
$$;

create or replace function app_hidden.calendar_feed_url(p_public_url text, p_token text) returns text
language sql immutable as $$
  select rtrim(coalesce(p_public_url, ''), '/') || '/api/feeds/' || p_token || '.ics';
$$;

-- Secrets (app_private, owner): a new secret of 32 random bytes, only its SHA-256 stored.
create or replace function app_private.calendar_feeds_of(p_account int)
returns table (kind text, created_at timestamptz)
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select f.kind, f.created_at from app_private.calendar_feeds f where f.account_id = p_account;
$$;

-- Creates (p_replace false: null when a feed of the kind exists) or rotates (p_replace true:
-- null when none exists) the feed; returns the clear secret, which is never stored.
create or replace function app_private.calendar_feed_issue(p_account int, p_kind text, p_replace boolean) returns text
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_token text := encode(public.gen_random_bytes(32), 'hex');
  v_hash bytea := public.digest(v_token, 'sha256');
begin
  if p_replace then
    update app_private.calendar_feeds f set token_hash = v_hash, created_at = app_hidden.now()
    where f.account_id = p_account and f.kind = p_kind;
  else
    insert into app_private.calendar_feeds (account_id, kind, token_hash) values (p_account, p_kind, v_hash)
    on conflict (account_id, kind) do nothing;
  end if;
  return case when found then v_token end;
end;
$$;

create or replace function app_private.calendar_feed_delete(p_account int, p_kind text) returns boolean
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  delete from app_private.calendar_feeds f where f.account_id = p_account and f.kind = p_kind;
  return found;
end;
$$;

-- Opens a feed by its secret: the acting account of the transaction becomes its owner
-- (app_private.begin_request: the same reload as an authenticated request). Null for an
-- unknown, rotated or revoked secret and for a closed owner, all answered alike (404).
create or replace function app_private.calendar_feed_open(p_token text)
returns table (kind text, created_at timestamptz)
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_feed app_private.calendar_feeds;
begin
  select * into v_feed from app_private.calendar_feeds f
  where f.token_hash = public.digest(coalesce(p_token, ''), 'sha256');
  if not found or app_private.begin_request(v_feed.account_id) is null then
    return;
  end if;
  return query select v_feed.kind, v_feed.created_at;
end;
$$;

-- One absence as an event: a whole-day span as dates (end exclusive), half-days and hours as
-- local times of the business time zone (a morning is [00:00, 12:00), an afternoon [12:00,
-- 24:00), as the absence's period).
create or replace function app_hidden.calendar_absence_event(p_absence app_public.absences, p_summary text,
                                                             p_description text, p_tentative boolean) returns jsonb
language sql stable as $$
  select jsonb_build_object(
    'uid', 'absence-' || p_absence.id,
    'summary', p_summary,
    'description', p_description,
    'location', null,
    'all_day', whole,
    'start', case when whole then to_char(lower(p_absence.period), 'YYYY-MM-DD')
                  else to_char(lower(p_absence.period), 'YYYY-MM-DD"T"HH24:MI:SS') end,
    'end', case when whole then to_char(upper(p_absence.period), 'YYYY-MM-DD')
                else to_char(upper(p_absence.period), 'YYYY-MM-DD"T"HH24:MI:SS') end,
    'status', case when p_tentative then 'TENTATIVE' else 'CONFIRMED' end,
    'sequence', p_absence.version - 1,
    'stamp', p_absence.updated_at,
    'last_modified', p_absence.updated_at)
  from (select lower(p_absence.period)::time = time '00:00' and upper(p_absence.period)::time = time '00:00' as whole) w;
$$;

-- "Mon planning": the worked slots of the planning (app_hidden.planning_cells, the rules of
-- GET /api/planning/: modifications, absences covering the day), the employee's absences
-- (granted, and pending requests as tentative), and the account's own on-call periods.
create or replace function app_hidden.calendar_planning_events(p_from date, p_to date, p_stamp timestamptz) returns jsonb
language plpgsql stable as $$
declare
  v_me int := app_hidden.current_employee_id();
  v_zone text := app_hidden.business_timezone();
  v_work jsonb := '[]';
begin
  if v_me is not null then
    select coalesce(jsonb_agg(jsonb_build_object(
             'uid', format('work-%s-%s-%s', v_me, to_char(w.date, 'YYYYMMDD'), w.n),
             'summary', coalesce(w.b->>'post_code' || ' – ' || (w.b->>'post_label'), 'Travail'),
             'description', concat_ws(E'\n',
               case when w.b->>'break_start_time' is not null
                    then format('Pause %s–%s%s', w.b->>'break_start_time', w.b->>'break_end_time',
                                case when (w.b->>'break_paid')::boolean then ' (payée)' else '' end) end,
               case when (w.b->>'is_remote')::boolean then 'Télétravail' end,
               case when (w.b->>'modified')::boolean then 'Journée modifiée (demande validée)' end,
               nullif(w.b->>'comment', '')),
             'location', es.name,
             'all_day', false,
             'start', to_char(w.date + (w.b->>'start_time')::time, 'YYYY-MM-DD"T"HH24:MI:SS'),
             -- a night post ends the next day
             'end', to_char(w.date + case when (w.b->>'end_time')::time <= (w.b->>'start_time')::time then 1 else 0 end
                            + (w.b->>'end_time')::time, 'YYYY-MM-DD"T"HH24:MI:SS'),
             'status', 'CONFIRMED',
             'sequence', 0,
             'stamp', p_stamp,
             'last_modified', null) order by w.date, w.n), '[]')
    into v_work
    from (select (c->>'date')::date as date, b, row_number() over (partition by c->>'date' order by ord) as n
          from json_array_elements(app_hidden.planning_cells(array[v_me], p_from, p_to)::json -> 'cells') c,
               json_array_elements(c->'blocks') with ordinality as bl(bj, ord),
               lateral (select bj::jsonb as b) x
          where bj->>'kind' = 'work') w
    left join app_public.establishments es on es.id = (w.b->>'establishment')::int;
  end if;
  return v_work
    || coalesce((select jsonb_agg(app_hidden.calendar_absence_event(
                   a, t.name || case when a.status = 'pending' then ' (demande en attente)'
                                     when a.status = 'cancellation_requested' then ' (annulation demandée)'
                                     else '' end,
                   'Absence ' || app_hidden.absence_period_fr(a.date_start, a.date_end, a.start_half, a.end_half,
                                                              a.start_time, a.end_time),
                   a.status = 'pending') order by a.date_start, a.id)
                 from app_public.absences a
                 join app_public.absence_types t on t.id = a.type_id
                 where a.employee_id = v_me and a.date_start <= p_to and a.date_end >= p_from
                   and a.status in ('pending', 'validated', 'cancellation_requested')), '[]')
    || coalesce((select jsonb_agg(jsonb_build_object(
                   'uid', 'on-call-' || op.id,
                   'summary', 'Astreinte',
                   'description', concat_ws(E'\n', (select 'Établissements : ' || string_agg(es.name, ', ' order by es.name)
                                                    from app_public.on_call_period_establishments ope
                                                    join app_public.establishments es on es.id = ope.establishment_id
                                                    where ope.period_id = op.id),
                                            nullif(op.comment, '')),
                   'location', null,
                   'all_day', false,
                   'start', to_char(op.start_at at time zone v_zone, 'YYYY-MM-DD"T"HH24:MI:SS'),
                   'end', to_char(op.end_at at time zone v_zone, 'YYYY-MM-DD"T"HH24:MI:SS'),
                   'status', 'CONFIRMED',
                   'sequence', 0,
                   'stamp', op.updated_at,
                   'last_modified', op.updated_at) order by op.start_at)
                 from app_public.on_call_periods op
                 where op.account_id = app_hidden.current_account_id()
                   and op.end_at > p_from::timestamp at time zone v_zone
                   and op.start_at < (p_to + 1)::timestamp at time zone v_zone), '[]');
end;
$$;

-- "Absences de mon périmètre": who is absent when, among the employees of the caller's queue
-- perimeter (granted absences only). The reason (the absence type) is shown to the employee
-- and to those who may decide their absences (app_hidden.may_decide_absence_of, asked once per
-- employee, not per absence); any other reader (a DA, for instance) reads « Absent(e) ».
create or replace function app_hidden.calendar_perimeter_events(p_from date, p_to date) returns jsonb
language sql stable as $$
  with granted as (
    select a from app_public.absences a
    where a.employee_id in (select app_hidden.perimeter_employee_ids('absences.view_absence_queue'))
      and a.date_start <= p_to and a.date_end >= p_from
      and a.status in ('validated', 'cancellation_requested')
  ),
  shown as (
    select x.id, app_hidden.is_current_employee(x.id) or app_hidden.may_decide_absence_of(x.id) as reason
    from (select distinct (g.a).employee_id as id from granted g) x
  )
  select coalesce(jsonb_agg(app_hidden.calendar_absence_event(
           g.a, e.first_name || ' ' || e.last_name || ' – ' || case when s.reason then t.name else 'Absent(e)' end,
           'Absence ' || app_hidden.absence_period_fr((g.a).date_start, (g.a).date_end, (g.a).start_half, (g.a).end_half,
                                                      (g.a).start_time, (g.a).end_time),
           false) order by (g.a).date_start, (g.a).id), '[]')
  from granted g
  join shown s on s.id = (g.a).employee_id
  join app_public.employees e on e.id = (g.a).employee_id
  join app_public.absence_types t on t.id = (g.a).type_id;
$$;

-- GET /api/calendar-feeds/: the two kinds, whether the caller may hold each and since when
-- its live feed exists (the secret is not kept: it is shown once, at creation or rotation).
create or replace function app_public.calendar_feeds_list() returns jsonb
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  return jsonb_build_object('feeds', (
    select jsonb_agg(jsonb_build_object(
             'kind', k.kind,
             'label', app_hidden.calendar_feed_label(k.kind),
             'allowed', app_hidden.calendar_feed_allowed(k.kind),
             'active', f.created_at is not null,
             'created_at', f.created_at) order by k.ord)
    from (values ('planning', 1), ('perimeter', 2)) k(kind, ord)
    left join app_private.calendar_feeds_of(app_hidden.current_account_id()) f on f.kind = k.kind));
end;
$$;
comment on function app_public.calendar_feeds_list() is 'SPEC (issue 16) calendar feeds, GET /api/calendar-feeds/: the two feed kinds of the acting account, whether it may hold each, and since when its live feed exists (the secret is never shown again).';

create or replace function app_hidden.calendar_feed_answer(p_kind text, p_token text, p_public_url text) returns jsonb
language sql stable as $$
  select jsonb_build_object('kind', p_kind, 'label', app_hidden.calendar_feed_label(p_kind),
                            'created_at', app_hidden.now(), 'url', app_hidden.calendar_feed_url(p_public_url, p_token));
$$;

-- POST /api/calendar-feeds/ {kind}: one live feed per kind (a second one: 400, rotate it).
drop function if exists app_public.calendar_feed_create(jsonb, text);
create or replace function app_public.calendar_feed_create(p_kind text, p_public_url text default null) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_token text;
begin
  perform app_hidden.calendar_feed_check(p_kind);
  v_token := app_private.calendar_feed_issue(app_hidden.current_account_id(), p_kind, false);
  if v_token is null then
    perform app_hidden.invalid('kind', 'Ce flux existe déjà : renouvelez son adresse ou supprimez-le.', 'WV701');
  end if;
  return app_hidden.calendar_feed_answer(p_kind, v_token, p_public_url);
end;
$$;
comment on function app_public.calendar_feed_create(text, text) is 'SPEC (issue 16) calendar feeds, POST /api/calendar-feeds/: creates the acting account''s feed of a kind (one per kind; "perimeter" only for queue readers) and returns its secret address, shown this once.';

-- POST /api/calendar-feeds/{kind}/rotate/: a new secret; the old address answers 404.
create or replace function app_public.calendar_feed_rotate(p_kind text, p_public_url text default null) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_token text;
begin
  perform app_hidden.calendar_feed_check(p_kind);
  v_token := app_private.calendar_feed_issue(app_hidden.current_account_id(), p_kind, true);
  if v_token is null then
    perform app_hidden.not_found('Aucun flux de ce type : créez-le d''abord.', 'WN701');
  end if;
  return app_hidden.calendar_feed_answer(p_kind, v_token, p_public_url);
end;
$$;
comment on function app_public.calendar_feed_rotate(text, text) is 'SPEC (issue 16) calendar feeds, POST /api/calendar-feeds/{kind}/rotate/: gives the feed a new secret address; the old one answers 404 from now on.';

-- DELETE /api/calendar-feeds/{kind}/: the address answers 404 from now on. Revoking stays
-- possible after losing the right to the kind.
create or replace function app_public.calendar_feed_revoke(p_kind text) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  if app_private.calendar_feed_delete(app_hidden.current_account_id(), p_kind) is not true then
    perform app_hidden.not_found('Aucun flux de ce type.', 'WN701');
  end if;
  return null;
end;
$$;
comment on function app_public.calendar_feed_revoke(text) is 'SPEC (issue 16) calendar feeds, DELETE /api/calendar-feeds/{kind}/: revokes the acting account''s feed of that kind; its address answers 404 from now on.';

-- GET /api/feeds/{secret}.ics: the feed's events under its owner's rights. An unknown,
-- rotated or revoked secret and a closed owner: 404; a perimeter feed whose owner no longer
-- reads the queue: 403 (WF701).
create or replace function app_public.calendar_feed_read(p_token text) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_kind text;
  v_created timestamptz;
  v_from date;
  v_to date;
begin
  select f.kind, f.created_at into v_kind, v_created from app_private.calendar_feed_open(p_token) f;
  if v_kind is null then
    perform app_hidden.not_found('Flux de calendrier introuvable.', 'WN701');
  end if;
  perform app_hidden.calendar_feed_check(v_kind);
  select w.date_from, w.date_to into v_from, v_to from app_hidden.calendar_feed_window() w;
  return jsonb_build_object(
    'kind', v_kind,
    'name', app_hidden.calendar_feed_label(v_kind) || coalesce(' – ' || app_hidden.account_display_name(app_hidden.current_account_id()), ''),
    'from', v_from,
    'to', v_to,
    'events', case v_kind when 'planning' then app_hidden.calendar_planning_events(v_from, v_to, v_created)
                          else app_hidden.calendar_perimeter_events(v_from, v_to) end);
end;
$$;
-- It changes the acting account of its transaction: REST only (its own transaction), never
-- offered by GraphQL, where another call could follow in the same transaction.
comment on function app_public.calendar_feed_read(text) is E'@behavior -*\nSPEC (issue 16) calendar feeds, GET /api/feeds/{secret}.ics: the events of a feed under its owner''s rights (its planning, or its queue perimeter''s absences with the reason only where the owner may decide); unknown, rotated or revoked secrets and closed owners answer 404.';
--! EndIncluded calendar/api.sql
--! Included backoffice/contracts.sql
-- Adding a contract from the back-office (issue 13, point 4): the API writes contracts through
-- the employee record (PUT/PATCH /api/employees/<id>/ with the whole `contracts` list), so the
-- back-office form of one new contract goes through that same function, its rules, perimeter
-- and audit: the record's contracts as they are, plus the new one.

-- The contracts of an employee as the `contracts` input of employee_update, every one kept.
-- Read as the owner: the list only feeds employee_update, which decides whether the caller may
-- write this record at all (a list shortened by the caller's reading would delete contracts).
create or replace function app_private.employee_contracts_input(p_employee int) returns jsonb
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select coalesce(jsonb_agg(jsonb_build_object('id', c.id, 'type', c.contract_type_id, 'start_date', c.start_date,
                                               'end_date', c.end_date, 'trial_end_date', c.trial_end_date,
                                               'job_title', c.job_title, 'weekly_hours', c.weekly_hours)
                            order by c.start_date, c.id), '[]'::jsonb)
  from app_public.contracts c where c.employee_id = p_employee;
$$;

-- {"type", "start_date", "end_date"?, "trial_end_date"?, "job_title"?, "weekly_hours"?}: the
-- employee record with its new contract (errors under `contracts`, as the API answers them).
create or replace function app_public.employee_contract_add(p_employee int, p_contract jsonb) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  if jsonb_typeof(p_contract) is distinct from 'object' then
    perform app_hidden.invalid('contracts', 'Un contrat (objet) est attendu.', 'WV501');
  end if;
  return app_public.employee_update(p_employee, p_contracts =>
    app_private.employee_contracts_input(p_employee) || jsonb_build_array(p_contract - 'id'));
end;
$$;
comment on function app_public.employee_contract_add(integer, jsonb) is
'SPEC Permissions (employee.change_employee_record), back-office: adds one contract to an employee record
through employee_update, with its rules, perimeter and audit; returns the record (errors under the
contract fields).';

-- Editing or removing one contract (issue 13, point 4): the same path as the add, the record's
-- contracts with that one changed or left out, through employee_update. Employees carry no
-- version column: the form's `version` is the fingerprint of the contract list it was drawn
-- from, so a list changed meanwhile (another HR's edit) answers 409 and writes nothing.
-- Given to the accounts that may write the record only (the form's hidden field), null otherwise.
create or replace function app_hidden.employee_contracts_version(p_employee int) returns text
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select md5(app_private.employee_contracts_input(p_employee)::text)
  where app_hidden.may(app_hidden.current_account_id(), 'employee.change_employee_record', p_employee);
$$;

-- employee_update's errors on `contracts` name the contract by its rank in the rebuilt list;
-- the back-office form shows one contract: each message goes under the field it concerns,
-- without the rank. p_detail is the DETAIL of the refusal (a JSON object of fields, or one field).
create or replace function app_private.employee_contract_form_errors(p_message text, p_detail text) returns jsonb
language sql immutable as $$
  with errors as (
    select e.key, m
    from jsonb_each(case when left(p_detail, 1) = '{' then p_detail::jsonb
                         else jsonb_build_object(coalesce(p_detail, 'non_field_errors'), jsonb_build_array(p_message)) end) e,
         jsonb_array_elements_text(e.value) m
  ), placed as (
    select case when key <> 'contracts' then key
                when m ~ 'se chevauchent' then 'start_date'
                when m ~ 'type de contrat' then 'type'
                when m ~ 'période d''essai' then 'trial_end_date'
                when m ~ 'date de fin' then 'end_date'
                when m ~ 'date de début' then 'start_date'
                when m ~ 'intitulé de poste' then 'job_title'
                when m ~ 'durée hebdomadaire' then 'weekly_hours'
                else 'non_field_errors' end as field,
           case when m ~ 'se chevauchent'
                then 'Ce contrat chevauche un autre contrat du salarié : un salarié a un seul contrat à la fois.'
                else regexp_replace(m, '^Contrat n° [0-9]+ : (.)', '\1') end as message
    from errors
  )
  select jsonb_object_agg(field, messages)
  from (select field, jsonb_agg(upper(left(message, 1)) || substr(message, 2)) as messages from placed group by field) f;
$$;

-- employee_update with the contract list given, its field refusals re-raised under the form's fields.
create or replace function app_private.employee_contracts_save(p_employee int, p_contracts jsonb) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_message text;
  v_detail text;
begin
  return app_public.employee_update(p_employee, p_contracts => p_contracts);
exception when sqlstate 'WV501' then
  get stacked diagnostics v_message = message_text, v_detail = pg_exception_detail;
  perform app_hidden.invalid_fields(app_private.employee_contract_form_errors(v_message, v_detail), 'WV501');
  return null;
end;
$$;

-- The gate of a change to one contract, in the API's order: 404 outside the perimeter, 403
-- without the right (an empty PATCH through employee_update, which writes nothing), then 409
-- when the list changed since the form was drawn, then 400 under `contract` for a contract
-- that is not this employee's.
create or replace function app_private.employee_contract_gate(p_employee int, p_contract int, p_version text) returns void
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  perform app_public.employee_update(p_employee, p_sent => '{}');
  if p_version is distinct from app_hidden.employee_contracts_version(p_employee) then
    perform app_hidden.conflict('Les contrats de ce salarié ont changé depuis l''affichage du formulaire : '
                                'rechargez la fiche puis recommencez.', 'WC501');
  end if;
  if not exists (select 1 from app_public.contracts c where c.id = p_contract and c.employee_id = p_employee) then
    perform app_hidden.invalid('contract', 'Ce contrat n''appartient pas à ce salarié.', 'WV501');
  end if;
end;
$$;

-- {"contract", "version", "type", "start_date", "end_date"?, "trial_end_date"?, "job_title"?,
-- "weekly_hours"?}: that contract takes these values (an absent key empties the field).
drop function if exists app_public.employee_contract_change(int, jsonb);
create or replace function app_public.employee_contract_change(p_employee int, p_body jsonb) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_contract int;
begin
  if jsonb_typeof(p_body) is distinct from 'object' then
    perform app_hidden.invalid(null, 'Un contrat (objet) est attendu.', 'WV501');
  end if;
  v_contract := app_hidden.in_int(p_body, 'contract');
  perform app_private.employee_contract_gate(p_employee, v_contract, p_body ->> 'version');
  return app_private.employee_contracts_save(p_employee, (
    select jsonb_agg(case when (c ->> 'id')::int = v_contract
                          then jsonb_build_object('id', v_contract) || (p_body - 'contract' - 'version' - 'id')
                          else c end)
    from jsonb_array_elements(app_private.employee_contracts_input(p_employee)) c));
end;
$$;
comment on function app_public.employee_contract_change(integer, jsonb) is
'SPEC Permissions (employee.change_employee_record), back-office: one contract of an employee takes the
values of the form through employee_update; 409 when the contract list changed since the form was drawn
(version), 400 under contract for a contract of another employee.';

-- {"contract", "version"}: the record without that contract.
drop function if exists app_public.employee_contract_remove(int, jsonb);
create or replace function app_public.employee_contract_remove(p_employee int, p_body jsonb) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_contract int;
begin
  if jsonb_typeof(p_body) is distinct from 'object' then
    perform app_hidden.invalid(null, 'Un contrat (objet) est attendu.', 'WV501');
  end if;
  v_contract := app_hidden.in_int(p_body, 'contract');
  perform app_private.employee_contract_gate(p_employee, v_contract, p_body ->> 'version');
  return app_private.employee_contracts_save(p_employee, coalesce((
    select jsonb_agg(c) from jsonb_array_elements(app_private.employee_contracts_input(p_employee)) c
    where (c ->> 'id')::int <> v_contract), '[]'::jsonb));
end;
$$;
comment on function app_public.employee_contract_remove(integer, jsonb) is
'SPEC Permissions (employee.change_employee_record), back-office: removes one contract of an employee
through employee_update; 409 when the contract list changed since the form was drawn (version).';
--! EndIncluded backoffice/contracts.sql
--! Included backoffice/team_members.sql
-- Removing one member of a team from the back-office (issue 13, point 4): through the API's
-- PUT /api/teams/<id>/members/ (team_members_replace), the team's current and future members
-- as they are, without that one. Its rules apply: the right and perimeter on the team, the
-- member leaves yesterday, or their assignment is deleted when it has not started yet.

-- The current and future members of a team as the `members` input of team_members_replace,
-- each with the dates of the assignment that function matches (so that they stay as they are).
-- Read as the owner: the list only feeds team_members_replace, which decides whether the caller
-- may write this team (a list shortened by the caller's reading would remove members).
create or replace function app_private.team_members_input(p_team int) returns jsonb
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select coalesce(jsonb_agg(jsonb_build_object('employee', m.employee_id, 'start_date', m.start_date, 'end_date', m.end_date)
                            order by m.employee_id), '[]'::jsonb)
  from (select distinct on (ta.employee_id) ta.employee_id, ta.start_date, ta.end_date
        from app_public.team_assignments ta
        where ta.team_id = p_team and (ta.end_date is null or ta.end_date >= app_hidden.today())
        order by ta.employee_id, ta.start_date nulls first) m;
$$;

-- {"employee"}: the team without that member (400 under `employee` if they are no current or
-- future member; 404 / 403 as team_members_replace answers).
drop function if exists app_public.team_member_remove(int, jsonb);
create or replace function app_public.team_member_remove(p_team int, p_body jsonb) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_employee int;
  v_members jsonb;
begin
  perform app_hidden.team_for_write(p_team);
  if jsonb_typeof(p_body) is distinct from 'object' then
    perform app_hidden.invalid(null, 'Un objet est attendu.', 'WV520');
  end if;
  v_employee := app_hidden.in_int(p_body, 'employee');
  v_members := app_private.team_members_input(p_team);
  if v_employee is null or not exists (select 1 from jsonb_array_elements(v_members) m where (m ->> 'employee')::int = v_employee) then
    perform app_hidden.invalid('employee', 'Ce salarié ne fait pas partie de cette équipe, ni aujourd''hui ni à venir.', 'WV520');
  end if;
  return app_public.team_members_replace(p_team, p_members => (
    select coalesce(jsonb_agg(m), '[]'::jsonb) from jsonb_array_elements(v_members) m
    where (m ->> 'employee')::int <> v_employee));
end;
$$;
comment on function app_public.team_member_remove(integer, jsonb) is
'SPEC Permissions rule 7 (back-office): removes one current or future member of a team through
team_members_replace and its rules (400 under employee when not a member).';
--! EndIncluded backoffice/team_members.sql
--! Included backoffice/absences.sql
-- Absences in the back-office (issue 13, point 3). The decisions, the cancellation decisions
-- and the cancel action of a granted absence are the API's own functions (absence_validate,
-- absence_refuse, absence_delete); what the API lacks lives here: what the reader may do on
-- an absence, and the form's save with its status field (SPEC, absence state table: the
-- technical state may be set back to pending; cancellation requested and cancelled are
-- neither offered nor left through that field).

-- What the signed-in account may do on an absence (the back-office shows only those forms;
-- the transition functions check again): decide (absences.decide_absence on the employee,
-- never on its own absence), correct (the manager-side correction of absence_update).
create or replace function app_public.absence_abilities(p_id int) returns jsonb
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select jsonb_build_object(
    'own', o.own,
    'decide', app_hidden.may_decide_absence_of(a.employee_id),
    'correct', app_hidden.may_decide_absence_of(a.employee_id)
               and app_hidden.may(app_hidden.current_account_id(), 'absences.view_absence_queue', a.employee_id))
  from app_public.absences a
  cross join lateral (select app_hidden.is_current_employee(a.employee_id) as own) o
  where a.id = p_id and a.employee_id in (select app_hidden.absence_api_reader_ids());
$$;
comment on function app_public.absence_abilities(integer) is
'SPEC Permissions rules 1 and 4 (back-office): what the signed-in account may do on an absence: decide
(absences.decide_absence on the employee, never on its own absence) and correct (the manager-side
correction). The back-office shows only those forms; the transition functions check again.';

-- Sets a decided absence (validated or refused) back to pending, as a decider of its
-- perimeter (never on its own absence) inside the decider's retroactive window: version + 1,
-- the decision (decided_by, decided_at, decision_reason) is cleared (the audit line keeps
-- it), the counters go back to a reservation in Planifiés (a refused request reserves again,
-- so its declaration rules run again: overlap, caps, counters), and the employee is told.
create or replace function app_hidden.absence_reopen(p_absence app_public.absences) returns app_public.absences
language plpgsql volatile as $$
declare
  v app_public.absences;
  v_eval jsonb;
begin
  perform app_hidden.absence_check_decider(p_absence);
  perform app_hidden.absence_check_decider_window(p_absence);
  if p_absence.status = 'refused' then
    perform app_hidden.absence_lock_employee(p_absence.employee_id);
    v_eval := app_private.absence_evaluate(
      row(p_absence.employee_id, p_absence.type_id, p_absence.date_start, p_absence.date_end, p_absence.start_half,
          p_absence.end_half, p_absence.start_time, p_absence.end_time)::app_hidden.absence_draft,
      p_absence.id, 'manager', null, app_hidden.today());
    if v_eval -> 'errors' <> '{}'::jsonb then
      perform app_hidden.invalid_fields(v_eval -> 'errors', 'WV200');
    end if;
  end if;
  perform set_config('app.absence_reopening', 'on', true);
  perform app_private.set_audit_verb('Modification');
  update app_public.absences a set
    status = 'pending', decided_by = null, decided_at = null, decision_reason = null, version = a.version + 1
  where a.id = p_absence.id
  returning * into v;
  perform app_private.set_audit_verb('');
  perform set_config('app.absence_reopening', '', true);
  perform app_private.absence_sync_counters(v.id, 'reopen');
  perform app_private.absence_notify_employee(v, 'Absence remise en attente',
    format('Votre absence %s, %s, a été remise en attente par %s : elle sera de nouveau décidée.',
           app_hidden.absence_subject(v), case when p_absence.status = 'refused' then 'refusée' else 'validée' end,
           app_hidden.account_display_name(app_hidden.current_account_id())), 'warning');
  return v;
end;
$$;

-- The back-office form of an absence: {version, status?, type?, date_start?, date_end?,
-- start_half?, end_half?, start_time?, end_time?, comment?}. version is required (409 when
-- stale). status: only "pending" may be written, from validated or refused (the decisions
-- have their own actions); in the states cancellation requested and cancelled the field is
-- not editable. The other fields are the manager-side correction of PATCH /api/absences/<id>/
-- (absence_update: same rules, same counter compensation). One transaction: a refusal of
-- either part writes nothing.
create or replace function app_public.absence_backoffice_save(p_id int, p_body jsonb, p_public_url text default null)
returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v app_public.absences;
  v_status text := nullif(p_body ->> 'status', '');
begin
  v := app_hidden.absence_lock(p_id);
  perform app_hidden.absence_check_version(v, (p_body ->> 'version')::int, true);
  if v_status is not null and v_status is distinct from v.status then
    if v.status in ('cancellation_requested', 'cancelled') then
      perform app_hidden.invalid('status', format(
        'Le statut d''une absence « %s » ne se modifie pas : %s', app_hidden.absence_status_label(v.status),
        case when v.status = 'cancelled' then 'elle est annulée.' else 'accordez ou refusez la demande d''annulation.' end),
        'WV215');
    end if;
    if v_status <> 'pending' then
      perform app_hidden.invalid('status',
        'Le statut ne peut être remis qu''« En attente » : validez ou refusez la demande avec les actions de décision.',
        'WV215');
    end if;
    v := app_hidden.absence_reopen(v);
  end if;
  -- The form's keys as absence_update's typed arguments (the form's schema has checked their types).
  return app_public.absence_update(p_id,
    p_type => (p_body ->> 'type')::int, p_date_start => (p_body ->> 'date_start')::date,
    p_date_end => (p_body ->> 'date_end')::date, p_start_half => p_body ->> 'start_half', p_end_half => p_body ->> 'end_half',
    p_start_time => (p_body ->> 'start_time')::time, p_end_time => (p_body ->> 'end_time')::time,
    p_comment => p_body ->> 'comment', p_version => v.version,
    p_sent => array(select jsonb_object_keys(p_body - 'status' - 'employee')), p_public_url => p_public_url);
end;
$$;
comment on function app_public.absence_backoffice_save(integer, jsonb, text) is
'SPEC States and transitions, Absence (back-office form): with the current version (else 409), may put a
validated or refused absence back to pending (the only status it writes) and apply the manager-side
correction of PATCH /api/absences/<id>/ (same rules, same counter compensation) in one transaction; the
status is not editable once a cancellation is requested or granted.';
--! EndIncluded backoffice/absences.sql
--! Included guards.sql
-- Guards are true or false, never NULL.
--
-- `if not app_hidden.x(...) then refuse` lets the caller through when x answers NULL (NOT NULL
-- is NULL, and `if NULL` does not run its branch). A helper that a guard or a policy negates
-- is therefore declared here, and a declared helper is under proof:
--   * test/db/61-guards-never-null.sql calls every declared helper as every kind of caller (no
--     account, accounts of each role without an employee record, an employee without a main
--     workplace, closed accounts) with every mix of NULL and ordinary arguments, and fails on a
--     NULL answer;
--   * the same file reads the catalogue (sources of the plpgsql and sql functions of app_public,
--     app_hidden and app_private, and the expressions of pg_policies) and fails when
--     `not <schema>.<helper>(` names a helper that is not declared here.
-- Declaring is one row: the signature as `regprocedure` prints it, and why the helper cannot
-- answer NULL. See docs/architecture.md, "Guards are never NULL".
create table if not exists app_private.never_null_guards (
  helper text primary key check (helper ~ '^app_(public|hidden|private)\.[a-z_]+\(.*\)$'),
  why text not null check (btrim(why) <> '')
);
alter table app_private.never_null_guards enable row level security;

insert into app_private.never_null_guards (helper, why) values
  ('app_hidden.permission_in(text[],text)', 'coalesce(..., false)'),
  ('app_hidden.account_has_permission(integer,text,timestamp with time zone)', 'permission_in'),
  ('app_hidden.current_account_has(text)', 'permission_in'),
  ('app_hidden.may(integer,text,integer,timestamp with time zone)', 'false for a NULL employee; exists otherwise'),
  ('app_hidden.perimeter_is_whole(text)', 'coalesce(..., false)'),
  ('app_hidden.is_current_employee(integer)', 'coalesce(p_employee = current_employee_id(), false)'),
  ('app_hidden.date_in(date,date,date)', 'coalesce(..., false)'),
  ('app_hidden.current_account_is_staff()', 'exists'),
  ('app_hidden.current_account_is_superuser()', 'coalesce(..., false)'),
  ('app_hidden.account_has_backoffice_access(integer,timestamp with time zone)', 'exists'),
  ('app_hidden.current_account_reads_audit_log()', 'conjunction of never-NULL terms'),
  ('app_hidden.account_rights_covered(integer)', 'true, false, or not exists (...)'),
  ('app_hidden.account_in_role_reach(integer)', 'false for a NULL or unknown account; else true or a never-NULL helper'),
  ('app_hidden.can_read_document_file(integer)', 'disjunction of never-NULL helpers'),
  ('app_hidden.can_deposit_honorability(integer)', 'disjunction of never-NULL helpers'),
  ('app_hidden.in_scope(integer,integer[])', 'coalesce(... = any (scope), false)'),
  ('app_hidden.event_establishment_allowed(integer)', 'in_scope'),
  ('app_hidden.json_bool_ok(jsonb)', 'is null or jsonb_typeof in (...)'),
  ('app_hidden.json_id_ok(jsonb)', 'is null or ... and ...: every term is known'),
  ('app_hidden.json_time_ok(jsonb)', 'is null or ... and ...: every term is known'),
  ('app_hidden.same_slots(app_public.slot[],app_public.slot[])', 'array equality of two arrays built by array(...)'),
  ('app_private.counter_code_has_reason(text,integer,integer)', 'exists'),
  ('app_private.job_is_due(text,timestamp with time zone)', 'coalesce(..., false)'),
  ('app_private.holds_hr_permission(integer)', 'coalesce(exists ... or exists ..., false)'),
  ('app_hidden.current_account_is_verified_superuser()', 'coalesce(is_superuser, false) and coalesce(setting, '''') = ''on'''),
  ('app_hidden.may_write_counter(integer)', 'current_account_is_staff() or coalesce(may(...), false)'),
  ('app_hidden.may_decide_absence_of(integer)', 'coalesce(may(...) and is_current_employee(...) is false, false)'),
  ('app_hidden.calendar_feed_allowed(text)', 'coalesce(case ... end, false)'),
  ('app_hidden.sent(text[],text,boolean)', 'case of two coalesce(..., false)')
on conflict (helper) do update set why = excluded.why;
--! EndIncluded guards.sql
--! Included finalize.sql
-- Last file of sql/ORDER, included by every migration that changes sql/ (npm run db:current):
-- grants, ownership of API functions, RLS check.

grant select on all tables in schema app_public to wfm_visitor;
grant select, insert, update, delete on all tables in schema app_public to wfm_api;
grant usage on all sequences in schema app_public to wfm_api;
grant usage on schema app_private to wfm_api;
grant execute on all functions in schema app_public to wfm_visitor, wfm_api;
grant execute on all functions in schema app_hidden to wfm_visitor, wfm_api;
grant execute on all functions in schema app_private to wfm_api;
grant execute on function app_private.begin_request(int, int), app_private.begin_request_or_fail(int, int, boolean),
  app_private.login_lookup(text),
  app_private.record_login(int), app_private.password_reset_request(text),
  app_private.password_token_check(text), app_private.password_reset_confirm(text, text),
  app_private.rate_limit_hit(text, int, interval), app_private.rate_limit_hit_or_fail(text, int, interval)
  to wfm_authenticator;

-- API functions that are security definer run as wfm_api, which does not own the tables:
-- row-level security applies to them exactly as to the visitor.
do $$
declare
  f record;
begin
  for f in
    select p.oid::regprocedure as signature
    from pg_proc p join pg_namespace n on n.oid = p.pronamespace
    where n.nspname = 'app_public' and p.prosecdef and p.proowner <> 'wfm_api'::regrole
  loop
    execute format('alter function %s owner to wfm_api', f.signature);
  end loop;
end;
$$;

-- Every table has row-level security enabled; a migration that forgets it fails here.
do $$
declare
  t record;
begin
  for t in
    select c.oid::regclass as rel
    from pg_class c join pg_namespace n on n.oid = c.relnamespace
    where n.nspname in ('app_public', 'app_private', 'app_hidden') and c.relkind in ('r', 'p')
      and not c.relrowsecurity
  loop
    raise exception 'Table % has no row-level security enabled', t.rel;
  end loop;
end;
$$;
--! EndIncluded finalize.sql
