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
                    v_prefix || 'indiquez l’heure de début et l’heure de fin du créneau.');
      v_row_ok := false;
    elsif v_start = v_end then
      v_errors := app_hidden.add_error(v_errors, p_field,
                    v_prefix || 'l’heure de fin doit être différente de l’heure de début.');
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
                      v_prefix || 'précisez le poste (aucun poste n’est prévu ce jour-là ni rattaché à votre établissement).');
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
                      v_prefix || format('le poste %s %s n’est plus actif.', v_post.code, v_post.label));
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
        format('La journée accordée compte %s de travail effectif : au-delà de 6 h, une pause d’au moins 20 minutes consécutives est obligatoire.',
               app_hidden.fmt_minutes(v_total)));
    end if;
  end if;
  return v_errors;
end;
$$;
