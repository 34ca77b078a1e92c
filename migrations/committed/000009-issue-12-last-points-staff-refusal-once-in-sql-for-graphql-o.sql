--! Previous: sha1:437d89f07e7cb45dcedf7804981213b604422b3b
--! Hash: sha1:d12f0bc82c9ff4234e94df15b35faf169589eae2
--! Message: Issue 12 last points (staff refusal once in SQL for GraphQL, one time pattern, absence_validate typed, thresholds quoted from the contract) and issue 15 third passes (queue list text and kept plans, creation reuses its counter plan, planning parts cut on whole characters)

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
--! Included auth/rate_limits.sql
-- Rate limits shared by every server process (SPEC Limits, CONTRACT section 7): one row per
-- bucket ('ip:…', 'account:…', 'login:…', 'reset:…', 'bo-login-…') holding its current fixed
-- window. UNLOGGED: counters are abuse protection, not data; they are not worth a WAL write
-- per request, and a crash that empties them only forgives the current window. Not
-- replicated to a standby either (docs/running.md).
create unlogged table if not exists app_private.rate_limit_windows (
  bucket text primary key check (length(bucket) <= 400),
  window_start timestamptz not null,
  window_end timestamptz not null,
  hits int not null check (hits >= 1)
);
-- No policy: the request roles never read it; only the security-definer functions below do.
alter table app_private.rate_limit_windows enable row level security;
create index if not exists rate_limit_windows_end_idx on app_private.rate_limit_windows (window_end);

comment on table app_private.rate_limit_windows is
  'Fixed-window request counters of the rate limits, shared by all server processes; purged by purge_rate_limit_windows.';

-- Counts one hit on `p_bucket` and says whether it is allowed. The window opens at the first
-- hit of a bucket (or the first after the previous window ended) and lasts `p_window`. One
-- statement (an upsert) so that concurrent hits from several processes count exactly once each.
-- retry_after: whole seconds until the window ends (at least 1) when refused, else 0.
-- The wall clock (clock_timestamp), never the business clock the tests freeze.
-- plpgsql: its plan is kept by the connection (a security definer SQL function is never inlined, and
-- was parsed and planned at each of its calls: each request of the service makes one).
create or replace function app_private.rate_limit_hit(p_bucket text, p_limit int, p_window interval)
returns table (allowed boolean, remaining int, retry_after int)
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
#variable_conflict use_column
begin
  return query
  with hit as (
    insert into app_private.rate_limit_windows as w (bucket, window_start, window_end, hits)
    values (p_bucket, clock_timestamp(), clock_timestamp() + p_window, 1)
    on conflict (bucket) do update set
      window_start = case when w.window_end <= excluded.window_start then excluded.window_start else w.window_start end,
      window_end = case when w.window_end <= excluded.window_start then excluded.window_end else w.window_end end,
      -- Capped: a flood keeps the bucket refused without counting towards an overflow.
      hits = case when w.window_end <= excluded.window_start then 1 else least(w.hits, p_limit) + 1 end
    returning w.hits, w.window_end
  )
  select hit.hits <= p_limit,
         greatest(p_limit - hit.hits, 0),
         case when hit.hits <= p_limit then 0
              else greatest(1, ceil(extract(epoch from hit.window_end - clock_timestamp())))::int end
  from hit;
end;
$$;
comment on function app_private.rate_limit_hit(text, int, interval) is
  'Counts one request in a rate-limit bucket: allowed, remaining, retry_after (seconds, 0 when allowed).';

-- Removes the windows that ended (job purge_rate_limit_windows, every 10 minutes). Returns the count.
create or replace function app_private.purge_rate_limit_windows() returns int
language sql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
  with gone as (delete from app_private.rate_limit_windows where window_end <= clock_timestamp() returning 1)
  select count(*)::int from gone;
$$;
comment on function app_private.purge_rate_limit_windows() is
  'Deletes the rate-limit windows that ended; returns how many.';
--! EndIncluded auth/rate_limits.sql
--! Included planning/helpers.sql
-- Helpers of the planning domain built on day.sql: comparison of days, ranges of slots,
-- readable summaries, and the parsing of slots sent by clients (requests, adjusted grants,
-- back-office corrections).

-- Normal form of a slot, for comparisons: a break exists only with both bounds, "paid" only
-- with a break, options default to false.
create or replace function app_hidden.slot_normalized(p_slot app_public.slot) returns app_public.slot
language sql immutable parallel safe as $$
  select row(p_slot.start_time, p_slot.end_time,
             case when p_slot.break_start_time is not null and p_slot.break_end_time is not null
                  then p_slot.break_start_time end,
             case when p_slot.break_start_time is not null and p_slot.break_end_time is not null
                  then p_slot.break_end_time end,
             case when p_slot.break_start_time is not null and p_slot.break_end_time is not null
                  then coalesce(p_slot.break_paid, false) else false end,
             p_slot.post_id, p_slot.establishment_id, coalesce(p_slot.is_remote, false))::app_public.slot;
$$;

-- Two days are the same when their slots, in normal form and by start time, are equal
-- (hours, break, post, establishment and per-slot options).
create or replace function app_hidden.same_slots(p_a app_public.slot[], p_b app_public.slot[]) returns boolean
language sql immutable parallel safe as $$
  select array(select app_hidden.slot_normalized(s) from unnest(coalesce(p_a, '{}')) s
               order by s.start_time, s.end_time)
         = array(select app_hidden.slot_normalized(s) from unnest(coalesce(p_b, '{}')) s
                 order by s.start_time, s.end_time);
$$;

-- The local time span of a slot worked on a date (a slot ending at or before its start ends
-- the next day).
create or replace function app_hidden.slot_range(p_date date, p_slot app_public.slot) returns tsrange
language sql immutable parallel safe as $$
  select tsrange(p_date + p_slot.start_time,
                 p_date + p_slot.start_time
                   + make_interval(mins => app_hidden.span_minutes(p_slot.start_time, p_slot.end_time)));
$$;

-- "8 h", "7 h 30", "45 min".
create or replace function app_hidden.fmt_minutes(p_minutes int) returns text
language sql immutable parallel safe as $$
  select case when p_minutes < 60 then p_minutes || ' min'
              when p_minutes % 60 = 0 then (p_minutes / 60) || ' h'
              else (p_minutes / 60) || ' h ' || lpad((p_minutes % 60)::text, 2, '0') end;
$$;

-- JSON of a slot when the post's code and label are already at hand (set-based readers).
create or replace function app_hidden.slot_json_with(p_slot app_public.slot, p_post_code text, p_post_label text) returns jsonb
language sql immutable parallel safe as $$
  select jsonb_build_object(
    'start_time', to_char(p_slot.start_time, 'HH24:MI'),
    'end_time', to_char(p_slot.end_time, 'HH24:MI'),
    'break_start_time', to_char(p_slot.break_start_time, 'HH24:MI'),
    'break_end_time', to_char(p_slot.break_end_time, 'HH24:MI'),
    'break_paid', coalesce(p_slot.break_paid, false),
    'post', p_slot.post_id,
    'post_code', p_post_code,
    'post_label', p_post_label,
    'establishment', p_slot.establishment_id,
    'is_remote', coalesce(p_slot.is_remote, false),
    'minutes', app_hidden.slot_minutes(p_slot));
$$;

-- "J Journée 10:00-18:00 (pause 12:00-12:30), S Soir 18:00-21:00": the slots with their
-- breaks, for notification bodies.
create or replace function app_hidden.slots_summary(p_slots app_public.slot[]) returns text
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select coalesce(string_agg(
           concat_ws(' ', p.code, p.label,
                     to_char((p_slots[i]).start_time, 'HH24:MI') || '-' || to_char((p_slots[i]).end_time, 'HH24:MI'))
           || case when (p_slots[i]).break_start_time is not null and (p_slots[i]).break_end_time is not null
                   then ' (pause ' || case when (p_slots[i]).break_paid then 'payée ' else '' end
                        || to_char((p_slots[i]).break_start_time, 'HH24:MI') || '-'
                        || to_char((p_slots[i]).break_end_time, 'HH24:MI') || ')'
                   else '' end,
           ', ' order by i), '')
  from generate_subscripts(p_slots, 1) i
  left join app_public.posts p on p.id = (p_slots[i]).post_id;
$$;

-- The label of a planned day: its posts and hours, or "Repos".
create or replace function app_hidden.day_label(p_slots app_public.slot[]) returns text
language sql stable as $$
  select case when coalesce(cardinality(p_slots), 0) = 0 then 'Repos'
              else app_hidden.slots_description(p_slots) end;
$$;

