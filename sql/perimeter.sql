-- Who is acting, what they may do, and on whom.
--
-- The acting account is set per transaction by the HTTP layer (app.account_id,
-- app.employee_id). Policies call these helpers as `(select app_hidden.x())` or
-- `employee_id in (select app_hidden.perimeter_employee_ids(...))` so that they run once
-- per statement, not once per row.

create or replace function app_hidden.current_account_id() returns int
language sql stable parallel safe as $$
  select nullif(current_setting('app.account_id', true), '')::int;
$$;

-- The employee record of an account (the fallback of current_employee_id when a caller set the
-- account alone).
create or replace function app_hidden.account_employee_id(p_account int) returns int
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  return (select a.employee_id from app_public.accounts a where a.id = p_account);
end;
$$;

-- The acting employee record: app.employee_id, which begin_request sets with the account, else the
-- account's. One SQL expression, inlined where it is called (a security definer function with its
-- SET was a context switch at each of the seven calls of a creation).
create or replace function app_hidden.current_employee_id() returns int
language sql stable parallel safe as $$
  select coalesce(nullif(current_setting('app.employee_id', true), '')::int,
                  app_hidden.account_employee_id(app_hidden.current_account_id()));
$$;

-- Is this employee record the acting account's own? False (never NULL) for an account without
-- an employee record or a NULL record: write `if not app_hidden.is_current_employee(x)`, never
-- `if not (x = app_hidden.current_employee_id())`, which lets a NULL through.
create or replace function app_hidden.is_current_employee(p_employee int) returns boolean
language sql stable as $$
  select coalesce(p_employee = app_hidden.current_employee_id(), false);
$$;

-- Business date of a timestamp.
create or replace function app_hidden.business_date(p_at timestamptz) returns date
language sql stable parallel safe as $$
  select (p_at at time zone app_hidden.business_timezone())::date;
$$;

-- Does an attribution with inclusive [start_date, end_date] cover the date? (Never NULL: an
-- unknown date is covered only by an unbounded attribution.)
create or replace function app_hidden.date_in(p_on date, p_start date, p_end date) returns boolean
language sql immutable parallel safe as $$
  select coalesce((p_start is null or p_start <= p_on) and (p_end is null or p_end >= p_on), false);
$$;

-- The permissions an account holds itself at a time (no perimeter, no delegation): its explicit ones and
-- those of its role attributions active on that day; '*' alone for a superuser, who holds them
-- all; none for an inactive or unknown account. Never NULL.
create or replace function app_hidden.account_own_permission_codes(p_account int, p_at timestamptz default null)
returns text[]
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  return coalesce((
    select case when a.is_superuser then array['*']
                else array(select ap.permission_code from app_public.account_permissions ap
                           where ap.account_id = a.id
                           union
                           select rp.permission_code
                           from app_public.role_attributions ra
                           join app_public.role_permissions rp on rp.role_id = ra.role_id
                           where ra.account_id = a.id
                             and app_hidden.date_in(app_hidden.business_date(coalesce(p_at, app_hidden.now())),
                                                    ra.start_date, ra.end_date)) end
    from app_public.accounts a
    where a.id = p_account and a.is_active), '{}');
end;
$$;

-- Is the delegation in force at that instant: its business date within [start_date, end_date]
-- and not ended before. Never NULL.
create or replace function app_hidden.delegation_active(p_start date, p_end date, p_ended_at timestamptz,
                                                        p_at timestamptz) returns boolean
language sql stable parallel safe as $$
  select coalesce(app_hidden.date_in(app_hidden.business_date(p_at), p_start, p_end)
                  and (p_ended_at is null or p_ended_at > p_at), false);
$$;

