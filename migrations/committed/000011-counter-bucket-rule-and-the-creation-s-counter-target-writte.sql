--! Previous: sha1:c6b6fdecfd26b0e5daaaf2af95154d93c453b729
--! Hash: sha1:b1958faeca86241d24db4c05b6ceb0cc8530f128
--! Message: Counter bucket rule and the creation's counter target written once; time format message once

-- Written by `npm run db:current` from sql/ORDER: edit sql/, never this file, and run it again.
-- The sql/ files changed since the last committed migration (migrations/sql-state.json), in list order.

--! Included core/input_contract.sql
-- One input contract: the limits of the texts a request may carry, stated once. The table
-- CHECKs and the rules of sql/ call these functions; the route schemas (ajv and OpenAPI) take
-- the same values from src/http/input-contract.ts, which the server compares with
-- app_hidden.input_contract() at start-up (a difference stops it, naming both sides).
-- docs/architecture.md, "One input contract". A CHECK reads its function at each write only:
-- lowering a limit leaves longer rows in place (a migration that lowers one updates them first).

-- A free comment or a decision reason (absences, day-change requests, day modifications).
create or replace function app_hidden.comment_max_length() returns int
language sql immutable parallel safe as $$ select 2000 $$;

-- The comment of an on-call period.
create or replace function app_hidden.on_call_comment_max_length() returns int
language sql immutable parallel safe as $$ select 500 $$;

-- The title and the description of an event.
create or replace function app_hidden.event_title_max_length() returns int
language sql immutable parallel safe as $$ select 200 $$;

create or replace function app_hidden.event_description_max_length() returns int
language sql immutable parallel safe as $$ select 5000 $$;

-- The name of a team, a division, an establishment, a contract type, an absence type or
-- category, an emergency contact; the label of a post.
create or replace function app_hidden.name_max_length() returns int
language sql immutable parallel safe as $$ select 150 $$;

-- An employee's first or last name; an emergency contact's relationship to the employee.
create or replace function app_hidden.person_name_max_length() returns int
language sql immutable parallel safe as $$ select 100 $$;

create or replace function app_hidden.relationship_max_length() returns int
language sql immutable parallel safe as $$ select 100 $$;

-- The job title of a contract; the title of an employee's attachment.
create or replace function app_hidden.job_title_max_length() returns int
language sql immutable parallel safe as $$ select 200 $$;

create or replace function app_hidden.attachment_title_max_length() returns int
language sql immutable parallel safe as $$ select 200 $$;

-- The reason of a manual counter adjustment (back-office).
create or replace function app_hidden.adjustment_reason_max_length() returns int
language sql immutable parallel safe as $$ select 500 $$;

