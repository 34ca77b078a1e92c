-- The planned day of an employee: the weekly template's posts, replaced by the day
-- modification when one exists. (A granted absence prevails over both; the planning draws it
-- on top.) Shared by day-change requests, absences, planning and payroll.

-- Minutes between two times of a day; an end at or before the start ends the next day.
create or replace function app_hidden.span_minutes(p_start time, p_end time) returns int
language sql immutable parallel safe as $$
  select case when p_end > p_start
              then (extract(epoch from p_end - p_start) / 60)::int
              else (extract(epoch from p_end - p_start) / 60)::int + 1440 end;
$$;

-- Net minutes of a slot: its span minus an unpaid break (a paid break is not deducted).
create or replace function app_hidden.slot_minutes(p_slot app_public.slot) returns int
language sql immutable parallel safe as $$
  select app_hidden.span_minutes(p_slot.start_time, p_slot.end_time)
         - case when p_slot.break_start_time is not null and p_slot.break_end_time is not null
                     and not coalesce(p_slot.break_paid, false)
                then app_hidden.span_minutes(p_slot.break_start_time, p_slot.break_end_time)
                else 0 end;
$$;

create or replace function app_hidden.slots_minutes(p_slots app_public.slot[]) returns int
language sql immutable parallel safe as $$
  select coalesce(sum(app_hidden.slot_minutes(s)), 0)::int from unnest(p_slots) s;
$$;

-- The slot of a post, as planned.
create or replace function app_hidden.post_slot(p_post app_public.posts) returns app_public.slot
language sql immutable parallel safe as $$
  select row(p_post.start_time, p_post.end_time, p_post.break_start_time, p_post.break_end_time,
             p_post.break_paid, p_post.id, p_post.establishment_id, false)::app_public.slot;
$$;

-- The template's slots for a date (the template valid that day, latest valid_from first).
create or replace function app_hidden.template_slots(p_employee int, p_date date) returns app_public.slot[]
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select coalesce(array_agg(app_hidden.post_slot(p) order by ts.position), '{}')
  from (select t.id from app_public.planning_templates t
        where t.employee_id = p_employee and t.valid_from <= p_date
          and (t.valid_to is null or t.valid_to >= p_date)
        order by t.valid_from desc limit 1) t
  join app_public.planning_template_slots ts on ts.template_id = t.id
                                             and ts.weekday = extract(isodow from p_date)
  join app_public.posts p on p.id = ts.post_id;
$$;

-- The planned slots of a day: the day modification's, else the template's.
create or replace function app_hidden.planned_slots(p_employee int, p_date date) returns app_public.slot[]
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select coalesce((select dm.slots from app_public.day_modifications dm
                   where dm.employee_id = p_employee and dm.date = p_date),
                  app_hidden.template_slots(p_employee, p_date));
$$;

-- "J Journée 09:00-17:00, S Soir 14:00-21:00": post code, post label and hours per slot.
create or replace function app_hidden.slots_description(p_slots app_public.slot[]) returns text
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select coalesce(string_agg(concat_ws(' ', p.code, p.label,
                                       to_char(s.start_time, 'HH24:MI') || '-' || to_char(s.end_time, 'HH24:MI')),
                             ', ' order by s.ord), '')
  from unnest(p_slots) with ordinality as s(start_time, end_time, break_start_time, break_end_time,
                                            break_paid, post_id, establishment_id, is_remote, ord)
  left join app_public.posts p on p.id = s.post_id;
$$;

-- JSON of a slot as the API shows it.
create or replace function app_hidden.slot_json(p_slot app_public.slot) returns jsonb
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select jsonb_build_object(
    'start_time', to_char(p_slot.start_time, 'HH24:MI'),
    'end_time', to_char(p_slot.end_time, 'HH24:MI'),
    'break_start_time', to_char(p_slot.break_start_time, 'HH24:MI'),
    'break_end_time', to_char(p_slot.break_end_time, 'HH24:MI'),
    'break_paid', coalesce(p_slot.break_paid, false),
    'post', p_slot.post_id,
    'post_code', p.code,
    'post_label', p.label,
    'establishment', p_slot.establishment_id,
    'is_remote', coalesce(p_slot.is_remote, false),
    'minutes', app_hidden.slot_minutes(p_slot))
  from (select 1) x left join app_public.posts p on p.id = p_slot.post_id;
$$;

create or replace function app_hidden.slots_json(p_slots app_public.slot[]) returns jsonb
language sql stable as $$
  select coalesce(jsonb_agg(app_hidden.slot_json(s) order by ord), '[]'::jsonb)
  from unnest(p_slots) with ordinality as u(start_time, end_time, break_start_time, break_end_time,
                                            break_paid, post_id, establishment_id, is_remote, ord)
  cross join lateral (select row(u.start_time, u.end_time, u.break_start_time, u.break_end_time, u.break_paid,
                                 u.post_id, u.establishment_id, u.is_remote)::app_public.slot as s) x;
$$;
