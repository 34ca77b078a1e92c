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
    perform app_hidden.forbidden('Le flux des absences du périmètre est réservé aux lecteurs des demandes d’absence.', 'WF701');
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
    perform app_hidden.not_found('Aucun flux de ce type : créez-le d’abord.', 'WN701');
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