-- An e-mail address: its shape and its length (an employee's professional address, an
-- emergency contact's).
create or replace function app_hidden.email_pattern() returns text
language sql immutable parallel safe as $$ select '^[^@\s]+@[^@\s]+\.[^@\s]+$' $$;

create or replace function app_hidden.email_max_length() returns int
language sql immutable parallel safe as $$ select 254 $$;

-- A phone number of an emergency contact (06 12 34 56 78, +33 6 12 34 56 78...).
create or replace function app_hidden.phone_pattern() returns text
language sql immutable parallel safe as $$ select '^\+?[0-9][0-9 .\-]{4,22}[0-9]$' $$;

-- A French social security number, 13 digits or 15 with the key (spaces removed first).
create or replace function app_hidden.social_security_number_pattern() returns text
language sql immutable parallel safe as $$
  select '^[12][0-9]{2}(0[1-9]|1[0-2]|[2-9][0-9])(2[AB]|[0-9]{2})[0-9]{6}([0-9]{2})?$'
$$;

-- A username: username_min_length() to username_max_length() characters among letters, digits and . _ @ + -.
create or replace function app_hidden.username_min_length() returns int
language sql immutable parallel safe as $$ select 2 $$;

create or replace function app_hidden.username_max_length() returns int
language sql immutable parallel safe as $$ select 150 $$;

create or replace function app_hidden.username_pattern() returns text
language sql immutable parallel safe as $$
  select '^[A-Za-z0-9._@+\-]{' || app_hidden.username_min_length() || ',' || app_hidden.username_max_length() || '}$'
$$;

-- A time of day written HH:MM, 00:00 to 23:59 (the hours of an absence, the slots of a day,
-- a post's times, the organisation file's); the route schemas' format time-hm.
create or replace function app_hidden.time_pattern() returns text
language sql immutable parallel safe as $$ select '^([01][0-9]|2[0-3]):[0-5][0-9]$' $$;

-- The answer to a time that does not match it, under the field to correct (the route schemas'
-- ajv message for format time-hm says the same, src/http/validation.ts).
create or replace function app_hidden.time_format_message() returns text
language sql immutable parallel safe as $$ select 'Heure invalide : format attendu HH:MM.' $$;

-- The answer to a text over its limit, under the field to correct.
create or replace function app_hidden.max_length_message(p_max int) returns text
language sql immutable parallel safe as $$ select format('Au plus %s caractères.', p_max) $$;

-- Every limit above by the name src/http/input-contract.ts gives it (the start-up comparison).
create or replace function app_hidden.input_contract() returns jsonb
language sql immutable parallel safe as $$
  select jsonb_build_object(
    'commentMaxLength', app_hidden.comment_max_length(),
    'onCallCommentMaxLength', app_hidden.on_call_comment_max_length(),
    'eventTitleMaxLength', app_hidden.event_title_max_length(),
    'eventDescriptionMaxLength', app_hidden.event_description_max_length(),
    'nameMaxLength', app_hidden.name_max_length(),
    'adjustmentReasonMaxLength', app_hidden.adjustment_reason_max_length(),
    'personNameMaxLength', app_hidden.person_name_max_length(),
    'relationshipMaxLength', app_hidden.relationship_max_length(),
    'jobTitleMaxLength', app_hidden.job_title_max_length(),
    'attachmentTitleMaxLength', app_hidden.attachment_title_max_length(),
    'emailMaxLength', app_hidden.email_max_length(),
    'usernameMaxLength', app_hidden.username_max_length(),
    'usernamePattern', app_hidden.username_pattern(),
    'timePattern', app_hidden.time_pattern(),
    -- Thresholds of sql/core/limits.sql that route descriptions and multipart limits quote.
    'retroactivityDays', app_hidden.retroactivity_days(),
    'planningMaxDays', app_hidden.planning_max_days(),
    'documentMaxBytes', app_hidden.document_max_bytes())
$$;

-- A CHECK constraint of a table created before its limit came from here: replaced when its
-- definition differs (a database built from sql/ alone already has the new one, inline).
create or replace function app_private.ensure_check(p_table regclass, p_name text, p_check text) returns void
language plpgsql volatile as $$
declare
  v_current text;
begin
  select pg_get_constraintdef(c.oid) into v_current
  from pg_constraint c where c.conrelid = p_table and c.conname = p_name;
  if v_current is distinct from 'CHECK ' || p_check then
    execute format('alter table %s drop constraint if exists %I', p_table, p_name);
    execute format('alter table %s add constraint %I check %s', p_table, p_name, p_check);
  end if;
end;
$$;
--! EndIncluded core/input_contract.sql
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

-- The draft of a body (creation) or of a stored absence corrected by a body: a key present
-- in the body wins (null included), an absent key keeps the stored value.
create or replace function app_hidden.absence_draft_of(p_body jsonb, p_base app_public.absences default null)
returns app_hidden.absence_draft
language plpgsql stable as $$
declare
  d app_hidden.absence_draft;
begin
  d.employee_id := case when p_body ? 'employee' then (p_body ->> 'employee')::int else p_base.employee_id end;
  d.type_id := case when p_body ? 'type' then (p_body ->> 'type')::int else p_base.type_id end;
  d.date_start := case when p_body ? 'date_start' then (p_body ->> 'date_start')::date else p_base.date_start end;
  d.date_end := case when p_body ? 'date_end' then (p_body ->> 'date_end')::date else p_base.date_end end;
  d.start_half := case when p_body ? 'start_half' then p_body ->> 'start_half' else p_base.start_half end;
  d.end_half := case when p_body ? 'end_half' then p_body ->> 'end_half' else p_base.end_half end;
  d.start_time := case when p_body ? 'start_time' then (p_body ->> 'start_time')::time else p_base.start_time end;
  d.end_time := case when p_body ? 'end_time' then (p_body ->> 'end_time')::time else p_base.end_time end;
  -- A creation without date_end lies on one date (hourly types, single days).
  if p_base.id is null and d.date_end is null then
    d.date_end := d.date_start;
  end if;
  return d;
end;
$$;

-- After a requalification or an adjustment, fields the new type cannot carry are dropped
-- unless the body names them (then the rules refuse them): an hourly type has no half-day,
-- a day type has no hours, and a whole-day type is taken whole ("an adjustment must take
-- it whole"). An unchanged absence keeps what it has (a half-day stored before the rule
-- stays as it is).
create or replace function app_hidden.absence_draft_normalize(p_draft app_hidden.absence_draft, p_body jsonb,
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
    if not p_body ? 'start_half' then d.start_half := null; end if;
    if not p_body ? 'end_half' then d.end_half := null; end if;
  else
    if not p_body ? 'start_time' then d.start_time := null; end if;
    if not p_body ? 'end_time' then d.end_time := null; end if;
    if not v_type.half_day_allowed then
      if not p_body ? 'start_half' then d.start_half := null; end if;
      if not p_body ? 'end_half' then d.end_half := null; end if;
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
--! Included counters/functions.sql
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
  select coalesce(jsonb_agg(jsonb_build_object('counter_id', n.counter_id, 'code', n.code, 'year', n.year,
                                               'bucket', n.bucket, 'quantity', n.quantity)), '[]'::jsonb)
    into v_current
  from app_private.absence_counter_nets(array[p_absence_id]) n;

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
                                          'remaining', 'Restant')))
    from app_private.counter_balances_of(v_employee, v_year) b), '{}'::jsonb);
end;
$$;
comment on function app_public.counters_read(integer, integer) is
'SPEC Counters, GET /api/counters/?employee=&year=: the counters of an employee for a civil year
(default: the caller, this year), keyed by counter code with Acquis, Pris, Planifiés and Restant; the
employee reads their own, holders of absences.view_absence_queue their perimeter, anybody else gets 404.';
--! EndIncluded counters/functions.sql
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

-- The same, for the writes that still take a body (PATCH, validation with corrections).
create or replace function app_hidden.absence_check_version(p_absence app_public.absences, p_body jsonb, p_required boolean)
returns void
language plpgsql stable as $$
begin
  perform app_hidden.absence_check_version(p_absence, (p_body ->> 'version')::int, p_required);
end;
$$;

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

-- POST /api/absences/<id>/preview/: what a correction would do (manager side). The row
-- excludes itself from overlap, caps and splitting; effects are the difference with what
-- it holds now.
create or replace function app_public.absence_preview_row(p_id int, p_body jsonb) returns jsonb
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v app_public.absences;
  d app_hidden.absence_draft;
  v_body jsonb := p_body - 'employee';
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
  d := app_hidden.absence_draft_normalize(app_hidden.absence_draft_of(v_body, v), v_body, v);
  v_eval := app_private.absence_evaluate(d, v.id, 'manager',
                                         case when v.author_account_id = app_private.employee_account_id(v.employee_id)
                                              then v.submitted_at end, v_today);
  v_bucket := app_hidden.absence_counter_bucket(v.status, d.date_start, v_today);
  return app_hidden.absence_preview_answer(v_eval, app_private.absence_counter_effects(v_eval -> 'plan', v_bucket, v.id));
end;
$$;
comment on function app_public.absence_preview_row(integer, jsonb) is
'SPEC Absences, POST /api/absences/<id>/preview/ (manager side): what correcting this absence with the
body would do, writing nothing; the row excludes itself from overlap, cap and splitting, and counter
effects are the difference with what it holds now.';

-- PATCH /api/absences/<id>/ (manager side): corrections of the period, the type, the hours
-- or the comment rerun every declaration rule and compensate the counters; documents may
-- be added (add_documents) and removed (remove_document_ids, which must belong to it).
create or replace function app_public.absence_update(p_id int, p_body jsonb, p_public_url text default null) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v app_public.absences;
  v_new app_public.absences;
  d app_hidden.absence_draft;
  v_body jsonb := p_body - 'employee' - 'status';
  v_today date := app_hidden.today();
  v_period_changed boolean;
  v_comment_changed boolean;
  v_remove int[];
  v_errors jsonb := '{}'::jsonb;
  v_eval jsonb;
  v_bad int;