-- Display names of accounts (the employee's name, else the username), set-based.
create or replace function app_hidden.account_display_names(p_ids int[]) returns table (id int, name text)
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select a.id, coalesce(e.first_name || ' ' || e.last_name, a.username)
  from app_public.accounts a
  left join app_public.employees e on e.id = a.employee_id
  where a.id = any (p_ids);
$$;

-- Does this JSON value hold a time HH:MM (or nothing)?
create or replace function app_hidden.json_time_ok(p_value jsonb) returns boolean
language sql immutable parallel safe as $$
  select p_value is null or jsonb_typeof(p_value) = 'null'
         or (jsonb_typeof(p_value) = 'string' and (p_value #>> '{}') ~ app_hidden.time_pattern());
$$;

create or replace function app_hidden.json_time(p_value jsonb) returns time
language sql immutable parallel safe as $$
  select case when jsonb_typeof(p_value) = 'string' and (p_value #>> '{}') ~ app_hidden.time_pattern()
              then (p_value #>> '{}')::time end;
$$;

-- Does this JSON value hold an integer id (or nothing)?
create or replace function app_hidden.json_id_ok(p_value jsonb) returns boolean
language sql immutable parallel safe as $$
  select p_value is null or jsonb_typeof(p_value) = 'null'
         or (jsonb_typeof(p_value) = 'number' and (p_value #>> '{}') ~ '^[0-9]{1,9}$');
$$;

create or replace function app_hidden.json_id(p_value jsonb) returns int
language sql immutable parallel safe as $$
  select case when jsonb_typeof(p_value) = 'number' and (p_value #>> '{}') ~ '^[0-9]{1,9}$'
              then (p_value #>> '{}')::int end;
$$;

create or replace function app_hidden.json_bool_ok(p_value jsonb) returns boolean
language sql immutable parallel safe as $$
  select p_value is null or jsonb_typeof(p_value) in ('null', 'boolean');
$$;

-- The slots of a day as sent by a client (a request, an adjusted grant, a correction),
-- checked and normalised. Errors are French messages under p_field ("Créneau 2 : ..."),
-- overlaps under p_overlap_field. Rules:
--   * start_time and end_time make a slot complete; a row with neither is an emptied row and
--     is dropped; a row with only one of them is refused; a slot ending at or before its
--     start ends the next day (night), but start and end may not be equal;
--   * post defaults to the planned post of that day (same position, else the first), else
--     the first active post of the employee's main establishment; establishment defaults to
--     the post's; both must exist, and an inactive post is accepted only if planned that day;
--   * a break needs both bounds and a length; a break that is not strictly inside its slot
--     (the slot was shortened below it) is dropped; break_paid is meaningful only with one;
--   * at most 9 slots; a non-empty list whose rows are all emptied would remove every slot
--     of the day: refused (an absence is asked instead); slots of a day may not overlap.
-- Returns the slots ordered by start time; an absent or empty list gives '{}'.
create or replace function app_hidden.parse_day_slots(p_slots jsonb, p_field text, p_employee int, p_date date,
                                           p_planned app_public.slot[], p_overlap_field text default null)
returns app_public.slot[]
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_errors jsonb := '{}';
  v_item jsonb;
  v_i int := 0;
  v_prefix text;
  v_start time;
  v_end time;
  v_break_start time;
  v_break_end time;
  v_paid boolean;
  v_post_id int;
  v_establishment_id int;
  v_remote boolean;
  v_post app_public.posts;
  v_length int;
  v_offset_start int;
  v_offset_end int;
  v_row_ok boolean;
  v_result app_public.slot[] := '{}';
  v_sorted app_public.slot[];
  v_prev_end timestamp;
  j int;
begin
  if p_slots is null or jsonb_typeof(p_slots) = 'null' then
    return '{}';
  end if;
  if jsonb_typeof(p_slots) <> 'array' then
    perform app_hidden.invalid(p_field, 'Une liste de créneaux est attendue.', 'WV104');
  end if;
  if jsonb_array_length(p_slots) = 0 then
    return '{}';
  end if;
  if jsonb_array_length(p_slots) > 9 then
    perform app_hidden.invalid(p_field, 'Une journée compte au plus 9 créneaux.', 'WV104');
  end if;

  for v_item in select e.value from jsonb_array_elements(p_slots) e loop
    v_i := v_i + 1;
    v_prefix := format('Créneau %s : ', v_i);
    if jsonb_typeof(v_item) <> 'object' then
      v_errors := app_hidden.add_error(v_errors, p_field, v_prefix || 'un objet est attendu.');
      continue;
    end if;
    v_row_ok := true;
    if not (app_hidden.json_time_ok(v_item -> 'start_time') and app_hidden.json_time_ok(v_item -> 'end_time')
            and app_hidden.json_time_ok(v_item -> 'break_start_time') and app_hidden.json_time_ok(v_item -> 'break_end_time')) then
      v_errors := app_hidden.add_error(v_errors, p_field, v_prefix || 'heure invalide, format attendu HH:MM.');
      continue;
    end if;
    if not (app_hidden.json_bool_ok(v_item -> 'break_paid') and app_hidden.json_bool_ok(v_item -> 'is_remote')) then
      v_errors := app_hidden.add_error(v_errors, p_field, v_prefix || 'break_paid et is_remote sont des booléens (true ou false).');
      continue;
    end if;
    if not (app_hidden.json_id_ok(v_item -> 'post') and app_hidden.json_id_ok(v_item -> 'establishment')) then
      v_errors := app_hidden.add_error(v_errors, p_field, v_prefix || 'post et establishment sont des identifiants entiers.');
      continue;
    end if;
    v_start := app_hidden.json_time(v_item -> 'start_time');
    v_end := app_hidden.json_time(v_item -> 'end_time');
    v_break_start := app_hidden.json_time(v_item -> 'break_start_time');
    v_break_end := app_hidden.json_time(v_item -> 'break_end_time');
    v_paid := coalesce((v_item ->> 'break_paid')::boolean, false);
    v_remote := coalesce((v_item ->> 'is_remote')::boolean, false);
    v_post_id := app_hidden.json_id(v_item -> 'post');
    v_establishment_id := app_hidden.json_id(v_item -> 'establishment');

    -- An emptied row: the slot is removed from the day.
    if v_start is null and v_end is null then
      continue;
    end if;
    if v_start is null or v_end is null then
      v_errors := app_hidden.add_error(v_errors, p_field,
                    v_prefix || 'indiquez l''heure de début et l''heure de fin du créneau.');
      v_row_ok := false;
    elsif v_start = v_end then
      v_errors := app_hidden.add_error(v_errors, p_field,
                    v_prefix || 'l''heure de fin doit être différente de l''heure de début.');
      v_row_ok := false;
    end if;

    if (v_break_start is null) <> (v_break_end is null) then
      v_errors := app_hidden.add_error(v_errors, p_field,
                    v_prefix || 'une pause a une heure de début et une heure de fin.');
      v_row_ok := false;
    elsif v_break_start is not null and v_break_start = v_break_end then
      v_errors := app_hidden.add_error(v_errors, p_field,
                    v_prefix || 'la fin de la pause doit être différente de son début.');
      v_row_ok := false;
    end if;

    -- Post and establishment.
    if v_post_id is null then
      v_post_id := coalesce((p_planned[v_i]).post_id, (p_planned[1]).post_id,
                            (select p.id from app_public.posts p
                             join app_public.employees e on e.main_establishment_id = p.establishment_id
                             where e.id = p_employee and p.is_active
                             order by p.id limit 1));
      if v_post_id is null then
        v_errors := app_hidden.add_error(v_errors, p_field,
                      v_prefix || 'précisez le poste (aucun poste n''est prévu ce jour-là ni rattaché à votre établissement).');
        v_row_ok := false;
      end if;
    end if;
    v_post := null;
    if v_post_id is not null then
      select * into v_post from app_public.posts p where p.id = v_post_id;
      if v_post.id is null then
        v_errors := app_hidden.add_error(v_errors, p_field, v_prefix || format('poste inconnu (%s).', v_post_id));
        v_row_ok := false;
      elsif not v_post.is_active
            and not exists (select 1 from unnest(coalesce(p_planned, '{}')) s where s.post_id = v_post.id) then
        v_errors := app_hidden.add_error(v_errors, p_field,
                      v_prefix || format('le poste %s %s n''est plus actif.', v_post.code, v_post.label));
        v_row_ok := false;
      end if;
    end if;
    if v_establishment_id is null then
      v_establishment_id := v_post.establishment_id;
    elsif not exists (select 1 from app_public.establishments x where x.id = v_establishment_id) then
      v_errors := app_hidden.add_error(v_errors, p_field,
                    v_prefix || format('établissement inconnu (%s).', v_establishment_id));
      v_row_ok := false;
    end if;

    if not v_row_ok then
      continue;
    end if;

    -- A break not strictly inside its slot is dropped (the slot was shortened below it).
    if v_break_start is not null then
      v_length := app_hidden.span_minutes(v_start, v_end);
      v_offset_start := (extract(epoch from v_break_start - v_start)::int / 60 + 1440) % 1440;
      v_offset_end := (extract(epoch from v_break_end - v_start)::int / 60 + 1440) % 1440;
      if not (v_offset_start > 0 and v_offset_start < v_offset_end and v_offset_end < v_length) then
        v_break_start := null;
        v_break_end := null;
      end if;
    end if;
    if v_break_start is null then
      v_paid := false;
    end if;

    v_result := v_result || row(v_start, v_end, v_break_start, v_break_end, v_paid,
                                v_post_id, v_establishment_id, v_remote)::app_public.slot;
  end loop;

  if v_errors <> '{}'::jsonb then
    perform app_hidden.invalid_fields(v_errors, 'WV104');
  end if;

  if cardinality(v_result) = 0 then
    perform app_hidden.invalid(p_field,
      'Une demande ne peut pas retirer tous les créneaux de la journée : pour ne pas travailler ce jour-là, demandez une absence.',
      'WV104');
  end if;

  v_sorted := array(select s from unnest(v_result) s order by s.start_time, s.end_time);
  for j in 1 .. cardinality(v_sorted) loop
    if v_prev_end is not null and lower(app_hidden.slot_range(p_date, v_sorted[j])) < v_prev_end then
      v_errors := app_hidden.add_error(v_errors, coalesce(p_overlap_field, p_field),
                    format('Les créneaux se chevauchent : %s-%s commence avant la fin du créneau précédent.',
                           to_char((v_sorted[j]).start_time, 'HH24:MI'), to_char((v_sorted[j]).end_time, 'HH24:MI')));
    end if;
    v_prev_end := greatest(v_prev_end, upper(app_hidden.slot_range(p_date, v_sorted[j])));
  end loop;
  if v_errors <> '{}'::jsonb then
    perform app_hidden.invalid_fields(v_errors, 'WV104');
  end if;
  return v_sorted;
end;
$$;

-- The slots actually worked on a date: the planned day, unless granted absences cover
-- both halves of it (a rest for the rules of the modulation).
create or replace function app_hidden.worked_slots(p_employee int, p_date date) returns app_public.slot[]
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select case when coalesce(bool_or(not (p_date = a.date_start and a.start_half is not distinct from 'afternoon'))
                            and bool_or(not (p_date = a.date_end and a.end_half is not distinct from 'morning')), false)
              then '{}'::app_public.slot[]
              else app_hidden.planned_slots(p_employee, p_date) end
  from app_public.absences a
  where a.employee_id = p_employee and a.status in ('validated', 'cancellation_requested')
    and p_date between a.date_start and a.date_end and a.start_time is null;
$$;

-- The rules of the modulation a granted day must keep (an adjusted grant). Each broken rule
-- answers under its own key; the caller raises them all at once and writes nothing.
--   daily_duration : at most 12 h (720 min) of net work in the day;
--   rest_period    : at least 11 h of rest with the worked day before and the worked day
--                    after (planned slots, unless granted absences cover the whole day);
--   break_required : a day of more than 6 h (360 min) of net work has a pause of at least
--                    20 consecutive minutes (a break of a slot, paid or not, or the gap
--                    between two slots);
--   slots          : slots of the day do not overlap (checked while parsing).
create or replace function app_hidden.modulation_errors(p_employee int, p_date date, p_slots app_public.slot[])
returns jsonb
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_errors jsonb := '{}';
  v_total int := app_hidden.slots_minutes(p_slots);
  v_start timestamp;
  v_end timestamp;
  v_prev_end timestamp;
  v_next_start timestamp;
  v_pause int;
begin
  if v_total > 720 then
    v_errors := app_hidden.add_error(v_errors, 'daily_duration',
      format('La journée accordée compte %s de travail effectif : une journée ne peut pas dépasser 12 h.',
             app_hidden.fmt_minutes(v_total)));
  end if;

  select min(lower(app_hidden.slot_range(p_date, s))), max(upper(app_hidden.slot_range(p_date, s)))
  into v_start, v_end
  from unnest(p_slots) s;

  select max(upper(app_hidden.slot_range(p_date - 1, s))) into v_prev_end
  from unnest(app_hidden.worked_slots(p_employee, p_date - 1)) s;
  if v_prev_end is not null and v_start - v_prev_end < interval '11 hours' then
    v_errors := app_hidden.add_error(v_errors, 'rest_period',
      format('Repos insuffisant avec la veille : la journée du %s se termine à %s et la journée accordée commence à %s ; 11 h de repos au moins sont requises.',
             app_hidden.fr_date(p_date - 1), to_char(v_prev_end, 'HH24:MI'), to_char(v_start, 'HH24:MI')));
  end if;

  select min(lower(app_hidden.slot_range(p_date + 1, s))) into v_next_start
  from unnest(app_hidden.worked_slots(p_employee, p_date + 1)) s;
  if v_next_start is not null and v_next_start - v_end < interval '11 hours' then
    v_errors := app_hidden.add_error(v_errors, 'rest_period',
      format('Repos insuffisant avec le lendemain : la journée accordée se termine à %s et la journée du %s commence à %s ; 11 h de repos au moins sont requises.',
             to_char(v_end, 'HH24:MI'), app_hidden.fr_date(p_date + 1), to_char(v_next_start, 'HH24:MI')));
  end if;

  if v_total > 360 then
    select max(x.pause) into v_pause
    from (
      select app_hidden.span_minutes(s.break_start_time, s.break_end_time) as pause
      from unnest(p_slots) s
      where s.break_start_time is not null and s.break_end_time is not null
      union all
      select (extract(epoch from lower(g.r) - lag(upper(g.r)) over (order by lower(g.r))) / 60)::int
      from (select app_hidden.slot_range(p_date, s) as r from unnest(p_slots) s) g
    ) x;
    if coalesce(v_pause, 0) < 20 then
      v_errors := app_hidden.add_error(v_errors, 'break_required',
        format('La journée accordée compte %s de travail effectif : au-delà de 6 h, une pause d''au moins 20 minutes consécutives est obligatoire.',
               app_hidden.fmt_minutes(v_total)));
    end if;
  end if;
  return v_errors;
end;
$$;
--! EndIncluded planning/helpers.sql
--! Included planning/planning.sql
-- GET /api/planning/: the cells of a window (at most 62 days) for the caller's employees,
-- built set-wise in one statement (dates × employees joined to templates, day
-- modifications, absences, pending requests and on-call periods).
-- The answer is json, not jsonb, written as text (app_hidden.json_text and its siblings):
-- docs/architecture.md, Performance notes.

-- On-call periods overlapping the window.
create index if not exists on_call_periods_interval_idx on app_public.on_call_periods (end_at, start_at);
-- Pending requests of a window (the planning's pending_request).
create index if not exists shift_change_requests_pending_date_idx on app_public.shift_change_requests (date, employee_id)
  where status = 'pending';

-- On-call periods of the employees' teams, per employee and day: the periods whose
-- establishments meet the establishments of a team the employee belongs to that day, and
-- whose interval [start, end) meets the day (business time zone). Security definer: an
-- employee reads who is on call for their teams without reading the on-call screens.
-- force_generic_plan: docs/architecture.md, Performance notes.
create or replace function app_hidden.team_on_call_by_day(p_employee_ids int[], p_from date, p_to date)
returns table (employee_id int, date date, on_call jsonb)
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp
set plan_cache_mode = force_generic_plan rows 100 as $$
#variable_conflict use_column
begin
  -- Most windows meet no on-call period: then there is nothing to join.
  if not exists (select 1 from app_public.on_call_periods op
                 where op.end_at > p_from::timestamp at time zone app_hidden.business_timezone()
                   and op.start_at < (p_to + 1)::timestamp at time zone app_hidden.business_timezone()) then
    return;
  end if;
  return query
    with days as (
      select d::date as date,
             d::date::timestamp at time zone app_hidden.business_timezone() as day_start,
             (d::date + 1)::timestamp at time zone app_hidden.business_timezone() as day_end
      from generate_series(p_from, p_to, interval '1 day') d
    ),
    periods as (
      select op.id, op.account_id, op.start_at, op.end_at, op.comment,
             coalesce(e.first_name || ' ' || e.last_name, a.username) as name,
             array_agg(ope.establishment_id order by ope.establishment_id) as establishment_ids
      from app_public.on_call_periods op
      join app_public.on_call_period_establishments ope on ope.period_id = op.id
      join app_public.accounts a on a.id = op.account_id
      left join app_public.employees e on e.id = a.employee_id
      where op.end_at > p_from::timestamp at time zone app_hidden.business_timezone()
        and op.start_at < (p_to + 1)::timestamp at time zone app_hidden.business_timezone()
      group by op.id, a.username, e.first_name, e.last_name
    ),
    team_days as (
      select ta.employee_id, d.date, d.day_start, d.day_end, array_agg(distinct te.establishment_id) as establishment_ids
      from app_public.team_assignments ta
      join app_public.team_establishments te on te.team_id = ta.team_id
      join days d on app_hidden.date_in(d.date, ta.start_date, ta.end_date)
      where ta.employee_id = any (p_employee_ids)
      group by ta.employee_id, d.date, d.day_start, d.day_end
    )
    select t.employee_id, t.date,
           jsonb_agg(jsonb_build_object('id', p.id, 'account', p.account_id, 'name', p.name,
                                        'start', p.start_at, 'end', p.end_at,
                                        'establishments', to_jsonb(p.establishment_ids), 'comment', p.comment)
                     order by p.start_at, p.id)
    from team_days t
    join periods p on p.establishment_ids && t.establishment_ids
                  and p.start_at < t.day_end and p.end_at > t.day_start
    group by t.employee_id, t.date;
end;
$$;

-- JSON text of a value (null → null), for the planning's answer written as text
-- (docs/architecture.md, Performance notes).
-- Stable, as to_json and to_char are: an immutable wrapper would not be inlined.
create or replace function app_hidden.json_text(p text) returns text
language sql stable parallel safe as $$
  select coalesce(to_json(p)::text, 'null');
$$;
create or replace function app_hidden.json_hm(p time) returns text
language sql stable parallel safe as $$
  select coalesce('"' || to_char(p, 'HH24:MI') || '"', 'null');
$$;
create or replace function app_hidden.json_date(p date) returns text
language sql stable parallel safe as $$
  select coalesce('"' || to_char(p, 'YYYY-MM-DD') || '"', 'null');
$$;
create or replace function app_hidden.json_int(p bigint) returns text
language sql stable parallel safe as $$
  select coalesce(p::text, 'null');
$$;
create or replace function app_hidden.json_bool(p boolean) returns text
language sql stable parallel safe as $$
  select coalesce(p::text, 'null');
$$;

-- The cells of the employees over [p_from, p_to]. Runs with the caller's row-level security
-- (the caller chose the employees it may read).
--   * the planned day: the day modification, else the template valid that day;
--   * a granted absence (validated, or cancellation_requested: still drawn) prevails: a
--     whole-day absence is one absence block; a half-day absence gives two blocks (the
--     absence on its half, the worked day next to it with absence null); an hourly absence
--     is a block among the worked slots, by time;
--   * pending_request: on an absence block, its requested cancellation; on the worked or rest
--     blocks (or, in a cell without any, on the absence blocks), a pending absence request
--     of the day, else the pending day-change request of the day;
--   * on_call: the on-call periods of the employee's teams that meet the day.
-- force_generic_plan: docs/architecture.md, Performance notes.
-- Text, not json: the service sends it as is (app_public.planning_read_text, in parts:
-- planning_read_chunks), and a cast to json would parse the whole answer once more only to check it.
-- How it stays cheap for a month of 200 employees (6 000 cells, 2.5 MB):
--   * a worked or rest block is written in two parts: its head, up to "pending_request":, which
--     depends on the planned day only (written once per post of the templates, once per day
--     modification), and its tail, the pending request and the on-call periods of the cell;
--   * most cells are a day of their employee's one template with the usual tail (no pending
--     request, no on-call period): each template's week is written once (seven blocks texts),
--     and such a cell is its employee's week at its weekday, without any join;
--   * the other cells (a day modification, granted absences, a pending request, an on-call
--     period, or an employee with several templates in the window) are computed one by one,
--     the absences' blocks already in order; only a cell with an hourly absence sorts its
--     blocks;
--   * each employee's cells are aggregated in the order of the days, so the answer sorts
--     employees, not cells; the answer is one aggregate of its parts (head, employees' cells,
--     holidays), not concatenations that would each copy its 2.5 MB.
--   * the answer is its parts in order (head, each employee's cells, holidays): the route sends
--     them re-cut in 64 KiB (planning_read_chunks) and never holds the whole 2.5 MB text (each
--     copy of a value that large is fresh memory: page faults, zeroing, copies); planning_cells
--     joins them for the callers that need one text.
drop function if exists app_hidden.planning_cells(int[], date, date);
drop function if exists app_hidden.planning_parts(int[], date, date);
create or replace function app_hidden.planning_parts(p_employee_ids int[], p_from date, p_to date) returns setof text
language plpgsql stable
set plan_cache_mode = force_generic_plan as $$
declare
  -- The head of a rest block in a day without modification.
  v_rest_head constant text := '{"kind":"rest","post":null,"post_code":null,"post_label":null,"establishment":null'
    || ',"start_time":null,"end_time":null,"break_start_time":null,"break_end_time":null'
    || ',"break_paid":false,"minutes":0,"is_remote":false,"is_offsite":false'
    || ',"modified":false,"comment":null,"absence":null,"pending_request":';
  -- The same rest block with the usual tail: no pending request, no on-call period.
  v_rest_block constant text := v_rest_head || 'null,"on_call":[]}';
begin
  return query
    with days as (
      select d::date as date, app_hidden.json_date(d::date) as date_json, extract(isodow from d)::int as weekday
      from generate_series(p_from, p_to, interval '1 day') d
    ),
    emp as (
      select e.id, e.first_name, e.last_name, e.main_establishment_id,
             row_number() over (order by lower(e.last_name), lower(e.first_name), e.id) as ord
      from app_public.employees e
      where e.id = any (p_employee_ids)
    ),
    -- The templates valid at some day of the window.
    tpl as (
      select t.id, t.employee_id, t.valid_from, t.valid_to
      from app_public.planning_templates t
      where t.employee_id = any (p_employee_ids) and t.valid_from <= p_to and (t.valid_to is null or t.valid_to >= p_from)
    ),
    -- Per employee, how many templates the window meets, and the first one (meaningful when one).
    emp_template as (
      select t.employee_id, count(*) as templates, min(t.id) as template_id, min(t.valid_from) as valid_from,
             min(coalesce(t.valid_to, 'infinity')) as valid_to
      from tpl t
      group by t.employee_id
    ),
    -- The slots of those templates.
    template_slot as materialized (
      select ts.template_id, ts.weekday, ts.post_id, ts.position
      from app_public.planning_template_slots ts
      where ts.template_id in (select tpl.id from tpl)
    ),
    -- The head of a worked block of each post the templates plan (a template's slot is its
    -- post's, never remote, in a day without modification): written once per post, not per slot.
    post_head as materialized (
      select p.id, extract(epoch from p.start_time)::int / 60 as start_minute,
             '{"kind":"work","post":' || p.id
             || ',"post_code":' || app_hidden.json_text(p.code) || ',"post_label":' || app_hidden.json_text(p.label)
             || ',"establishment":' || app_hidden.json_int(p.establishment_id)
             || ',"start_time":' || app_hidden.json_hm(p.start_time)
             || ',"end_time":' || app_hidden.json_hm(p.end_time)
             || ',"break_start_time":' || app_hidden.json_hm(p.break_start_time)
             || ',"break_end_time":' || app_hidden.json_hm(p.break_end_time)
             || ',"break_paid":' || app_hidden.json_bool(coalesce(p.break_paid, false))
             || ',"minutes":' || app_hidden.json_int(app_hidden.slot_minutes(app_hidden.post_slot(p)))
             || ',"is_remote":false,"is_offsite":false,"modified":false,"comment":null,"absence":null,"pending_request":'
               as head
      from app_public.posts p
      where p.id in (select ts.post_id from template_slot ts)
    ),
    -- The heads of a template's weekday, by start time, with their start minutes (aggregated
    -- from sorted input: an aggregate's own order by would sort each group apart), and its
    -- blocks with the usual tail.
    template_day as (
      select y.template_id, y.weekday, y.heads, y.starts,
             array_to_string(y.heads, 'null,"on_call":[]},') || 'null,"on_call":[]}' as blocks
      from (
        select x.template_id, x.weekday, array_agg(x.head) as heads, array_agg(x.start_minute) as starts
        from (select ts.template_id, ts.weekday, ph.head, ph.start_minute
              from template_slot ts
              join post_head ph on ph.id = ts.post_id
              order by ts.template_id, ts.weekday, ph.start_minute, ts.position) x
        group by x.template_id, x.weekday
      ) y
    ),
    -- Each template's week: the blocks of its seven weekdays (a rest when none), usual tail.
    template_week as (
      select x.template_id, array_agg(x.blocks) as week
      from (select t.id as template_id, coalesce(td.blocks, v_rest_block) as blocks
            from tpl t
            cross join generate_series(1, 7) wd
            left join template_day td on td.template_id = t.id and td.weekday = wd
            order by t.id, wd) x
      group by x.template_id
    ),
    -- The heads of each day modification, by start time (a rest when it has no slot).
    modification as (
      select x.employee_id, x.date, array_agg(x.head) as heads, array_agg(x.start_minute) as starts
      from (
        select m.employee_id, m.date, coalesce(extract(epoch from m.start_time)::int / 60, 0) as start_minute,
               case when m.n is null
                    then '{"kind":"rest","post":null,"post_code":null,"post_label":null,"establishment":null'
                         || ',"start_time":null,"end_time":null,"break_start_time":null,"break_end_time":null'
                         || ',"break_paid":false,"minutes":0,"is_remote":false,"is_offsite":false'
                         || ',"modified":true,"comment":' || app_hidden.json_text(m.comment)
                         || ',"absence":null,"pending_request":'
                    else '{"kind":"work","post":' || app_hidden.json_int(m.post_id)
                         || ',"post_code":' || app_hidden.json_text(po.code) || ',"post_label":' || app_hidden.json_text(po.label)
                         || ',"establishment":' || app_hidden.json_int(m.establishment_id)
                         || ',"start_time":' || app_hidden.json_hm(m.start_time)
                         || ',"end_time":' || app_hidden.json_hm(m.end_time)
                         || ',"break_start_time":' || app_hidden.json_hm(m.break_start_time)
                         || ',"break_end_time":' || app_hidden.json_hm(m.break_end_time)
                         || ',"break_paid":' || app_hidden.json_bool(coalesce(m.break_paid, false))
                         || ',"minutes":' || app_hidden.json_int(app_hidden.slot_minutes(
                                               row(m.start_time, m.end_time, m.break_start_time, m.break_end_time,
                                                   m.break_paid, m.post_id, m.establishment_id, m.is_remote)::app_public.slot))
                         || ',"is_remote":' || app_hidden.json_bool(coalesce(m.is_remote, false) or coalesce(m.day_remote, false))
                         || ',"is_offsite":' || app_hidden.json_bool(coalesce(m.is_offsite, false))
                         || ',"modified":true,"comment":' || app_hidden.json_text(m.comment)
                         || ',"absence":null,"pending_request":'
               end as head
        from (select m.employee_id, m.date, m.comment, m.is_remote as day_remote, m.is_offsite, sl.*
              from app_public.day_modifications m
              left join lateral unnest(m.slots) with ordinality
                as sl(start_time, end_time, break_start_time, break_end_time, break_paid, post_id, establishment_id, is_remote, n) on true
              where m.employee_id = any (p_employee_ids) and m.date between p_from and p_to
              offset 0) m
        -- the posts joined once, not scanned per day modification
        left join app_public.posts po on po.id = m.post_id
        order by m.employee_id, m.date, 3, m.n
      ) x
      group by x.employee_id, x.date
    ),
    -- head: a granted absence's block up to its part, the same on each of its days: written once
    -- per absence (offset 0: evaluated here, not on each day of the absence).
    absence_day as (
      select a.employee_id, d.date, a.id, a.type_id, a.type_code, a.type_name,
             a.date_start, a.date_end, a.start_half, a.end_half, a.start_time, a.end_time, a.comment, a.status,
             case when a.start_time is not null then 'hours'
                  when d.date = a.date_start and a.start_half is not distinct from 'afternoon' then 'afternoon'
                  when d.date = a.date_end and a.end_half is not distinct from 'morning' then 'morning'
                  else 'day' end as part,
             a.head
      from (
        select a.employee_id, a.id, a.type_id, t.code as type_code, t.name as type_name,
               a.date_start, a.date_end, a.start_half, a.end_half, a.start_time, a.end_time, a.comment, a.status,
               case when a.status <> 'pending' then
                 '{"kind":"absence","post":null,"post_code":null,"post_label":null,"establishment":null'
                 || ',"start_time":' || app_hidden.json_hm(a.start_time) || ',"end_time":' || app_hidden.json_hm(a.end_time)
                 || ',"break_start_time":null,"break_end_time":null,"break_paid":false'
                 || ',"minutes":' || app_hidden.json_int(case when a.start_time is not null
                                                             then app_hidden.span_minutes(a.start_time, a.end_time) end)
                 || ',"is_remote":false,"is_offsite":false,"modified":false,"comment":null'
                 || ',"absence":{"id":' || a.id || ',"type":' || a.type_id || ',"type_code":' || app_hidden.json_text(t.code)
                 || ',"type_name":' || app_hidden.json_text(t.name) || ',"date_start":' || app_hidden.json_date(a.date_start)
                 || ',"date_end":' || app_hidden.json_date(a.date_end) || ',"start_half":' || app_hidden.json_text(a.start_half)
                 || ',"end_half":' || app_hidden.json_text(a.end_half) || ',"start_time":' || app_hidden.json_hm(a.start_time)
                 || ',"end_time":' || app_hidden.json_hm(a.end_time) || ',"comment":' || app_hidden.json_text(a.comment)
                 || ',"status":' || app_hidden.json_text(a.status) || ',"part":'
               end as head
        from app_public.absences a
        join app_public.absence_types t on t.id = a.type_id
        where a.employee_id = any (p_employee_ids) and a.date_start <= p_to and a.date_end >= p_from
          and a.status in ('pending', 'validated', 'cancellation_requested')
        offset 0
      ) a
      cross join lateral generate_series(greatest(a.date_start, p_from), least(a.date_end, p_to), interval '1 day') as g(day)
      cross join lateral (select g.day::date as date) d
    ),
    granted as (
      -- whole: the granted absences of the cell cover the whole day (one whole-day absence, or
      -- a morning and an afternoon): a window over the cell, not a join on an aggregate.
      select a.*,
             coalesce(bool_or(a.part in ('day', 'morning')) over w and bool_or(a.part in ('day', 'afternoon')) over w,
                      false) as whole
      from absence_day a
      where a.status in ('validated', 'cancellation_requested')
      window w as (partition by a.employee_id, a.date)
    ),
    pending_absence as (
      select distinct on (a.employee_id, a.date) a.employee_id, a.date, a.id
      from absence_day a
      where a.status = 'pending'
      order by a.employee_id, a.date, a.id
    ),
    pending_shift_change as (
      select r.employee_id, r.date, r.id
      from app_public.shift_change_requests r
      where r.employee_id = any (p_employee_ids) and r.date between p_from and p_to and r.status = 'pending'
    ),
    on_call as (
      select * from app_hidden.team_on_call_by_day(p_employee_ids, p_from, p_to)
    ),
    -- The tail of the worked or rest blocks of the cells that have a day modification, granted
    -- absences, a pending request or an on-call period: the pending request, the on-call periods.
    cell_tail as (
      select k.employee_id, k.date, pend.pending, coalesce(oc.on_call::text, '[]') as on_call,
             pend.pending || ',"on_call":' || coalesce(oc.on_call::text, '[]') || '}' as tail
      from (select x.employee_id, x.date from modification x
            union select x.employee_id, x.date from granted x
            union select x.employee_id, x.date from pending_absence x
            union select x.employee_id, x.date from pending_shift_change x
            union select x.employee_id, x.date from on_call x) k
      left join pending_absence pa on pa.employee_id = k.employee_id and pa.date = k.date
      left join pending_shift_change ps on ps.employee_id = k.employee_id and ps.date = k.date
      left join on_call oc on oc.employee_id = k.employee_id and oc.date = k.date
      cross join lateral (
        select case when pa.id is not null then '{"kind":"absence","id":' || pa.id || ',"is_cancellation":false}'
                    when ps.id is not null then '{"kind":"shift_change","id":' || ps.id || ',"is_cancellation":false}'
                    else 'null'
               end as pending
      ) pend
    ),
    -- The absence blocks of each cell, in their order (k1: morning or whole day, hourly, afternoon;
    -- k2: start minute), aggregated from sorted input.
    absence_blocks as (
      select b.employee_id, b.date, bool_or(b.whole) as whole,
             array_agg(b.block) as blocks, array_agg(b.k1) as k1s, array_agg(b.k2) as k2s,
             string_agg(b.block, ',') filter (where b.k1 = 0) as before_blocks,
             string_agg(b.block, ',') filter (where b.k1 = 2) as after_blocks, bool_or(b.k1 = 1) as hourly
      from (
        select g.employee_id, g.date, g.whole,
               case g.part when 'afternoon' then 2 when 'hours' then 1 else 0 end as k1,
               coalesce(extract(epoch from g.start_time)::int / 60, 0) as k2,
               g.head || app_hidden.json_text(g.part) || '}'
               || ',"pending_request":' || case when g.status = 'cancellation_requested'
                                                then '{"kind":"absence","id":' || g.id || ',"is_cancellation":true}'
                                                when g.whole then t.pending
                                                else 'null' end
               || ',"on_call":' || t.on_call || '}' as block
        from granted g
        join cell_tail t on t.employee_id = g.employee_id and t.date = g.date
        order by g.employee_id, g.date, 4, 5
      ) b
      group by b.employee_id, b.date
    ),
    cell_extra as (
      select t.employee_id, t.date, t.tail, m.heads, m.starts, ab.whole, ab.blocks, ab.k1s, ab.k2s,
             ab.before_blocks, ab.after_blocks, ab.hourly
      from cell_tail t
      left join modification m on m.employee_id = t.employee_id and m.date = t.date
      left join absence_blocks ab on ab.employee_id = t.employee_id and ab.date = t.date
    ),
    -- The cells computed one by one: those with something of their own, and every cell of an
    -- employee with several templates in the window (the latest valid_from first).
    special_cell as (
      select c.employee_id, c.date,
             case when x.employee_id is null then coalesce(td.blocks, v_rest_block)
                  when x.blocks is null then array_to_string(coalesce(x.heads, td.heads, array[v_rest_head]), x.tail || ',') || x.tail
                  when x.whole then array_to_string(x.blocks, ',')
                  -- a half day: the morning's absence, the worked (or rest) blocks, the afternoon's
                  when not x.hourly
                    then concat_ws(',', x.before_blocks,
                                   array_to_string(coalesce(x.heads, td.heads, array[v_rest_head]), x.tail || ',') || x.tail,
                                   x.after_blocks)
                  -- hourly absences among the worked (or rest) blocks, sorted together; at the same
                  -- start time, the worked slot before the hourly absence
                  else (select string_agg(b.block, ',' order by b.k1, b.k2, b.k3)
                        from (select a.block, a.k1, a.k2, 1 as k3
                              from unnest(x.blocks, x.k1s, x.k2s) as a(block, k1, k2)
                              union all
                              select h.head || x.tail, 1, h.start_minute, 0
                              from unnest(coalesce(x.heads, td.heads, array[v_rest_head]), coalesce(x.starts, td.starts, '{0}'::int[]))
                                as h(head, start_minute)) b)
             end as blocks
      from (
        select distinct on (s.employee_id, s.date) s.employee_id, s.date, t.id as template_id
        from (select x.employee_id, x.date from cell_extra x
              union
              select et.employee_id, d.date from emp_template et cross join days d where et.templates > 1) s
        left join tpl t on t.employee_id = s.employee_id and t.valid_from <= s.date and (t.valid_to is null or t.valid_to >= s.date)
        order by s.employee_id, s.date, t.valid_from desc
      ) c
      left join template_day td on td.template_id = c.template_id and td.weekday = extract(isodow from c.date)::int
      left join cell_extra x on x.employee_id = c.employee_id and x.date = c.date
    ),
    special_of_employee as (
      select s.employee_id, array_agg(s.date) as dates, array_agg(s.blocks) as blocks
      from special_cell s
      group by s.employee_id
    ),
    -- Each employee's cells, in the order of the days: a special cell, else the day of its one
    -- template's week while the template is valid, else a rest.
    employee_cells as (
      select e.ord, cells.text
      from emp e
      left join emp_template et on et.employee_id = e.id and et.templates = 1
      left join template_week tw on tw.template_id = et.template_id
      left join special_of_employee se on se.employee_id = e.id
      cross join lateral (
        select string_agg(case when e.ord = 1 and d.date = p_from then '{"employee":' else ',{"employee":' end
                          || e.id || ',"date":' || d.date_json || ',"blocks":['
                          || coalesce(se.blocks[array_position(se.dates, d.date)],
                                      case when d.date between et.valid_from and et.valid_to then tw.week[d.weekday] end,
                                      v_rest_block)
                          || ']}', '') as text
        from days d
      ) cells
    )
    -- The answer's parts in order (concatenations would copy 2.5 MB each).
    select part.text
    from (
      select 0::bigint as k,
             '{"from":' || app_hidden.json_date(p_from) || ',"to":' || app_hidden.json_date(p_to)
             || ',"employees":[' || coalesce((select string_agg(
                  '{"id":' || e.id || ',"name":' || app_hidden.json_text(e.first_name || ' ' || e.last_name)
                  || ',"first_name":' || app_hidden.json_text(e.first_name) || ',"last_name":' || app_hidden.json_text(e.last_name)
                  || ',"main_establishment":' || app_hidden.json_int(e.main_establishment_id) || '}', ',' order by e.ord)
                  from emp e), '')
             || '],"cells":[' as text
      union all
      select c.ord, c.text from employee_cells c
      union all
      select 9223372036854775807,
             '],"holidays":[' || coalesce((select string_agg(
                  '{"date":' || app_hidden.json_date(h.day) || ',"name":' || app_hidden.json_text(h.name) || '}', ',' order by h.day)
                  from generate_series(extract(year from p_from)::int, extract(year from p_to)::int) y,
                       lateral app_public.public_holidays(y) h
                  where h.day between p_from and p_to), '')
             || ']}'
    ) part
    order by part.k;
end;
$$;

-- The answer as one text: its parts joined in their order.
create or replace function app_hidden.planning_cells(p_employee_ids int[], p_from date, p_to date) returns text
language sql stable as $$
  select string_agg(p.part, '' order by p.n) from app_hidden.planning_parts(p_employee_ids, p_from, p_to) with ordinality as p(part, n);
$$;

-- GET /api/planning/?from=&to=&employee=&establishment=&team=
-- Without from/to: the current week (Monday to Sunday); with only one bound, the 7 days
-- from it (or up to it). At most 62 days. The branch depends on the directory permission,
-- never on the size of the perimeter: a holder of employee.view_employee_directory reads
-- the absences.view_absence_queue perimeter (and their own record); any other account
-- reads only its own cells. employee narrows to one readable employee (else 404).
-- establishment and team narrow the readable employees (the team planning of a month): those
-- attached to the establishment (main, secondary, or team of the day), those assigned to the
-- team, on the day of the window nearest today.
-- planning_read_text is the JSON text as written, which the service passes through (a month
-- of 200 employees is 2.5 MB); the route calls planning_read_chunks, the same bytes in parts.
-- planning_read is the same answer typed json, for SQL callers and GraphQL.
drop function if exists app_public.planning_read(date, date, int);
-- The window and the employees of a planning read (its checks and errors), for planning_read_text
-- and planning_read_chunks; called by them only (security definer), as they were its body.
create or replace function app_hidden.planning_scope(p_from date, p_to date, p_employee int, p_establishment int, p_team int,
                                                     out from_date date, out to_date date, out employee_ids int[])
language plpgsql stable as $$
declare
  v_today date := app_hidden.today();
  v_from date;
  v_to date;
  v_me int := app_hidden.current_employee_id();
  v_ids int[];
  v_on date;
begin
  if p_from is null and p_to is null then
    v_from := date_trunc('week', v_today::timestamp)::date;
    v_to := v_from + 6;
  elsif p_to is null then
    v_from := p_from;
    v_to := p_from + 6;
  elsif p_from is null then
    v_to := p_to;
    v_from := p_to - 6;
  else
    v_from := p_from;
    v_to := p_to;
  end if;
  if v_to < v_from then
    perform app_hidden.invalid('to', 'La date de fin doit être postérieure ou égale à la date de début.', 'WV108');
  end if;
  if v_to - v_from + 1 > app_hidden.planning_max_days() then
    perform app_hidden.invalid('to', format('Le planning se lit sur %s jours au plus (ici %s jours) : réduisez la période.',
                                            app_hidden.planning_max_days(), v_to - v_from + 1), 'WV108');
  end if;

  if app_hidden.current_account_has('employee.view_employee_directory') then
    v_ids := array(select x from app_hidden.perimeter_employee_ids('absences.view_absence_queue') x
                   union
                   select v_me where v_me is not null);
  else
    v_ids := case when v_me is null then '{}'::int[] else array[v_me] end;
  end if;
  if p_employee is not null then
    if not p_employee = any (v_ids) then
      perform app_hidden.not_found('Salarié introuvable dans votre périmètre.', 'WN102');
    end if;
    v_ids := array[p_employee];
  end if;
  v_on := greatest(v_from, least(v_to, v_today));
  if p_establishment is not null then
    v_ids := array(select x from unnest(v_ids) x
                   where x in (select y from app_hidden.employees_of_establishments(array[p_establishment], v_on) y));
  end if;
  if p_team is not null then
    v_ids := array(select x from unnest(v_ids) x
                   where exists (select 1 from app_public.team_assignments ta
                                 where ta.employee_id = x and ta.team_id = p_team
                                   and app_hidden.date_in(v_on, ta.start_date, ta.end_date)));
  end if;
  from_date := v_from;
  to_date := v_to;
  employee_ids := v_ids;
end;
$$;

create or replace function app_public.planning_read_text(p_from date default null, p_to date default null, p_employee int default null,
                                                         p_establishment int default null, p_team int default null)
returns text
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_scope record := app_hidden.planning_scope(p_from, p_to, p_employee, p_establishment, p_team);
begin
  return app_hidden.planning_cells(v_scope.employee_ids, v_scope.from_date, v_scope.to_date);
end;
$$;

create or replace function app_public.planning_read(p_from date default null, p_to date default null, p_employee int default null,
                                                    p_establishment int default null, p_team int default null)
returns json
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  return app_public.planning_read_text(p_from, p_to, p_employee, p_establishment, p_team)::json;
end;
$$;
comment on function app_public.planning_read(date, date, integer, integer, integer) is
'SPEC Planning cell and Permissions rule 3, GET /api/planning/: the cells of a window (the current week
by default, at most 62 days), with absences and pending requests; a directory reader reads its
absences.view_absence_queue perimeter, any other account its own cells; narrowed by employee,
establishment or team.';

-- The same answer in parts of at most 64 KiB, in order, for the route to send as they come: one
-- 2.5 MB value was received whole by the service's driver, in a buffer doubled up to 4 MiB
-- per request (docs/architecture.md, Performance notes). Cut from the answer's parts as they
-- come (a part may straddle two pieces), without ever forming the whole text. Each piece is
-- whole UTF-8 characters (cut before a continuation byte, so 64 KiB less at most 3 bytes): the
-- driver reads every value as UTF-8 text before handing its bytes over, and a character cut in
-- two would become two replacement characters.
create or replace function app_public.planning_read_chunks(p_from date default null, p_to date default null, p_employee int default null,
                                                           p_establishment int default null, p_team int default null)
returns setof bytea
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_scope record := app_hidden.planning_scope(p_from, p_to, p_employee, p_establishment, p_team);
  v_part bytea;
  v_length int;
  v_at int;
  v_cut int;
  v_pieces bytea[] := '{}';  -- of the piece being filled
  v_room int := 65536;       -- bytes still free in it
begin
  for v_part in select convert_to(p.part, 'UTF8')
                from app_hidden.planning_parts(v_scope.employee_ids, v_scope.from_date, v_scope.to_date) as p(part) loop
    v_length := length(v_part);
    v_at := 0;
    while v_length - v_at >= v_room loop
      v_cut := v_room;
      -- never between the bytes of one character (get_byte counts from 0: the next piece's first byte)
      while v_at + v_cut < v_length and get_byte(v_part, v_at + v_cut) between 128 and 191 loop
        v_cut := v_cut - 1;
      end loop;
      v_pieces := array_append(v_pieces, substring(v_part from v_at + 1 for v_cut));
      return next (select string_agg(x.piece, ''::bytea order by x.n) from unnest(v_pieces) with ordinality as x(piece, n));
      v_at := v_at + v_cut;
      v_room := 65536;
      v_pieces := '{}';
    end loop;
    if v_length > v_at then
      v_pieces := array_append(v_pieces, case when v_at = 0 then v_part else substring(v_part from v_at + 1) end);
      v_room := v_room - (v_length - v_at);
    end if;
  end loop;
  if cardinality(v_pieces) > 0 then
    return next (select string_agg(x.piece, ''::bytea order by x.n) from unnest(v_pieces) with ordinality as x(piece, n));
  end if;
end;
$$;
--! EndIncluded planning/planning.sql
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
create or replace function app_private.absence_counter_target(p_absence app_public.absences, p_today date)
returns table (counter_id int, code text, year int, bucket text, quantity numeric, counter_unit text, type_unit text)
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
#variable_conflict use_column
begin
  return query
  select p.counter_id, p.code, p.year,
         case when p_absence.status in ('validated', 'cancellation_requested') and p_absence.date_start <= p_today
              then 'taken' else 'planned' end,
         p.quantity, p.counter_unit, p.type_unit
  from app_private.absence_counter_plan(row(p_absence.employee_id, p_absence.type_id, p_absence.date_start,
                                            p_absence.date_end, p_absence.start_half, p_absence.end_half,
                                            p_absence.start_time, p_absence.end_time)::app_hidden.absence_draft) p
  where p_absence.id is not null and app_hidden.absence_is_active(p_absence.status);
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
 * error in the same transaction (the creation): its counters are open and in the type's unit,
 * so the target is read from it instead of counting the period again (what
 * app_private.absence_counter_target would compute from the same row).
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
  if p_plan is not null then
    -- The same lines as absence_counter_target's (the plan lists them in its order), bucket included.
    if v_absence.id is not null and app_hidden.absence_is_active(v_absence.status) then
      select coalesce(jsonb_agg(jsonb_build_object(
               'counter_id', (x ->> 'counter_id')::int, 'code', x ->> 'code', 'year', (x ->> 'year')::int,
               'bucket', case when v_absence.status in ('validated', 'cancellation_requested') and v_absence.date_start <= v_today
                              then 'taken' else 'planned' end,
               'quantity', (x ->> 'quantity')::numeric) order by n), '[]'::jsonb)
        into v_target
      from jsonb_array_elements(p_plan) with ordinality p(x, n);
    end if;
  end if;
  for r in select * from app_private.absence_counter_target(v_absence, v_today) where p_plan is null loop
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
--! Included absences/json.sql
-- The absence record as the API shows it (CONTRACT sections 3 and 4). One statement builds
-- any number of records (lists are not N+1): types, employees, documents and the counter
-- positions are joined, not fetched per row.

create or replace function app_hidden.absence_status_label(p_status text) returns text
language sql immutable as $$
  select case p_status
    when 'pending' then 'En attente'
    when 'validated' then 'Validée'
    when 'refused' then 'Refusée'
    when 'cancellation_requested' then 'Annulation demandée'
    when 'cancelled' then 'Annulée'
  end;
$$;

-- The cancellation effects of the granted absences among p_ids (a queue of pending requests or a
-- fresh request computes none: without a granted absence the function is not called).
create or replace function app_hidden.absences_granted_effects(p_ids int[])
returns table (absence_id int, effects jsonb)
language plpgsql stable
set plan_cache_mode = force_generic_plan as $$
#variable_conflict use_column
declare
  v_granted int[] := array(select a.id from app_public.absences a
                           where a.id = any (p_ids) and a.status in ('validated', 'cancellation_requested'));
begin
  if cardinality(v_granted) > 0 then
    return query select x.absence_id, x.effects from app_private.absence_cancellation_effects(v_granted) x;
  end if;
end;
$$;

-- The documents of the absences p_ids, as the caller sees them, one array per absence in id order;
-- `file` (the content's address) only for readers allowed to read it: the perimeter of
-- absences.view_absencedocument_file and the employee concerned.
create or replace function app_hidden.absence_documents_json(p_ids int[], p_public_url text)
returns table (absence_id int, documents jsonb)
language plpgsql stable
set plan_cache_mode = force_generic_plan as $$
#variable_conflict use_column
begin
  return query
    with file_readers as (
      select x.id from app_hidden.perimeter_employee_ids('absences.view_absencedocument_file') as x(id)
      union
      select app_hidden.current_employee_id()
    )
    select d.absence_id,
           jsonb_agg(jsonb_build_object('id', d.id, 'filename', d.filename, 'content_type', d.content_type,
                                        'size_bytes', d.size_bytes, 'uploaded_at', d.uploaded_at,
                                        'uploaded_by', d.uploaded_by_name)
                     || case when a.employee_id in (select f.id from file_readers f)
                             then jsonb_build_object('file', coalesce(rtrim(p_public_url, '/'), '')
                                                             || '/api/absence-documents/' || d.id || '/file/')
                             else '{}'::jsonb end
                     order by d.id)
    from app_public.absence_documents d
    join app_public.absences a on a.id = d.absence_id
    where d.absence_id = any (p_ids)
    group by d.absence_id;
end;
$$;

-- Records of the absences p_ids (as the caller sees them), in the order of p_ids.
-- Documents carry `file` only for readers allowed to read their content. In a list
-- (p_in_list), warnings are null (CONTRACT: list reads carry no warnings).
-- plpgsql (not sql) with force_generic_plan: docs/architecture.md, Performance notes.
create or replace function app_hidden.absences_json(p_ids int[], p_public_url text, p_in_list boolean default false) returns jsonb
language plpgsql stable
set plan_cache_mode = force_generic_plan as $$
begin
  return (
    with ids as (
      select u.id, u.ord from unnest(p_ids) with ordinality as u(id, ord)
    ),
    effects as (
      select * from app_hidden.absences_granted_effects(p_ids)
    ),
    docs as (
      select * from app_hidden.absence_documents_json(p_ids, p_public_url)
    )
    select coalesce(jsonb_agg(
      jsonb_build_object(
        'id', a.id,
        'employee', a.employee_id,
        'employee_name', e.first_name || ' ' || e.last_name,
        'type', a.type_id,
        'type_code', t.code,
        'type_name', t.name,
        'date_start', a.date_start,
        'date_end', a.date_end,
        'start_half', a.start_half,
        'end_half', a.end_half,
        'start_time', to_char(a.start_time, 'HH24:MI'),
        'end_time', to_char(a.end_time, 'HH24:MI'),
        'comment', a.comment,
        'status', a.status,
        'status_label', app_hidden.absence_status_label(a.status),
        'version', a.version,
        'counted_quantity', app_hidden.fmt_quantity(a.counted_quantity),
        'counted_unit', a.counted_unit,
        'author', a.author_account_id,
        'submitted_at', a.submitted_at,
        'created_at', a.created_at,
        'updated_at', a.updated_at,
        'decided_by', a.decided_by,
        'decided_at', a.decided_at,
        'decision_reason', a.decision_reason,
        'corrected_by', a.corrected_by,
        'cancellation_comment', a.cancellation_comment,
        'cancellation_requested_at', a.cancellation_requested_at,
        'cancellation_decided_at', a.cancellation_decided_at,
        'cancellation_decision_reason', a.cancellation_decision_reason,
        'cancellation_counter_effects',
          case when a.status in ('validated', 'cancellation_requested') then coalesce(ef.effects, '[]'::jsonb) end,
        'cancelled_by', a.cancelled_by,
        'cancelled_at', a.cancelled_at,
        'warnings', case when p_in_list then null else a.warnings end,
        'documents', coalesce(dc.documents, '[]'::jsonb))
      order by ids.ord), '[]'::jsonb)
    from ids
    join app_public.absences a on a.id = ids.id
    join app_public.absence_types t on t.id = a.type_id
    left join app_public.employees e on e.id = a.employee_id
    left join effects ef on ef.absence_id = a.id
    left join docs dc on dc.absence_id = a.id
  );
end;
$$;

-- The records of a list page (absences_json(p_ids, p_public_url, true)) as the JSON text that
-- jsonb writes, byte for byte: the keys in jsonb's order (shorter first, then by their bytes), each
-- value as jsonb writes it (to_json: strings, dates and instants alike; integers; the nested jsonb as
-- text), ", " and ": " between them. Written straight as text, it builds no jsonb object to sort,
-- aggregate and print again (app_public.absences_list_text, the REST route's queue). pgTAP 74
-- compares the two for every absence of the fixture.
create or replace function app_hidden.absences_list_json_text(p_ids int[], p_public_url text) returns text
language plpgsql stable
set plan_cache_mode = force_generic_plan as $$
begin
  return (
    with ids as (
      select u.id, u.ord from unnest(p_ids) with ordinality as u(id, ord)
    ),
    effects as (
      select * from app_hidden.absences_granted_effects(p_ids)
    ),
    docs as (
      select * from app_hidden.absence_documents_json(p_ids, p_public_url)
    )
    select '[' || coalesce(string_agg(concat(
        '{"id": ', coalesce((a.id)::text, 'null'),
        ', "type": ', coalesce((a.type_id)::text, 'null'),
        ', "author": ', coalesce((a.author_account_id)::text, 'null'),
        ', "status": ', coalesce(to_json(a.status)::text, 'null'),
        ', "comment": ', coalesce(to_json(a.comment)::text, 'null'),
        ', "version": ', coalesce((a.version)::text, 'null'),
        ', "date_end": ', coalesce(to_json(a.date_end)::text, 'null'),
        ', "employee": ', coalesce((a.employee_id)::text, 'null'),
        ', "end_half": ', coalesce(to_json(a.end_half)::text, 'null'),
        ', "end_time": ', coalesce(to_json(to_char(a.end_time, 'HH24:MI'))::text, 'null'),
        ', "warnings": ', 'null',
        ', "documents": ', coalesce(dc.documents::text, '[]'),
        ', "type_code": ', coalesce(to_json(t.code)::text, 'null'),
        ', "type_name": ', coalesce(to_json(t.name)::text, 'null'),
        ', "created_at": ', coalesce(to_json(a.created_at)::text, 'null'),
        ', "date_start": ', coalesce(to_json(a.date_start)::text, 'null'),
        ', "decided_at": ', coalesce(to_json(a.decided_at)::text, 'null'),
        ', "decided_by": ', coalesce((a.decided_by)::text, 'null'),
        ', "start_half": ', coalesce(to_json(a.start_half)::text, 'null'),
        ', "start_time": ', coalesce(to_json(to_char(a.start_time, 'HH24:MI'))::text, 'null'),
        ', "updated_at": ', coalesce(to_json(a.updated_at)::text, 'null'),
        ', "cancelled_at": ', coalesce(to_json(a.cancelled_at)::text, 'null'),
        ', "cancelled_by": ', coalesce((a.cancelled_by)::text, 'null'),
        ', "corrected_by": ', coalesce((a.corrected_by)::text, 'null'),
        ', "counted_unit": ', coalesce(to_json(a.counted_unit)::text, 'null'),
        ', "status_label": ', coalesce(to_json(app_hidden.absence_status_label(a.status))::text, 'null'),
        ', "submitted_at": ', coalesce(to_json(a.submitted_at)::text, 'null'),
        ', "employee_name": ', coalesce(to_json(e.first_name || ' ' || e.last_name)::text, 'null'),
        ', "decision_reason": ', coalesce(to_json(a.decision_reason)::text, 'null'),
        ', "counted_quantity": ', coalesce(to_json(app_hidden.fmt_quantity(a.counted_quantity))::text, 'null'),
        ', "cancellation_comment": ', coalesce(to_json(a.cancellation_comment)::text, 'null'),
        ', "cancellation_decided_at": ', coalesce(to_json(a.cancellation_decided_at)::text, 'null'),
        ', "cancellation_requested_at": ', coalesce(to_json(a.cancellation_requested_at)::text, 'null'),
        ', "cancellation_counter_effects": ', case when a.status in ('validated', 'cancellation_requested') then coalesce(ef.effects::text, '[]') else 'null' end,
        ', "cancellation_decision_reason": ', coalesce(to_json(a.cancellation_decision_reason)::text, 'null'), '}'), ', ' order by ids.ord), '') || ']'
    from ids
    join app_public.absences a on a.id = ids.id
    join app_public.absence_types t on t.id = a.type_id
    left join app_public.employees e on e.id = a.employee_id
    left join effects ef on ef.absence_id = a.id
    left join docs dc on dc.absence_id = a.id
  );
end;
$$;

create or replace function app_hidden.absence_json(p_id int, p_public_url text) returns jsonb
language sql stable as $$
  select app_hidden.absences_json(array[p_id], p_public_url) -> 0;
$$;

-- The planned day of a date, for the decision panel: description, net minutes, slots.
create or replace function app_hidden.planned_day_json(p_employee int, p_date date) returns jsonb
language sql stable as $$
  select jsonb_build_object('date', p_date,
                            'description', app_hidden.slots_description(s.slots),
                            'minutes', app_hidden.slots_minutes(s.slots),
                            'is_rest_day', cardinality(s.slots) = 0,
                            'slots', app_hidden.slots_json(s.slots))
  from (select app_hidden.planned_slots(p_employee, p_date) as slots) s;
$$;
--! EndIncluded absences/json.sql
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
  v_bucket := case when v.status in ('validated', 'cancellation_requested') and d.date_start <= v_today
                   then 'taken' else 'planned' end;
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
      perform app_hidden.invalid(v_key, 'Heure invalide : format attendu HH:MM.');
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
--! Included absences/status_counts.sql
-- Number of absences per employee and state, kept by the triggers below in the transaction
-- that writes the absences: the queue's total (GET /api/absences/?status=) becomes a sum over
-- the readable employees instead of a count of every matching row (95 000 pending requests
-- for a whole-association reader at 1 M absences). Exact: same transaction, same snapshot.

create table if not exists app_private.absence_status_counts (
  status text not null,
  employee_id int not null,
  n int not null check (n > 0),
  primary key (status, employee_id)
);
create index if not exists absence_status_counts_employee_idx on app_private.absence_status_counts (employee_id);
-- The whole association's total of a state is a sum over every employee's count of it (10 000 rows
-- at scale): this index answers it alone (index-only scan), without visiting the table's pages.
create index if not exists absence_status_counts_covering_idx on app_private.absence_status_counts (status, employee_id) include (n);

-- The perimeter of the absences themselves: a reader sums only the employees whose absences
-- it reads (app_public.absences, select_own_or_perimeter).
alter table app_private.absence_status_counts enable row level security;
drop policy if exists select_own_or_perimeter on app_private.absence_status_counts;
create policy select_own_or_perimeter on app_private.absence_status_counts for select to wfm_api
  using ((select app_hidden.absence_readers() is null)
         or employee_id in (select unnest(app_hidden.absence_readers())));
grant select on app_private.absence_status_counts to wfm_api;

-- One absence more (p_delta 1) or less (-1) in a state; a count that reaches zero goes.
create or replace function app_private.absence_status_count_add(p_status text, p_employee int, p_delta int) returns void
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  if p_delta > 0 then
    insert into app_private.absence_status_counts as c (status, employee_id, n)
    values (p_status, p_employee, p_delta)
    on conflict (status, employee_id) do update set n = c.n + excluded.n;
  else
    delete from app_private.absence_status_counts c
    where c.status = p_status and c.employee_id = p_employee and c.n <= -p_delta;
    if not found then
      update app_private.absence_status_counts c set n = c.n + p_delta
      where c.status = p_status and c.employee_id = p_employee;
    end if;
  end if;
end;
$$;

create or replace function app_private.tg_absences__status_counts() returns trigger
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  -- A change of state touches two counts: always in the order of their keys, so that two
  -- transitions of one employee's absences in opposite directions never deadlock.
  if tg_op = 'UPDATE' and (new.status, new.employee_id) < (old.status, old.employee_id) then
    perform app_private.absence_status_count_add(new.status, new.employee_id, 1);
    perform app_private.absence_status_count_add(old.status, old.employee_id, -1);
    return null;
  end if;
  if tg_op in ('UPDATE', 'DELETE') then
    perform app_private.absence_status_count_add(old.status, old.employee_id, -1);
  end if;
  if tg_op in ('INSERT', 'UPDATE') then
    perform app_private.absence_status_count_add(new.status, new.employee_id, 1);
  end if;
  return null;
end;
$$;
drop trigger if exists _600_status_counts on app_public.absences;
create or replace trigger _600_status_counts after insert or delete on app_public.absences
  for each row execute function app_private.tg_absences__status_counts();
drop trigger if exists _600_status_counts_update on app_public.absences;
create or replace trigger _600_status_counts_update after update of status, employee_id on app_public.absences
  for each row when (old.status is distinct from new.status or old.employee_id is distinct from new.employee_id)
  execute function app_private.tg_absences__status_counts();

create or replace function app_private.tg_absences__status_counts_truncate() returns trigger
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  truncate app_private.absence_status_counts;
  return null;
end;
$$;
drop trigger if exists _600_status_counts_truncate on app_public.absences;
create or replace trigger _600_status_counts_truncate after truncate on app_public.absences
  for each statement execute function app_private.tg_absences__status_counts_truncate();

-- Recounted in one scan whenever this file is applied (a migration, or a bulk load written with
-- the triggers off): the counts then hold for the absences as they are.
create or replace function app_private.absence_status_counts_rebuild() returns void
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  -- No absence is written meanwhile: the recount and the triggers never both count one.
  lock table app_public.absences in share mode;
  delete from app_private.absence_status_counts;
  insert into app_private.absence_status_counts (status, employee_id, n)
  select a.status, a.employee_id, count(*)::int from app_public.absences a group by a.status, a.employee_id;
end;
$$;
select app_private.absence_status_counts_rebuild();
--! EndIncluded absences/status_counts.sql
--! Included org/import.sql
-- Organisation file import (CONTRACT section 6). One call, one transaction: the first bad
-- path aborts everything with "path: message" (SQLSTATE WV020, DETAIL = path).
-- Passwords arrive already hashed (argon2id, by the CLI) under "password_hash".
-- Functions are "create or replace" so that a later migration re-includes this file to change them.

create or replace function app_private.import_fail(p_path text, p_message text) returns void
language plpgsql volatile as $$
begin
  raise exception using errcode = 'WV020', message = p_path || ': ' || p_message, detail = p_path;
end;
$$;

-- Refuses keys outside the allowed list (typos would otherwise be silently ignored).
create or replace function app_private.import_check_keys(p_obj jsonb, p_path text, p_allowed text[]) returns void
language plpgsql volatile as $$
declare
  v_key text;
begin
  if jsonb_typeof(p_obj) is distinct from 'object' then
    perform app_private.import_fail(p_path, 'expected an object');
  end if;
  for v_key in select jsonb_object_keys(p_obj) loop
    if not v_key = any (p_allowed) then
      perform app_private.import_fail(p_path || '.' || v_key, 'unknown field');
    end if;
  end loop;
end;
$$;

create or replace function app_private.import_text(p_obj jsonb, p_key text, p_path text, p_required boolean default true)
returns text
language plpgsql volatile as $$
declare
  v jsonb := p_obj -> p_key;
begin
  if v is null or jsonb_typeof(v) = 'null' then
    if p_required then
      perform app_private.import_fail(p_path || '.' || p_key, 'required');
    end if;
    return null;
  end if;
  if jsonb_typeof(v) <> 'string' then
    perform app_private.import_fail(p_path || '.' || p_key, 'expected a string');
  end if;
  if p_required and btrim(v #>> '{}') = '' then
    perform app_private.import_fail(p_path || '.' || p_key, 'must not be empty');
  end if;
  return v #>> '{}';
end;
$$;

create or replace function app_private.import_bool(p_obj jsonb, p_key text, p_path text, p_default boolean)
returns boolean
language plpgsql volatile as $$
declare
  v jsonb := p_obj -> p_key;
begin
  if v is null or jsonb_typeof(v) = 'null' then
    return p_default;
  end if;
  if jsonb_typeof(v) <> 'boolean' then
    perform app_private.import_fail(p_path || '.' || p_key, 'expected true or false');
  end if;
  return v::boolean;
end;
$$;

create or replace function app_private.import_date(p_obj jsonb, p_key text, p_path text, p_required boolean default false)
returns date
language plpgsql volatile as $$
declare
  v text := app_private.import_text(p_obj, p_key, p_path, p_required);
begin
  if v is null then
    return null;
  end if;
  if v !~ '^\d{4}-\d{2}-\d{2}$' then
    perform app_private.import_fail(p_path || '.' || p_key, format('invalid date "%s" (expected YYYY-MM-DD)', v));
  end if;
  begin
    return v::date;
  exception when others then
    perform app_private.import_fail(p_path || '.' || p_key, format('invalid date "%s"', v));
  end;
end;
$$;

create or replace function app_private.import_time(p_obj jsonb, p_key text, p_path text, p_required boolean default false)
returns time
language plpgsql volatile as $$
declare
  v text := app_private.import_text(p_obj, p_key, p_path, p_required);
begin
  if v is null then
    return null;
  end if;
  if v !~ app_hidden.time_pattern() then
    perform app_private.import_fail(p_path || '.' || p_key, format('invalid time "%s" (expected HH:MM)', v));
  end if;
  return v::time;
end;
$$;

create or replace function app_private.import_timestamptz(p_obj jsonb, p_key text, p_path text)
returns timestamptz
language plpgsql volatile as $$
declare
  v text := app_private.import_text(p_obj, p_key, p_path, true);
begin
  if v !~ '^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?(Z|[+-]\d{2}:\d{2})$' then
    perform app_private.import_fail(p_path || '.' || p_key, format('invalid timestamp "%s" (expected ISO 8601 with offset)', v));
  end if;
  begin
    return v::timestamptz;
  exception when others then
    perform app_private.import_fail(p_path || '.' || p_key, format('invalid timestamp "%s"', v));
  end;
end;
$$;

-- An array of strings (keys); null or absent gives an empty array.
create or replace function app_private.import_keys(p_obj jsonb, p_key text, p_path text) returns text[]
language plpgsql volatile as $$
declare
  v jsonb := p_obj -> p_key;
  v_result text[] := '{}';
  i int;
begin
  if v is null or jsonb_typeof(v) = 'null' then
    return v_result;
  end if;
  if jsonb_typeof(v) <> 'array' then
    perform app_private.import_fail(p_path || '.' || p_key, 'expected an array');
  end if;
  for i in 0 .. jsonb_array_length(v) - 1 loop
    if jsonb_typeof(v -> i) <> 'string' then
      perform app_private.import_fail(format('%s.%s[%s]', p_path, p_key, i), 'expected a string');
    end if;
    v_result := v_result || (v ->> i);
  end loop;
  return v_result;
end;
$$;

-- A list of the document (p_path null) or of an item at p_path; null or absent gives an empty list.
drop function if exists app_private.import_section(jsonb, text);
create or replace function app_private.import_section(p_doc jsonb, p_section text, p_path text default null) returns jsonb
language plpgsql volatile as $$
declare
  v jsonb := p_doc -> p_section;
begin
  if v is null or jsonb_typeof(v) = 'null' then
    return '[]'::jsonb;
  end if;
  if jsonb_typeof(v) <> 'array' then
    perform app_private.import_fail(coalesce(p_path || '.', '') || p_section, 'expected an array');
  end if;
  return v;
end;
$$;

-- Registers a key of a section, refusing duplicates; returns the updated key map.
create or replace function app_private.import_register(p_map jsonb, p_key text, p_id int, p_path text) returns jsonb
language plpgsql volatile as $$
begin
  if p_map ? p_key then
    perform app_private.import_fail(p_path || '.key', format('duplicate key "%s"', p_key));
  end if;
  return p_map || jsonb_build_object(p_key, p_id);
end;
$$;

create or replace function app_private.import_lookup(p_map jsonb, p_key text, p_path text, p_what text) returns int
language plpgsql volatile as $$
begin
  if p_key is null then
    return null;
  end if;
  if not p_map ? p_key then
    perform app_private.import_fail(p_path, format('unknown %s "%s"', p_what, p_key));
  end if;
  return (p_map ->> p_key)::int;
end;
$$;

comment on function app_private.import_check_keys(jsonb, text, text[]) is
'CONTRACT section 6, file shape: every item is an object and carries only the fields of its section (a typo fails).';
comment on function app_private.import_section(jsonb, text, text) is
'CONTRACT section 6, file shape: every section (and every list of an item, at p_path) is optional and, when
present, an array.';
comment on function app_private.import_register(jsonb, text, integer, text) is
'CONTRACT section 6, file shape: keys are unique per section.';
comment on function app_private.import_lookup(jsonb, text, text, text) is
'CONTRACT section 6, file shape: a key named by another section exists in its own section.';

-- The sections, in the order of the file: each validates and writes its items, failing at the
-- first bad path, and returns its key map (key -> id) for the sections that name its keys.

create or replace function app_private.import_establishments(p_doc jsonb) returns jsonb
language plpgsql volatile as $$
declare
  v_map jsonb := '{}';
  v_section jsonb := app_private.import_section(p_doc, 'establishments');
  v_item jsonb;
  v_path text;
  v_key text;
  v_count_base text;
  v_id int;
  i int;
begin
  for i in 0 .. jsonb_array_length(v_section) - 1 loop
    v_item := v_section -> i;
    v_path := format('establishments[%s]', i);
    perform app_private.import_check_keys(v_item, v_path, array['key', 'name', 'count_base']);
    v_key := app_private.import_text(v_item, 'key', v_path);
    v_count_base := coalesce(app_private.import_text(v_item, 'count_base', v_path, false), 'ouvrables');
    if app_hidden.count_base_known(v_count_base) is not true then
      perform app_private.import_fail(v_path || '.count_base', format('unknown count base "%s" (ouvrables or ouvres)', v_count_base));
    end if;
    if app_hidden.establishment_name_taken(app_private.import_text(v_item, 'name', v_path)) then
      perform app_private.import_fail(v_path || '.name', format('an establishment named "%s" already exists', v_item ->> 'name'));
    end if;
    insert into app_public.establishments (name, count_base)
    values (app_private.import_text(v_item, 'name', v_path), v_count_base)
    returning id into v_id;
    v_map := app_private.import_register(v_map, v_key, v_id, v_path);
  end loop;
  return v_map;
end;
$$;
comment on function app_private.import_establishments(jsonb) is
'CONTRACT section 6, establishments: each has a key, a name no establishment already bears
(establishment_name_taken) and a count_base, ouvrables (default) or ouvres (count_base_known).';

create or replace function app_private.import_teams(p_doc jsonb, p_establishments jsonb) returns jsonb
language plpgsql volatile as $$
declare
  v_map jsonb := '{}';
  v_section jsonb := app_private.import_section(p_doc, 'teams');
  v_item jsonb;
  v_path text;
  v_key text;
  v_keys text[];
  v_id int;
  i int;
  j int;
begin
  for i in 0 .. jsonb_array_length(v_section) - 1 loop
    v_item := v_section -> i;
    v_path := format('teams[%s]', i);
    perform app_private.import_check_keys(v_item, v_path, array['key', 'name', 'establishments']);
    v_key := app_private.import_text(v_item, 'key', v_path);
    insert into app_public.teams (name) values (app_private.import_text(v_item, 'name', v_path))
    returning id into v_id;
    v_map := app_private.import_register(v_map, v_key, v_id, v_path);
    v_keys := app_private.import_keys(v_item, 'establishments', v_path);
    for j in 1 .. coalesce(array_length(v_keys, 1), 0) loop
      insert into app_public.team_establishments (team_id, establishment_id)
      values (v_id, app_private.import_lookup(p_establishments, v_keys[j], format('%s.establishments[%s]', v_path, j - 1), 'establishment'))
      on conflict do nothing;
    end loop;
  end loop;
  return v_map;
end;
$$;
comment on function app_private.import_teams(jsonb, jsonb) is
'CONTRACT section 6, teams: each has a key and a name, and spans establishments named by their keys.';

create or replace function app_private.import_posts(p_doc jsonb, p_establishments jsonb) returns jsonb
language plpgsql volatile as $$
declare
  v_map jsonb := '{}';
  v_section jsonb := app_private.import_section(p_doc, 'posts');
  v_item jsonb;
  v_path text;
  v_key text;
  v_code text;
  v_establishment int;
  v_id int;
  v_start time;
  v_end time;
  v_break_start time;
  v_break_end time;
  i int;
begin
  for i in 0 .. jsonb_array_length(v_section) - 1 loop
    v_item := v_section -> i;
    v_path := format('posts[%s]', i);
    perform app_private.import_check_keys(v_item, v_path,
      array['key', 'code', 'label', 'establishment', 'start_time', 'end_time', 'break_start_time', 'break_end_time', 'break_paid']);
    v_key := app_private.import_text(v_item, 'key', v_path);
    v_code := app_private.import_text(v_item, 'code', v_path);
    if app_hidden.code_well_formed(v_code) is false then
      perform app_private.import_fail(v_path || '.code', format('invalid post code "%s"', v_code));
    end if;
    if app_hidden.code_namespace_clash('posts', v_code) is not null then
      perform app_private.import_fail(v_path || '.code', format('post code "%s" is already an absence type code', v_code));
    end if;
    v_start := app_private.import_time(v_item, 'start_time', v_path, true);
    v_end := app_private.import_time(v_item, 'end_time', v_path, true);
    if v_start = v_end then
      perform app_private.import_fail(v_path || '.end_time', 'end_time must differ from start_time');
    end if;
    v_break_start := app_private.import_time(v_item, 'break_start_time', v_path);
    v_break_end := app_private.import_time(v_item, 'break_end_time', v_path);
    if (v_break_start is null) <> (v_break_end is null) then
      perform app_private.import_fail(v_path || '.break_end_time', 'break_start_time and break_end_time go together');
    end if;
    v_establishment := app_private.import_lookup(p_establishments, app_private.import_text(v_item, 'establishment', v_path),
                                                 v_path || '.establishment', 'establishment');
    if app_hidden.post_code_used_in_establishment(v_establishment, v_code) then
      perform app_private.import_fail(v_path || '.code', format('post code "%s" is already used in this establishment', v_code));
    end if;
    insert into app_public.posts (code, label, establishment_id, start_time, end_time, break_start_time, break_end_time, break_paid)
    values (v_code, app_private.import_text(v_item, 'label', v_path), v_establishment, v_start, v_end,
            v_break_start, v_break_end, app_private.import_bool(v_item, 'break_paid', v_path, false))
    returning id into v_id;
    v_map := app_private.import_register(v_map, v_key, v_id, v_path);
  end loop;
  return v_map;
end;
$$;
comment on function app_private.import_posts(jsonb, jsonb) is
'CONTRACT section 6, posts: a well-formed code, outside the absence type codes (code_namespace_clash) and
unique in its establishment; start and end times that differ; break start and end given together.';

-- The employee row itself (the record's fields; its key is registered by the caller).
create or replace function app_private.import_employee_record(p_item jsonb, p_path text, p_establishments jsonb) returns int
language plpgsql volatile as $$
declare
  v_email text := app_private.import_text(p_item, 'professional_email', p_path, false);
  v_id int;
begin
  if app_hidden.email_well_formed(v_email) is false then
    perform app_private.import_fail(p_path || '.professional_email', format('invalid e-mail "%s"', v_email));
  end if;
  insert into app_public.employees (first_name, last_name, professional_email, main_establishment_id, birth_date, is_polyvalent)
  values (app_private.import_text(p_item, 'first_name', p_path), app_private.import_text(p_item, 'last_name', p_path),
          v_email,
          app_private.import_lookup(p_establishments, app_private.import_text(p_item, 'main_establishment', p_path, false),
                                    p_path || '.main_establishment', 'establishment'),
          app_private.import_date(p_item, 'birth_date', p_path),
          app_private.import_bool(p_item, 'is_polyvalent', p_path, false))
  returning id into v_id;
  return v_id;
end;
$$;
comment on function app_private.import_employee_record(jsonb, text, jsonb) is
'CONTRACT section 6, an employee: first and last names, a well-formed professional e-mail or null
(email_well_formed), the main workplace by establishment key (or none), birth date, polyvalence.';

create or replace function app_private.import_employee_ssn(p_item jsonb, p_path text, p_employee int) returns void
language plpgsql volatile as $$
declare
  v_number text := app_private.import_text(p_item, 'social_security_number', p_path, false);
begin
  if v_number is not null then
    if app_hidden.social_security_number_well_formed(v_number) is false then
      perform app_private.import_fail(p_path || '.social_security_number', 'invalid social security number (13 or 15 characters)');
    end if;
    insert into app_public.employee_social_security_numbers (employee_id, social_security_number) values (p_employee, v_number);
  end if;
end;
$$;
comment on function app_private.import_employee_ssn(jsonb, text, integer) is
'CONTRACT section 6, an employee''s social_security_number: null or well formed
(social_security_number_well_formed, 13 or 15 characters).';

create or replace function app_private.import_employee_workplaces_and_teams(p_item jsonb, p_path text, p_employee int,
                                                                            p_establishments jsonb, p_teams jsonb) returns void
language plpgsql volatile as $$
declare
  v_keys text[];
  j int;
begin
  v_keys := app_private.import_keys(p_item, 'secondary_establishments', p_path);
  for j in 1 .. coalesce(array_length(v_keys, 1), 0) loop
    insert into app_public.employee_secondary_establishments (employee_id, establishment_id)
    values (p_employee, app_private.import_lookup(p_establishments, v_keys[j],
                                                  format('%s.secondary_establishments[%s]', p_path, j - 1), 'establishment'))
    on conflict do nothing;
  end loop;
  v_keys := app_private.import_keys(p_item, 'teams', p_path);
  for j in 1 .. coalesce(array_length(v_keys, 1), 0) loop
    insert into app_public.team_assignments (employee_id, team_id)
    values (p_employee, app_private.import_lookup(p_teams, v_keys[j], format('%s.teams[%s]', p_path, j - 1), 'team'));
  end loop;
end;
$$;
comment on function app_private.import_employee_workplaces_and_teams(jsonb, text, integer, jsonb, jsonb) is
'CONTRACT section 6, an employee''s secondary_establishments and teams, by keys of their sections (open-ended
assignments).';

-- Returns the earliest contract start (null without contracts): the planning template starts there.
create or replace function app_private.import_employee_contracts(p_item jsonb, p_path text, p_employee int) returns date
language plpgsql volatile as $$
declare
  v_contracts jsonb := app_private.import_section(p_item, 'contracts', p_path);
  v_contract jsonb;
  v_path text;
  v_type_code text;
  v_type_id int;
  v_start date;
  v_end date;
  v_first_start date;
  j int;
begin
  for j in 0 .. jsonb_array_length(v_contracts) - 1 loop
    v_contract := v_contracts -> j;
    v_path := format('%s.contracts[%s]', p_path, j);
    perform app_private.import_check_keys(v_contract, v_path, array['type', 'start', 'end', 'trial_end', 'job_title', 'weekly_hours']);
    v_type_code := app_private.import_text(v_contract, 'type', v_path);
    select ct.id into v_type_id from app_public.contract_types ct where ct.code = v_type_code;
    if not found then
      perform app_private.import_fail(v_path || '.type', format('unknown contract type "%s"', v_type_code));
    end if;
    v_start := app_private.import_date(v_contract, 'start', v_path, true);
    v_end := app_private.import_date(v_contract, 'end', v_path);
    if v_end < v_start then
      perform app_private.import_fail(v_path || '.end', 'end is before start');
    end if;
    if app_private.import_date(v_contract, 'trial_end', v_path) < v_start then
      perform app_private.import_fail(v_path || '.trial_end', 'trial_end is before start');
    end if;
    if jsonb_typeof(v_contract -> 'weekly_hours') not in ('number', 'null') then
      perform app_private.import_fail(v_path || '.weekly_hours', 'expected a number');
    end if;
    if app_hidden.weekly_hours_in_range((v_contract ->> 'weekly_hours')::numeric) is false then
      perform app_private.import_fail(v_path || '.weekly_hours',
        format('expected a number of hours between 0 and %s', app_hidden.weekly_hours_max()));
    end if;
    insert into app_public.contracts (employee_id, contract_type_id, start_date, end_date, trial_end_date, job_title, weekly_hours)
    values (p_employee, v_type_id, v_start, v_end,
            app_private.import_date(v_contract, 'trial_end', v_path),
            app_private.import_text(v_contract, 'job_title', v_path, false),
            (v_contract ->> 'weekly_hours')::numeric);
    v_first_start := least(v_first_start, v_start);  -- least() skips the null of the first contract
  end loop;
  return v_first_start;
end;
$$;
comment on function app_private.import_employee_contracts(jsonb, text, integer) is
'CONTRACT section 5 (contract types) and 6, an employee''s contracts: a known type, a start, an end and a
trial end not before it, weekly hours in range (weekly_hours_in_range).';

create or replace function app_private.import_employee_week(p_item jsonb, p_path text, p_employee int,
                                                            p_valid_from date, p_posts jsonb) returns void
language plpgsql volatile as $$
declare
  v_days text[] := array['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'];
  v_template int;
  v_post_key text;
  j int;
begin
  if p_item ? 'week' and jsonb_typeof(p_item -> 'week') <> 'null' then
    perform app_private.import_check_keys(p_item -> 'week', p_path || '.week', v_days);
    insert into app_public.planning_templates (employee_id, valid_from)
    values (p_employee, coalesce(p_valid_from, app_hidden.today()))
    returning id into v_template;
    for j in 1 .. 7 loop
      v_post_key := app_private.import_text(p_item -> 'week', v_days[j], p_path || '.week', false);
      if v_post_key is not null then
        insert into app_public.planning_template_slots (template_id, weekday, post_id)
        values (v_template, j, app_private.import_lookup(p_posts, v_post_key, p_path || '.week.' || v_days[j], 'post code'));
      end if;
    end loop;
  end if;
end;
$$;
comment on function app_private.import_employee_week(jsonb, text, integer, date, jsonb) is
'CONTRACT section 6, an employee''s week: a post key or null per weekday (mon to sun), the planning template
from the first contract start on (today without contracts).';

create or replace function app_private.import_employee_counters(p_item jsonb, p_path text, p_employee int) returns void
language plpgsql volatile as $$
declare
  v_counters jsonb := app_private.import_section(p_item, 'counters', p_path);
  v_counter jsonb;
  v_path text;
  v_code text;
  v_year int;
  v_amount numeric;
  v_counter_id int;
  j int;
begin
  for j in 0 .. jsonb_array_length(v_counters) - 1 loop
    v_counter := v_counters -> j;
    v_path := format('%s.counters[%s]', p_path, j);
    perform app_private.import_check_keys(v_counter, v_path, array['code', 'year', 'acquired']);
    v_code := app_private.import_text(v_counter, 'code', v_path);
    if not exists (select 1 from app_public.counter_kinds k where k.code = v_code) then
      perform app_private.import_fail(v_path || '.code', format('unknown counter code "%s"', v_code));
    end if;
    if jsonb_typeof(v_counter -> 'year') <> 'number' or (v_counter ->> 'year') !~ '^\d{4}$' then
      perform app_private.import_fail(v_path || '.year', 'expected a year such as 2026');
    end if;
    v_year := (v_counter ->> 'year')::int;
    v_amount := null;
    if (v_counter ->> 'acquired') is not null then
      if (v_counter ->> 'acquired') !~ '^-?\d{1,6}(\.\d{1,2})?$' then
        perform app_private.import_fail(v_path || '.acquired', 'expected a decimal string such as "25.00"');
      end if;
      v_amount := (v_counter ->> 'acquired')::numeric;
    end if;
    if exists (select 1 from app_public.counters c where c.employee_id = p_employee and c.code = v_code and c.year = v_year) then
      perform app_private.import_fail(v_path, format('counter %s %s is listed twice', v_code, v_year));
    end if;
    insert into app_public.counters (employee_id, code, year) values (p_employee, v_code, v_year)
    returning id into v_counter_id;
    if coalesce(v_amount, 0) <> 0 then
      insert into app_private.counter_movements (counter_id, bucket, quantity, kind, comment)
      values (v_counter_id, 'acquired', v_amount, 'grant', 'Import de l''organisation');
    end if;
  end loop;
end;
$$;
comment on function app_private.import_employee_counters(jsonb, text, integer) is
'CONTRACT section 6, an employee''s counters: a known counter code, a four-digit year, each code and year
once; the acquired decimal string is written as an Acquis movement of the journal.';

create or replace function app_private.import_employees(p_doc jsonb, p_establishments jsonb, p_teams jsonb, p_posts jsonb)
returns jsonb
language plpgsql volatile as $$
declare
  v_map jsonb := '{}';
  v_section jsonb := app_private.import_section(p_doc, 'employees');
  v_item jsonb;
  v_path text;
  v_key text;
  v_id int;
  i int;
begin
  for i in 0 .. jsonb_array_length(v_section) - 1 loop
    v_item := v_section -> i;
    v_path := format('employees[%s]', i);
    perform app_private.import_check_keys(v_item, v_path,
      array['key', 'first_name', 'last_name', 'professional_email', 'main_establishment', 'secondary_establishments',
            'teams', 'social_security_number', 'contracts', 'week', 'counters', 'birth_date', 'is_polyvalent']);
    v_key := app_private.import_text(v_item, 'key', v_path);
    v_id := app_private.import_employee_record(v_item, v_path, p_establishments);
    v_map := app_private.import_register(v_map, v_key, v_id, v_path);
    perform app_private.import_employee_ssn(v_item, v_path, v_id);
    perform app_private.import_employee_workplaces_and_teams(v_item, v_path, v_id, p_establishments, p_teams);
    perform app_private.import_employee_week(v_item, v_path, v_id,
                                             app_private.import_employee_contracts(v_item, v_path, v_id), p_posts);
    perform app_private.import_employee_counters(v_item, v_path, v_id);
  end loop;
  return v_map;
end;
$$;
comment on function app_private.import_employees(jsonb, jsonb, jsonb, jsonb) is
'CONTRACT section 6, employees: each with a unique key, its record, number, workplaces, teams, contracts,
week and counters, in that order.';

-- The role attributions of one account; Salarié listed again on an employee's account changes nothing.
create or replace function app_private.import_account_roles(p_item jsonb, p_path text, p_account int, p_employee int,
                                                            p_establishments jsonb) returns void
language plpgsql volatile as $$
declare
  v_roles jsonb := app_private.import_section(p_item, 'roles', p_path);
  v_role jsonb;
  v_path text;
  v_role_name text;
  v_role_id smallint;
  v_start date;
  v_end date;
  v_keys text[];
  v_attribution int;
  j int;
  k int;
begin
  for j in 0 .. jsonb_array_length(v_roles) - 1 loop
    v_role := v_roles -> j;
    v_path := format('%s.roles[%s]', p_path, j);
    perform app_private.import_check_keys(v_role, v_path, array['role', 'establishments', 'start', 'end']);
    v_role_name := app_private.import_text(v_role, 'role', v_path);
    select r.id into v_role_id from app_public.roles r where r.name = v_role_name;
    if not found then
      perform app_private.import_fail(v_path || '.role', format('unknown role "%s"', v_role_name));
    end if;
    v_start := app_private.import_date(v_role, 'start', v_path);
    v_end := app_private.import_date(v_role, 'end', v_path);
    if v_end < v_start then
      perform app_private.import_fail(v_path || '.end', 'end is before start');
    end if;
    v_keys := app_private.import_keys(v_role, 'establishments', v_path);
    -- Listing Salarié again for an employee's account changes nothing.
    if v_role_id = 7 and p_employee is not null and v_start is null and v_end is null
       and coalesce(array_length(v_keys, 1), 0) = 0 then
      continue;
    end if;
    insert into app_public.role_attributions (account_id, role_id, start_date, end_date)
    values (p_account, v_role_id, v_start, v_end)
    returning id into v_attribution;
    for k in 1 .. coalesce(array_length(v_keys, 1), 0) loop
      insert into app_public.role_attribution_establishments (attribution_id, establishment_id)
      values (v_attribution, app_private.import_lookup(p_establishments, v_keys[k],
                                                       format('%s.establishments[%s]', v_path, k - 1), 'establishment'))
      on conflict do nothing;
    end loop;
  end loop;
end;
$$;
comment on function app_private.import_account_roles(jsonb, text, integer, integer, jsonb) is
'CONTRACT section 6 and SPEC Roles, an account''s roles: a known role, dates in order, establishments by key
(none: the whole association); Salarié listed again on an employee''s account changes nothing.';

create or replace function app_private.import_accounts(p_doc jsonb, p_establishments jsonb, p_employees jsonb) returns jsonb
language plpgsql volatile as $$
declare
  v_map jsonb := '{}';
  v_section jsonb := app_private.import_section(p_doc, 'accounts');
  v_item jsonb;
  v_path text;
  v_key text;
  v_username text;
  v_employee int;
  v_keys text[];
  v_id int;
  i int;
  j int;
begin
  for i in 0 .. jsonb_array_length(v_section) - 1 loop
    v_item := v_section -> i;
    v_path := format('accounts[%s]', i);
    perform app_private.import_check_keys(v_item, v_path,
      array['key', 'username', 'password_hash', 'employee', 'is_staff', 'is_superuser', 'is_active', 'permissions', 'roles']);
    v_key := app_private.import_text(v_item, 'key', v_path);
    v_username := app_private.import_text(v_item, 'username', v_path);
    if app_hidden.username_well_formed(v_username) is false then
      perform app_private.import_fail(v_path || '.username', format('invalid username "%s" (letters, digits and . _ @ + -)', v_username));
    end if;
    if app_private.username_taken(v_username) then
      perform app_private.import_fail(v_path || '.username', format('username "%s" is already taken', v_username));
    end if;
    v_employee := app_private.import_lookup(p_employees, app_private.import_text(v_item, 'employee', v_path, false),
                                            v_path || '.employee', 'employee');
    if v_employee is not null and exists (select 1 from app_public.accounts a where a.employee_id = v_employee) then
      perform app_private.import_fail(v_path || '.employee', format('employee "%s" already has an account', v_item ->> 'employee'));
    end if;
    insert into app_public.accounts (username, employee_id, is_active, is_staff, is_superuser)
    values (v_username, v_employee,
            app_private.import_bool(v_item, 'is_active', v_path, true),
            app_private.import_bool(v_item, 'is_staff', v_path, false),
            app_private.import_bool(v_item, 'is_superuser', v_path, false))
    returning id into v_id;
    v_map := app_private.import_register(v_map, v_key, v_id, v_path);
    insert into app_private.account_secrets (account_id, password_hash, password_changed_at)
    values (v_id, app_private.import_text(v_item, 'password_hash', v_path, false),
            case when v_item ? 'password_hash' then app_hidden.now() end);

    v_keys := app_private.import_keys(v_item, 'permissions', v_path);
    for j in 1 .. coalesce(array_length(v_keys, 1), 0) loop
      if not exists (select 1 from app_public.permissions p where p.code = v_keys[j]) then
        perform app_private.import_fail(format('%s.permissions[%s]', v_path, j - 1), format('unknown permission "%s"', v_keys[j]));
      end if;
      insert into app_public.account_permissions (account_id, permission_code) values (v_id, v_keys[j])
      on conflict do nothing;
    end loop;

    perform app_private.import_account_roles(v_item, v_path, v_id, v_employee, p_establishments);

    -- An account without a usable password is invited when a professional e-mail exists.
    if not v_item ? 'password_hash' then
      perform app_private.queue_invitation(v_id);
    end if;
  end loop;
  return v_map;
end;
$$;
comment on function app_private.import_accounts(jsonb, jsonb, jsonb) is
'CONTRACT section 6 and SPEC Authentication rule 4, accounts: a well-formed free username
(username_well_formed, username_taken), at most one account per employee, known permissions, roles; an
account without password_hash is invited.';

create or replace function app_private.import_on_call(p_doc jsonb, p_establishments jsonb, p_accounts jsonb) returns jsonb
language plpgsql volatile as $$
declare
  v_map jsonb := '{}';
  v_section jsonb := app_private.import_section(p_doc, 'on_call');
  v_item jsonb;
  v_path text;
  v_start timestamptz;
  v_end timestamptz;
  v_keys text[];
  v_id int;
  i int;
  j int;
begin
  for i in 0 .. jsonb_array_length(v_section) - 1 loop
    v_item := v_section -> i;
    v_path := format('on_call[%s]', i);
    perform app_private.import_check_keys(v_item, v_path, array['account', 'establishments', 'start', 'end', 'comment']);
    v_start := app_private.import_timestamptz(v_item, 'start', v_path);
    v_end := app_private.import_timestamptz(v_item, 'end', v_path);
    if v_end <= v_start then
      perform app_private.import_fail(v_path || '.end', 'end must be after start');
    end if;
    insert into app_public.on_call_periods (account_id, start_at, end_at, comment)
    values (app_private.import_lookup(p_accounts, app_private.import_text(v_item, 'account', v_path), v_path || '.account', 'account'),
            v_start, v_end, app_private.import_text(v_item, 'comment', v_path, false))
    returning id into v_id;
    v_map := v_map || jsonb_build_object(i::text, v_id);
    v_keys := app_private.import_keys(v_item, 'establishments', v_path);
    if coalesce(array_length(v_keys, 1), 0) = 0 then
      perform app_private.import_fail(v_path || '.establishments', 'at least one establishment');
    end if;
    for j in 1 .. array_length(v_keys, 1) loop
      insert into app_public.on_call_period_establishments (period_id, establishment_id)
      values (v_id, app_private.import_lookup(p_establishments, v_keys[j], format('%s.establishments[%s]', v_path, j - 1), 'establishment'))
      on conflict do nothing;
    end loop;
  end loop;
  return v_map;
end;
$$;
comment on function app_private.import_on_call(jsonb, jsonb, jsonb) is
'CONTRACT section 6 and SPEC Permissions rule 9, on_call: an account by key, an interval with offsets whose
end is after its start, at least one establishment by key; the map is keyed by position.';

-- The whole file in one call, so one transaction: the first bad path aborts every section.
create or replace function app_private.import_organisation(p_doc jsonb) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_establishments jsonb;
  v_teams jsonb;
  v_posts jsonb;
  v_employees jsonb;
  v_accounts jsonb;
begin
  perform app_private.import_check_keys(p_doc, '$',
    array['establishments', 'teams', 'posts', 'employees', 'accounts', 'on_call']);
  v_establishments := app_private.import_establishments(p_doc);
  v_teams := app_private.import_teams(p_doc, v_establishments);
  v_posts := app_private.import_posts(p_doc, v_establishments);
  v_employees := app_private.import_employees(p_doc, v_establishments, v_teams, v_posts);
  v_accounts := app_private.import_accounts(p_doc, v_establishments, v_employees);
  return jsonb_build_object('establishments', v_establishments, 'teams', v_teams, 'posts', v_posts,
                            'employees', v_employees, 'accounts', v_accounts,
                            'on_call', app_private.import_on_call(p_doc, v_establishments, v_accounts));
end;
$$;
comment on function app_private.import_organisation(jsonb) is
'CONTRACT section 6 (npm run org:import): the organisation file, section after section (establishments,
teams, posts, employees, accounts, on_call), all or nothing; a bad path fails with "path: message" (WV020).';
--! EndIncluded org/import.sql
--! Included graphql.sql
-- PostGraphile smart comments. /graphql offers the API functions only (src/graphql.ts leaves
-- every table out): the aggregates once opted in here on tables are gone with them.
comment on table app_public.absences is null;
comment on table app_public.shift_change_requests is null;
comment on table app_public.counters is null;
comment on table app_public.day_modifications is null;
comment on table app_public.events is null;
-- Impersonation hands out a token, which only the REST route signs: GraphQL does not offer it
-- (and the function refuses unless the server turned impersonation on, sql/impersonation/api.sql).
-- Smart tags come first: PostGraphile reads the first line that is not a tag, and all after it,
-- as the description.
comment on function app_public.impersonation_start(int) is
'@behavior -*
SPEC Authentication rule 5 (user impersonation, off by default): a superuser starts speaking for another
active account that is not a superuser; returns that account and the impersonator, which the REST route
signs into a token; audited. Refused unless the server turned impersonation on for the request.';
-- The planning as text, and in parts, is the REST route's (passed through as written);
-- GraphQL offers planningRead, typed JSON.
comment on function app_public.planning_read_text(date, date, int, int, int) is
'@behavior -*
SPEC Planning cell and Permissions rule 3, GET /api/planning/: planning_read''s answer as JSON text, as written
(no parse and serialise), which the REST route sends in parts (planning_read_chunks).';
comment on function app_public.planning_read_chunks(date, date, int, int, int) is
'@behavior -*
SPEC Planning cell and Permissions rule 3, GET /api/planning/: planning_read''s answer as UTF-8 bytes in parts of
at most 64 KiB, in order, which the REST route sends as they come.';
-- The list of absences as text is the REST route's (passed through as written); GraphQL offers
-- absencesList, typed JSON.
comment on function app_public.absences_list_text(text, int, date, date, int, int, text, int, int) is
'@behavior -*
SPEC Absences, GET /api/absences/ and Permissions rules 3 and 19: absences_list''s count, and its results as
JSON text, as written (no envelope, no parse and serialise), which the REST route sends as they come.';
--! EndIncluded graphql.sql
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
      v_errors := app_hidden.add_error(v_errors, v_field, 'Heure invalide : format attendu HH:MM.');
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
