-- Day-change requests read by the back-office and GET /api/shift-change-requests/: the
-- filters of the list (status, date window, employee) and the establishment of the employee
-- (main or secondary workplace). Row-level security keeps each reader in their perimeter.
-- The requester reads their own requests; absences.view_absence_queue holders read their
-- perimeter. from/to are inclusive bounds on date. Newest date first. It replaces
-- app_public.shift_change_list (without the establishment) of the first migration.
drop function if exists app_public.shift_change_list(text, date, date, int, int, int);
-- The requests of the list's filters (its checks: 400 under status or to), written once for
-- shift_change_search and its export (shift_change_export); called by those security definer
-- functions, so that the readers are theirs (row-level security on the requests).
create or replace function app_hidden.shift_change_selection(p_status text, p_from date, p_to date, p_employee int,
                                                             p_establishment int)
returns setof app_public.shift_change_requests
language plpgsql stable as $$
begin
  if p_status is not null and p_status not in ('pending', 'validated', 'refused') then
    perform app_hidden.invalid('status', 'Statut inconnu. Valeurs possibles : pending, validated, refused.', 'WV109');
  end if;
  if p_from is not null and p_to is not null and p_to < p_from then
    perform app_hidden.invalid('to', 'La date de fin doit être postérieure ou égale à la date de début.', 'WV108');
  end if;
  return query
    select r.*
    from app_public.shift_change_requests r
    where (p_status is null or r.status = p_status)
      and (p_from is null or r.date >= p_from)
      and (p_to is null or r.date <= p_to)
      and (p_employee is null or r.employee_id = p_employee)
      and (p_establishment is null
           or exists (select 1 from app_public.employees e
                      where e.id = r.employee_id and e.main_establishment_id = p_establishment)
           or exists (select 1 from app_public.employee_secondary_establishments s
                      where s.employee_id = r.employee_id and s.establishment_id = p_establishment));
end;
$$;

create or replace function app_public.shift_change_search(
  p_status text default null, p_from date default null, p_to date default null, p_employee int default null,
  p_establishment int default null, p_page int default 1, p_page_size int default 50)
returns jsonb
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_size int := app_hidden.page_limit(p_page_size);
  v_offset int := app_hidden.page_offset(p_page, p_page_size);
begin
  return (
    with filtered as materialized (
      select r.id, r.date
      from app_hidden.shift_change_selection(p_status, p_from, p_to, p_employee, p_establishment) r
    ),
    page as (
      select f.id, row_number() over (order by f.date desc, f.id desc) as n
      from filtered f
      order by f.date desc, f.id desc
      limit v_size offset v_offset
    )
    select jsonb_build_object(
      'count', (select count(*) from filtered),
      'results', coalesce((select jsonb_agg(x.record order by pg.n)
                           from page pg
                           join app_hidden.shift_change_records(array(select p.id from page p)) x on x.id = pg.id),
                          '[]'::jsonb)));
end;
$$;
comment on function app_public.shift_change_search(text, date, date, integer, integer, integer, integer) is
'SPEC Day-change requests, GET /api/shift-change-requests/ and Permissions rule 2 (also the back-office
list): the requests the caller reads (its own, or the absences.view_absence_queue perimeter) filtered by
status, inclusive date window, employee and establishment (main or secondary workplace), newest date
first; one page with the count.';

-- GET /api/shift-change-requests/export/ (issue 29 point 4: the queue's day-change tab exports
-- its list): every request of shift_change_search for the same filters and readers, in its order
-- (newest date first), without paging; the days asked and granted in words.
create or replace function app_public.shift_change_export(p_status text default null, p_from date default null,
                                                          p_to date default null, p_employee int default null,
                                                          p_establishment int default null)
returns table (id int, employee int, employee_name text, date date, reason text, planned text, requested text,
               is_remote text, is_offsite text, requested_minutes int, status_label text, comment text,
               granted text, decision_reason text, created_at timestamptz, decided_at timestamptz)
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  return query
    select r.id, r.employee_id, e.first_name || ' ' || e.last_name, r.date, coalesce(sr.label, r.reason),
           nullif(r.planned_description, ''),
           case when cardinality(r.slots) = 0 then 'Repos' else app_hidden.slots_summary(r.slots) end,
           case when r.is_remote then 'Oui' else 'Non' end, case when r.is_offsite then 'Oui' else 'Non' end,
           r.requested_minutes,
           case r.status when 'pending' then 'En attente' when 'validated' then 'Validée' when 'refused' then 'Refusée' end,
           r.comment,
           case when r.granted_slots is null then null
                when cardinality(r.granted_slots) = 0 then 'Repos'
                else app_hidden.slots_summary(r.granted_slots) end,
           r.decision_reason, r.created_at, r.decided_at
    from app_hidden.shift_change_selection(p_status, p_from, p_to, p_employee, p_establishment) r
    join app_public.employees e on e.id = r.employee_id
    left join app_public.shift_change_reasons sr on sr.code = r.reason
    order by r.date desc, r.id desc;
end;
$$;
comment on function app_public.shift_change_export(text, date, date, integer, integer) is
'SPEC Day-change requests and issue 29 point 4, GET /api/shift-change-requests/export/: every request
shift_change_search reads for the same filters, newest date first, as rows of the CSV or XLSX file.';

-- What the signed-in account may do on a request (the back-office shows only those forms;
-- the transition functions check again): decide (planning.decide_shift_change on the
-- employee), correct (employee.change_employee_record: HR), never on its own request.
create or replace function app_public.shift_change_abilities(p_id int) returns jsonb
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select jsonb_build_object(
    'own', own,
    'decide', not own and app_hidden.may(app_hidden.current_account_id(), 'planning.decide_shift_change', r.employee_id),
    'correct', not own and app_hidden.may(app_hidden.current_account_id(), 'employee.change_employee_record', r.employee_id))
  from app_public.shift_change_requests r
  cross join lateral (select r.employee_id is not distinct from app_hidden.current_employee_id()
                             or r.author_account_id = app_hidden.current_account_id() as own) o
  where r.id = p_id;
$$;
comment on function app_public.shift_change_abilities(integer) is
'SPEC Permissions (back-office): what the signed-in account may do on a day-change request: decide
(planning.decide_shift_change on the employee) and correct (employee.change_employee_record, HR), never
on its own request. The transition functions check again.';
