-- Who reads and writes events (SPEC "Documents and other routes": /api/events/ restricted to
-- the perimeter without a parameter).
--
-- | permission         | roles                                          |
-- |--------------------|------------------------------------------------|
-- | events.change_event | Admin, RH n1, RH n2, DA, Manager n1, Manager n2 |
--
-- Reading: every account reads the events it created or takes part in; holders of
-- employee.view_employee_directory read every event (the list restricts them to their
-- perimeter unless scope=all). Writing: holders of events.change_event write the events
-- they created and those of an establishment of their perimeter.
create or replace function app_hidden.readable_event_ids() returns setof int
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select ev.id from app_public.events ev where app_hidden.current_account_has('employee.view_employee_directory')
  union
  select ev.id from app_public.events ev where ev.created_by = app_hidden.current_account_id()
  union
  select ep.event_id from app_public.event_participants ep where ep.employee_id = app_hidden.current_employee_id();
$$;

create or replace function app_hidden.writable_event_ids() returns setof int
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  with scope as (
    select app_hidden.perimeter_establishment_ids('events.change_event') as ids,
           app_hidden.current_account_has('events.change_event') as allowed
  )
  select ev.id from app_public.events ev, scope
  where scope.allowed
    and (scope.ids is null or ev.created_by = app_hidden.current_account_id() or ev.establishment_id = any (scope.ids));
$$;

-- May the caller place an event in this establishment (null: no establishment)?
create or replace function app_hidden.event_establishment_allowed(p_establishment int) returns boolean
language sql stable as $$
  select p_establishment is null
      or app_hidden.in_scope(p_establishment, app_hidden.perimeter_establishment_ids('events.change_event'));
$$;

-- The establishment an event has before an update (read without RLS: a policy of events may
-- not query events itself).
create or replace function app_hidden.event_stored_establishment(p_id int) returns int
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select ev.establishment_id from app_public.events ev where ev.id = p_id;
$$;

drop policy if exists select_readable on app_public.events;
create policy select_readable on app_public.events for select to wfm_visitor, wfm_api
  using (id in (select app_hidden.readable_event_ids()));
drop policy if exists insert_writer on app_public.events;
create policy insert_writer on app_public.events for insert to wfm_api
  with check ((select app_hidden.current_account_has('events.change_event'))
              and created_by = (select app_hidden.current_account_id())
              and app_hidden.event_establishment_allowed(establishment_id));
drop policy if exists update_writable on app_public.events;
create policy update_writable on app_public.events for update to wfm_api
  using (id in (select app_hidden.writable_event_ids()))
  with check (app_hidden.event_establishment_allowed(establishment_id)
              or establishment_id is not distinct from app_hidden.event_stored_establishment(id));
drop policy if exists delete_writable on app_public.events;
create policy delete_writable on app_public.events for delete to wfm_api
  using (id in (select app_hidden.writable_event_ids()));

drop policy if exists select_readable on app_public.event_participants;
create policy select_readable on app_public.event_participants for select to wfm_visitor, wfm_api
  using (event_id in (select app_hidden.readable_event_ids()));
drop policy if exists insert_writable on app_public.event_participants;
create policy insert_writable on app_public.event_participants for insert to wfm_api
  with check (event_id in (select app_hidden.writable_event_ids()));
drop policy if exists delete_writable on app_public.event_participants;
create policy delete_writable on app_public.event_participants for delete to wfm_api
  using (event_id in (select app_hidden.writable_event_ids()));

create index if not exists events_created_by_idx on app_public.events (created_by);

create or replace trigger _500_audit after insert or update on app_public.events
  for each row execute function app_private.tg__audit('event');
create or replace trigger _500_audit_delete before delete on app_public.events
  for each row execute function app_private.tg__audit('event');
create or replace trigger _500_audit after insert or update on app_public.event_participants
  for each row execute function app_private.tg__audit_child('event_participant', 'event_id');
create or replace trigger _500_audit_delete before delete on app_public.event_participants
  for each row execute function app_private.tg__audit_child('event_participant', 'event_id');