-- The permissions an account may use at a time: its own (account_own_permission_codes) and,
-- during a delegation it received (sql/delegations/tables.sql), the queue and decision
-- permissions of the delegation's kinds that the delegator holds itself (own codes only: a
-- delegate never hands on what it received, no chains). Never NULL; '*' alone for a superuser.
create or replace function app_hidden.account_permission_codes(p_account int, p_at timestamptz default null)
returns text[]
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_at timestamptz := coalesce(p_at, app_hidden.now());
  v_own text[] := app_hidden.account_own_permission_codes(p_account, v_at);
begin
  if v_own = array['*'] or not exists (select 1 from app_public.accounts a where a.id = p_account and a.is_active) then
    return v_own;
  end if;
  return array(select x from unnest(v_own) x
               union
               select p.code
               from app_public.delegations d
               join app_public.accounts da on da.id = d.delegator_account_id and da.is_active
               cross join unnest(array['absences.view_absence_queue', 'absences.decide_absence',
                                       'planning.decide_shift_change']) p(code)
               where d.delegate_account_id = p_account
                 and app_hidden.delegation_active(d.start_date, d.end_date, d.ended_at, v_at)
                 and app_hidden.delegation_grants(d.kinds, p.code)
                 and app_hidden.permission_in(app_hidden.account_own_permission_codes(d.delegator_account_id, v_at),
                                              p.code));
end;
$$;

-- Do these codes (account_permission_codes) grant the permission: it is among them, or '*' (a
-- superuser) is. One expression (&&: the codes meet '*' or the permission), inlined where it is
-- called, as are the two wrappers below.
create or replace function app_hidden.permission_in(p_codes text[], p_permission text) returns boolean
language sql immutable parallel safe as $$
  select coalesce(p_codes && array['*', p_permission], false);
$$;

-- May this account use this permission at all at that time? (No perimeter involved.)
create or replace function app_hidden.account_has_permission(p_account int, p_permission text, p_at timestamptz default null)
returns boolean
language sql stable as $$
  select app_hidden.permission_in(app_hidden.account_permission_codes(p_account, p_at), p_permission);
$$;

-- The acting account's permissions now, as one array kept for the transaction: policies and
-- guards ask current_account_has several times a request (the employees' and the absences'
-- select policies, five times in a creation). Kept like the perimeters below (perimeter_memo_key,
-- memo_read); plain plpgsql, neither security definer nor SET, so that a repeated ask is one
-- lookup in a transaction-local setting.
create or replace function app_hidden.current_permission_codes() returns text[]
language plpgsql stable as $$
declare
  v_account int := app_hidden.current_account_id();
  v_key text := app_hidden.perimeter_memo_key(v_account, app_hidden.now());
  v_memo text := app_hidden.memo_read('app.memo_permission_codes', v_key);
  v_codes text[];
begin
  if v_memo is not null then
    return v_memo::text[];
  end if;
  v_codes := app_hidden.account_permission_codes(v_account);
  perform pg_catalog.set_config('app.memo_permission_codes', v_key || v_codes::text, true);
  return v_codes;
end;
$$;

create or replace function app_hidden.current_account_has(p_permission text) returns boolean
language sql stable as $$
  select app_hidden.permission_in(app_hidden.current_permission_codes(), p_permission);
$$;