begin
  v := app_hidden.absence_lock(p_id);
  perform app_hidden.absence_check_corrector(v);
  perform app_hidden.absence_check_version(v, v_body, false);

  d := app_hidden.absence_draft_normalize(app_hidden.absence_draft_of(v_body, v), v_body, v);
  v_period_changed := row(d.type_id, d.date_start, d.date_end, d.start_half, d.end_half, d.start_time, d.end_time)
    is distinct from row(v.type_id, v.date_start, v.date_end, v.start_half, v.end_half, v.start_time, v.end_time);
  v_comment_changed := v_body ? 'comment' and nullif(btrim(v_body ->> 'comment'), '') is distinct from v.comment;
  if jsonb_typeof(v_body -> 'remove_document_ids') = 'array' then
    v_remove := array(select (x #>> '{}')::int from jsonb_array_elements(v_body -> 'remove_document_ids') x);
  end if;

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
  v_errors := v_errors || app_hidden.document_metadata_errors(v_body -> 'add_documents', 'add_documents');
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
     and coalesce(jsonb_array_length(nullif(v_body -> 'add_documents', 'null'::jsonb)), 0) = 0 then
    return app_hidden.absence_json(v.id, p_public_url);
  end if;

  perform app_private.set_audit_verb(case when v_period_changed or v_comment_changed then 'Correction' else 'Modification' end);
  update app_public.absences a set
    type_id = d.type_id, date_start = d.date_start, date_end = d.date_end, start_half = d.start_half,
    end_half = d.end_half, start_time = d.start_time, end_time = d.end_time,
    comment = case when v_comment_changed then nullif(btrim(v_body ->> 'comment'), '') else a.comment end,
    counted_quantity = case when v_period_changed then (v_eval ->> 'quantity')::numeric else a.counted_quantity end,
    counted_unit = case when v_period_changed then v_eval ->> 'unit' else a.counted_unit end,
    warnings = case when v_period_changed then v_eval -> 'warnings' else a.warnings end,
    corrected_by = case when v_period_changed or v_comment_changed then app_hidden.current_account_id() else a.corrected_by end,
    version = a.version + 1
  where a.id = v.id
  returning * into v_new;
  perform app_private.set_audit_verb('');

  delete from app_public.absence_documents doc where doc.absence_id = v.id and doc.id = any (v_remove);
  perform app_hidden.absence_documents_insert(v.id, v_body -> 'add_documents');
  if v_period_changed then
    perform app_private.absence_sync_counters(v.id, 'edit', v_today);
    perform app_private.absence_alert_events(v_new, v_eval -> 'events');
  end if;
  return app_hidden.absence_json(v.id, p_public_url);
end;
$$;
comment on function app_public.absence_update(integer, jsonb, text) is
'SPEC Absences, PATCH /api/absences/<id>/ and declaration rules 1-11 and 18 (manager side; an employee
gets 403): corrects the period, type, hours or comment, rerunning every declaration rule and
compensating the counters, and adds (add_documents) or removes (remove_document_ids, which must belong
to it) documents. Returns the absence with its warnings and documents.';

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
  -- The correction, as the keys sent (the draft functions tell a key sent from one absent).
  v_body jsonb := jsonb_strip_nulls(jsonb_build_object('date_end', p_date_end, 'type', p_type))
                  || case when p_start_time is null then '{}'::jsonb else jsonb_build_object('start_time', p_start_time) end
                  || case when p_end_time is null then '{}'::jsonb else jsonb_build_object('end_time', p_end_time) end;
  v_reason text := nullif(btrim(p_reason), '');
  v_today date := app_hidden.today();
  v_corrected boolean;
  v_eval jsonb;
  v_key text;
begin
  v := app_hidden.absence_lock(p_id);
  perform app_hidden.absence_check_version(v, p_version, true);
  perform app_hidden.absence_check_decider(v);

  if v.status = 'cancellation_requested' then
    foreach v_key in array array['date_end', 'type', 'start_time', 'end_time'] loop
      if v_body ? v_key then
        perform app_hidden.invalid(v_key, 'Une annulation ne se corrige pas : accordez-la ou refusez-la.', 'WV212');
      end if;
    end loop;
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
  foreach v_key in array array['start_time', 'end_time'] loop
    if not app_hidden.json_time_ok(v_body -> v_key) then
      perform app_hidden.invalid(v_key, app_hidden.time_format_message());
    end if;
  end loop;

  d := app_hidden.absence_draft_normalize(app_hidden.absence_draft_of(v_body, v), v_body, v);
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
--! Included backoffice/reference.sql
-- Reference administration of the back-office (SPEC Permissions rule 6: read by every
-- authenticated account, written by staff accounts only): absence categories (a tree of
-- two levels), absence types (reasons), posts, counter associations. The API keeps the
-- reference read-only (POST /api/absence-types/ answers 405): these functions are called by
-- the back-office only. Each write is checked here, then again by the tables' policies
-- (insert/update/delete for staff) and triggers (two-level tree, shared code namespace,
-- orphan rules of sql/counters/triggers.sql), and audited.

insert into app_private.audit_models (model, label) values
  ('absence_category', 'Catégorie d''absence'),
  ('absence_type', 'Motif d''absence'),
  ('absence_type_contract_type', 'Type de contrat d''un motif d''absence'),
  ('counter_association', 'Association motif – compteur'),
  ('post', 'Poste'),
  ('counter_adjustment', 'Ajustement manuel de compteur')
on conflict do nothing;

do $$
declare
  t text;
begin
  foreach t in array array['absence_categories', 'absence_types', 'absence_type_contract_types',
                           'counter_associations', 'posts'] loop
    execute format('drop policy if exists insert_staff on app_public.%I', t);
    execute format('create policy insert_staff on app_public.%I for insert to wfm_api
                    with check ((select app_hidden.current_account_is_staff()))', t);
    execute format('drop policy if exists update_staff on app_public.%I', t);
    execute format('create policy update_staff on app_public.%I for update to wfm_api
                    using ((select app_hidden.current_account_is_staff()))
                    with check ((select app_hidden.current_account_is_staff()))', t);
    execute format('drop policy if exists delete_staff on app_public.%I', t);
    execute format('create policy delete_staff on app_public.%I for delete to wfm_api
                    using ((select app_hidden.current_account_is_staff()))', t);
  end loop;
end;
$$;

create or replace trigger _500_audit after insert or update on app_public.absence_categories
  for each row execute function app_private.tg__audit('absence_category');
create or replace trigger _500_audit_delete before delete on app_public.absence_categories
  for each row execute function app_private.tg__audit('absence_category');
create or replace trigger _500_audit after insert or update on app_public.absence_types
  for each row execute function app_private.tg__audit('absence_type');
create or replace trigger _500_audit_delete before delete on app_public.absence_types
  for each row execute function app_private.tg__audit('absence_type');
create or replace trigger _500_audit after insert or update on app_public.absence_type_contract_types
  for each row execute function app_private.tg__audit('absence_type_contract_type');
create or replace trigger _500_audit_delete before delete on app_public.absence_type_contract_types
  for each row execute function app_private.tg__audit('absence_type_contract_type');
create or replace trigger _500_audit after insert or update on app_public.counter_associations
  for each row execute function app_private.tg__audit('counter_association');
create or replace trigger _500_audit_delete before delete on app_public.counter_associations
  for each row execute function app_private.tg__audit('counter_association');
create or replace trigger _500_audit after insert or update on app_public.posts
  for each row execute function app_private.tg__audit('post');
create or replace trigger _500_audit_delete before delete on app_public.posts
  for each row execute function app_private.tg__audit('post');

-- Absence categories --------------------------------------------------------------------------

create or replace function app_hidden.absence_category_json(c app_public.absence_categories) returns jsonb
language sql stable as $$
  select jsonb_build_object(
    'id', c.id, 'code', c.code, 'name', c.name, 'parent', c.parent_id,
    'parent_name', (select p.name from app_public.absence_categories p where p.id = c.parent_id),
    'position', c.position,
    'children', (select count(*) from app_public.absence_categories k where k.parent_id = c.id),
    'types', (select count(*) from app_public.absence_types t where t.category_id = c.id));
$$;

-- The categories in tree order (each root followed by its sub-categories); p_parent keeps
-- the sub-categories of one root.
create or replace function app_public.absence_categories_search(p_parent int default null, p_page int default 1,
                                                                p_page_size int default 50)
returns jsonb
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  with filtered as (
    select c, c.id, c.name, c.position, c.parent_id,
           coalesce(p.position, c.position) as root_position, coalesce(p.name, c.name) as root_name
    from app_public.absence_categories c
    left join app_public.absence_categories p on p.id = c.parent_id
    where p_parent is null or c.parent_id = p_parent
  ),
  page as (
    select f.c, row_number() over (order by f.root_position, f.root_name, f.parent_id nulls first, f.position, f.name, f.id) as n
    from filtered f
    order by n
    limit app_hidden.page_limit(p_page_size) offset app_hidden.page_offset(p_page, p_page_size)
  )
  select jsonb_build_object(
    'count', (select count(*) from filtered),
    'results', coalesce((select jsonb_agg(app_hidden.absence_category_json(page.c) order by page.n) from page), '[]'::jsonb));
$$;
comment on function app_public.absence_categories_search(integer, integer, integer) is
'SPEC Absence types (category tree of two levels), back-office: one page of the absence categories in
tree order, each root followed by its sub-categories; p_parent keeps the sub-categories of one root.
Readable by every authenticated account.';

create or replace function app_public.absence_category_get(p_id int) returns jsonb
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v app_public.absence_categories;
begin
  select * into v from app_public.absence_categories c where c.id = p_id;
  if not found then
    perform app_hidden.not_found('Catégorie d''absence introuvable.');
  end if;
  return app_hidden.absence_category_json(v);
end;
$$;
comment on function app_public.absence_category_get(integer) is
'SPEC Absence types, back-office: one absence category (404 when absent).';

-- Creates (p_id null) or rewrites a category. The two-level tree is the table's trigger
-- (400 under parent); the code is upper-case letters, digits and _ , unique.
create or replace function app_public.absence_category_save(p_id int, p_code text, p_name text, p_parent int,
                                                            p_position int default 0)
returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_errors jsonb := '{}';
  v_code text := upper(nullif(btrim(p_code), ''));
  v_name text := nullif(btrim(p_name), '');
  v_id int := p_id;
begin
  perform app_hidden.require_staff();
  if p_id is not null then
    perform 1 from app_public.absence_categories c where c.id = p_id for update;
    if not found then
      perform app_hidden.not_found('Catégorie d''absence introuvable.');
    end if;
  end if;
  if v_code is null then
    v_errors := app_hidden.add_error(v_errors, 'code', 'Le code est obligatoire.');
  elsif v_code !~ '^[A-Z][A-Z0-9_]{1,31}$' then
    v_errors := app_hidden.add_error(v_errors, 'code',
      'Code invalide : 2 à 32 caractères, une lettre d''abord, puis lettres, chiffres ou _.');
  elsif exists (select 1 from app_public.absence_categories c where c.code = v_code and c.id is distinct from p_id) then
    v_errors := app_hidden.add_error(v_errors, 'code', format('Le code « %s » est déjà utilisé par une catégorie.', v_code));
  end if;
  if v_name is null then
    v_errors := app_hidden.add_error(v_errors, 'name', 'Le libellé est obligatoire.');
  elsif char_length(v_name) > app_hidden.name_max_length() then
    v_errors := app_hidden.add_error(v_errors, 'name', app_hidden.max_length_message(app_hidden.name_max_length()));
  end if;
  if p_parent is not null and not exists (select 1 from app_public.absence_categories c where c.id = p_parent) then
    v_errors := app_hidden.add_error(v_errors, 'parent', 'Catégorie parente inconnue.');
  end if;
  perform app_hidden.invalid_fields(v_errors, 'WV515') where v_errors <> '{}'::jsonb;
  if p_id is null then
    insert into app_public.absence_categories (code, name, parent_id, position)
    values (v_code, v_name, p_parent, coalesce(p_position, 0))
    returning id into v_id;
  else
    update app_public.absence_categories c
    set code = v_code, name = v_name, parent_id = p_parent, position = coalesce(p_position, 0)
    where c.id = p_id
      and (c.code, c.name, c.parent_id, c.position) is distinct from (v_code, v_name, p_parent, coalesce(p_position, 0));
  end if;
  return app_public.absence_category_get(v_id);
end;
$$;
comment on function app_public.absence_category_save(integer, text, text, integer, integer) is
'SPEC Absence types and Permissions rule 6, back-office: a staff account creates (p_id null) or rewrites
an absence category; the code is upper-case letters, digits and _, unique, and the tree keeps at most
two levels (400 under parent).';

-- Deletes a category that holds neither sub-category nor absence type.
create or replace function app_public.absence_category_delete(p_id int) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  perform app_hidden.require_staff();
  perform 1 from app_public.absence_categories c where c.id = p_id for update;
  if not found then
    perform app_hidden.not_found('Catégorie d''absence introuvable.');
  end if;
  if exists (select 1 from app_public.absence_categories c where c.parent_id = p_id)
     or exists (select 1 from app_public.absence_types t where t.category_id = p_id) then
    perform app_hidden.invalid(null, 'Cette catégorie contient encore des sous-catégories ou des motifs : elle ne peut pas être supprimée.', 'WV515');
  end if;
  delete from app_public.absence_categories c where c.id = p_id;
  return null;
end;
$$;
comment on function app_public.absence_category_delete(integer) is
'SPEC Absence types and Permissions rule 6, back-office: a staff account deletes a category that holds
neither sub-category nor absence type.';

-- Absence types (reasons) -----------------------------------------------------------------------

-- Every field of an absence type as the back-office edits it (the API's absence_type_json
-- plus what the API does not show: ids, activity, position).
create or replace function app_hidden.absence_type_admin_json(p_id int) returns jsonb
language sql stable as $$
  select app_hidden.absence_type_json(t.id) || jsonb_build_object(
    'category_id', t.category_id,
    'category_label', coalesce(p.name || ' › ', '') || c.name,
    'is_active', t.is_active,
    'position', t.position,
    'contract_type_ids', coalesce((select jsonb_agg(a.contract_type_id order by a.contract_type_id)
                                   from app_public.absence_type_contract_types a where a.absence_type_id = t.id), '[]'::jsonb),
    'associations', coalesce((select jsonb_agg(jsonb_build_object('id', ca.id, 'counter_code', ca.counter_code, 'is_active', ca.is_active)
                                               order by ca.counter_code)
                              from app_public.counter_associations ca where ca.absence_type_id = t.id), '[]'::jsonb),
    'absences', (select count(*) from app_public.absences a where a.type_id = t.id))
  from app_public.absence_types t
  join app_public.absence_categories c on c.id = t.category_id
  left join app_public.absence_categories p on p.id = c.parent_id
  where t.id = p_id;
$$;

-- Every type, inactive ones included; p_category keeps a category and its sub-categories.
create or replace function app_public.absence_types_search(p_category int default null, p_active boolean default null,
                                                           p_page int default 1, p_page_size int default 50)
returns jsonb
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  with filtered as (
    select t.id, t.position, t.code
    from app_public.absence_types t
    join app_public.absence_categories c on c.id = t.category_id
    where (p_category is null or c.id = p_category or c.parent_id = p_category)
      and (p_active is null or t.is_active = p_active)
  ),
  page as (
    select f.id, row_number() over (order by f.position, f.code, f.id) as n from filtered f
    order by n
    limit app_hidden.page_limit(p_page_size) offset app_hidden.page_offset(p_page, p_page_size)
  )
  select jsonb_build_object(
    'count', (select count(*) from filtered),
    'results', coalesce((select jsonb_agg(app_hidden.absence_type_admin_json(page.id) order by page.n) from page), '[]'::jsonb));
$$;
comment on function app_public.absence_types_search(integer, boolean, integer, integer) is
'SPEC Absence types, back-office: one page of every absence type, inactive ones included, filtered by
category (with its sub-categories) and activity.';

create or replace function app_public.absence_type_get(p_id int) returns jsonb
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  if not exists (select 1 from app_public.absence_types t where t.id = p_id) then
    perform app_hidden.not_found('Motif d''absence introuvable.');
  end if;
  return app_hidden.absence_type_admin_json(p_id);
end;
$$;
comment on function app_public.absence_type_get(integer) is
'SPEC Absence types, back-office: one absence type with every field of the SPEC table, inactive or not
(404 when absent).';

-- Creates (p_id null) or rewrites an absence type from its body (every field of the SPEC's
-- table): all field errors at once (400, WV516), the code clash with a post under code
-- (app_hidden.code_namespace_clash, the trigger guarding it again under concurrency), the
-- orphan rule of a deactivation under is_active (sql/counters/triggers.sql).
create or replace function app_public.absence_type_save(p_id int, p_body jsonb) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_errors jsonb := '{}';
  v_code text := app_hidden.in_trimmed(p_body, 'code');
  v_name text := app_hidden.in_trimmed(p_body, 'name');
  v_category int := app_hidden.in_int(p_body, 'category');
  v_unit text := coalesce(app_hidden.in_trimmed(p_body, 'unit'), 'day');
  v_cap numeric := app_hidden.in_numeric(p_body, 'annual_cap');
  v_overrun text := coalesce(app_hidden.in_trimmed(p_body, 'cap_overrun'), 'refuse');
  v_effect text := coalesce(app_hidden.in_trimmed(p_body, 'annualisation_effect'), 'none');
  v_half_day boolean := coalesce(app_hidden.in_bool(p_body, 'half_day_allowed'), false);
  v_contract_types int[] := coalesce(app_hidden.in_ids(p_body, 'contract_types'), '{}');
  v_clash text;
  v_id int := p_id;
begin
  perform app_hidden.require_staff();
  if p_id is not null then
    perform 1 from app_public.absence_types t where t.id = p_id for update;
    if not found then
      perform app_hidden.not_found('Motif d''absence introuvable.');
    end if;
  end if;
  if v_code is null then
    v_errors := app_hidden.add_error(v_errors, 'code', 'Le code est obligatoire.');
  elsif app_hidden.code_well_formed(v_code) is false then
    v_errors := app_hidden.add_error(v_errors, 'code', 'Code invalide : 1 à 16 caractères, lettres, chiffres et _ + -.');
  elsif exists (select 1 from app_public.absence_types t where lower(t.code) = lower(v_code) and t.id is distinct from p_id) then
    v_errors := app_hidden.add_error(v_errors, 'code', format('Le code « %s » est déjà utilisé par un autre motif d''absence.', v_code));
  else
    v_clash := app_hidden.code_namespace_clash('absence_types', v_code);
    if v_clash is not null then
      v_errors := app_hidden.add_error(v_errors, 'code', v_clash);
    end if;
  end if;
  if v_name is null then
    v_errors := app_hidden.add_error(v_errors, 'name', 'Le libellé est obligatoire.');
  elsif char_length(v_name) > app_hidden.name_max_length() then
    v_errors := app_hidden.add_error(v_errors, 'name', app_hidden.max_length_message(app_hidden.name_max_length()));
  end if;
  if v_category is null then
    v_errors := app_hidden.add_error(v_errors, 'category', 'La catégorie est obligatoire.');
  elsif not exists (select 1 from app_public.absence_categories c where c.id = v_category) then
    v_errors := app_hidden.add_error(v_errors, 'category', 'Catégorie inconnue.');
  end if;
  if v_unit not in ('day', 'hour') then
    v_errors := app_hidden.add_error(v_errors, 'unit', 'Unité inconnue : Jour (day) ou Heure (hour).');
  elsif v_unit = 'hour' and v_half_day then
    v_errors := app_hidden.add_error(v_errors, 'half_day_allowed', 'Un motif saisi en heures ne se prend pas par demi-journée.');
  end if;
  if v_cap is not null and v_cap <= 0 then
    v_errors := app_hidden.add_error(v_errors, 'annual_cap', 'Le plafond annuel est strictement positif, ou vide pour aucun plafond.');
  elsif v_cap is not null and (v_cap >= 1000000 or v_cap <> round(v_cap, 2)) then
    v_errors := app_hidden.add_error(v_errors, 'annual_cap', 'Au plus 999 999,99, avec deux décimales au plus.');
  end if;
  if v_overrun not in ('refuse', 'warn') then
    v_errors := app_hidden.add_error(v_errors, 'cap_overrun', 'Choix inconnu : Refuser (refuse) ou Avertir (warn).');
  end if;
  if v_effect not in ('none', 'neutralise', 'impute') then
    v_errors := app_hidden.add_error(v_errors, 'annualisation_effect', 'Effet inconnu : none, neutralise ou impute.');
  end if;
  if exists (select 1 from unnest(v_contract_types) x(id) where not exists (select 1 from app_public.contract_types ct where ct.id = x.id)) then
    v_errors := app_hidden.add_error(v_errors, 'contract_types', 'Type de contrat inconnu.');
  end if;
  perform app_hidden.invalid_fields(v_errors, 'WV516') where v_errors <> '{}'::jsonb;

  if p_id is null then
    insert into app_public.absence_types (code, name, category_id, unit, paid, splittable, annual_cap, cap_overrun, is_active,
                                          half_day_allowed, documents_expected, validation_required, annualisation_effect, position)
    values (v_code, v_name, v_category, v_unit, coalesce(app_hidden.in_bool(p_body, 'paid'), false),
            coalesce(app_hidden.in_bool(p_body, 'splittable'), true), v_cap, v_overrun,
            coalesce(app_hidden.in_bool(p_body, 'is_active'), true), v_half_day,
            coalesce(app_hidden.in_bool(p_body, 'documents_expected'), false),
            coalesce(app_hidden.in_bool(p_body, 'validation_required'), true), v_effect,
            coalesce(app_hidden.in_int(p_body, 'position'), 0))
    returning id into v_id;
  else
    update app_public.absence_types t set
      code = v_code, name = v_name, category_id = v_category, unit = v_unit,
      paid = coalesce(app_hidden.in_bool(p_body, 'paid'), t.paid),
      splittable = coalesce(app_hidden.in_bool(p_body, 'splittable'), t.splittable),
      annual_cap = v_cap, cap_overrun = v_overrun,
      is_active = coalesce(app_hidden.in_bool(p_body, 'is_active'), t.is_active),
      half_day_allowed = v_half_day,
      documents_expected = coalesce(app_hidden.in_bool(p_body, 'documents_expected'), t.documents_expected),
      validation_required = coalesce(app_hidden.in_bool(p_body, 'validation_required'), t.validation_required),
      annualisation_effect = v_effect,
      position = coalesce(app_hidden.in_int(p_body, 'position'), t.position)
    where t.id = p_id;
  end if;
  -- Contract types concerned: empty means every contract.
  delete from app_public.absence_type_contract_types a
  where a.absence_type_id = v_id and a.contract_type_id <> all (v_contract_types);
  insert into app_public.absence_type_contract_types (absence_type_id, contract_type_id)
  select v_id, x.id from unnest(v_contract_types) x(id)
  on conflict do nothing;
  return app_hidden.absence_type_admin_json(v_id);
end;
$$;
comment on function app_public.absence_type_save(integer, jsonb) is
'SPEC Absence types and declaration rule 17, back-office: a staff account creates (p_id null) or rewrites
an absence type; all field errors at once, a code equal to a post code refused under code, and a
deactivation that would orphan an active counter refused under is_active.';

-- Deletes a type no absence uses; its associations go first, each under the orphan rule.
create or replace function app_public.absence_type_delete(p_id int) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  perform app_hidden.require_staff();
  perform 1 from app_public.absence_types t where t.id = p_id for update;
  if not found then
    perform app_hidden.not_found('Motif d''absence introuvable.');
  end if;
  if exists (select 1 from app_public.absences a where a.type_id = p_id) then
    perform app_hidden.invalid(null, 'Des absences utilisent ce motif : il ne peut pas être supprimé (désactivez-le).', 'WV516');
  end if;
  delete from app_public.counter_associations ca where ca.absence_type_id = p_id;
  delete from app_public.absence_types t where t.id = p_id;
  return null;
end;
$$;
comment on function app_public.absence_type_delete(integer) is
'SPEC Absence types and declaration rule 17, back-office: a staff account deletes a type that no absence
uses; its counter associations go first, each under the orphan rule.';

-- Posts -----------------------------------------------------------------------------------------

create or replace function app_hidden.post_admin_json(p app_public.posts) returns jsonb
language sql stable as $$
  select jsonb_build_object(
    'id', p.id, 'code', p.code, 'label', p.label, 'establishment', p.establishment_id,
    'establishment_name', (select e.name from app_public.establishments e where e.id = p.establishment_id),
    'start_time', to_char(p.start_time, 'HH24:MI'), 'end_time', to_char(p.end_time, 'HH24:MI'),
    'break_start_time', to_char(p.break_start_time, 'HH24:MI'), 'break_end_time', to_char(p.break_end_time, 'HH24:MI'),
    'break_paid', p.break_paid, 'is_active', p.is_active);
$$;

create or replace function app_public.posts_search(p_establishment int default null, p_active boolean default null,
                                                   p_page int default 1, p_page_size int default 50)
returns jsonb
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  with filtered as (
    select p, p.id, p.code, e.name as establishment_name
    from app_public.posts p join app_public.establishments e on e.id = p.establishment_id
    where (p_establishment is null or p.establishment_id = p_establishment)
      and (p_active is null or p.is_active = p_active)
  ),
  page as (
    select f.p, row_number() over (order by f.establishment_name, lower(f.code), f.id) as n from filtered f
    order by n
    limit app_hidden.page_limit(p_page_size) offset app_hidden.page_offset(p_page, p_page_size)
  )
  select jsonb_build_object(
    'count', (select count(*) from filtered),
    'results', coalesce((select jsonb_agg(app_hidden.post_admin_json(page.p) order by page.n) from page), '[]'::jsonb));
$$;
comment on function app_public.posts_search(integer, boolean, integer, integer) is
'SPEC Permissions rule 6, back-office: one page of the posts with their hours and break, filtered by
establishment and activity.';

create or replace function app_public.post_get(p_id int) returns jsonb
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v app_public.posts;
begin
  select * into v from app_public.posts p where p.id = p_id;
  if not found then
    perform app_hidden.not_found('Poste introuvable.');
  end if;
  return app_hidden.post_admin_json(v);
end;
$$;
comment on function app_public.post_get(integer) is
'SPEC Permissions rule 6, back-office: one post with its establishment, hours and break (404 when
absent).';

-- Creates (p_id null) or rewrites a post: field errors at once (400, WV517), the code clash
-- with an absence type under code (the same shared rule as absence_type_save).
create or replace function app_public.post_save(p_id int, p_body jsonb) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_errors jsonb := '{}';
  v_code text := app_hidden.in_trimmed(p_body, 'code');
  v_label text := app_hidden.in_trimmed(p_body, 'label');
  v_establishment int := app_hidden.in_int(p_body, 'establishment');
  v_start time;
  v_end time;
  v_break_start time;
  v_break_end time;
  v_clash text;
  v_field text;
  v_id int := p_id;
begin
  perform app_hidden.require_staff();
  if p_id is not null then
    perform 1 from app_public.posts p where p.id = p_id for update;
    if not found then
      perform app_hidden.not_found('Poste introuvable.');
    end if;
  end if;
  if v_code is null then
    v_errors := app_hidden.add_error(v_errors, 'code', 'Le code est obligatoire.');
  elsif app_hidden.code_well_formed(v_code) is false then
    v_errors := app_hidden.add_error(v_errors, 'code', 'Code invalide : 1 à 16 caractères, lettres, chiffres et _ + -.');
  elsif app_hidden.post_code_used_in_establishment(v_establishment, v_code, p_id) then
    v_errors := app_hidden.add_error(v_errors, 'code', format('Le code « %s » est déjà utilisé par un poste de cet établissement.', v_code));
  else
    v_clash := app_hidden.code_namespace_clash('posts', v_code);
    if v_clash is not null then
      v_errors := app_hidden.add_error(v_errors, 'code', v_clash);
    end if;
  end if;
  if v_label is null then
    v_errors := app_hidden.add_error(v_errors, 'label', 'Le libellé est obligatoire.');
  elsif char_length(v_label) > app_hidden.name_max_length() then
    v_errors := app_hidden.add_error(v_errors, 'label', app_hidden.max_length_message(app_hidden.name_max_length()));
  end if;
  if v_establishment is null then
    v_errors := app_hidden.add_error(v_errors, 'establishment', 'L''établissement est obligatoire.');
  elsif not exists (select 1 from app_public.establishments e where e.id = v_establishment) then
    v_errors := app_hidden.add_error(v_errors, 'establishment', 'Établissement inconnu.');
  end if;
  foreach v_field in array array['start_time', 'end_time', 'break_start_time', 'break_end_time'] loop
    if coalesce(app_hidden.in_text(p_body, v_field), '') !~ app_hidden.time_pattern()
       and (v_field in ('start_time', 'end_time') or app_hidden.in_text(p_body, v_field) is not null) then
      v_errors := app_hidden.add_error(v_errors, v_field, app_hidden.time_format_message());
    end if;
  end loop;
  perform app_hidden.invalid_fields(v_errors, 'WV517') where v_errors <> '{}'::jsonb;
  v_start := (p_body ->> 'start_time')::time;
  v_end := (p_body ->> 'end_time')::time;
  v_break_start := (p_body ->> 'break_start_time')::time;
  v_break_end := (p_body ->> 'break_end_time')::time;
  if v_start = v_end then
    v_errors := app_hidden.add_error(v_errors, 'end_time', 'La fin doit différer du début (une fin avant le début finit le lendemain).');
  end if;
  if (v_break_start is null) <> (v_break_end is null) then
    v_errors := app_hidden.add_error(v_errors, case when v_break_start is null then 'break_start_time' else 'break_end_time' end,
                                     'Une pause a un début et une fin.');
  end if;
  perform app_hidden.invalid_fields(v_errors, 'WV517') where v_errors <> '{}'::jsonb;
  if p_id is null then
    insert into app_public.posts (code, label, establishment_id, start_time, end_time, break_start_time, break_end_time, break_paid, is_active)
    values (v_code, v_label, v_establishment, v_start, v_end, v_break_start, v_break_end,
            coalesce(app_hidden.in_bool(p_body, 'break_paid'), false), coalesce(app_hidden.in_bool(p_body, 'is_active'), true))
    returning id into v_id;
  else
    update app_public.posts p set
      code = v_code, label = v_label, establishment_id = v_establishment, start_time = v_start, end_time = v_end,
      break_start_time = v_break_start, break_end_time = v_break_end,
      break_paid = coalesce(app_hidden.in_bool(p_body, 'break_paid'), p.break_paid),
      is_active = coalesce(app_hidden.in_bool(p_body, 'is_active'), p.is_active)
    where p.id = p_id;
  end if;
  return app_public.post_get(v_id);
end;
$$;
comment on function app_public.post_save(integer, jsonb) is
'SPEC Absence types (code compared with the codes of posts) and Permissions rule 6, back-office: a staff
account creates (p_id null) or rewrites a post; all field errors at once, a code equal to an absence
type code refused under code.';

-- Counter associations (reason – counter) --------------------------------------------------------

create or replace function app_hidden.counter_association_json(p_id int) returns jsonb
language sql stable as $$
  select jsonb_build_object(
    'id', ca.id, 'absence_type', ca.absence_type_id, 'absence_type_code', t.code, 'absence_type_name', t.name,
    'absence_type_active', t.is_active, 'counter_code', ca.counter_code, 'counter_name', k.name,
    'is_consumable', k.is_consumable, 'is_active', ca.is_active)
  from app_public.counter_associations ca
  join app_public.absence_types t on t.id = ca.absence_type_id
  join app_public.counter_kinds k on k.code = ca.counter_code
  where ca.id = p_id;
$$;

create or replace function app_public.counter_associations_search(p_counter_code text default null, p_absence_type int default null,
                                                                   p_page int default 1, p_page_size int default 50)
returns jsonb
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  with filtered as (
    select ca.id, ca.counter_code, t.code
    from app_public.counter_associations ca join app_public.absence_types t on t.id = ca.absence_type_id
    where (p_counter_code is null or ca.counter_code = p_counter_code)
      and (p_absence_type is null or ca.absence_type_id = p_absence_type)
  ),
  page as (
    select f.id, row_number() over (order by f.counter_code, f.code, f.id) as n from filtered f
    order by n
    limit app_hidden.page_limit(p_page_size) offset app_hidden.page_offset(p_page, p_page_size)
  )
  select jsonb_build_object(
    'count', (select count(*) from filtered),
    'results', coalesce((select jsonb_agg(app_hidden.counter_association_json(page.id) order by page.n) from page), '[]'::jsonb));
$$;
comment on function app_public.counter_associations_search(text, integer, integer, integer) is
'SPEC Absence types (counter_codes) and declaration rule 17, back-office: one page of the associations
between absence types and counters, filtered by counter code and absence type.';

create or replace function app_public.counter_association_get(p_id int) returns jsonb
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  if not exists (select 1 from app_public.counter_associations ca where ca.id = p_id) then
    perform app_hidden.not_found('Association introuvable.');
  end if;
  return app_hidden.counter_association_json(p_id);
end;
$$;
comment on function app_public.counter_association_get(integer) is
'SPEC declaration rule 17, back-office: one association between an absence type and a counter (404 when
absent).';

-- Creates (p_id null) or rewrites an association. Deactivating it, or moving it to another
-- reason or counter, is refused under is_active while it would orphan an active counter
-- (trigger of sql/counters/triggers.sql, WV311).
create or replace function app_public.counter_association_save(p_id int, p_absence_type int, p_counter_code text,
                                                               p_is_active boolean default true)
returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_errors jsonb := '{}';
  v_code text := upper(nullif(btrim(p_counter_code), ''));
  v_id int := p_id;
begin
  perform app_hidden.require_staff();
  if p_id is not null then
    perform 1 from app_public.counter_associations ca where ca.id = p_id for update;
    if not found then
      perform app_hidden.not_found('Association introuvable.');
    end if;
  end if;
  if p_absence_type is null then
    v_errors := app_hidden.add_error(v_errors, 'absence_type', 'Le motif est obligatoire.');
  elsif not exists (select 1 from app_public.absence_types t where t.id = p_absence_type) then
    v_errors := app_hidden.add_error(v_errors, 'absence_type', 'Motif inconnu.');
  end if;
  if v_code is null then
    v_errors := app_hidden.add_error(v_errors, 'counter_code', 'Le compteur est obligatoire.');
  elsif not exists (select 1 from app_public.counter_kinds k where k.code = v_code) then
    v_errors := app_hidden.add_error(v_errors, 'counter_code', 'Compteur inconnu.');
  elsif exists (select 1 from app_public.counter_associations ca
                where ca.absence_type_id = p_absence_type and ca.counter_code = v_code and ca.id is distinct from p_id) then
    v_errors := app_hidden.add_error(v_errors, 'counter_code', 'Ce motif est déjà associé à ce compteur.');
  end if;
  perform app_hidden.invalid_fields(v_errors, 'WV312') where v_errors <> '{}'::jsonb;
  if p_id is null then
    insert into app_public.counter_associations (absence_type_id, counter_code, is_active)
    values (p_absence_type, v_code, coalesce(p_is_active, true))
    returning id into v_id;
  else
    update app_public.counter_associations ca
    set absence_type_id = p_absence_type, counter_code = v_code, is_active = coalesce(p_is_active, ca.is_active)
    where ca.id = p_id
      and (ca.absence_type_id, ca.counter_code, ca.is_active) is distinct from (p_absence_type, v_code, coalesce(p_is_active, ca.is_active));
  end if;
  return app_hidden.counter_association_json(v_id);
end;
$$;
comment on function app_public.counter_association_save(integer, integer, text, boolean) is
'SPEC declaration rule 17 and Permissions rule 6, back-office: a staff account creates (p_id null) or
rewrites an association between an absence type and a counter; deactivating it or moving it is refused
under is_active while it would orphan an active counter.';

-- Deletes an association, unless it would orphan an active counter (trigger, WV311).
create or replace function app_public.counter_association_delete(p_id int) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  perform app_hidden.require_staff();
  perform 1 from app_public.counter_associations ca where ca.id = p_id for update;
  if not found then
    perform app_hidden.not_found('Association introuvable.');
  end if;
  delete from app_public.counter_associations ca where ca.id = p_id;
  return null;
end;
$$;
comment on function app_public.counter_association_delete(integer) is
'SPEC declaration rule 17 and Permissions rule 6, back-office: a staff account deletes an association
between an absence type and a counter, unless it would orphan an active counter.';
--! EndIncluded backoffice/reference.sql
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
  app_private.rate_limit_hit(text, int, interval)
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
