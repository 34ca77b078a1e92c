-- The absences a list shows, written once for GET /api/absences/ (app_public.absences_list)
-- and its export (GET /api/absences/export/, app_public.absences_export): filters, perimeter.
--
-- The selection and the export are plain `language sql`, without security definer nor SET:
-- the planner inlines them into the caller's query, so that the export's cursor really
-- streams (a plpgsql or security definer set-returning function fills its whole result
-- before the first row). Inlined into the export, they run as the visitor; inlined into
-- absences_list, as wfm_api: RLS on absences is the same for both.

-- Refuses bad list filters (400 under the field). Returns true, so that the selection can
-- call it in its WHERE clause: without a column in its arguments, it is evaluated once,
-- before the first row (a one-time filter), even when no absence matches.
create or replace function app_hidden.absences_filters_check(p_status text, p_from date, p_to date) returns boolean
language plpgsql stable as $$
begin
  if p_status is not null and p_status not in ('pending', 'validated', 'refused', 'cancellation_requested', 'cancelled') then
    perform app_hidden.invalid('status', format(
      'Paramètre status inconnu : « %s ». Valeurs possibles : pending, validated, refused, cancellation_requested, cancelled.',
      p_status), 'WV220');
  end if;
  if p_from is not null and p_to is not null and p_to < p_from then
    perform app_hidden.invalid('to', 'Le paramètre to ne peut pas précéder from.', 'WV220');
  end if;
  return true;
end;
$$;

-- Employees whose absences the lists show; null for the whole association (no filter).
create or replace function app_hidden.absences_list_readers() returns int[]
language plpgsql stable as $$
begin
  if app_hidden.perimeter_is_whole('absences.view_absence_queue') then
    return null;
  end if;
  return array(select app_hidden.absence_api_reader_ids());
end;
$$;

-- GET /api/absences/?status=&employee=&from=&to=&establishment=&type= (and its export).
-- establishment: the employee's main or secondary workplace; type: the absence type.
-- p_readers: app_hidden.absences_list_readers(), computed once by the caller (absences_list
-- plans with its value: its size decides between the indexes; the export passes an
-- uncorrelated sub-select). Another array widens nothing: RLS on absences still applies.
create or replace function app_hidden.absences_selection(p_readers int[], p_status text, p_employee int, p_from date,
                                                         p_to date, p_establishment int, p_type int)
returns setof app_public.absences
language sql stable as $$
  select a.*
  from app_public.absences a
  where app_hidden.absences_filters_check(p_status, p_from, p_to)
    and (p_readers is null or a.employee_id = any (p_readers))
    and (p_status is null or a.status = p_status)
    and (p_employee is null or a.employee_id = p_employee)
    and (p_from is null or a.date_end >= p_from)
    and (p_to is null or a.date_start <= p_to)
    and (p_type is null or a.type_id = p_type)
    and (p_establishment is null
         or exists (select 1 from app_public.employees e
                    where e.id = a.employee_id and e.main_establishment_id = p_establishment)
         or exists (select 1 from app_public.employee_secondary_establishments s
                    where s.employee_id = a.employee_id and s.establishment_id = p_establishment));
$$;

-- GET /api/absences/export/?format=csv|xlsx&<the list's filters>: the list's rows and order,
-- one line per absence, with the columns of the list that a spreadsheet reads (the list's
-- readers read the comment and the decision reason too; documents are counted, never linked).
-- Half-days and units in French (the file is read by people).
create or replace function app_public.absences_export(p_status text default null, p_employee int default null,
                                                      p_from date default null, p_to date default null,
                                                      p_establishment int default null, p_type int default null)
returns table (id int, employee int, employee_name text, type_code text, type_name text,
               date_start date, date_end date, start_half text, end_half text, start_time text, end_time text,
               counted_quantity numeric, counted_unit text, status text, status_label text,
               comment text, decision_reason text, documents bigint, submitted_at timestamptz, decided_at timestamptz)
language sql stable as $$
  select a.id, a.employee_id, e.first_name || ' ' || e.last_name, t.code, t.name,
         a.date_start, a.date_end,
         case a.start_half when 'afternoon' then 'Après-midi' when 'morning' then 'Matin' end,
         case a.end_half when 'afternoon' then 'Après-midi' when 'morning' then 'Matin' end,
         to_char(a.start_time, 'HH24:MI'), to_char(a.end_time, 'HH24:MI'),
         a.counted_quantity, case a.counted_unit when 'day' then 'jours' when 'hour' then 'heures' end, a.status, app_hidden.absence_status_label(a.status),
         a.comment, a.decision_reason,
         (select count(*) from app_public.absence_documents d where d.absence_id = a.id),
         a.submitted_at, a.decided_at
  from app_hidden.absences_selection((select app_hidden.absences_list_readers()), p_status, p_employee, p_from, p_to, p_establishment, p_type) a
  join app_public.absence_types t on t.id = a.type_id
  left join app_public.employees e on e.id = a.employee_id
  order by a.date_start desc, a.id desc;
$$;
comment on function app_public.absences_export(text, integer, date, date, integer, integer) is 'SPEC Absences (the list) and issue 16 exports, GET /api/absences/export/: every absence the list shows for the same filters and perimeter, in its order and with its column rules, as rows streamed to the CSV or XLSX file.';
