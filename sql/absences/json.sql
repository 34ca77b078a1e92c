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
declare
  -- The queue's mark « par délégation de X » (sql/delegations/api.sql), looked up per row only
  -- for a caller holding a delegation.
  v_marks boolean := app_hidden.current_account_has_delegation();
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
        'on_behalf_of', a.on_behalf_of,
        'by_delegation_of', case when v_marks then app_hidden.delegation_mark(a.employee_id) end,
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
declare
  v_marks boolean := app_hidden.current_account_has_delegation();
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
        ', "on_behalf_of": ', coalesce((a.on_behalf_of)::text, 'null'),
        ', "status_label": ', coalesce(to_json(app_hidden.absence_status_label(a.status))::text, 'null'),
        ', "submitted_at": ', coalesce(to_json(a.submitted_at)::text, 'null'),
        ', "employee_name": ', coalesce(to_json(e.first_name || ' ' || e.last_name)::text, 'null'),
        ', "decision_reason": ', coalesce(to_json(a.decision_reason)::text, 'null'),
        ', "by_delegation_of": ', coalesce(to_json(case when v_marks then app_hidden.delegation_mark(a.employee_id) end)::text, 'null'),
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
