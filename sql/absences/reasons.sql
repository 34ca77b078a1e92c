-- Reasons an absence form offers (issue 29 point 2): for one's own request, the active reasons
-- « demandables par le salarié » whose contract types admit the contract in force; for a
-- declaration by the encadrement, every active reason. Each with its availability on the date:
-- a reason consuming a counter that is not open for that year (or held in another unit) is
-- unavailable, with the message the counter rule (SPEC Absences rule 9,
-- app_private.counter_request_error) would give; in the full list, a reason whose contract
-- types exclude the contract in force too (rule 8's message).

-- The reasons of the list and their availability, for an employee the caller may file for
-- (app_public.absence_types_for_request checks it first). Owner rights: reads the employee's
-- contracts and counters whatever the caller's reading policies.
create or replace function app_private.absence_type_choices(p_employee int, p_date date, p_full_list boolean)
returns table (type_id int, available boolean, unavailable_reason text)
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  with contract as (
    select c.contract_type_id, ct.code
    from app_public.contracts c
    join app_public.contract_types ct on ct.id = c.contract_type_id
    where c.employee_id = p_employee and c.start_date <= p_date and (c.end_date is null or c.end_date >= p_date)
    order by c.start_date desc
    limit 1
  ),
  listed as (
    select t.id, t.name, t.unit, t.position, t.code,
           (select string_agg(ct.code, ', ' order by ct.code)
            from app_public.absence_type_contract_types x
            join app_public.contract_types ct on ct.id = x.contract_type_id
            where x.absence_type_id = t.id) as reserved_to,
           exists (select 1 from app_public.absence_type_contract_types x
                   join contract k on k.contract_type_id = x.contract_type_id
                   where x.absence_type_id = t.id) as contract_listed
    from app_public.absence_types t
    where t.is_active and (p_full_list or t.employee_requestable)
  ),
  judged as (
    select l.*,
           l.reserved_to is null or l.contract_listed as contract_fits,
           (select string_agg(app_private.counter_request_error(ca.counter_code, extract(year from p_date)::int, c.id, k.unit,
                                                                  l.unit, l.name, null, null), ' ' order by ca.counter_code)
            from app_public.counter_associations ca
            join app_public.counter_kinds k on k.code = ca.counter_code and k.is_consumable
            left join app_public.counters c on c.employee_id = p_employee and c.code = ca.counter_code
                                            and c.year = extract(year from p_date) and c.is_active
            where ca.absence_type_id = l.id and ca.is_active) as counter_error
    from listed l
  )
  select j.id,
         j.contract_fits and j.counter_error is null,
         case
           when not j.contract_fits and not exists (select 1 from contract) then
             format('Réservé aux contrats %s ; aucun contrat n’est en vigueur le %s.', j.reserved_to, app_hidden.fr_date(p_date))
           when not j.contract_fits then
             format('Réservé aux contrats %s ; le contrat en vigueur le %s est : %s.', j.reserved_to, app_hidden.fr_date(p_date),
                    (select k.code from contract k))
           else j.counter_error
         end
  from judged j
  -- One's own list leaves out the reasons one's contract does not admit.
  where p_full_list or j.contract_fits
  order by j.position, j.code;
$$;

drop function if exists app_public.absence_types_for_request(int, date, int, int) cascade;
create or replace function app_public.absence_types_for_request(p_employee int default null, p_date date default null,
                                                                p_page int default 1, p_page_size int default 50)
returns jsonb
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_employee int := coalesce(p_employee, app_hidden.current_employee_id());
  v_date date := coalesce(p_date, app_hidden.today());
  v_error text;
  v_full boolean;
begin
  if v_employee is null then
    perform app_hidden.invalid('employee', 'Votre compte n’a pas de fiche salarié : nommez le salarié pour qui l’absence est déclarée.');
  end if;
  -- Who may file for this employee: oneself, or the decision perimeter (a declaration).
  v_error := app_hidden.absence_filer_error(v_employee);
  if v_error is not null then
    perform app_hidden.invalid('employee', v_error);
  end if;
  if extract(year from v_date) not between app_hidden.first_accepted_year() and app_hidden.last_accepted_year() then
    perform app_hidden.invalid('date', format('Date hors de la plage acceptée (années %s à %s).',
                                              app_hidden.first_accepted_year(), app_hidden.last_accepted_year()));
  end if;
  -- The encadrement declaring for somebody else keeps every reason.
  v_full := app_hidden.is_current_employee(v_employee) is false;
  return (
    with choices as (
      select c.type_id, c.available, c.unavailable_reason, c.n
      from app_private.absence_type_choices(v_employee, v_date, v_full) with ordinality c(type_id, available, unavailable_reason, n)
    )
    select jsonb_build_object(
      'count', (select count(*) from choices),
      'results', coalesce((
        select jsonb_agg(app_hidden.absence_type_json(p.type_id)
                         || jsonb_build_object('available', p.available, 'unavailable_reason', p.unavailable_reason)
                         order by p.n)
        from (select * from choices order by n
              limit app_hidden.page_limit(p_page_size) offset app_hidden.page_offset(p_page, p_page_size)) p), '[]'::jsonb)));
end;
$$;
comment on function app_public.absence_types_for_request(integer, date, integer, integer) is
'Issue 29 point 2, GET /api/absence-types/requestable/: the reasons an absence form offers for p_employee (default:
the caller''s record) on p_date (default: today). Oneself: the active reasons demandables par le salarié that the
contract in force admits; the encadrement declaring for an employee of its decision perimeter: every active reason.
Each says whether it is available and, if not, why (no open counter for the year, or the contract in force).';
