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
    perform app_hidden.forbidden('Vous n’avez pas le droit de créer des événements.', 'WF530');
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
        format('%s a une absence %s %s qui chevauche l’événement « %s » du %s.',
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
    perform app_hidden.forbidden('Vous n’avez pas le droit de créer ou de modifier des événements.', 'WF530');
  end if;
  if p_id is not null then
    if not p_id in (select app_hidden.writable_event_ids()) then
      perform app_hidden.forbidden('Vous ne modifiez que les événements que vous avez créés ou ceux d’un établissement de votre périmètre.', 'WF531');
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
      v_errors := app_hidden.add_error(v_errors, 'establishment', 'Cet établissement n’est pas dans votre périmètre.');
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
    perform app_hidden.forbidden('Vous n’avez pas le droit de supprimer des événements.', 'WF530');
  end if;
  if not p_id in (select app_hidden.writable_event_ids()) then
    perform app_hidden.forbidden('Vous ne supprimez que les événements que vous avez créés ou ceux d’un établissement de votre périmètre.', 'WF531');
  end if;
  delete from app_public.events ev where ev.id = p_id;
  return null;
end;
$$;
comment on function app_public.event_delete(integer) is
'SPEC Events, DELETE /api/events/<id>/: a holder of events.change_event deletes an event it created or of
an establishment of its perimeter (else 403; 404 when not read).';
