-- Counters by establishment and year (issue 16): GET /api/counters/establishment/ (JSON) and
-- its export GET /api/counters/establishment/export/. One line per counter of each employee
-- attached to the establishment (main or secondary workplace, or team, today) whom the caller
-- reads in the queue perimeter (absences.view_absence_queue, as GET /api/counters/), with the
-- journal's balances: Acquis, Pris, Planifiés, Restant.

-- Refuses an unknown establishment, or one outside the caller's queue perimeter (404, WN302),
-- and a bad year (400, WV302). Returns true for use in a WHERE clause.
create or replace function app_hidden.counters_establishment_check(p_establishment int, p_year int) returns boolean
language plpgsql stable as $$
begin
  if p_establishment is null
     or not app_hidden.current_account_has('absences.view_absence_queue')
     or not exists (select 1 from app_public.establishments e where e.id = p_establishment)
     or not app_hidden.in_scope(p_establishment, app_hidden.perimeter_establishment_ids('absences.view_absence_queue')) then
    perform app_hidden.not_found('Établissement introuvable ou hors de votre périmètre.', 'WN302');
  end if;
  if p_year is null or p_year not between app_hidden.first_accepted_year() and app_hidden.last_accepted_year() then
    perform app_hidden.invalid('year', format('Année invalide : entre %s et %s.', app_hidden.first_accepted_year(),
                                              app_hidden.last_accepted_year()), 'WV302');
  end if;
  return true;
end;
$$;

-- The lines, written once for the JSON route and the export. Security definer: the balances
-- come from the journal (app_private); the employees are those of the caller's perimeter.
create or replace function app_hidden.counters_establishment_selection(p_establishment int, p_year int)
returns table (employee int, employee_name text, code text, name text, unit text,
               acquired numeric, taken numeric, planned numeric, remaining numeric)
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  with employees as (
    select x.id
    from app_hidden.employees_of_establishments(array[p_establishment], app_hidden.today()) x(id)
    where app_hidden.counters_establishment_check(p_establishment, p_year)
      and x.id in (select p.id from app_hidden.perimeter_employee_ids('absences.view_absence_queue') p(id))
  )
  select b.employee_id, e.first_name || ' ' || e.last_name, b.code, b.name, b.unit,
         b.acquired, b.taken, b.planned, b.remaining
  from app_private.counter_balances_at(array(select m.id from employees m), p_year, 'infinity'::timestamptz) b
  join app_public.employees e on e.id = b.employee_id
  order by lower(e.last_name), lower(e.first_name), b.employee_id, b.sort_order, b.code;
$$;

-- GET /api/counters/establishment/?establishment=&year=
create or replace function app_public.counters_establishment(p_establishment int, p_year int default null) returns jsonb
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_year int := coalesce(p_year, extract(year from app_hidden.today())::int);
begin
  perform app_hidden.counters_establishment_check(p_establishment, v_year);
  return jsonb_build_object(
    'establishment', p_establishment,
    'establishment_name', (select e.name from app_public.establishments e where e.id = p_establishment),
    'year', v_year,
    'results', coalesce((
      select jsonb_agg(jsonb_build_object(
               'employee', s.employee, 'employee_name', s.employee_name, 'code', s.code, 'name', s.name,
               'unit', s.unit, 'acquired', app_hidden.fmt_quantity(s.acquired),
               'taken', app_hidden.fmt_quantity(s.taken), 'planned', app_hidden.fmt_quantity(s.planned),
               'remaining', app_hidden.fmt_quantity(s.remaining)) order by s.ord)
      from (select c.*, row_number() over () as ord
            from app_hidden.counters_establishment_selection(p_establishment, v_year) c) s), '[]'::jsonb));
end;
$$;
comment on function app_public.counters_establishment(integer, integer) is 'SPEC Counters and issue 16, GET /api/counters/establishment/?establishment=&year=: the counters (Acquis, Pris, Planifiés, Restant) of the employees attached to an establishment of the caller''s queue perimeter, for a year; 404 outside it.';

-- GET /api/counters/establishment/export/?establishment=&year=&format=
create or replace function app_public.counters_establishment_export(p_establishment int, p_year int default null)
returns table (employee int, employee_name text, code text, name text, unit text,
               acquired numeric, taken numeric, planned numeric, remaining numeric)
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select c.employee, c.employee_name, c.code, c.name,
         case c.unit when 'day' then 'jours' when 'hour' then 'heures' else c.unit end,
         c.acquired, c.taken, c.planned, c.remaining
  from app_hidden.counters_establishment_selection(
    p_establishment, coalesce(p_year, extract(year from app_hidden.today())::int)) c;
$$;
comment on function app_public.counters_establishment_export(integer, integer) is 'SPEC Counters and issue 16 exports, GET /api/counters/establishment/export/: the rows of counters_establishment, one per employee and counter, for the CSV or XLSX file.';