-- Establishment scope of a permission for accounts at a time, one row per existing account:
--   whole = true: the whole association (superuser, explicit permission, or a role
--                 attribution without establishments);
--   otherwise establishment_ids lists the establishments of the attributions granting the
--   permission, extended by the account's on-call periods active at p_at (start inclusive,
--   end exclusive) for the queue and decision permissions only (absences.view_absence_queue,
--   absences.decide_absence, planning.decide_shift_change: SPEC Permissions rule 9), never for
--   documents, records, numbers, payroll, events or on-call writing (so an author's own on-call
--   period does not widen the establishments it may put others on call for). No permission (or an inactive account): whole = false and an empty list.
-- Set-wise, so that routing a filing to its deciders computes every decider's scope in one
-- statement; plpgsql with force_generic_plan (docs/architecture.md, Performance notes).
create or replace function app_hidden.own_permission_scopes(p_accounts int[], p_permission text, p_at timestamptz)
returns table (account_id int, whole boolean, establishment_ids int[])
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp
set plan_cache_mode = force_generic_plan rows 10 as $$
begin
  return query
  with acc as (
    select a.id, a.is_active, a.is_superuser,
           exists (select 1 from app_public.account_permissions ap
                   where ap.account_id = a.id and ap.permission_code = p_permission) as explicit
    from app_public.accounts a
    where a.id = any (p_accounts)
  ),
  attr as (
    -- Attributions granting the permission that day; "open" = a role outside the manager
    -- workspace or without establishments: it covers the whole association.
    select ra.account_id, ra.id,
           not r.opens_manager_workspace
           or not exists (select 1 from app_public.role_attribution_establishments rae
                          where rae.attribution_id = ra.id) as open
    from app_public.role_attributions ra
    join app_public.role_permissions rp on rp.role_id = ra.role_id and rp.permission_code = p_permission
    join app_public.roles r on r.id = ra.role_id
    where ra.account_id = any (p_accounts)
      and app_hidden.date_in(app_hidden.business_date(p_at), ra.start_date, ra.end_date)
  ),
  flags as (
    select attr.account_id, bool_or(attr.open) as open from attr group by attr.account_id
  ),
  -- Establishments of the restricted attributions, and of the on-call periods active at p_at.
  restricted as (
    select x.account_id, array_agg(distinct x.establishment_id) as ids
    from (select attr.account_id, rae.establishment_id
          from attr join app_public.role_attribution_establishments rae on rae.attribution_id = attr.id
          union all
          select op.account_id, ope.establishment_id
          from app_public.on_call_periods op
          join app_public.on_call_period_establishments ope on ope.period_id = op.id
          where op.account_id = any (p_accounts) and op.start_at <= p_at and p_at < op.end_at
            -- SPEC Permissions rule 9: the queue and the decisions of a manager role, nothing else.
            and p_permission in ('absences.view_absence_queue', 'absences.decide_absence',
                                 'planning.decide_shift_change')) x
    group by x.account_id
  )
  select acc.id,
         acc.is_active and (acc.is_superuser or acc.explicit or coalesce(f.open, false)),
         case when not acc.is_active then '{}'::int[]
              when acc.is_superuser or acc.explicit then null::int[]
              when f.account_id is null then '{}'::int[]
              when f.open then null::int[]
              else coalesce(r.ids, '{}'::int[]) end
  from acc
  left join flags f on f.account_id = acc.id
  left join restricted r on r.account_id = acc.id;
end;
$$;

