-- Who is acting, what they may do, and on whom.
--
-- The acting account is set per transaction by the HTTP layer (app.account_id,
-- app.employee_id). Policies call these helpers as `(select app_hidden.x())` or
-- `employee_id in (select app_hidden.perimeter_employee_ids(...))` so that they run once
-- per statement, not once per row.

create function app_hidden.current_account_id() returns int
language sql stable parallel safe as $$
  select nullif(current_setting('app.account_id', true), '')::int;
$$;

create function app_hidden.current_employee_id() returns int
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select coalesce(
    nullif(current_setting('app.employee_id', true), '')::int,
    (select a.employee_id from app_public.accounts a where a.id = app_hidden.current_account_id()));
$$;

-- Business date of a timestamp.
create function app_hidden.business_date(p_at timestamptz) returns date
language sql stable parallel safe as $$
  select (p_at at time zone app_hidden.business_timezone())::date;
$$;

-- Does an attribution with inclusive [start_date, end_date] cover the date?
create function app_hidden.date_in(p_on date, p_start date, p_end date) returns boolean
language sql immutable parallel safe as $$
  select (p_start is null or p_start <= p_on) and (p_end is null or p_end >= p_on);
$$;

-- May this account use this permission at all at that time? (No perimeter involved.)
create function app_hidden.account_has_permission(p_account int, p_permission text, p_at timestamptz default null)
returns boolean
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select exists (
    select 1 from app_public.accounts a
    where a.id = p_account and a.is_active
      and (a.is_superuser
           or exists (select 1 from app_public.account_permissions ap
                      where ap.account_id = a.id and ap.permission_code = p_permission)
           or exists (select 1
                      from app_public.role_attributions ra
                      join app_public.role_permissions rp on rp.role_id = ra.role_id
                      where ra.account_id = a.id and rp.permission_code = p_permission
                        and app_hidden.date_in(app_hidden.business_date(coalesce(p_at, app_hidden.now())),
                                               ra.start_date, ra.end_date))));
$$;

create function app_hidden.current_account_has(p_permission text) returns boolean
language sql stable as $$
  select app_hidden.account_has_permission(app_hidden.current_account_id(), p_permission);
$$;

-- Establishment scope of a permission for an account at a time:
--   whole = true: the whole association (superuser, explicit permission, or a role
--                 attribution without establishments);
--   otherwise establishment_ids lists the establishments of the attributions granting the
--   permission, extended by the account's on-call periods active at p_at (start inclusive,
--   end exclusive). No permission: whole = false and an empty list.
create function app_hidden.permission_scope(p_account int, p_permission text, p_at timestamptz)
returns table (whole boolean, establishment_ids int[])
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_on date := app_hidden.business_date(p_at);
  v_account app_public.accounts;
  v_attributions int[];
begin
  select * into v_account from app_public.accounts a where a.id = p_account;
  if not found or not v_account.is_active then
    return query select false, '{}'::int[];
    return;
  end if;
  if v_account.is_superuser
     or exists (select 1 from app_public.account_permissions ap
                where ap.account_id = p_account and ap.permission_code = p_permission) then
    return query select true, null::int[];
    return;
  end if;

  select array_agg(ra.id) into v_attributions
  from app_public.role_attributions ra
  join app_public.role_permissions rp on rp.role_id = ra.role_id
  where ra.account_id = p_account and rp.permission_code = p_permission
    and app_hidden.date_in(v_on, ra.start_date, ra.end_date);

  if v_attributions is null then
    return query select false, '{}'::int[];
    return;
  end if;

  -- An attribution of a manager-workspace role without establishments covers everything.
  if exists (select 1 from app_public.role_attributions ra
             join app_public.roles r on r.id = ra.role_id
             where ra.id = any (v_attributions)
               and (not r.opens_manager_workspace
                    or not exists (select 1 from app_public.role_attribution_establishments rae
                                   where rae.attribution_id = ra.id))) then
    return query select true, null::int[];
    return;
  end if;

  return query
  select false, array(
    select rae.establishment_id from app_public.role_attribution_establishments rae
    where rae.attribution_id = any (v_attributions)
    union
    select ope.establishment_id
    from app_public.on_call_periods op
    join app_public.on_call_period_establishments ope on ope.period_id = op.id
    where op.account_id = p_account and op.start_at <= p_at and p_at < op.end_at);
end;
$$;

-- Employees attached to one of the establishments at a date: main workplace, secondary
-- workplace, or a team assignment active that day to a team of the establishment.
create function app_hidden.employees_of_establishments(p_establishments int[], p_on date)
returns setof int
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select e.id from app_public.employees e where e.main_establishment_id = any (p_establishments)
  union
  select ses.employee_id from app_public.employee_secondary_establishments ses
  where ses.establishment_id = any (p_establishments)
  union
  select ta.employee_id
  from app_public.team_assignments ta
  join app_public.team_establishments te on te.team_id = ta.team_id
  where te.establishment_id = any (p_establishments)
    and app_hidden.date_in(p_on, ta.start_date, ta.end_date);
$$;

-- Establishments an employee is attached to at a date (main, secondary, teams of the day).
create function app_hidden.employee_establishments(p_employee int, p_on date)
returns setof int
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select e.main_establishment_id from app_public.employees e
  where e.id = p_employee and e.main_establishment_id is not null
  union
  select ses.establishment_id from app_public.employee_secondary_establishments ses
  where ses.employee_id = p_employee
  union
  select te.establishment_id
  from app_public.team_assignments ta
  join app_public.team_establishments te on te.team_id = ta.team_id
  where ta.employee_id = p_employee and app_hidden.date_in(p_on, ta.start_date, ta.end_date);
$$;

-- The perimeter: employees on whom the account may use the permission at that time.
create function app_hidden.perimeter_employee_ids(p_permission text, p_account int default null,
                                                  p_at timestamptz default null)
returns setof int
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  with scope as (
    select s.whole, s.establishment_ids
    from app_hidden.permission_scope(coalesce(p_account, app_hidden.current_account_id()), p_permission,
                                     coalesce(p_at, app_hidden.now())) s
  )
  select e.id from app_public.employees e, scope where scope.whole
  union
  select x.id
  from scope,
       lateral app_hidden.employees_of_establishments(scope.establishment_ids,
                                                      app_hidden.business_date(coalesce(p_at, app_hidden.now()))) as x(id)
  where not scope.whole and cardinality(scope.establishment_ids) > 0;
$$;

-- "May account A do P on employee E at time T?" (perimeter and permission; the rule
-- "nobody decides their own request" is checked by each decision.)
create function app_hidden.may(p_account int, p_permission text, p_employee int, p_at timestamptz default null)
returns boolean
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select p_employee in (select app_hidden.perimeter_employee_ids(p_permission, p_account, p_at));
$$;

-- Establishments of the caller's perimeter for a permission (null = whole association).
create function app_hidden.perimeter_establishment_ids(p_permission text, p_account int default null,
                                                       p_at timestamptz default null)
returns int[]
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select case when s.whole then null else s.establishment_ids end
  from app_hidden.permission_scope(coalesce(p_account, app_hidden.current_account_id()), p_permission,
                                   coalesce(p_at, app_hidden.now())) s;
$$;

-- Is the acting account an active staff member (or a superuser)? Staff write the
-- referentials and read the e-mail outbox.
create function app_hidden.current_account_is_staff() returns boolean
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select exists (select 1 from app_public.accounts a
                 where a.id = app_hidden.current_account_id() and a.is_active and (a.is_staff or a.is_superuser));
$$;