-- The scope of a permission for accounts at a time (one row per existing account, as
-- own_permission_scopes above), extended by the delegations each account received that are in
-- force at p_at and hand over the permission (app_hidden.delegation_grants: the queue and the
-- decisions of the delegation's kinds): over the delegator's own scope (never a delegation the
-- delegator received: no chains), all of it (all_establishments) or the delegation's
-- establishments within it. An inactive delegator hands over nothing; so does a delegator who
-- lost the permission. The delegator's own requests are excluded by each decision
-- (app_hidden.delegation_decision_check, sql/delegations/api.sql), not here.
create or replace function app_hidden.permission_scopes(p_accounts int[], p_permission text, p_at timestamptz)
returns table (account_id int, whole boolean, establishment_ids int[])
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp
set plan_cache_mode = force_generic_plan rows 10 as $$
declare
  v_delegations int;
begin
  if not app_hidden.delegation_grants('both', p_permission) then
    return query select * from app_hidden.own_permission_scopes(p_accounts, p_permission, p_at);
    return;
  end if;
  select count(*) into v_delegations
  from app_public.delegations d
  where d.delegate_account_id = any (p_accounts)
    and app_hidden.delegation_active(d.start_date, d.end_date, d.ended_at, p_at)
    and app_hidden.delegation_grants(d.kinds, p_permission);
  if v_delegations = 0 then
    return query select * from app_hidden.own_permission_scopes(p_accounts, p_permission, p_at);
    return;
  end if;
  return query
  with own as (
    select * from app_hidden.own_permission_scopes(p_accounts, p_permission, p_at)
  ),
  dl as (
    select d.id, d.delegate_account_id, d.delegator_account_id, d.all_establishments
    from app_public.delegations d
    join app_public.accounts a on a.id = d.delegate_account_id and a.is_active
    where d.delegate_account_id = any (p_accounts)
      and app_hidden.delegation_active(d.start_date, d.end_date, d.ended_at, p_at)
      and app_hidden.delegation_grants(d.kinds, p_permission)
  ),
  delegator as (
    select * from app_hidden.own_permission_scopes(array(select distinct dl.delegator_account_id from dl),
                                                   p_permission, p_at)
  ),
  -- Per delegation: the whole association (a delegator of the whole association handing all
  -- of it), or establishments.
  handed as (
    select dl.delegate_account_id,
           dl.all_establishments and g.whole as whole,
           case when dl.all_establishments and not g.whole then g.establishment_ids
                when dl.all_establishments then '{}'::int[]
                else array(select de.establishment_id from app_public.delegation_establishments de
                           where de.delegation_id = dl.id
                             and (g.whole or de.establishment_id = any (g.establishment_ids))) end as ids
    from dl join delegator g on g.account_id = dl.delegator_account_id
    where g.whole or cardinality(g.establishment_ids) > 0
  ),
  received as (
    select h.delegate_account_id, bool_or(h.whole) as whole,
           coalesce(array_agg(distinct e.id) filter (where e.id is not null), '{}'::int[]) as ids
    from handed h
    left join lateral unnest(h.ids) e(id) on true
    group by h.delegate_account_id
  )
  select o.account_id,
         o.whole or coalesce(r.whole, false),
         case when o.whole or coalesce(r.whole, false) then null::int[]
              else array(select distinct x from unnest(o.establishment_ids || coalesce(r.ids, '{}')) x
                         where x is not null order by 1) end
  from own o
  left join received r on r.delegate_account_id = o.account_id;
end;
$$;

-- Memo of the perimeters within a transaction (docs/architecture.md, Performance notes): each
-- scope and perimeter is kept in a transaction-local setting, keyed by account, instant and a
-- generation that every write to a table they are computed from advances (statement triggers
-- below), so a transaction that changes roles, attributions, workplaces, teams or on-call
-- periods recomputes them.
create or replace function app_hidden.perimeter_generation() returns text
language sql stable parallel safe as $$
  select coalesce(nullif(current_setting('app.perimeter_generation', true), ''), '0');
$$;

-- The key of a memo of the perimeters: account, instant, generation.
create or replace function app_hidden.perimeter_memo_key(p_account int, p_at timestamptz) returns text
language sql stable parallel safe as $$
  select pg_catalog.concat(p_account, '|', p_at, '|', app_hidden.perimeter_generation(), '|');
$$;

-- What the transaction-local setting p_name keeps under p_key (written as set_config(p_name,
-- p_key || value, true)), or null when it keeps nothing under that key.
create or replace function app_hidden.memo_read(p_name text, p_key text) returns text
language sql stable parallel safe as $$
  select case when pg_catalog.left(pg_catalog.current_setting(p_name, true), pg_catalog.length(p_key)) = p_key
              then pg_catalog.substr(pg_catalog.current_setting(p_name, true), pg_catalog.length(p_key) + 1) end;
$$;

create or replace function app_hidden.tg__perimeter_changed() returns trigger
language plpgsql volatile as $$
begin
  perform set_config('app.perimeter_generation', (app_hidden.perimeter_generation()::bigint + 1)::text, true);
  return null;
end;
$$;

do $$
declare
  t text;
begin
  foreach t in array array['accounts', 'account_permissions', 'roles', 'role_permissions', 'role_attributions',
                           'role_attribution_establishments', 'on_call_periods', 'on_call_period_establishments',
                           'employees', 'employee_secondary_establishments', 'team_assignments', 'team_establishments'] loop
    execute format('drop trigger if exists _050_perimeter_changed on app_public.%I', t);
    execute format('create or replace trigger _050_perimeter_changed after insert or update or delete or truncate on app_public.%I
                    for each statement execute function app_hidden.tg__perimeter_changed()', t);
  end loop;
end;
$$;

-- The scope of one account (one row; an unknown account has no permission), kept for the
-- transaction (see above).
create or replace function app_hidden.permission_scope(p_account int, p_permission text, p_at timestamptz)
returns table (whole boolean, establishment_ids int[])
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp rows 1 as $$
declare
  v_name text := 'app.memo_scope_' || translate(coalesce(p_permission, ''), '.', '_');
  v_key text := app_hidden.perimeter_memo_key(p_account, p_at);
  v_memo text := app_hidden.memo_read(v_name, v_key);
  v_whole boolean;
  v_ids int[];
begin
  if v_memo is not null then
    return query select v_memo = 'W', case when v_memo = 'W' then null::int[] else v_memo::int[] end;
    return;
  end if;
  select coalesce(s.whole, false), case when s.account_id is null then '{}'::int[] else s.establishment_ids end
    into v_whole, v_ids
  from (select 1) x
  left join app_hidden.permission_scopes(array[p_account], p_permission, p_at) s on true;
  perform set_config(v_name, v_key || case when v_whole then 'W' else v_ids::text end, true);
  return query select v_whole, v_ids;
end;
$$;

-- Employees attached to one of the establishments at a date: main workplace, secondary
-- workplace, or a team assignment active that day to a team of the establishment.
-- plpgsql, as every perimeter helper a request runs: docs/architecture.md, Performance notes.
create or replace function app_hidden.employees_of_establishments(p_establishments int[], p_on date)
returns setof int
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp rows 200 as $$
begin
  return query
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
end;
$$;

-- Establishments an employee is attached to at a date (main, secondary, teams of the day).
create or replace function app_hidden.employee_establishments(p_employee int, p_on date)
returns setof int
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp rows 3 as $$
begin
  return query
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
end;
$$;

-- The perimeter: employees on whom the account may use the permission at that time (kept for
-- the transaction, see app_hidden.permission_scope).
create or replace function app_hidden.perimeter_employee_ids(p_permission text, p_account int default null,
                                                  p_at timestamptz default null)
returns setof int
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp rows 200 as $$
declare
  v_at timestamptz := coalesce(p_at, app_hidden.now());
  v_account int := coalesce(p_account, app_hidden.current_account_id());
  v_name text := 'app.memo_perimeter_' || translate(coalesce(p_permission, ''), '.', '_');
  v_key text := app_hidden.perimeter_memo_key(v_account, v_at);
  v_memo text := app_hidden.memo_read(v_name, v_key);
  v_whole boolean;
  v_ids int[];
  v_list int[];
begin
  if v_memo is not null then
    return query select unnest(v_memo::int[]);
    return;
  end if;
  select s.whole, s.establishment_ids into v_whole, v_ids
  from app_hidden.permission_scope(v_account, p_permission, v_at) s;
  if v_whole then
    v_list := array(select e.id from app_public.employees e);
  elsif cardinality(v_ids) > 0 then
    v_list := array(select x.id from app_hidden.employees_of_establishments(v_ids, app_hidden.business_date(v_at)) x(id));
  else
    v_list := '{}';
  end if;
  perform set_config(v_name, v_key || v_list::text, true);
  return query select unnest(v_list);
end;
$$;

-- "May account A do P on employee E at time T?" (perimeter and permission; the rule
-- "nobody decides their own request" is checked by each decision.) The same answer as
-- E in perimeter_employee_ids(P, A, T), without listing the perimeter: the scope, then the
-- establishments E is attached to that day.
create or replace function app_hidden.may(p_account int, p_permission text, p_employee int, p_at timestamptz default null)
returns boolean
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_at timestamptz := coalesce(p_at, app_hidden.now());
  v_whole boolean;
  v_ids int[];
begin
  select s.whole, s.establishment_ids into v_whole, v_ids
  from app_hidden.permission_scope(coalesce(p_account, app_hidden.current_account_id()), p_permission, v_at) s;
  if p_employee is null then
    -- Nobody: a guard is true or false, never NULL (`if not may(...)` must refuse).
    return false;
  elsif v_whole then
    return exists (select 1 from app_public.employees e where e.id = p_employee);
  end if;
  return exists (select 1 from app_hidden.employee_establishments(p_employee, app_hidden.business_date(v_at)) x(id)
                 where x.id = any (v_ids));
end;
$$;

-- Does the account's own scope (no delegation, sql/delegations/) of the permission cover the
-- employee at that time? Never NULL.
create or replace function app_hidden.may_own(p_account int, p_permission text, p_employee int, p_at timestamptz)
returns boolean
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_whole boolean;
  v_ids int[];
begin
  if p_employee is null or p_account is null then
    return false;
  end if;
  select s.whole, s.establishment_ids into v_whole, v_ids
  from app_hidden.own_permission_scopes(array[p_account], p_permission, p_at) s;
  if v_whole then
    return exists (select 1 from app_public.employees e where e.id = p_employee);
  end if;
  return coalesce(exists (select 1 from app_hidden.employee_establishments(p_employee, app_hidden.business_date(p_at)) x(id)
                          where x.id = any (v_ids)), false);
end;
$$;

-- Does the acting account hold the permission on the whole association? Lists and policies
-- test it first: the whole association needs no list of employees to filter with.
create or replace function app_hidden.perimeter_is_whole(p_permission text) returns boolean
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  return coalesce((select s.whole from app_hidden.permission_scope(app_hidden.current_account_id(), p_permission,
                                                                    app_hidden.now()) s), false);
end;
$$;

-- Establishments of the caller's perimeter for a permission (null = whole association).
create or replace function app_hidden.perimeter_establishment_ids(p_permission text, p_account int default null,
                                                       p_at timestamptz default null)
returns int[]
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select case when s.whole then null else s.establishment_ids end
  from app_hidden.permission_scope(coalesce(p_account, app_hidden.current_account_id()), p_permission,
                                   coalesce(p_at, app_hidden.now())) s;
$$;

-- Is the acting account an active staff member (or a superuser)? Staff write the
-- referentials and read the e-mail outbox.
create or replace function app_hidden.current_account_is_staff() returns boolean
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select exists (select 1 from app_public.accounts a
                 where a.id = app_hidden.current_account_id() and a.is_active and (a.is_staff or a.is_superuser));
$$;

-- Reference data written by staff accounts only (SPEC Permissions rule 6): the insert, update and
-- delete policies of these tables, for the API functions' role (wfm_api). Called by the files that
-- own the tables (referentials, reference administration, role attributions), re-runnable.
create or replace function app_private.staff_write_policies(p_tables text[]) returns void
language plpgsql volatile as $$
declare
  t text;
begin
  foreach t in array p_tables loop
    execute format('drop policy if exists insert_staff on app_public.%I', t);
    execute format('create policy insert_staff on app_public.%I for insert to wfm_api
                    with check ((select app_hidden.current_account_is_staff()))', t);
    execute format('drop policy if exists update_staff on app_public.%I', t);
    execute format('create policy update_staff on app_public.%I for update to wfm_api
                    using ((select app_hidden.current_account_is_staff()))
                    with check ((select app_hidden.current_account_is_staff()))', t);
    execute format('drop policy if exists delete_staff on app_public.%I', t);
    execute format('create policy delete_staff on app_public.%I for delete to wfm_api
                    using ((select app_hidden.current_account_is_staff()))', t);
  end loop;
end;
$$;
