--! Previous: sha1:90e64b4e00399dfce07f2818cbecdc0bef10c729
--! Hash: sha1:708dcf2204690625294e260d342497891cddf35f
--! Message: Issue 30: dated delegation of decisions, routing that follows presence

-- Written by `npm run db:current` from sql/ORDER: edit sql/, never this file, and run it again.
-- The sql/ files changed since the last committed migration (migrations/sql-state.json), in list order.

--! Included delegations/tables.sql
-- Dated delegations of decisions (issue 30): a decider (the delegator) names another account
-- (the delegate, « délégataire ») who reads the queue and decides in their place over a date
-- interval (start and end inclusive, business dates), over all of the delegator's perimeter
-- (all_establishments) or some establishments of it (delegation_establishments), for absences,
-- day changes or both (kinds). Ended early: ended_at (the delegation stops at that instant).
-- The effective perimeter is computed in sql/perimeter.sql (app_hidden.permission_scopes and
-- app_hidden.account_permission_codes); the rules, the routes and the routing in
-- sql/delegations/api.sql and sql/delegations/routing.sql.
create table if not exists app_public.delegations (
  id int generated always as identity primary key,
  delegator_account_id int not null references app_public.accounts on delete cascade,
  delegate_account_id int not null references app_public.accounts on delete cascade,
  start_date date not null,
  end_date date not null,
  all_establishments boolean not null default true,
  kinds text not null check (kinds in ('absences', 'shift_changes', 'both')),
  comment text,
  created_by int references app_public.accounts on delete set null,
  created_at timestamptz not null default app_hidden.now(),
  ended_at timestamptz,
  ended_by int references app_public.accounts on delete set null,
  updated_at timestamptz not null default app_hidden.now(),
  constraint delegations_interval check (end_date >= start_date),
  constraint delegations_not_self check (delegator_account_id <> delegate_account_id)
);
create index if not exists delegations_delegate_idx on app_public.delegations (delegate_account_id, start_date, end_date);
create index if not exists delegations_delegator_idx on app_public.delegations (delegator_account_id, start_date, end_date);

create table if not exists app_public.delegation_establishments (
  delegation_id int not null references app_public.delegations on delete cascade,
  establishment_id int not null references app_public.establishments on delete cascade,
  primary key (delegation_id, establishment_id)
);
create index if not exists delegation_establishments_establishment_idx
  on app_public.delegation_establishments (establishment_id);

-- Which permissions a delegation of these kinds hands over: the queue and the decisions
-- of its kinds, nothing else (never documents, records, payroll...). Never NULL.
create or replace function app_hidden.delegation_grants(p_kinds text, p_permission text) returns boolean
language sql immutable parallel safe as $$
  select coalesce(case p_permission
                    when 'absences.view_absence_queue' then p_kinds in ('absences', 'shift_changes', 'both')
                    when 'absences.decide_absence' then p_kinds in ('absences', 'both')
                    when 'planning.decide_shift_change' then p_kinds in ('shift_changes', 'both')
                    else false end, false);
$$;
--! EndIncluded delegations/tables.sql
--! Included perimeter.sql
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
--! EndIncluded perimeter.sql
--! Included org/policies.sql
-- Row-level security of the organisation and reference tables.
-- Request roles: wfm_visitor (reads) and wfm_api (owner of the API functions, so that their
-- reads and writes go through the same policies). The table owner bypasses RLS: only
-- app_private/app_hidden security definer helpers run as owner.

-- Reference data, readable by every authenticated account.
do $$
declare
  t text;
begin
  foreach t in array array['divisions', 'establishments', 'teams', 'team_establishments', 'posts',
                           'contract_types', 'roles', 'permissions', 'role_permissions',
                           'absence_categories', 'absence_types', 'absence_type_contract_types',
                           'counter_kinds', 'counter_associations', 'shift_change_reasons'] loop
    execute format('alter table app_public.%I enable row level security', t);
    execute format('drop policy if exists select_authenticated on app_public.%I', t);
    execute format('create policy select_authenticated on app_public.%I for select to wfm_visitor, wfm_api
                    using ((select app_hidden.current_account_id()) is not null)', t);
  end loop;
end;
$$;

-- Directory readers: their own record, the directory (encadrement reads the whole
-- association, CONTRACT: lists are entire without scope=perimeter), and the payroll
-- perimeter (Service Paie reads the people it pays). Policies test the directory
-- permission first, in an init plan: for the encadrement the row test is then a constant
-- true and the list of readable employees is never built.
create or replace function app_hidden.readable_employee_ids() returns setof int
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp rows 200 as $$
begin
  if app_hidden.current_account_has('employee.view_employee_directory') then
    -- The directory is every employee: the other branches add nothing to it.
    return query select e.id from app_public.employees e;
    return;
  end if;
  if not app_hidden.current_account_has('employee.view_payroll')
     and not app_hidden.current_account_has('absences.view_absence_queue') then
    -- Without the payroll permission its perimeter is empty (most employees): no scope to compute.
    return query select x.id from (select app_hidden.current_employee_id()) x(id) where x.id is not null;
    return;
  end if;
  -- The queue without the directory: a delegate (issue 30; every role holding the queue holds
  -- the directory) reads the employees of the perimeter it decides for, as its delegator does.
  return query
    select app_hidden.current_employee_id() where app_hidden.current_employee_id() is not null
    union
    select app_hidden.perimeter_employee_ids('employee.view_payroll')
    where app_hidden.current_account_has('employee.view_payroll')
    union
    select app_hidden.perimeter_employee_ids('absences.view_absence_queue')
    where app_hidden.current_account_has('absences.view_absence_queue');
end;
$$;

alter table app_public.employees enable row level security;
drop policy if exists select_readable on app_public.employees;
create policy select_readable on app_public.employees for select to wfm_visitor, wfm_api
  using ((select app_hidden.current_account_has('employee.view_employee_directory'))
         or id in (select app_hidden.readable_employee_ids()));

alter table app_public.employee_social_security_numbers enable row level security;
drop policy if exists select_ssn_permission on app_public.employee_social_security_numbers;
create policy select_ssn_permission on app_public.employee_social_security_numbers for select to wfm_visitor, wfm_api
  using (employee_id in (select app_hidden.perimeter_employee_ids('employee.view_social_security_number')));

alter table app_public.employee_secondary_establishments enable row level security;
drop policy if exists select_readable on app_public.employee_secondary_establishments;
create policy select_readable on app_public.employee_secondary_establishments for select to wfm_visitor, wfm_api
  using ((select app_hidden.current_account_has('employee.view_employee_directory'))
         or employee_id in (select app_hidden.readable_employee_ids()));

alter table app_public.team_assignments enable row level security;
drop policy if exists select_readable on app_public.team_assignments;
create policy select_readable on app_public.team_assignments for select to wfm_visitor, wfm_api
  using ((select app_hidden.current_account_has('employee.view_employee_directory'))
         or employee_id in (select app_hidden.readable_employee_ids()));

alter table app_public.contracts enable row level security;
drop policy if exists select_readable on app_public.contracts;
create policy select_readable on app_public.contracts for select to wfm_visitor, wfm_api
  using ((select app_hidden.current_account_has('employee.view_employee_directory'))
         or employee_id in (select app_hidden.readable_employee_ids()));

alter table app_public.planning_templates enable row level security;
drop policy if exists select_readable on app_public.planning_templates;
create policy select_readable on app_public.planning_templates for select to wfm_visitor, wfm_api
  using ((select app_hidden.current_account_has('employee.view_employee_directory'))
         or employee_id in (select app_hidden.readable_employee_ids()));

alter table app_public.planning_template_slots enable row level security;
drop policy if exists select_readable on app_public.planning_template_slots;
create policy select_readable on app_public.planning_template_slots for select to wfm_visitor, wfm_api
  using (exists (select 1 from app_public.planning_templates t where t.id = planning_template_slots.template_id));

-- Accounts: one's own, and the directory readers (who see the account of a record).
alter table app_public.accounts enable row level security;
drop policy if exists select_own_or_directory on app_public.accounts;
create policy select_own_or_directory on app_public.accounts for select to wfm_visitor, wfm_api
  using (id = (select app_hidden.current_account_id())
         or (select app_hidden.current_account_has('employee.view_employee_directory')));

alter table app_public.role_attributions enable row level security;
drop policy if exists select_own_or_directory on app_public.role_attributions;
create policy select_own_or_directory on app_public.role_attributions for select to wfm_visitor, wfm_api
  using (account_id = (select app_hidden.current_account_id())
         or (select app_hidden.current_account_has('employee.view_employee_directory')));

alter table app_public.role_attribution_establishments enable row level security;
drop policy if exists select_visible_attribution on app_public.role_attribution_establishments;
create policy select_visible_attribution on app_public.role_attribution_establishments for select to wfm_visitor, wfm_api
  using (attribution_id in (select ra.id from app_public.role_attributions ra));

alter table app_public.account_permissions enable row level security;
drop policy if exists select_own_or_directory on app_public.account_permissions;
create policy select_own_or_directory on app_public.account_permissions for select to wfm_visitor, wfm_api
  using (account_id = (select app_hidden.current_account_id())
         or (select app_hidden.current_account_has('employee.view_employee_directory')));

-- Private tables: RLS on and no policy, so only the owner (security definer helpers) reads them.
alter table app_private.account_secrets enable row level security;
alter table app_private.password_tokens enable row level security;
alter table app_private.settings enable row level security;
--! EndIncluded org/policies.sql
--! Included planning/policies.sql
-- Day-change requests are read through absences.view_absence_queue on the same perimeter
-- as absences (SPEC, Permissions rule 2); the requester reads their own.
alter table app_public.shift_change_requests enable row level security;
drop policy if exists select_own_or_perimeter on app_public.shift_change_requests;
create policy select_own_or_perimeter on app_public.shift_change_requests for select to wfm_visitor, wfm_api
  using (employee_id = (select app_hidden.current_employee_id())
         or (select app_hidden.perimeter_is_whole('absences.view_absence_queue'))
         or employee_id in (select app_hidden.perimeter_employee_ids('absences.view_absence_queue')));
-- Filing: only for the requester's own record, born pending at version 1.
drop policy if exists insert_own on app_public.shift_change_requests;
create policy insert_own on app_public.shift_change_requests for insert to wfm_api
  with check (employee_id = (select app_hidden.current_employee_id()) and status = 'pending' and version = 1);
-- Decisions (planning.decide_shift_change) and back-office corrections (HR,
-- employee.change_employee_record), each on its perimeter; the transition functions check
-- the finer rules (own request, version, state).
drop policy if exists update_decider_or_hr on app_public.shift_change_requests;
create policy update_decider_or_hr on app_public.shift_change_requests for update to wfm_api
  using (employee_id in (select app_hidden.perimeter_employee_ids('planning.decide_shift_change'))
         or employee_id in (select app_hidden.perimeter_employee_ids('employee.change_employee_record')));
-- Withdrawal: the requester only (the guard trigger keeps decided requests).
drop policy if exists delete_own on app_public.shift_change_requests;
create policy delete_own on app_public.shift_change_requests for delete to wfm_api
  using (employee_id = (select app_hidden.current_employee_id()));

-- Day modifications: read like the planning's other rows; written by the deciders of the
-- employee (a validated request) and by HR (back-office).
alter table app_public.day_modifications enable row level security;
drop policy if exists select_readable on app_public.day_modifications;
-- (A decider of the employee's day changes reads them too: a delegate without the directory,
-- issue 30, writes the day of the request it grants.)
create policy select_readable on app_public.day_modifications for select to wfm_visitor, wfm_api
  using ((select app_hidden.current_account_has('employee.view_employee_directory'))
         or employee_id in (select app_hidden.readable_employee_ids())
         or employee_id in (select app_hidden.perimeter_employee_ids('planning.decide_shift_change')));
drop policy if exists insert_decider_or_hr on app_public.day_modifications;
create policy insert_decider_or_hr on app_public.day_modifications for insert to wfm_api
  with check (employee_id in (select app_hidden.perimeter_employee_ids('planning.decide_shift_change'))
              or employee_id in (select app_hidden.perimeter_employee_ids('employee.change_employee_record')));
drop policy if exists update_decider_or_hr on app_public.day_modifications;
create policy update_decider_or_hr on app_public.day_modifications for update to wfm_api
  using (employee_id in (select app_hidden.perimeter_employee_ids('planning.decide_shift_change'))
         or employee_id in (select app_hidden.perimeter_employee_ids('employee.change_employee_record')));
drop policy if exists delete_hr on app_public.day_modifications;
create policy delete_hr on app_public.day_modifications for delete to wfm_api
  using (employee_id in (select app_hidden.perimeter_employee_ids('employee.change_employee_record')));
--! EndIncluded planning/policies.sql
--! Included auth/functions.sql
-- Authentication support. Password hashing (argon2id) happens in the HTTP layer; the
-- database only stores and hands back hashes, and never sees a clear password.

-- Display name of an account: the employee's name, else the username.
-- plpgsql: its plan is kept by the connection (a security definer SQL function is never
-- inlined, and was planned again at each of its calls).
create or replace function app_hidden.account_display_name(p_account int) returns text
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  return (select coalesce(e.first_name || ' ' || e.last_name, a.username)
          from app_public.accounts a
          left join app_public.employees e on e.id = a.employee_id
          where a.id = p_account);
end;
$$;

-- Start of every authenticated request (called by the authenticator before switching to
-- the visitor role): reloads the account, refuses an inactive one (null), and records the
-- acting account for the transaction. p_generation, when given, is the credential generation
-- the token or session was issued under (app_public.accounts.token_generation): a token of
-- an earlier generation is refused (null) like a closed account's. It is the generation of the
-- account holding the token: the impersonator's for an impersonation token. Without it
-- (a calendar feed, whose secret is no session) the generation is not read.
drop function if exists app_private.begin_request(int, int);
create or replace function app_private.begin_request(p_account_id int, p_impersonator_id int default null,
                                                     p_generation int default null) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_account app_public.accounts;
  v_impersonator app_public.accounts;
begin
  select * into v_account from app_public.accounts a where a.id = p_account_id;
  if not found or not v_account.is_active then
    return null;
  end if;
  if p_impersonator_id is not null then
    select * into v_impersonator from app_public.accounts a where a.id = p_impersonator_id;
    if not found or not v_impersonator.is_active or not v_impersonator.is_superuser then
      return null;
    end if;
    if p_generation is not null and p_generation <> v_impersonator.token_generation then
      return null;
    end if;
    perform set_config('app.impersonator_id', p_impersonator_id::text, true);
  elsif p_generation is not null and p_generation <> v_account.token_generation then
    return null;
  end if;
  perform set_config('app.account_id', v_account.id::text, true);
  perform set_config('app.employee_id', coalesce(v_account.employee_id::text, ''), true);
  return jsonb_build_object('id', v_account.id, 'username', v_account.username,
                            'employee_id', v_account.employee_id, 'is_staff', v_account.is_staff,
                            'is_superuser', v_account.is_superuser);
end;
$$;

-- The prelude of every authenticated API request (src/db/transaction.ts): the reload of
-- begin_request, where an inactive or unknown account, or a token or session of an earlier
-- credential generation (p_generation, never null here: a null is refused), is an error
-- (WA001, answered 401) that aborts the transaction, so that the statements sent behind it do
-- nothing and the commit rolls back. A route the manifest reserves to staff (auth 'staff')
-- passes p_staff_only: an account that is neither staff nor superuser is refused here (WF002,
-- 403), before the route's function and before its input is read (the router asks this
-- prelude alone when the input is refused, so that such a caller gets 403, not 400).
-- p_client_address: the request's client address, recorded in the audit lines it writes.
drop function if exists app_private.begin_request_or_fail(int, int);
drop function if exists app_private.begin_request_or_fail(int, int, boolean);
create or replace function app_private.begin_request_or_fail(p_account_id int, p_impersonator_id int,
                                                             p_staff_only boolean, p_generation int,
                                                             p_client_address text) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_account jsonb;
begin
  if p_generation is null then
    raise exception using errcode = 'WA001', message = 'Jeton sans génération : reconnectez-vous.';
  end if;
  v_account := app_private.begin_request(p_account_id, p_impersonator_id, p_generation);
  if v_account is null then
    raise exception using errcode = 'WA001', message = 'Compte inactif ou inconnu.';
  end if;
  perform app_private.set_client_address(p_client_address);
  if p_staff_only and not app_hidden.current_account_is_staff() then
    perform app_hidden.forbidden('Réservé aux comptes du personnel d’administration.', 'WF002');
  end if;
  return v_account;
end;
$$;

-- The client address of the request, for the audit lines of its transaction (app.client_address):
-- only a well-formed address is kept, anything else is no address.
create or replace function app_private.set_client_address(p_address text) returns void
language plpgsql volatile as $$
begin
  perform set_config('app.client_address',
    case when p_address ~ '^[0-9A-Fa-f:.]{2,45}$' then p_address else '' end, true);
end;
$$;

-- Login: the stored hash of an active account (case-insensitive username).
-- token_generation: the generation the token issued after this login carries (claim gen).
drop function if exists app_private.login_lookup(text);
create or replace function app_private.login_lookup(p_username text)
returns table (account_id int, password_hash text, is_active boolean, token_generation int)
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select a.id, s.password_hash, a.is_active, a.token_generation
  from app_public.accounts a
  left join app_private.account_secrets s on s.account_id = a.id
  where lower(a.username) = lower(p_username);
$$;

create or replace function app_private.record_login(p_account_id int) returns void
language sql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
  update app_public.accounts set last_login_at = app_hidden.now() where id = p_account_id;
$$;

-- Creates a single-use token and returns it (the clear token leaves only by e-mail).
create or replace function app_private.create_password_token(p_account_id int, p_purpose text, p_lifetime_minutes int)
returns text
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_token text := encode(public.gen_random_bytes(32), 'hex');
begin
  insert into app_private.password_tokens (account_id, purpose, token_hash, expires_at)
  values (p_account_id, p_purpose, public.digest(v_token, 'sha256'),
          app_hidden.now() + make_interval(mins => p_lifetime_minutes));
  return v_token;
end;
$$;

create or replace function app_private.password_link(p_token text) returns text
language sql stable as $$
  select rtrim(coalesce(nullif(current_setting('app.public_url', true), ''), 'http://localhost:8000'), '/')
         || '/password-reset/confirm/?token=' || p_token;
$$;

-- E-mail address of an account: the professional e-mail of its employee record.
create or replace function app_private.account_email(p_account_id int) returns text
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select e.professional_email
  from app_public.accounts a join app_public.employees e on e.id = a.employee_id
  where a.id = p_account_id;
$$;

-- Set-password invitation for an account created without a usable password, when an
-- e-mail exists (otherwise the person uses password reset later).
create or replace function app_private.queue_invitation(p_account_id int) returns boolean
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_email text := app_private.account_email(p_account_id);
  v_username text;
  v_token text;
begin
  if v_email is null then
    return false;
  end if;
  select a.username into v_username from app_public.accounts a where a.id = p_account_id;
  v_token := app_private.create_password_token(p_account_id, 'invitation',
               (app_hidden.setting('invitation_lifetime_minutes'))::int);
  insert into app_private.email_outbox (kind, to_address, subject, body_text, account_id)
  values ('invitation', v_email, 'Votre compte a été créé',
          format(E'Bonjour,\n\nUn compte a été ouvert pour vous (identifiant : %s).\n'
                 'Définissez votre mot de passe en suivant ce lien :\n%s\n\n'
                 'Ce lien est à usage unique.', v_username, app_private.password_link(v_token)),
          p_account_id);
  return true;
end;
$$;

-- Password reset request: the same outcome whether or not the account exists; an e-mail
-- is queued only for an active account with an e-mail. p_login is a username or an e-mail.
create or replace function app_private.password_reset_request(p_login text) returns void
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_account_id int;
  v_email text;
  v_token text;
  v_minutes int := (app_hidden.setting('password_reset_lifetime_minutes'))::int;
begin
  select a.id into v_account_id
  from app_public.accounts a
  left join app_public.employees e on e.id = a.employee_id
  where a.is_active
    and (lower(a.username) = lower(btrim(p_login)) or lower(e.professional_email) = lower(btrim(p_login)))
  order by (lower(a.username) = lower(btrim(p_login))) desc
  limit 1;
  if v_account_id is null then
    return;
  end if;
  v_email := app_private.account_email(v_account_id);
  if v_email is null then
    return;
  end if;
  v_token := app_private.create_password_token(v_account_id, 'reset', v_minutes);
  insert into app_private.email_outbox (kind, to_address, subject, body_text, account_id)
  values ('password_reset', v_email, 'Réinitialisation de votre mot de passe',
          format(E'Bonjour,\n\nUne réinitialisation de mot de passe a été demandée pour votre compte.\n'
                 'Suivez ce lien dans les %s minutes :\n%s\n\n'
                 'Si vous n''êtes pas à l''origine de cette demande, ignorez ce message.',
                 v_minutes, app_private.password_link(v_token)),
          v_account_id);
end;
$$;

-- Is this token usable? Returns the username (for the password policy) or raises 400.
create or replace function app_private.password_token_check(p_token text) returns text
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_username text;
begin
  select a.username into v_username
  from app_private.password_tokens t
  join app_public.accounts a on a.id = t.account_id
  where t.token_hash = public.digest(coalesce(p_token, ''), 'sha256')
    and t.used_at is null and t.expires_at > app_hidden.now() and a.is_active;
  if v_username is null then
    perform app_hidden.invalid('token', 'Ce lien n''est plus valide : il a expiré ou a déjà servi. Demandez un nouveau lien.', 'WV030');
  end if;
  return v_username;
end;
$$;

-- Consumes the token and sets the new hash. All other open tokens of the account die too.
create or replace function app_private.password_reset_confirm(p_token text, p_password_hash text) returns void
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_account_id int;
  v_purpose text;
begin
  update app_private.password_tokens t set used_at = app_hidden.now()
  from app_public.accounts a
  where a.id = t.account_id and a.is_active
    and t.token_hash = public.digest(coalesce(p_token, ''), 'sha256')
    and t.used_at is null and t.expires_at > app_hidden.now()
  returning t.account_id, t.purpose into v_account_id, v_purpose;
  if v_account_id is null then
    perform app_hidden.invalid('token', 'Ce lien n''est plus valide : il a expiré ou a déjà servi. Demandez un nouveau lien.', 'WV030');
  end if;
  update app_private.password_tokens set used_at = app_hidden.now()
  where account_id = v_account_id and used_at is null;
  -- The change of the hash is audited and ends every session of the account
  -- (app_private.tg_account_secrets__password_changed, sql/auth/security_events.sql), which
  -- reads here that the link set it.
  perform set_config('app.password_change', v_purpose, true);
  insert into app_private.account_secrets (account_id) values (v_account_id) on conflict (account_id) do nothing;
  update app_private.account_secrets set password_hash = p_password_hash, password_changed_at = app_hidden.now()
  where account_id = v_account_id;
  perform set_config('app.password_change', '', true);
end;
$$;

-- GET /api/auth/me/
-- can_impersonate: the interface hint for the impersonation button. True only when the server
-- turned impersonation on for this transaction (app.allow_impersonation, set by the REST route
-- when ALLOW_IMPERSONATION is on, as for impersonation_start), for a superuser who is not
-- already speaking for someone else: the same conditions impersonation_start checks first.
create or replace function app_public.me() returns jsonb
language sql stable as $$
  select jsonb_build_object(
           'id', a.id,
           'username', a.username,
           'employee_id', a.employee_id,
           -- the person, for the header: the employee's name, else the account's username
           'display_name', coalesce((select e.first_name || ' ' || e.last_name from app_public.employees e where e.id = a.employee_id),
                                    a.username),
           -- every role held today, in display precedence (the header names them all: a payroll
           -- officer holding Salarié and Service Paie is not shown as « Salarié » only)
           'roles', coalesce((select jsonb_agg(x.name order by x.precedence)
                              from (select distinct r.name, r.precedence
                                    from app_public.role_attributions ra
                                    join app_public.roles r on r.id = ra.role_id
                                    where ra.account_id = a.id
                                      and app_hidden.date_in(app_hidden.today(), ra.start_date, ra.end_date)) x), '[]'::jsonb),
           'can_view_absence_queue', app_hidden.current_account_has('absences.view_absence_queue'),
           'can_decide_absences', app_hidden.current_account_has('absences.decide_absence'),
           'can_decide_shift_changes', app_hidden.current_account_has('planning.decide_shift_change'),
           'can_view_payroll', app_hidden.current_account_has('employee.view_payroll'),
           -- The decisions the account takes itself, which it may delegate (issue 30): a delegate
           -- decides by delegation but never delegates what it received.
           'can_delegate_absences', app_hidden.permission_in(app_hidden.account_own_permission_codes(a.id),
                                                             'absences.decide_absence'),
           'can_delegate_shift_changes', app_hidden.permission_in(app_hidden.account_own_permission_codes(a.id),
                                                                  'planning.decide_shift_change'),
           'can_impersonate', coalesce(current_setting('app.allow_impersonation', true), '') = 'on'
                              and coalesce(current_setting('app.impersonator_id', true), '') = ''
                              and a.is_superuser and a.is_active)
         || coalesce((select jsonb_build_object('role', r.name)
                      from app_public.role_attributions ra
                      join app_public.roles r on r.id = ra.role_id
                      where ra.account_id = a.id
                        and app_hidden.date_in(app_hidden.today(), ra.start_date, ra.end_date)
                      order by r.precedence
                      limit 1), '{}'::jsonb)
  from app_public.accounts a
  where a.id = app_hidden.current_account_id();
$$;
comment on function app_public.me() is
'SPEC Account, GET /api/auth/me/: the signed-in account with employee_id, display_name (the employee''s
name, else the username), the role of highest display precedence among those held today, every role held
today (roles, in that precedence), and the interface hints can_view_absence_queue, can_decide_absences,
can_decide_shift_changes, can_view_payroll, can_delegate_absences, can_delegate_shift_changes (the
decisions held by the account itself, which it may delegate) and can_impersonate (the API enforces the
rules anyway).';

-- PUT /api/employees/<id>/account-activation/
-- HR (change_account_activation) opens or closes any account of its perimeter; DA and
-- managers (change_interim_account_activation) only accounts holding Intérimaire; nobody
-- changes their own account.
create or replace function app_public.account_activation_set(p_employee_id int, p_is_active boolean) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_account app_public.accounts;
  v_is_interim boolean;
begin
  -- Without either right: 403 on a record of the caller's reach (own, or in the perimeter of
  -- a permission it holds), 404 on a colleague's or any other record (SPEC Errors).
  if not (app_hidden.current_account_has('employee.change_account_activation')
          or app_hidden.current_account_has('employee.change_interim_account_activation')) then
    perform app_hidden.refuse_outside_or_forbid(p_employee_id,
      'Vous n''avez pas le droit d''ouvrir ou de fermer ce compte.', 'WF011');
  end if;
  if not exists (select 1 from app_public.employees e where e.id = p_employee_id) then
    perform app_hidden.not_found('Salarié introuvable.');
  end if;
  select * into v_account from app_private.account_of_employee(p_employee_id);
  if v_account.id is null then
    perform app_hidden.not_found('Ce salarié n''a pas de compte.');
  end if;
  if v_account.id = app_hidden.current_account_id() then
    perform app_hidden.forbidden('Vous ne pouvez pas ouvrir ou fermer votre propre compte.', 'WF010');
  end if;
  if not app_hidden.may(app_hidden.current_account_id(), 'employee.change_account_activation', p_employee_id) then
    v_is_interim := exists (select 1 from app_public.role_attributions ra
                            where ra.account_id = v_account.id and ra.role_id = 8
                              and app_hidden.date_in(app_hidden.today(), ra.start_date, ra.end_date));
    -- A right held, but not over this employee: outside the perimeter, not found.
    if not app_hidden.may(app_hidden.current_account_id(), 'employee.change_interim_account_activation', p_employee_id) then
      perform app_hidden.not_found('Salarié introuvable dans votre périmètre.');
    end if;
    if not v_is_interim then
      perform app_hidden.forbidden('Vous ne pouvez ouvrir ou fermer que les comptes des intérimaires.', 'WF012');
    end if;
  end if;
  perform app_private.set_account_active(v_account.id, p_is_active);
  return jsonb_build_object('id', p_employee_id, 'account_id', v_account.id, 'is_active', p_is_active);
end;
$$;
comment on function app_public.account_activation_set(integer, boolean) is
'SPEC Permissions (change_account_activation, change_interim_account_activation), PUT
/api/employees/<id>/account-activation/: HR opens or closes any account of its perimeter, DA and
managers only accounts of temporary workers; nobody changes their own. A closed account stops its tokens
at the next request (Authentication rule 1).';

-- The account of an employee, whatever the caller may see of accounts (for activation).
create or replace function app_private.account_of_employee(p_employee_id int) returns app_public.accounts
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select a.* from app_public.accounts a where a.employee_id = p_employee_id;
$$;

create or replace function app_private.set_account_active(p_account_id int, p_is_active boolean) returns void
language sql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
  update app_public.accounts set is_active = p_is_active where id = p_account_id;
$$;
--! EndIncluded auth/functions.sql
--! Included audit/functions.sql
-- Audit lines, written by triggers only (never by application code).
--
-- Attach to a table with:
--   create trigger _500_audit after insert or update on <table>
--     for each row execute function app_private.tg__audit('<model>');
--   create trigger _500_audit_delete before delete on <table>
--     for each row execute function app_private.tg__audit('<model>');
-- (the model must be registered in app_private.audit_models).
-- The deletion line is written by the BEFORE trigger, before the row is erased, in the same
-- transaction. Inserts are Creation and deletions Suppression. A transition function names
-- the verb of its update (Validation, Refus, Correction, Demande d'annulation, Annulation)
-- with app_private.set_audit_verb(verb, model) before the update and
-- app_private.set_audit_verb(null) after it; other updates are Modification. Naming the
-- model keeps the verb off the other tables written by the same transition (the day
-- modification written by a validation stays Creation/Modification).

create or replace function app_private.set_audit_verb(p_verb text, p_model text default null) returns void
language plpgsql volatile as $$
begin
  if nullif(p_verb, '') is not null
     and p_verb not in ('Modification', 'Validation', 'Refus', 'Correction', 'Demande d''annulation', 'Annulation') then
    raise exception 'set_audit_verb: "%" is not an update verb of the audit log', p_verb;
  end if;
  perform set_config('app.audit_verb', coalesce(p_verb, ''), true);
  perform set_config('app.audit_verb_model', case when nullif(p_verb, '') is null then '' else coalesce(p_model, '') end, true);
end;
$$;

-- The verb of an update of p_model: the one named by set_audit_verb (for that model, or for
-- any model when none was named), else Modification.
create or replace function app_private.audit_update_verb(p_model text) returns text
language sql stable as $$
  select case
           when nullif(current_setting('app.audit_verb', true), '') is not null
                and coalesce(nullif(current_setting('app.audit_verb_model', true), ''), p_model) = p_model
           then current_setting('app.audit_verb', true)
           else 'Modification'
         end;
$$;

create or replace function app_private.write_audit(p_verb text, p_model text, p_target_id bigint, p_before jsonb, p_after jsonb)
returns void
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  perform app_private.write_audit_as(app_hidden.current_account_id(),
                                     nullif(current_setting('app.impersonator_id', true), '')::int,
                                     p_verb, p_model, p_target_id, p_before, p_after);
end;
$$;

-- One audit line by a named actor (and impersonator): write_audit names the acting account of
-- the request; the security events of a login (no acting account yet) name the account that
-- signs in (sql/auth/security_events.sql). The client address is the request's (app.client_address).
create or replace function app_private.write_audit_as(p_actor int, p_impersonator int, p_verb text, p_model text,
                                                      p_target_id bigint, p_before jsonb, p_after jsonb)
returns void
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  -- One statement; the names of each account read once (an absent account: nulls, as before).
  insert into app_private.audit_log (actor_account_id, actor_username, actor_display_name,
                                     impersonator_account_id, impersonator_username, impersonator_display_name,
                                     verb, model, target_id, before, after, client_address)
  select p_actor, act.username, act.display_name, p_impersonator, imp.username, imp.display_name,
         p_verb, p_model, p_target_id, p_before, p_after, nullif(current_setting('app.client_address', true), '')
  from (select 1) one
  -- A decision by delegation (sql/delegations/api.sql): « X, par délégation de Y ».
  left join lateral (select a.username, coalesce(e.first_name || ' ' || e.last_name, a.username)
                                        || coalesce(', par délégation de ' || (
                                             select coalesce(e2.first_name || ' ' || e2.last_name, a2.username)
                                             from app_public.accounts a2 left join app_public.employees e2 on e2.id = a2.employee_id
                                             where a2.id = nullif(current_setting('app.on_behalf_of', true), '')::int), '')
                                        as display_name
                     from app_public.accounts a left join app_public.employees e on e.id = a.employee_id
                     where a.id = p_actor) act on true
  left join lateral (select a.username, coalesce(e.first_name || ' ' || e.last_name, a.username) as display_name
                     from app_public.accounts a left join app_public.employees e on e.id = a.employee_id
                     where a.id = p_impersonator) imp on true;
end;
$$;

create or replace function app_private.tg__audit() returns trigger
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_model text := tg_argv[0];
  v_old jsonb;
  v_new jsonb;
  v_verb text;
begin
  if v_model is null then
    raise exception 'tg__audit on %.%: the model is missing (tg__audit(''<model>''))', tg_table_schema, tg_table_name;
  end if;
  if tg_op = 'INSERT' then
    v_new := to_jsonb(new);
    perform app_private.write_audit('Creation', v_model, (v_new ->> 'id')::bigint, null, v_new);
    return new;
  elsif tg_op = 'UPDATE' then
    v_old := to_jsonb(old);
    v_new := to_jsonb(new);
    v_verb := app_private.audit_update_verb(v_model);
    -- An update that changes nothing but its timestamp leaves no line (unless a transition named it).
    if v_verb = 'Modification' and (v_old - 'updated_at') = (v_new - 'updated_at') then
      return new;
    end if;
    perform app_private.write_audit(v_verb, v_model, (v_new ->> 'id')::bigint, v_old, v_new);
    return new;
  elsif tg_op = 'DELETE' then
    if tg_when <> 'BEFORE' then
      raise exception 'tg__audit on %.%: a deletion is audited by a BEFORE DELETE trigger', tg_table_schema, tg_table_name;
    end if;
    v_old := to_jsonb(old);
    perform app_private.write_audit('Suppression', v_model, (v_old ->> 'id')::bigint, v_old, null);
    return old;
  end if;
  raise exception 'tg__audit: % is not audited', tg_op;
end;
$$;

-- The log is append-only: lines are never changed, and only the retention purge deletes them.
create or replace function app_private.tg_audit_log__append_only() returns trigger
language plpgsql volatile as $$
begin
  if tg_op = 'DELETE' and current_setting('app.audit_purge', true) = 'on' then
    return old;
  end if;
  raise exception using errcode = 'WF901',
    message = 'Le journal d''audit est en ajout seul : ses lignes ne se modifient pas et ne sont supprimées que par la purge de rétention.';
end;
$$;
create or replace trigger _200_append_only before update or delete on app_private.audit_log
  for each row execute function app_private.tg_audit_log__append_only();
create or replace function app_private.tg_audit_log__no_truncate() returns trigger
language plpgsql volatile as $$
begin
  raise exception using errcode = 'WF901',
    message = 'Le journal d''audit est en ajout seul : il ne se vide pas.';
end;
$$;
create or replace trigger _200_no_truncate before truncate on app_private.audit_log
  for each statement execute function app_private.tg_audit_log__no_truncate();

-- Retention: deletes the lines older than audit_retention_days before p_now. Idempotent
-- (a second run finds nothing more to delete); returns the number of lines deleted.
create or replace function app_private.purge_audit_log(p_now timestamptz) returns int
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_days int := (app_hidden.setting('audit_retention_days') #>> '{}')::int;
  v_count int;
begin
  if p_now is null then
    raise exception 'purge_audit_log: p_now is required';
  end if;
  if v_days is null or v_days < 1 then
    raise exception 'purge_audit_log: the setting audit_retention_days must be a positive number of days (got %)',
      app_hidden.setting('audit_retention_days');
  end if;
  perform set_config('app.audit_purge', 'on', true);
  delete from app_private.audit_log l where l.at < p_now - make_interval(days => v_days);
  get diagnostics v_count = row_count;
  perform set_config('app.audit_purge', '', true);
  return v_count;
end;
$$;

-- Back-office access (SPEC, Authentication rule 3): staff status, superuser, or an active
-- RH n1 / RH n2 role attribution, on an active account.
create or replace function app_hidden.account_has_backoffice_access(p_account int, p_at timestamptz default null)
returns boolean
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select exists (
    select 1 from app_public.accounts a
    where a.id = p_account and a.is_active
      and (a.is_staff or a.is_superuser
           or exists (select 1 from app_public.role_attributions ra
                      join app_public.roles r on r.id = ra.role_id
                      where ra.account_id = a.id and r.name in ('RH n1', 'RH n2')
                        and app_hidden.date_in(app_hidden.business_date(coalesce(p_at, app_hidden.now())),
                                               ra.start_date, ra.end_date))));
$$;

-- Who reads the audit log: holders of audit.view_actionlog (explicit permission, or
-- superuser) WITH back-office access. The permission is explicit and carries no
-- establishment restriction, so a reader reads the lines of the whole association.
create or replace function app_hidden.current_account_reads_audit_log() returns boolean
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select app_hidden.current_account_id() is not null
     and app_hidden.current_account_has('audit.view_actionlog')
     and app_hidden.account_has_backoffice_access(app_hidden.current_account_id());
$$;

-- One line as the API shows it (CONTRACT section 4).
create or replace function app_hidden.audit_line_json(p_line app_private.audit_log) returns jsonb
language sql immutable as $$
  select jsonb_build_object(
    'id', p_line.id,
    'at', p_line.at,
    'actor', p_line.actor_account_id,
    'actor_identity', case when p_line.actor_account_id is not null or p_line.actor_username is not null then
                        jsonb_build_object('username', p_line.actor_username, 'display_name', p_line.actor_display_name)
                      end,
    -- The superuser who acted for the actor (impersonation), with its identity frozen too
    -- (issue 25 finding 5: « par l'impersonateur, pour le compte de l'acteur »).
    'impersonator', p_line.impersonator_account_id,
    'impersonator_identity', case when p_line.impersonator_account_id is not null or p_line.impersonator_username is not null then
                               jsonb_build_object('username', p_line.impersonator_username,
                                                  'display_name', p_line.impersonator_display_name)
                             end,
    'client_address', p_line.client_address,
    'verb', p_line.verb,
    'model', p_line.model,
    'target_id', p_line.target_id,
    'before', p_line.before,
    'after', p_line.after);
$$;

-- For a DBA: who did what, with the fields that changed, no join needed.
create or replace view app_private.audit_log_readable as
select l.id,
       l.at,
       (l.at at time zone 'Europe/Paris') as at_paris,
       coalesce(l.actor_display_name || ' (' || l.actor_username || ')', '(sans compte : ' || l.db_user || ')') as actor,
       l.actor_account_id,
       l.impersonator_username,
       l.verb,
       l.model,
       l.target_id,
       (select array_agg(k order by k)
        from (select jsonb_object_keys(coalesce(l.before, '{}'::jsonb)) as k
              union
              select jsonb_object_keys(coalesce(l.after, '{}'::jsonb))) keys
        where k <> 'updated_at'
          and (l.before -> k) is distinct from (l.after -> k)) as changed_fields,
       l.before,
       l.after,
       l.transaction_id
from app_private.audit_log l;
comment on view app_private.audit_log_readable is
  'The audit log for a DBA: the actor''s frozen identity, the verb, the target and the fields that changed.';
--! EndIncluded audit/functions.sql
--! Included notifications/functions.sql
-- The notification service: in-app notifications created inside the caller's transaction
-- (a failure aborts the business write: nothing here catches an error), the routing of
-- filings to their deciders, the API of GET /api/notifications/ and the e-mail outbox.

-- The account of an employee record (recipient of "validée"/"refusée" notifications).
create or replace function app_private.employee_account_id(p_employee_id int) returns int
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  return (select a.id from app_public.accounts a where a.employee_id = p_employee_id);
end;
$$;

-- « de » before a name, elided before a vowel (issue 29 point 5): « d’Inès Boyer », « d’Yves
-- Martin », « de Yann Le Goff », « de Bruno Petit ». The typographic apostrophe, as every screen writes it.
create or replace function app_hidden.de_name(p_name text) returns text
language sql immutable as $$
  select case when p_name ~* '^([aeiouàâäéèêëîïôöùûüœæ]|y[^aeiouy])' then 'd’' else 'de ' end || p_name;
$$;

-- Display name of an employee, for notification bodies.
-- plpgsql: its plan is kept by the connection (a security definer SQL function is never
-- inlined, and was planned again at each of its calls).
create or replace function app_hidden.employee_name(p_employee_id int) returns text
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  return (select e.first_name || ' ' || e.last_name from app_public.employees e where e.id = p_employee_id);
end;
$$;

-- Creates one in-app notification for an account, in the caller's transaction.
create or replace function app_private.notify(p_account_id int, p_title text, p_body text, p_level text default 'info',
                                   p_model text default null, p_target_id bigint default null)
returns bigint
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_id bigint;
begin
  -- Programming errors of a caller: they abort the write (500), they are not user input.
  if p_account_id is null then
    raise exception 'notify: the recipient account is required';
  end if;
  if nullif(btrim(p_title), '') is null then
    raise exception 'notify: the title is required';
  end if;
  if p_level is null or p_level not in ('info', 'warning', 'error') then
    raise exception 'notify: level must be info, warning or error (got %)', p_level;
  end if;
  insert into app_public.notifications (account_id, title, body, level, model, target_id)
  values (p_account_id, p_title, coalesce(p_body, ''), p_level, p_model, p_target_id)
  returning id into v_id;
  return v_id;
end;
$$;

-- The same notification for several accounts, in one statement (in the order given): a filing
-- notifies its deciders at once instead of one call and one insert each. Returns how many.
create or replace function app_private.notify_each(p_account_ids int[], p_title text, p_body text, p_level text default 'info',
                                        p_model text default null, p_target_id bigint default null)
returns int
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_count int;
begin
  -- Programming errors of a caller, as in notify.
  if array_position(p_account_ids, null) is not null then
    raise exception 'notify_each: a recipient account is null';
  end if;
  if nullif(btrim(p_title), '') is null then
    raise exception 'notify_each: the title is required';
  end if;
  if p_level is null or p_level not in ('info', 'warning', 'error') then
    raise exception 'notify_each: level must be info, warning or error (got %)', p_level;
  end if;
  insert into app_public.notifications (account_id, title, body, level, model, target_id)
  select r.account_id, p_title, coalesce(p_body, ''), p_level, p_model, p_target_id
  from unnest(p_account_ids) with ordinality as r(account_id, ord)
  order by r.ord;
  get diagnostics v_count = row_count;
  return v_count;
end;
$$;

-- Deciders of a filing about an employee on a date (p_on, the day concerned): active
-- accounts, never the author, that
--   * may decide it (p_decide_permission held through a role attribution active today or
--     explicitly, on a perimeter that covers the employee now; a superuser's flag alone never
--     makes it a decider, SPEC Events rule 1: a superuser counts only through a role), and
--   * whose queue shows the employee (absences.view_absence_queue on the same perimeter:
--     an account that can decide but cannot read the queue is not a decider).
-- attached = one of its restricted role attributions granting p_decide_permission (or an
-- on-call period active now, which extends such a role) covers an establishment of the
-- employee: main workplace, secondary workplace, or a team of the day (p_on or today).
-- The others (a role without establishments, e.g. an Admin of the whole association, or an
-- explicit permission, which carries no establishment restriction) are unattached.
-- Two statements (docs/architecture.md, Performance notes): the employee's establishments,
-- then the candidates with both perimeters tested on the employee, set-wise: the scope rule of
-- app_hidden.permission_scopes read for these few accounts and this one employee
-- (test/db/60-perimeter-shortcuts.sql checks it against app_hidden.may's definition).
-- force_generic_plan: docs/architecture.md, Performance notes.
create or replace function app_private.decider_candidates(p_employee_id int, p_on date, p_decide_permission text,
                                               p_author_account_id int)
returns table (account_id int, attached boolean)
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp
set plan_cache_mode = force_generic_plan as $$
declare
  v_at timestamptz := app_hidden.now();
  v_today date := app_hidden.business_date(v_at);
  v_exists boolean;
  -- The employee's establishments today (what app_hidden.may(decider, permission, employee,
  -- now) reads), and on either day (p_on or today: what attaches a decider).
  v_now_establishments int[];
  v_establishments int[];
  -- The permissions an on-call period extends (SPEC Permissions rule 9, as in permission_scopes).
  v_on_call_extends boolean := p_decide_permission in ('absences.view_absence_queue', 'absences.decide_absence',
                                                       'planning.decide_shift_change');
begin
  if p_employee_id is null then
    return;
  end if;
  select exists (select 1 from app_public.employees e where e.id = p_employee_id),
         coalesce(array_agg(x.establishment_id) filter (where x.today), '{}'),
         coalesce(array_agg(x.establishment_id), '{}')
    into v_exists, v_now_establishments, v_establishments
  from (select y.establishment_id, bool_or(y.today) as today
        from (select e.main_establishment_id as establishment_id, true as today
              from app_public.employees e
              where e.id = p_employee_id and e.main_establishment_id is not null
              union all
              select ses.establishment_id, true
              from app_public.employee_secondary_establishments ses
              where ses.employee_id = p_employee_id
              union all
              select te.establishment_id, app_hidden.date_in(v_today, ta.start_date, ta.end_date)
              from app_public.team_assignments ta
              join app_public.team_establishments te on te.team_id = ta.team_id
              where ta.employee_id = p_employee_id
                and (app_hidden.date_in(v_today, ta.start_date, ta.end_date)
                     or app_hidden.date_in(coalesce(p_on, v_today), ta.start_date, ta.end_date))) y
        group by y.establishment_id) x;
  return query
  with candidates as (
    -- The accounts whose decision perimeter can cover the employee, found from the
    -- attributions of the roles granting the decision (and explicit permissions), not by
    -- testing every account: an attribution of the whole association (or of a superuser), or
    -- one on an establishment of the employee, or extended to one by an on-call period. The
    -- perimeter checks below run on them only (a handful, whatever the number of managers).
    select ra.account_id
    from app_public.role_permissions rp
    join app_public.roles r on r.id = rp.role_id
    -- per granting role, its attributions through the role index: the Salarié attribution of
    -- every employee is never read
    cross join lateral (select x.id, x.account_id, x.start_date, x.end_date
                        from app_public.role_attributions x
                        where x.role_id = rp.role_id offset 0) ra
    where rp.permission_code = p_decide_permission
      and app_hidden.date_in(v_today, ra.start_date, ra.end_date)
      and (not r.opens_manager_workspace
           or not exists (select 1 from app_public.role_attribution_establishments rae
                          where rae.attribution_id = ra.id)
           or exists (select 1 from app_public.role_attribution_establishments rae
                      where rae.attribution_id = ra.id
                        and rae.establishment_id = any (v_now_establishments))
           or exists (select 1 from app_public.on_call_periods op
                      join app_public.on_call_period_establishments ope on ope.period_id = op.id
                      where op.account_id = ra.account_id and op.start_at <= v_at and v_at < op.end_at
                        and ope.establishment_id = any (v_now_establishments))
           or exists (select 1 from app_public.accounts x where x.id = ra.account_id and x.is_superuser))
    union
    select ap.account_id
    from app_public.account_permissions ap
    where ap.permission_code = p_decide_permission
      and not (select x.is_superuser from app_public.accounts x where x.id = ap.account_id)
  ),
  deciders as (
    -- Active, never the author; one primary-key lookup per candidate.
    select a.id, a.is_superuser
    from candidates c
    cross join lateral (select a.id, a.is_active, a.is_superuser from app_public.accounts a
                        where a.id = c.account_id offset 0) a
    where a.is_active and c.account_id is distinct from p_author_account_id
  ),
  grants as (
    -- Per decider, its role attributions active today granting the decision (d_) or the queue
    -- (q_), read as permission_scopes does: "open" (a role outside the manager workspace, or
    -- without establishments) covers the whole association; a restricted one covers its
    -- establishments, today's of the employee (here) or those of either day (attached).
    select ra.account_id,
           bool_or(rp.permission_code = p_decide_permission) as d_granted,
           bool_or(rp.permission_code = p_decide_permission
                   and (not r.opens_manager_workspace or rae.establishment_id is null)) as d_open,
           bool_or(rp.permission_code = p_decide_permission
                   and rae.establishment_id = any (v_now_establishments)) as d_here,
           bool_or(rp.permission_code = p_decide_permission and r.opens_manager_workspace
                   and rae.establishment_id is not null) as d_restricted,
           bool_or(rp.permission_code = p_decide_permission and r.opens_manager_workspace
                   and rae.establishment_id = any (v_establishments)) as d_attached,
           bool_or(rp.permission_code = 'absences.view_absence_queue') as q_granted,
           bool_or(rp.permission_code = 'absences.view_absence_queue'
                   and (not r.opens_manager_workspace or rae.establishment_id is null)) as q_open,
           bool_or(rp.permission_code = 'absences.view_absence_queue'
                   and rae.establishment_id = any (v_now_establishments)) as q_here
    from deciders d
    -- its attributions through the account index (offset 0: whatever the estimates)
    cross join lateral (select x.id, x.role_id, x.account_id, x.start_date, x.end_date
                        from app_public.role_attributions x where x.account_id = d.id offset 0) ra
    join app_public.role_permissions rp on rp.role_id = ra.role_id
                                       and rp.permission_code in (p_decide_permission, 'absences.view_absence_queue')
    join app_public.roles r on r.id = ra.role_id
    -- its establishments through the primary key (offset 0: not a scan of every attribution's)
    left join lateral (select x.establishment_id from app_public.role_attribution_establishments x
                       where x.attribution_id = ra.id offset 0) rae on true
    where app_hidden.date_in(v_today, ra.start_date, ra.end_date)
    group by ra.account_id
  ),
  scoped as (
    select d.id, g.*,
           d.is_superuser or exists (select 1 from app_public.account_permissions ap
                                     where ap.account_id = d.id and ap.permission_code = p_decide_permission
                                     offset 0) as d_explicit,
           d.is_superuser or exists (select 1 from app_public.account_permissions ap
                                     where ap.account_id = d.id and ap.permission_code = 'absences.view_absence_queue'
                                     offset 0) as q_explicit,
           oc.on_call_now, oc.on_call_either
    from deciders d
    left join grants g on g.account_id = d.id
    -- Its on-call periods active now, on the employee's establishments.
    cross join lateral (select coalesce(bool_or(ope.establishment_id = any (v_now_establishments)), false) as on_call_now,
                               coalesce(bool_or(ope.establishment_id = any (v_establishments)), false) as on_call_either
                        from app_public.on_call_periods op
                        join app_public.on_call_period_establishments ope on ope.period_id = op.id
                        where op.account_id = d.id and op.start_at <= v_at and v_at < op.end_at) oc
  )
  select s.id,
         coalesce(s.d_attached, false) or (coalesce(s.d_restricted, false) and s.on_call_either)
  from scoped s
  where ((s.d_explicit or coalesce(s.d_open, false)) and v_exists
         or coalesce(s.d_here, false)
         or (coalesce(s.d_granted, false) and v_on_call_extends and s.on_call_now))
    and ((s.q_explicit or coalesce(s.q_open, false)) and v_exists
         or coalesce(s.q_here, false)
         or (coalesce(s.q_granted, false) and s.on_call_now));
end;
$$;

-- The accounts to notify of a filing: the attached deciders, else the unattached ones, with the
-- delegates of those who delegated and without those away (app_private.route_filing_with_delegations).
create or replace function app_private.route_deciders(p_employee_id int, p_on date, p_decide_permission text,
                                           p_author_account_id int)
returns setof int
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  -- Issue 30: presence and delegations (sql/delegations/routing.sql) on top of the SPEC routing.
  return query select app_private.route_filing_with_delegations(p_employee_id, p_on, p_decide_permission,
                                                                 p_author_account_id);
end;
$$;

-- Who hears of a filing nobody can decide: every Admin, else RH n1 and RH n2, else the
-- superusers (the author is added by notify_filing). Active accounts, roles active today.
create or replace function app_private.orphan_filing_recipients() returns setof int
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_today date := app_hidden.today();
begin
  return query
  select distinct ra.account_id from app_public.role_attributions ra
  join app_public.roles r on r.id = ra.role_id
  join app_public.accounts a on a.id = ra.account_id
  where a.is_active and r.name = 'Admin' and app_hidden.date_in(v_today, ra.start_date, ra.end_date);
  if found then return; end if;
  return query
  select distinct ra.account_id from app_public.role_attributions ra
  join app_public.roles r on r.id = ra.role_id
  join app_public.accounts a on a.id = ra.account_id
  where a.is_active and r.name in ('RH n1', 'RH n2') and app_hidden.date_in(v_today, ra.start_date, ra.end_date);
  if found then return; end if;
  return query select a.id from app_public.accounts a where a.is_active and a.is_superuser;
end;
$$;

-- The cause written in a "sans valideur" notification.
create or replace function app_private.orphan_filing_cause(p_employee_id int, p_on date, p_decide_permission text,
                                                p_author_account_id int)
returns text
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select case
    when p_author_account_id is not null
         and exists (select 1 from app_private.decider_candidates(p_employee_id, p_on, p_decide_permission, null) c
                     where c.account_id = p_author_account_id)
    then 'Cause : l''auteur de la demande est le seul valideur possible, et personne ne décide sa propre demande.'
    else format('Cause : aucun compte actif ne peut à la fois voir et décider les demandes concernant %s (%s).',
                coalesce(app_hidden.employee_name(p_employee_id), 'ce salarié'),
                coalesce('établissements : ' || (select string_agg(e.name, ', ' order by e.name)
                                                  from app_public.establishments e
                                                  where e.id in (select app_hidden.employee_establishments(p_employee_id, p_on))),
                         'rattaché à aucun établissement'))
  end;
$$;

-- Notifies a filing and returns has_recipient. With deciders: each receives
-- (p_title, p_body). Without: the author and the fallback recipients (every Admin, else
-- RH n1 and n2, else the superusers) receive (p_orphan_title, p_orphan_body followed by the
-- cause), and the caller learns false. Any failure aborts the caller's write.
create or replace function app_private.notify_filing(p_employee_id int, p_on date, p_decide_permission text,
                                          p_author_account_id int, p_title text, p_body text,
                                          p_orphan_title text, p_orphan_body text,
                                          p_model text, p_target_id bigint)
returns boolean
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_recipient int;
  v_body text;
begin
  if app_private.notify_each(array(select app_private.route_deciders(p_employee_id, p_on, p_decide_permission,
                                                                     p_author_account_id)),
                             p_title, p_body, 'info', p_model, p_target_id) > 0 then
    return true;
  end if;
  v_body := concat_ws(E'\n', nullif(btrim(p_orphan_body), ''),
                      app_private.orphan_filing_cause(p_employee_id, p_on, p_decide_permission, p_author_account_id));
  for v_recipient in
    select r from (select p_author_account_id as r union select app_private.orphan_filing_recipients()) x
    where r is not null
    order by r
  loop
    perform app_private.notify(v_recipient, p_orphan_title, v_body, 'warning', p_model, p_target_id);
  end loop;
  return false;
end;
$$;

-- Notifies every decider whose queue shows the employee (same routing), e.g. a cancellation
-- request. Returns the number of recipients.
create or replace function app_private.notify_deciders(p_employee_id int, p_on date, p_decide_permission text,
                                            p_author_account_id int, p_title text, p_body text,
                                            p_model text, p_target_id bigint)
returns int
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  return app_private.notify_each(array(select app_private.route_deciders(p_employee_id, p_on, p_decide_permission,
                                                                         p_author_account_id)),
                                 p_title, p_body, 'info', p_model, p_target_id);
end;
$$;

-- ---------------------------------------------------------------------------------------
-- API: GET /api/notifications/ and POST /api/notifications/<id>/read/

create or replace function app_hidden.notification_json(p_notification app_public.notifications) returns jsonb
language sql immutable as $$
  select jsonb_build_object(
    'id', p_notification.id,
    'title', p_notification.title,
    'body', p_notification.body,
    'level', p_notification.level,
    'created_at', p_notification.created_at,
    'read_at', p_notification.read_at,
    'kind', p_notification.kind,
    'path', p_notification.path);
$$;

-- The caller's notifications, newest first; p_unread true = unread only, false = read only.
create or replace function app_public.notifications_list(p_unread boolean default null, p_page int default 1,
                                              p_page_size int default 50)
returns jsonb
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  with mine as (
    select n.* from app_public.notifications n
    where n.account_id = app_hidden.current_account_id()   -- RLS says the same (select_own)
      and (p_unread is null or (n.read_at is null) = p_unread)
  )
  select jsonb_build_object(
    'count', (select count(*) from mine),
    'results', coalesce((
      select jsonb_agg(app_hidden.notification_json(p) order by p.created_at desc, p.id desc)
      from (select * from mine order by created_at desc, id desc
            limit app_hidden.page_limit(p_page_size) offset app_hidden.page_offset(p_page, p_page_size)) p), '[]'::jsonb));
$$;
comment on function app_public.notifications_list(boolean, integer, integer) is
'SPEC Notifications: one page of the caller''s in-app notifications, newest first; p_unread true keeps
the unread ones, false the read ones.';

-- Marks one of the caller's notifications read (idempotent: the first reading time stays)
-- and returns it. Another account's notification is not found.
create or replace function app_public.notification_mark_read(p_id bigint) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v app_public.notifications;
begin
  update app_public.notifications n set read_at = coalesce(n.read_at, app_hidden.now())
  where n.id = p_id and n.account_id = app_hidden.current_account_id()
  returning n.* into v;
  if not found then
    perform app_hidden.not_found('Notification introuvable.', 'WN601');
  end if;
  return app_hidden.notification_json(v);
end;
$$;
comment on function app_public.notification_mark_read(bigint) is
'SPEC Notifications: marks one of the caller''s notifications read (idempotent: the first reading time
stays) and returns it; another account''s notification is not found.';

-- ---------------------------------------------------------------------------------------
-- E-mail outbox. Rows are inserted by the business transactions (password reset,
-- invitations); the worker task drain_email_outbox delivers them.

-- Enqueues the drain job in the same transaction as the insert, so that mails leave
-- promptly; skipped silently when graphile-worker's schema is not installed (its
-- migrations run when the worker starts, and the worker drains the outbox at start).
create or replace function app_private.tg_email_outbox__enqueue() returns trigger
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  if to_regnamespace('graphile_worker') is not null then
    perform graphile_worker.add_job('drain_email_outbox', json_build_object(), job_key => 'drain_email_outbox');
  end if;
  return null;
end;
$$;
create or replace trigger _900_enqueue after insert on app_private.email_outbox
  for each statement execute function app_private.tg_email_outbox__enqueue();

-- The next mail to deliver after p_after_id (id order), locked for this transaction so that
-- two drains never send the same mail; null when none is left. Mails that exhausted
-- email_max_attempts stay in the outbox, visible to staff, and are not retried.
-- (body_html and headers: the HTML part and the List-Unsubscribe headers of a notification's.)
drop function if exists app_private.email_outbox_next(bigint) cascade;
create or replace function app_private.email_outbox_next(p_after_id bigint default 0)
returns table (id bigint, to_address text, subject text, body_text text, body_html text, headers jsonb, attempts int)
language sql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
  select o.id, o.to_address, o.subject, o.body_text, o.body_html, o.headers, o.attempts
  from app_private.email_outbox o
  where o.sent_at is null and o.id > coalesce(p_after_id, 0)
    and o.attempts < coalesce((app_hidden.setting('email_max_attempts') #>> '{}')::int, 10)
  order by o.id
  limit 1
  for update skip locked;
$$;

create or replace function app_private.email_outbox_sent(p_id bigint) returns void
language sql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
  update app_private.email_outbox
  set sent_at = app_hidden.now(), attempts = attempts + 1, last_attempt_at = app_hidden.now(), last_error = null
  where id = p_id and sent_at is null;
$$;

create or replace function app_private.email_outbox_failed(p_id bigint, p_error text) returns void
language sql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
  update app_private.email_outbox
  set attempts = attempts + 1, last_attempt_at = app_hidden.now(), last_error = left(coalesce(p_error, 'erreur inconnue'), 2000)
  where id = p_id and sent_at is null;
$$;

-- Number of mails waiting (for the worker's log when SMTP is not configured).
create or replace function app_private.email_outbox_pending_count() returns bigint
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select count(*) from app_private.email_outbox o where o.sent_at is null;
$$;

-- Staff read the outbox (mails stay there without SMTP settings). The body carries
-- single-use password links: only superusers see it, so that staff status alone never
-- gives a way into another account.

create or replace function app_public.email_outbox_list(p_status text default null, p_page int default 1,
                                             p_page_size int default 50)
returns jsonb
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_superuser boolean := exists (select 1 from app_public.accounts a
                                 where a.id = app_hidden.current_account_id() and a.is_superuser);
begin
  if not app_hidden.current_account_is_staff() then
    perform app_hidden.forbidden('La boîte d''envoi des e-mails est réservée aux comptes du personnel d''administration.', 'WF602');
  end if;
  if p_status is not null and p_status not in ('pending', 'sent', 'failed') then
    perform app_hidden.invalid('status', 'Statut inconnu. Valeurs possibles : pending, sent, failed.', 'WV602');
  end if;
  return (
    with mails as (
      select o.* from app_private.email_outbox o
      where p_status is null
         or (p_status = 'pending' and o.sent_at is null)
         or (p_status = 'sent' and o.sent_at is not null)
         or (p_status = 'failed' and o.sent_at is null and o.last_error is not null)
    )
    select jsonb_build_object(
      'count', (select count(*) from mails),
      'results', coalesce((
        select jsonb_agg(jsonb_build_object(
                 'id', m.id, 'kind', m.kind, 'to_address', m.to_address, 'subject', m.subject,
                 'account', m.account_id, 'created_at', m.created_at, 'sent_at', m.sent_at,
                 'attempts', m.attempts, 'last_attempt_at', m.last_attempt_at, 'last_error', m.last_error)
               || case when v_superuser then jsonb_build_object('body_text', m.body_text) else '{}'::jsonb end
               order by m.created_at desc, m.id desc)
        from (select * from mails order by created_at desc, id desc
              limit app_hidden.page_limit(p_page_size) offset app_hidden.page_offset(p_page, p_page_size)) m), '[]'::jsonb)));
end;
$$;
comment on function app_public.email_outbox_list(text, integer, integer) is
'SPEC Authentication rule 4 (invitations and reset links), back-office: for staff accounts (else 403),
one page of the outgoing mails newest first, filtered by status pending, sent or failed; the body only
for superusers, as it carries single-use password links.';
--! EndIncluded notifications/functions.sql
--! Included shift_change/functions.sql
-- Day-change requests (/api/shift-change-requests/): filing, reading, withdrawal, the two
-- decisions and the back-office correction. One function per route and per transition;
-- each runs as wfm_api under row-level security (outside the perimeter = not found).

insert into app_private.settings (key, value, description) values
  ('shift_change_notice_days', '7', 'Délai de prévenance d''une modification de journée, en jours (avertissement au détail)')
on conflict (key) do nothing;

-- The records of a set of requests, built in one statement (requester's name, reason label,
-- slots with their posts, names of the decider and of the corrector).
-- force_generic_plan: docs/architecture.md, Performance notes.
create or replace function app_hidden.shift_change_records(p_ids int[]) returns table (id int, record jsonb)
language plpgsql stable
set plan_cache_mode = force_generic_plan as $$
#variable_conflict use_column
begin
  return query
    with req as (
      select r.* from app_public.shift_change_requests r where r.id = any (p_ids)
    ),
    names as (
      select n.id, n.name
      from app_hidden.account_display_names(
             array(select x from req, unnest(array[req.decided_by, req.corrected_by, req.on_behalf_of]) x where x is not null)) n
    ),
    -- The queue's mark « par délégation de X » (sql/delegations/api.sql), for a caller holding a delegation.
    marks as (
      select app_hidden.current_account_has_delegation() as has_any
    )
    select r.id, jsonb_build_object(
      'id', r.id,
      'employee', r.employee_id,
      'employee_name', e.first_name || ' ' || e.last_name,
      'date', r.date,
      'reason', r.reason,
      'reason_label', rs.label,
      'comment', r.comment,
      'is_remote', r.is_remote,
      'is_offsite', r.is_offsite,
      'slots', sl.slots,
      'status', r.status,
      'version', r.version,
      'planned_description', r.planned_description,
      'planned_minutes', r.planned_minutes,
      'requested_minutes', r.requested_minutes,
      'decided_by', r.decided_by,
      'decided_by_name', dn.name,
      'on_behalf_of', r.on_behalf_of,
      'on_behalf_of_name', bn.name,
      'by_delegation_of', case when mk.has_any then app_hidden.delegation_mark(r.employee_id) end,
      'decided_at', r.decided_at,
      'decision_reason', r.decision_reason,
      'corrected_by', r.corrected_by,
      'corrected_by_name', cn.name,
      'corrected_at', r.corrected_at,
      'granted_slots', gs.slots,
      'granted_minutes', r.granted_minutes,
      'granted_gap_minutes', r.granted_gap_minutes,
      'created_at', r.created_at,
      'updated_at', r.updated_at)
    from req r
    left join app_public.employees e on e.id = r.employee_id
    left join app_public.shift_change_reasons rs on rs.code = r.reason
    left join names dn on dn.id = r.decided_by
    left join names cn on cn.id = r.corrected_by
    left join names bn on bn.id = r.on_behalf_of
    cross join marks mk
    cross join lateral (
      select coalesce(jsonb_agg(app_hidden.slot_json_with(r.slots[i], p.code, p.label) order by i), '[]'::jsonb) as slots
      from generate_subscripts(r.slots, 1) i
      left join app_public.posts p on p.id = (r.slots[i]).post_id
    ) sl
    cross join lateral (
      select case when r.granted_slots is not null
                  then coalesce(jsonb_agg(app_hidden.slot_json_with(r.granted_slots[i], p.code, p.label) order by i),
                                '[]'::jsonb) end as slots
      from generate_subscripts(r.granted_slots, 1) i
      left join app_public.posts p on p.id = (r.granted_slots[i]).post_id
    ) gs;
end;
$$;

create or replace function app_hidden.shift_change_record(p_id int) returns jsonb
language sql stable as $$
  select x.record from app_hidden.shift_change_records(array[p_id]) x;
$$;

-- The day as planned now (detail's current_day): label, net duration, slots with their
-- breaks, options and comment of a day modification.
create or replace function app_hidden.current_day_json(p_employee int, p_date date) returns jsonb
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select jsonb_build_object(
    'date', p_date,
    'label', app_hidden.day_label(d.slots),
    'minutes', app_hidden.slots_minutes(d.slots),
    'slots', app_hidden.slots_json(d.slots),
    'is_remote', coalesce(m.is_remote, false),
    'is_offsite', coalesce(m.is_offsite, false),
    'modified', m.id is not null,
    'comment', m.comment)
  from (select app_hidden.planned_slots(p_employee, p_date) as slots) d
  left join app_public.day_modifications m on m.employee_id = p_employee and m.date = p_date;
$$;

-- Warnings of the detail, for a pending request only (null otherwise, and when there is
-- nothing to report): the granted absence of that day, once per reason (a pending absence
-- request is not named), and the notice period of the agreement (shift_change_notice_days).
create or replace function app_hidden.shift_change_warnings(p_request app_public.shift_change_requests) returns jsonb
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_warnings text[];
  v_filed date := app_hidden.business_date(p_request.created_at);
  v_notice int := coalesce((app_hidden.setting('shift_change_notice_days') #>> '{}')::int, 7);
begin
  if p_request.status <> 'pending' then
    return null;
  end if;
  v_warnings := array(
    select format('Absence accordée ce jour : %s (%s). Une absence accordée prévaut sur la modification de la journée.',
                  t.name, t.code)
    from app_public.absence_types t
    where t.id in (select a.type_id from app_public.absences a
                   where a.employee_id = p_request.employee_id
                     and p_request.date between a.date_start and a.date_end
                     and a.status in ('validated', 'cancellation_requested'))
    order by t.code);
  if p_request.date < v_filed then
    v_warnings := v_warnings || format('Délai de prévenance : la demande a été déposée le %s, après la journée concernée (%s).',
                                       app_hidden.fr_date(v_filed), app_hidden.fr_date(p_request.date));
  elsif p_request.date - v_filed < v_notice then
    v_warnings := v_warnings || format('Délai de prévenance de %s jours non respecté : demande déposée le %s pour le %s.',
                                       v_notice, app_hidden.fr_date(v_filed), app_hidden.fr_date(p_request.date));
  end if;
  return case when cardinality(v_warnings) = 0 then null else to_jsonb(v_warnings) end;
end;
$$;

-- Why a requested day changes nothing (null when it changes something): no slot and no
-- option; an option alone on a rest day; slots and options equal to the planned day.
create or replace function app_hidden.day_change_noop(p_slots app_public.slot[], p_is_remote boolean, p_is_offsite boolean,
                                           p_planned app_public.slot[], p_planned_remote boolean,
                                           p_planned_offsite boolean)
returns text
language sql immutable as $$
  select case
    when cardinality(p_slots) = 0 and not p_is_remote and not p_is_offsite then
      'La demande ne change rien à la journée : ajoutez ou modifiez un créneau, ou choisissez une option.'
    when cardinality(p_slots) = 0 and cardinality(p_planned) = 0 then
      'Ce jour est un jour de repos : une option seule ne change rien, ajoutez un créneau.'
    when app_hidden.same_slots(case when cardinality(p_slots) = 0 then p_planned else p_slots end, p_planned)
         and p_is_remote = p_planned_remote and p_is_offsite = p_planned_offsite then
      'La journée demandée est identique à la journée prévue : la demande ne change rien.'
  end;
$$;

-- POST /api/shift-change-requests/
-- One typed argument per key of the body: date, reason, comment?, is_remote?, is_offsite?,
-- slots? (an employee key is not passed: the request is always on the caller's own record).
-- Returns the record with has_recipient.
drop function if exists app_public.shift_change_create(jsonb);
create or replace function app_public.shift_change_create(p_date date, p_reason text, p_comment text default null,
                                                          p_is_remote boolean default null,
                                                          p_is_offsite boolean default null,
                                                          p_slots jsonb default null) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_account int := app_hidden.current_account_id();
  v_employee int := app_hidden.current_employee_id();
  v_today date := app_hidden.today();
  v_errors jsonb := '{}';
  v_date date := p_date;
  v_reason text;
  v_comment text := nullif(btrim(p_comment), '');
  v_remote boolean := coalesce(p_is_remote, false);
  v_offsite boolean := coalesce(p_is_offsite, false);
  v_planned app_public.slot[];
  v_modification app_public.day_modifications;
  v_slots app_public.slot[];
  v_noop text;
  v_id int;
  v_name text;
  v_has_recipient boolean;
begin
  if v_employee is null then
    perform app_hidden.forbidden('Votre compte n''est rattaché à aucune fiche salarié : vous ne pouvez pas demander de modification de journée.', 'WF106');
  end if;

  -- The route schema requires date and reason; a GraphQL caller may still send nulls.
  if v_date is null then
    v_errors := app_hidden.add_error(v_errors, 'date', 'Ce champ est obligatoire.');
  end if;
  if p_reason is null or btrim(p_reason) = '' then
    v_errors := app_hidden.add_error(v_errors, 'reason', 'Ce champ est obligatoire.');
  elsif not exists (select 1 from app_public.shift_change_reasons r where r.code = p_reason) then
    v_errors := app_hidden.add_error(v_errors, 'reason',
      'Motif inconnu. Valeurs possibles : '
      || (select string_agg(r.code, ', ' order by r.position) from app_public.shift_change_reasons r) || '.');
  else
    v_reason := p_reason;
  end if;
  if char_length(v_comment) > app_hidden.comment_max_length() then
    v_errors := app_hidden.add_error(v_errors, 'comment', app_hidden.max_length_message(app_hidden.comment_max_length()));
  end if;
  perform app_hidden.raise_errors(v_errors);

  if v_date < app_hidden.employee_retroactivity_limit(v_today) then
    perform app_hidden.invalid('date',
      format('Une demande de modification ne peut pas porter sur un jour antérieur de plus de %s jours : au plus tôt le %s.',
             app_hidden.retroactivity_days(), app_hidden.fr_date(app_hidden.employee_retroactivity_limit(v_today))), 'WV101');
  end if;
  if exists (select 1 from app_public.shift_change_requests r
             where r.employee_id = v_employee and r.date = v_date and r.status = 'pending') then
    perform app_hidden.invalid('date',
      format('Une demande de modification est déjà en attente pour le %s : retirez-la ou attendez sa décision.',
             app_hidden.fr_date(v_date)), 'WV102');
  end if;

  v_planned := app_hidden.planned_slots(v_employee, v_date);
  select * into v_modification from app_public.day_modifications m
  where m.employee_id = v_employee and m.date = v_date;
  v_slots := app_hidden.parse_day_slots(p_slots, 'slots', v_employee, v_date, v_planned);

  v_noop := app_hidden.day_change_noop(v_slots, v_remote, v_offsite, v_planned,
                                       coalesce(v_modification.is_remote, false), coalesce(v_modification.is_offsite, false));
  if v_noop is not null then
    perform app_hidden.invalid(null, v_noop, 'WV103');
  end if;

  insert into app_public.shift_change_requests
    (employee_id, date, reason, comment, is_remote, is_offsite, slots,
     planned_description, planned_minutes, requested_minutes, author_account_id)
  values
    (v_employee, v_date, v_reason, v_comment, v_remote, v_offsite, v_slots,
     app_hidden.day_label(v_planned), app_hidden.slots_minutes(v_planned),
     case when cardinality(v_slots) > 0 then app_hidden.slots_minutes(v_slots) else app_hidden.slots_minutes(v_planned) end,
     v_account)
  returning id into v_id;

  v_name := app_hidden.employee_name(v_employee);
  v_has_recipient := app_private.notify_filing(
    v_employee, v_date, 'planning.decide_shift_change', v_account,
    'Nouvelle demande de modification',
    format('%s demande une modification de sa journée du %s.', v_name, app_hidden.fr_date(v_date)),
    'Demande de modification sans valideur',
    format('La demande de modification %s pour le %s n''a aucun valideur : aucun compte actif ne peut la décider dans le périmètre du salarié.',
           app_hidden.de_name(v_name), app_hidden.fr_date(v_date)),
    'shift_change_request', v_id);

  return app_hidden.shift_change_record(v_id) || jsonb_build_object('has_recipient', v_has_recipient);
end;
$$;
comment on function app_public.shift_change_create(date, text, text, boolean, boolean, jsonb) is
'SPEC Day-change requests, POST /api/shift-change-requests/ and creation rules 1-6: files a request on a
day of the caller''s own planning (an employee in the body is ignored), pending with version 1, audited,
deciders notified (nothing is created if notifying fails). Returns the record with has_recipient.';

-- The hint of the decision panel (detail's can_decide): a pending request that the caller
-- may decide, as shift_change_for_decision checks (the back-office's abilities, one source).
-- Never NULL. The transitions check again. plpgsql: shift_change_abilities comes later in sql/ORDER.
create or replace function app_hidden.shift_change_decidable(p_request app_public.shift_change_requests) returns boolean
language plpgsql stable as $$
begin
  return coalesce(p_request.status = 'pending'
                  and (app_public.shift_change_abilities(p_request.id) ->> 'decide')::boolean, false);
end;
$$;

-- GET /api/shift-change-requests/<id>/: the record with current_day, warnings and can_decide.
create or replace function app_public.shift_change_get(p_id int) returns jsonb
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v app_public.shift_change_requests;
begin
  select * into v from app_public.shift_change_requests r where r.id = p_id;
  if v.id is null then
    perform app_hidden.not_found('Demande de modification introuvable.', 'WN101');
  end if;
  return app_hidden.shift_change_record(v.id)
         || jsonb_build_object('current_day', app_hidden.current_day_json(v.employee_id, v.date),
                               'warnings', app_hidden.shift_change_warnings(v),
                               'can_decide', app_hidden.shift_change_decidable(v));
end;
$$;
comment on function app_public.shift_change_get(integer) is
'SPEC Day-change requests, GET /api/shift-change-requests/<id>/: one request the caller reads (its own,
or the absences.view_absence_queue perimeter; else 404) with current_day, warnings and can_decide.';

-- DELETE /api/shift-change-requests/<id>/: the requester withdraws a pending request
-- (audit line Suppression; nobody is notified).
create or replace function app_public.shift_change_delete(p_id int) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v app_public.shift_change_requests;
begin
  select * into v from app_public.shift_change_requests r where r.id = p_id;
  if v.id is null then
    perform app_hidden.not_found('Demande de modification introuvable.', 'WN101');
  end if;
  if v.employee_id is distinct from app_hidden.current_employee_id() then
    perform app_hidden.forbidden('Seul le demandeur peut retirer sa demande de modification.', 'WF103');
  end if;
  if v.status <> 'pending' then
    perform app_hidden.invalid('status', 'Seule une demande en attente peut être retirée : une demande décidée est conservée.', 'WV106');
  end if;
  delete from app_public.shift_change_requests r where r.id = p_id and r.status = 'pending';
  if not found then
    -- Decided in the meantime (the deletion waited for the decision's lock).
    perform app_hidden.invalid('status', 'Seule une demande en attente peut être retirée : une demande décidée est conservée.', 'WV106');
  end if;
  return null;
end;
$$;
comment on function app_public.shift_change_delete(integer) is
'SPEC Day-change requests, DELETE /api/shift-change-requests/<id>/ and decision rule 5: the requester
withdraws a pending request (audit line Suppression, nobody notified); anybody else who reads it gets
403, a decided request 400 under status.';

-- Locks a request for a transition after the caller's rights were checked: a stale version
-- is 409 before any other check of the row, then a request that is no longer pending is 400
-- under status.
create or replace function app_hidden.shift_change_lock(p_id int, p_version int, p_action text default 'décidée')
returns app_public.shift_change_requests
language plpgsql volatile as $$
declare
  v app_public.shift_change_requests;
begin
  select * into v from app_public.shift_change_requests r where r.id = p_id for update;
  if v.id is null then
    perform app_hidden.not_found('Demande de modification introuvable.', 'WN101');
  end if;
  if p_version is distinct from v.version then
    perform app_hidden.conflict('Quelqu''un a déjà décidé ou modifié cette demande entre-temps : rechargez la file des demandes.', 'WC101');
  end if;
  if v.status <> 'pending' then
    perform app_hidden.invalid('status', format('Seule une demande en attente peut être %s.', p_action), 'WV106');
  end if;
  return v;
end;
$$;

-- A decision: the request is visible (else 404), the caller holds
-- planning.decide_shift_change on the employee (else 403: DA, Service Paie, ...), it is not
-- their own request (403), then the row is locked and its version and state checked.
create or replace function app_hidden.shift_change_for_decision(p_id int, p_version int) returns app_public.shift_change_requests
language plpgsql volatile as $$
declare
  v app_public.shift_change_requests;
  v_account int := app_hidden.current_account_id();
begin
  select * into v from app_public.shift_change_requests r where r.id = p_id;
  if v.id is null then
    perform app_hidden.not_found('Demande de modification introuvable.', 'WN101');
  end if;
  if not app_hidden.may(v_account, 'planning.decide_shift_change', v.employee_id) then
    perform app_hidden.forbidden('Votre rôle ne permet pas de décider une demande de modification de journée.', 'WF101');
  end if;
  if v.employee_id = app_hidden.current_employee_id() or v.author_account_id = v_account then
    perform app_hidden.forbidden('Vous ne pouvez pas décider votre propre demande : un autre valideur doit la traiter.', 'WF102');
  end if;
  return app_hidden.shift_change_lock(p_id, p_version);
end;
$$;

-- POST /api/shift-change-requests/<id>/validate/ {"version", "reason"?, "adjusted_slots"?}
-- Without adjusted_slots the requested day is granted (its slots, or the planned slots for
-- a request of options only). adjusted_slots grants another day for the request's date
-- (whatever date the payload names): it is stored next to the request (granted_slots,
-- granted_minutes, granted_gap_minutes = granted - requested), needs a reason, and must keep
-- the rules of the modulation (app_hidden.modulation_errors), each broken rule under its
-- own key, nothing written. adjusted_slots equal to the requested day is no adjustment. A
-- request corrected at the back-office needs a reason too. The day modification is created
-- or replaced (slots, options; the comment it already carries is kept).
create or replace function app_public.shift_change_validate(p_id int, p_version int, p_reason text default null,
                                                 p_adjusted_slots jsonb default null)
returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v app_public.shift_change_requests;
  v_account int := app_hidden.current_account_id();
  v_reason text := nullif(btrim(p_reason), '');
  v_planned app_public.slot[];
  v_requested app_public.slot[];
  v_granted app_public.slot[];
  v_final app_public.slot[];
  v_adjusted boolean := false;
  v_errors jsonb := '{}';
  v_recipient int;
  v_body text;
begin
  v := app_hidden.shift_change_for_decision(p_id, p_version);
  if char_length(v_reason) > app_hidden.comment_max_length() then
    perform app_hidden.invalid('reason', app_hidden.max_length_message(app_hidden.comment_max_length()));
  end if;

  v_planned := app_hidden.planned_slots(v.employee_id, v.date);
  v_requested := case when cardinality(v.slots) > 0 then v.slots else v_planned end;

  if p_adjusted_slots is not null and jsonb_typeof(p_adjusted_slots) <> 'null' then
    if jsonb_typeof(p_adjusted_slots) = 'array' and jsonb_array_length(p_adjusted_slots) = 0 then
      perform app_hidden.invalid('adjusted_slots',
        'La journée accordée doit comporter au moins un créneau : pour ne rien accorder, refusez la demande.', 'WV104');
    end if;
    v_granted := app_hidden.parse_day_slots(p_adjusted_slots, 'adjusted_slots', v.employee_id, v.date,
                                            v_requested, 'slots');
    v_adjusted := not app_hidden.same_slots(v_granted, v_requested);
    if v_adjusted then
      v_errors := app_hidden.modulation_errors(v.employee_id, v.date, v_granted);
    end if;
  end if;

  if v_reason is null and v_adjusted then
    v_errors := app_hidden.add_error(v_errors, 'reason',
      'Vous accordez une journée différente de celle demandée : indiquez le motif de l''ajustement.');
  elsif v_reason is null and v.corrected_by is not null then
    v_errors := app_hidden.add_error(v_errors, 'reason',
      'Cette demande a été corrigée au back-office : indiquez le motif de la validation.');
  end if;
  if v_errors <> '{}'::jsonb then
    perform app_hidden.invalid_fields(v_errors, case when v_errors - 'reason' = '{}'::jsonb then 'WV105' else 'WV107' end);
  end if;

  perform app_private.set_audit_verb('Validation');
  update app_public.shift_change_requests r
  set status = 'validated',
      version = r.version + 1,
      decided_by = v_account,
      decided_at = app_hidden.now(),
      decision_reason = v_reason,
      granted_slots = case when v_adjusted then v_granted end,
      granted_minutes = case when v_adjusted then app_hidden.slots_minutes(v_granted) end,
      granted_gap_minutes = case when v_adjusted then app_hidden.slots_minutes(v_granted) - r.requested_minutes end
  where r.id = v.id;
  perform app_private.set_audit_verb('');

  v_final := case when v_adjusted then v_granted else v_requested end;
  insert into app_public.day_modifications
    (employee_id, date, slots, is_remote, is_offsite, source_request_id, created_by, updated_by)
  values (v.employee_id, v.date, v_final, v.is_remote, v.is_offsite, v.id, v_account, v_account)
  on conflict (employee_id, date) do update
    set slots = excluded.slots,
        is_remote = excluded.is_remote,
        is_offsite = excluded.is_offsite,
        source_request_id = excluded.source_request_id,
        updated_by = excluded.updated_by;

  v_recipient := app_private.employee_account_id(v.employee_id);
  if v_recipient is not null then
    if v_adjusted or v.corrected_by is not null then
      v_body := format('Votre demande de modification du %s a été validée avec modification. Journée accordée : %s. Motif : %s',
                       app_hidden.fr_date(v.date), app_hidden.slots_summary(v_final), v_reason);
    else
      v_body := format('Votre demande de modification du %s a été validée.', app_hidden.fr_date(v.date))
                || coalesce(' Motif : ' || v_reason, '');
    end if;
    perform app_private.notify(v_recipient, 'Demande de modification validée', v_body, 'info',
                               'shift_change_request', v.id);
  end if;
  return app_hidden.shift_change_record(v.id);
end;
$$;
comment on function app_public.shift_change_validate(integer, integer, text, jsonb) is
'SPEC Day-change requests, POST /api/shift-change-requests/<id>/validate/, decision rules 2-4 and
creation rule 7: with the current version, a holder of planning.decide_shift_change who is not the
requester grants the request, or with adjusted_slots another day for its date (a reason and the
modulation rules required); the day modification is created or replaced, audited, and the requester
notified.';

-- POST /api/shift-change-requests/<id>/refuse/ {"version", "reason"}: the planned day is
-- unchanged; the requester is notified (error level, the body ends with the reason).
create or replace function app_public.shift_change_refuse(p_id int, p_version int, p_reason text default null)
returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v app_public.shift_change_requests;
  v_account int := app_hidden.current_account_id();
  v_reason text := nullif(btrim(p_reason), '');
  v_recipient int;
begin
  v := app_hidden.shift_change_for_decision(p_id, p_version);
  if v_reason is null then
    perform app_hidden.invalid('reason', 'Indiquez le motif du refus.', 'WV105');
  end if;
  if char_length(v_reason) > app_hidden.comment_max_length() then
    perform app_hidden.invalid('reason', app_hidden.max_length_message(app_hidden.comment_max_length()));
  end if;

  perform app_private.set_audit_verb('Refus');
  update app_public.shift_change_requests r
  set status = 'refused',
      version = r.version + 1,
      decided_by = v_account,
      decided_at = app_hidden.now(),
      decision_reason = v_reason
  where r.id = v.id;
  perform app_private.set_audit_verb('');

  v_recipient := app_private.employee_account_id(v.employee_id);
  if v_recipient is not null then
    perform app_private.notify(v_recipient, 'Demande de modification refusée',
      format('Votre demande de modification du %s a été refusée. Motif : %s', app_hidden.fr_date(v.date), v_reason),
      'error', 'shift_change_request', v.id);
  end if;
  return app_hidden.shift_change_record(v.id);
end;
$$;
comment on function app_public.shift_change_refuse(integer, integer, text) is
'SPEC Day-change requests, POST /api/shift-change-requests/<id>/refuse/ and decision rules 1-3: with the
current version and a non-empty reason, a holder of planning.decide_shift_change who is not the
requester refuses a pending request; the planned day is unchanged and the requester notified.';

-- Is the account an HR account for the correction: employee.change_employee_record held
-- through an explicit permission or a role attribution active today (a superuser's flag
-- alone does not count, as for deciders: SPEC Events rule 1). Never NULL.
create or replace function app_private.holds_hr_permission(p_account int) returns boolean
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select coalesce(
    exists (select 1 from app_public.account_permissions ap
            where ap.account_id = p_account and ap.permission_code = 'employee.change_employee_record')
    or exists (select 1 from app_public.role_attributions ra
               join app_public.role_permissions rp on rp.role_id = ra.role_id
               where ra.account_id = p_account and rp.permission_code = 'employee.change_employee_record'
                 and app_hidden.date_in(app_hidden.today(), ra.start_date, ra.end_date)),
    false);
$$;
revoke all on function app_private.holds_hr_permission(int) from public;
grant execute on function app_private.holds_hr_permission(int) to wfm_api;

-- Back-office correction of a pending request (no REST route; the back-office calls it):
-- by an HR account (employee.change_employee_record on the employee, held through a role or
-- an explicit permission: a superuser's status alone makes no HR account), never on its own
-- request, whatever surface calls it (GraphQL included); the slots (and, when given, the options) replace the requested ones under the
-- same rules as a filing; version + 1, corrected_by, an audit line Correction with the slots
-- before and after. A corrected request then needs a reason to be validated.
create or replace function app_public.shift_change_correct(p_id int, p_version int, p_slots jsonb,
                                                p_is_remote boolean default null, p_is_offsite boolean default null)
returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v app_public.shift_change_requests;
  v_account int := app_hidden.current_account_id();
  v_planned app_public.slot[];
  v_modification app_public.day_modifications;
  v_slots app_public.slot[];
  v_remote boolean;
  v_offsite boolean;
  v_noop text;
begin
  select * into v from app_public.shift_change_requests r where r.id = p_id;
  if v.id is null then
    perform app_hidden.not_found('Demande de modification introuvable.', 'WN101');
  end if;
  if not coalesce(app_hidden.may(v_account, 'employee.change_employee_record', v.employee_id), false)
     or not app_private.holds_hr_permission(v_account) then
    perform app_hidden.forbidden('Seul un compte RH peut corriger une demande de modification.', 'WF104');
  end if;
  if v.employee_id is not distinct from app_hidden.current_employee_id() or v.author_account_id = v_account then
    perform app_hidden.forbidden('Vous ne pouvez pas corriger votre propre demande.', 'WF105');
  end if;
  v := app_hidden.shift_change_lock(p_id, p_version, 'corrigée');

  v_planned := app_hidden.planned_slots(v.employee_id, v.date);
  select * into v_modification from app_public.day_modifications m
  where m.employee_id = v.employee_id and m.date = v.date;
  -- No slots given: the requested slots stay; an empty list: the hours of the day stay.
  v_slots := case when p_slots is null then v.slots
                  else app_hidden.parse_day_slots(p_slots, 'slots', v.employee_id, v.date, v_planned) end;
  v_remote := coalesce(p_is_remote, v.is_remote);
  v_offsite := coalesce(p_is_offsite, v.is_offsite);
  v_noop := app_hidden.day_change_noop(v_slots, v_remote, v_offsite, v_planned,
                                       coalesce(v_modification.is_remote, false), coalesce(v_modification.is_offsite, false));
  if v_noop is not null then
    perform app_hidden.invalid(null, v_noop, 'WV103');
  end if;
  if app_hidden.same_slots(v_slots, v.slots) and v_remote = v.is_remote and v_offsite = v.is_offsite then
    perform app_hidden.invalid(null, 'La correction ne change rien à la demande.', 'WV103');
  end if;

  perform app_private.set_audit_verb('Correction');
  update app_public.shift_change_requests r
  set slots = v_slots,
      is_remote = v_remote,
      is_offsite = v_offsite,
      requested_minutes = case when cardinality(v_slots) > 0 then app_hidden.slots_minutes(v_slots)
                               else r.planned_minutes end,
      version = r.version + 1,
      corrected_by = v_account,
      corrected_at = app_hidden.now()
  where r.id = v.id;
  perform app_private.set_audit_verb('');
  return app_hidden.shift_change_record(v.id);
end;
$$;
comment on function app_public.shift_change_correct(integer, integer, jsonb, boolean, boolean) is
'SPEC States and transitions, Day-change request (back-office correction): an HR account replaces the
slots (and options) of a pending request that is not its own, under the filing rules; version + 1,
corrected_by set, audit line with the slots before and after. A corrected request then needs a reason to
be validated.';
--! EndIncluded shift_change/functions.sql
--! Included absences/json.sql
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
--! EndIncluded absences/json.sql
--! Included absences/api.sql
-- The absence API (/api/absences/): one function per route and per state transition.
-- Each runs as wfm_api (security definer): reads and writes go through the policies, so a
-- row outside the caller's perimeter is simply not found. Rules live in
-- app_private.absence_evaluate (declaration rules) and app_private.absence_sync_counters
-- (counter journal); notifications go through the notification service in the same
-- transaction (a failed notification aborts the write).

-- Texts ---------------------------------------------------------------------------------

-- "« Congés payés » du 20/11/2026 au 24/11/2026"
-- (plpgsql: its plan is kept by the connection; a security definer SQL function is planned at
-- each call.)
create or replace function app_hidden.absence_subject(p_absence app_public.absences) returns text
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  return (select format('« %s » %s', t.name,
                        app_hidden.absence_period_fr(p_absence.date_start, p_absence.date_end, p_absence.start_half,
                                                     p_absence.end_half, p_absence.start_time, p_absence.end_time))
          from app_public.absence_types t where t.id = p_absence.type_id);
end;
$$;

-- Guards shared by the transitions ------------------------------------------------------

-- The absence, locked, as the caller may write it (outside: 404).
create or replace function app_hidden.absence_lock(p_id int) returns app_public.absences
language plpgsql volatile as $$
declare
  v app_public.absences;
begin
  select * into v from app_public.absences a
  where a.id = p_id and a.employee_id in (select app_hidden.absence_api_reader_ids())
  for update;
  if not found then
    perform app_hidden.not_found('Absence introuvable.', 'WN201');
  end if;
  return v;
end;
$$;

-- A decision sends the version it read; a stale one answers 409 before any other check.
create or replace function app_hidden.absence_check_version(p_absence app_public.absences, p_version int, p_required boolean)
returns void
language plpgsql stable as $$
begin
  if p_version is not null then
    if p_version <> p_absence.version then
      perform app_hidden.conflict(
        'Quelqu''un d''autre a déjà traité cette absence (version périmée) : rechargez la file et recommencez.', 'WC201');
    end if;
  elsif p_required then
    perform app_hidden.invalid('version', 'Ce champ est obligatoire.');
  end if;
end;
$$;

drop function if exists app_hidden.absence_check_version(app_public.absences, jsonb, boolean);

-- A comment or a reason over the limit of sql/core/input_contract.sql: the route schema
-- refuses it first; a GraphQL caller gets the same answer under the field.
create or replace function app_hidden.absence_check_text_length(p_field text, p_value text) returns void
language plpgsql immutable as $$
begin
  if char_length(p_value) > app_hidden.comment_max_length() then
    perform app_hidden.invalid(p_field, app_hidden.max_length_message(app_hidden.comment_max_length()));
  end if;
end;
$$;

-- The caller decides absences of this employee: the permission through a role, the
-- perimeter, and never their own request.
create or replace function app_hidden.absence_check_decider(p_absence app_public.absences) returns void
language plpgsql stable as $$
begin
  if not app_hidden.current_account_has('absences.decide_absence') then
    perform app_hidden.forbidden('Votre rôle ne permet pas de décider des demandes d''absence.', 'WF201');
  end if;
  if not app_hidden.may(app_hidden.current_account_id(), 'absences.decide_absence', p_absence.employee_id) then
    perform app_hidden.forbidden('Ce salarié est hors de votre périmètre de décision.', 'WF201');
  end if;
  if p_absence.employee_id = app_hidden.current_employee_id() then
    perform app_hidden.forbidden('Vous ne pouvez pas décider de votre propre demande d''absence.', 'WF202');
  end if;
end;
$$;

-- Whether the caller decides the absences of this employee, as absence_check_decider rules:
-- the right over the employee's perimeter, never on its own absence. Never NULL. Read by the
-- decision panel's hint (below) and the back-office's abilities (sql/absences/corrections.sql).
create or replace function app_hidden.may_decide_absence_of(p_employee int) returns boolean
language sql stable as $$
  select coalesce(app_hidden.may(app_hidden.current_account_id(), 'absences.decide_absence', p_employee)
                  and app_hidden.is_current_employee(p_employee) is false, false);
$$;

-- The hint of the decision panel (GET detail's can_decide): would a decision of the caller
-- pass absence_check_decider, on a state a decision accepts (a pending request or a
-- requested cancellation)? Never NULL. The transitions check again.
create or replace function app_hidden.absence_decidable(p_absence app_public.absences) returns boolean
language sql stable as $$
  select coalesce(p_absence.status in ('pending', 'cancellation_requested')
                  and app_hidden.current_account_has('absences.decide_absence')
                  and app_hidden.may_decide_absence_of(p_absence.employee_id), false);
$$;

-- Manager-side corrections and previews of a row: never one's own absence, and only
-- inside the manager workspace's perimeter.
create or replace function app_hidden.absence_check_corrector(p_absence app_public.absences) returns void
language plpgsql stable as $$
begin
  if p_absence.employee_id = app_hidden.current_employee_id() then
    if app_hidden.current_account_has('absences.view_absence_queue') then
      perform app_hidden.forbidden(
        'Vous ne pouvez pas corriger votre propre absence : retirez-la et déposez une nouvelle demande.', 'WF204');
    end if;
    perform app_hidden.forbidden(
      'La correction d''une absence est réservée à l''encadrement : retirez votre demande en attente ou demandez l''annulation d''une absence accordée.',
      'WF203');
  end if;
  if not app_hidden.may(app_hidden.current_account_id(), 'absences.view_absence_queue', p_absence.employee_id) then
    perform app_hidden.forbidden('La correction d''une absence est réservée à l''encadrement de son périmètre.', 'WF203');
  end if;
end;
$$;

-- May the caller file for this employee? For oneself always; for another, inside the
-- decision perimeter (a declaration). Returns the error under `employee`, or null.
create or replace function app_hidden.absence_filer_error(p_employee int) returns text
language sql stable as $$
  select case
    when p_employee is null or p_employee = app_hidden.current_employee_id() then null
    when app_hidden.employee_name(p_employee) is null then 'Salarié introuvable.'
    -- A delegation (issue 30) hands over the decisions, not the declarations: one's own rights only.
    when app_hidden.may_own(app_hidden.current_account_id(), 'absences.decide_absence', p_employee, app_hidden.now()) then null
    when app_hidden.may(app_hidden.current_account_id(), 'absences.decide_absence', p_employee) then
      'Une délégation permet de décider des demandes, pas de déclarer une absence pour un autre salarié.'
    when app_hidden.current_account_has('absences.decide_absence') then
      'Ce salarié n''est pas dans votre périmètre : vous ne pouvez pas déclarer d''absence pour lui.'
    else 'Vous ne pouvez déposer une absence que pour vous-même.'
  end;
$$;

-- Writes that (re)check the rules across an employee's absences (overlap, annual caps,
-- splitting) take this lock first: parallel requests for one employee then see each other
-- and answer with the rule's message instead of racing (the exclusion constraint and the
-- counter row locks stay as the last guards).
create or replace function app_hidden.absence_lock_employee(p_employee int) returns void
language sql volatile as $$
  select pg_advisory_xact_lock(hashtext('absences:employee:' || p_employee));
$$;

-- The event-versus-absence alert: the author, and the employee when different.
create or replace function app_private.absence_alert_events(p_absence app_public.absences, p_events jsonb) returns void
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  e jsonb;
  v_recipient int;
begin
  for e in select * from jsonb_array_elements(coalesce(p_events, '[]'::jsonb)) loop
    for v_recipient in
      select distinct x from unnest(array[p_absence.author_account_id,
                                          app_private.employee_account_id(p_absence.employee_id)]) x
      where x is not null
    loop
      perform app_private.notify(v_recipient, 'Conflit entre une absence et un événement',
        format('L''absence %s %s chevauche l''événement « %s » %s.', app_hidden.absence_subject(p_absence),
               app_hidden.de_name(app_hidden.employee_name(p_absence.employee_id)), e ->> 'title',
               app_hidden.event_period_fr((e ->> 'start_at')::timestamptz, (e ->> 'end_at')::timestamptz)),
        'warning', 'absence', p_absence.id);
    end loop;
  end loop;
end;
$$;

-- Notifies the employee concerned (when they have an account).
create or replace function app_private.absence_notify_employee(p_absence app_public.absences, p_title text, p_body text,
                                                    p_level text)
returns void
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_account int := app_private.employee_account_id(p_absence.employee_id);
begin
  if v_account is not null then
    perform app_private.notify(v_account, p_title, p_body, p_level, 'absence', p_absence.id);
  end if;
end;
$$;

-- Grants a cancellation (decision or "Supprimer l'absence"): the row stays, with status
-- cancelled; its documents are deleted; its counters are recredited; the planning no
-- longer draws it.
create or replace function app_hidden.absence_cancel(p_absence app_public.absences, p_decision boolean)
returns app_public.absences
language plpgsql volatile as $$
declare
  v app_public.absences;
begin
  perform app_private.set_audit_verb('Annulation');
  update app_public.absences a set
    status = 'cancelled',
    version = a.version + 1,
    cancelled_by = app_hidden.current_account_id(),
    cancelled_at = app_hidden.now(),
    cancellation_decided_at = case when p_decision then app_hidden.now() else a.cancellation_decided_at end,
    cancellation_decided_by = case when p_decision then app_hidden.current_account_id() else a.cancellation_decided_by end
  where a.id = p_absence.id
  returning * into v;
  perform app_private.set_audit_verb('');
  delete from app_public.absence_documents d where d.absence_id = v.id;
  perform app_private.absence_sync_counters(v.id, 'cancel');
  return v;
end;
$$;

-- The retroactive window of a decider (app_hidden.manager_retroactivity_limit), applied when a
-- decider grants a cancellation or cancels a granted absence.
create or replace function app_hidden.absence_check_decider_window(p_absence app_public.absences) returns void
language plpgsql stable as $$
declare
  v_limit date := app_hidden.manager_retroactivity_limit(app_hidden.today());
begin
  if p_absence.date_start < v_limit then
    perform app_hidden.invalid('date_start', format(
      'Cette absence commence avant le %s : elle est hors de la période sur laquelle une décision peut revenir (1er décembre de l''année précédente).',
      app_hidden.fr_date(v_limit)), 'WV213');
  end if;
end;
$$;

-- Routes --------------------------------------------------------------------------------

-- GET /api/absences/?status=&employee=&from=&to=&establishment=&type=
-- establishment: the employee's main or secondary workplace (the back-office list's filter,
-- as for day-change requests); type: the absence type. Both come last so that positional
-- calls of the first signature keep their meaning.
drop function if exists app_public.absences_list(text, int, date, date, int, int, text);
-- The list's total and page of ids, for app_public.absences_list (jsonb, GraphQL and the
-- back-office) and app_public.absences_list_text (the REST route). Neither security definer nor
-- SET: it runs as its callers (wfm_api) with their plan_cache_mode, force_generic_plan, so that
-- its statements and those of its callees (perimeter, policies) keep their plans; the lists whose
-- index depends on each call's values are EXECUTEd, that is planned with those values
-- (docs/architecture.md, Performance notes).
create or replace function app_hidden.absences_list_page(p_status text, p_employee int, p_from date, p_to date,
                                                         p_page int, p_page_size int, p_establishment int, p_type int,
                                                         out o_count int, out o_ids int[])
language plpgsql stable as $$
declare
  v_limit int;
  v_offset int;
  -- Employees whose absences the list shows; null for the whole association (no filter).
  v_readers int[] := app_hidden.absences_list_readers();
begin
  -- The whole association's queue (one state, no other filter): the same plan at every call,
  -- the total a sum of the kept counts (app_private.absence_status_counts) of that state, the
  -- page a backward index-only scan of (status, date_start, id) that stops at its limit. The
  -- checks in the order of the general statement below: page, then filters.
  if v_readers is null and p_status is not null and p_employee is null and p_from is null and p_to is null
     and p_type is null and p_establishment is null then
    v_limit := app_hidden.page_limit(p_page_size);
    v_offset := app_hidden.page_offset(p_page, p_page_size);
    perform app_hidden.absences_filters_check(p_status, null, null);
    select coalesce(sum(c.n), 0)::int into o_count
    from app_private.absence_status_counts c
    where c.status = p_status;
    o_ids := array(select a.id from app_public.absences a
                   where a.status = p_status
                   order by a.date_start desc, a.id desc
                   limit v_limit offset v_offset);
    return;
  end if;
  -- Filters and perimeter: app_hidden.absences_selection (sql/absences/export.sql), shared
  -- with the export. Filtered by state and employee only, the total is a sum of the kept counts
  -- (app_private.absence_status_counts) rather than a count of every matching row.
  if p_from is null and p_to is null and p_type is null and p_establishment is null then
    execute 'select coalesce(sum(c.n), 0)::int
             from app_private.absence_status_counts c
             where ($1 is null or c.employee_id = any ($1))
               and ($2 is null or c.status = $2)
               and ($3 is null or c.employee_id = $3)'
      into o_count using v_readers, p_status, p_employee;
  end if;
  -- Not materialized: the page alone reads the index in date order and stops at its limit
  -- (the selection's filter check still runs: an unknown status is a 400 either way).
  execute 'with visible as not materialized (
             select a.id, a.date_start
             from app_hidden.absences_selection($1, $2, $3, $4, $5, $6, $7) a
           )
           select coalesce($8, (select count(*) from visible)),
                  array(select v.id from visible v order by v.date_start desc, v.id desc
                        limit app_hidden.page_limit($9) offset app_hidden.page_offset($10, $9))'
    into o_count, o_ids
    using v_readers, p_status, p_employee, p_from, p_to, p_establishment, p_type, o_count, p_page_size, p_page;
end;
$$;

create or replace function app_public.absences_list(p_status text default null, p_employee int default null,
                                         p_from date default null, p_to date default null,
                                         p_page int default 1, p_page_size int default 50,
                                         p_public_url text default null,
                                         p_establishment int default null, p_type int default null)
returns jsonb
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp
-- force_generic_plan: for every statement it runs, nested ones included (app_hidden.absences_list_page).
set plan_cache_mode = force_generic_plan as $$
declare
  v_count int;
  v_ids int[];
begin
  select p.o_count, p.o_ids into v_count, v_ids
  from app_hidden.absences_list_page(p_status, p_employee, p_from, p_to, p_page, p_page_size, p_establishment, p_type) p;
  return jsonb_build_object('count', v_count, 'results', app_hidden.absences_json(v_ids, p_public_url, true));
end;
$$;
comment on function app_public.absences_list(text, integer, date, date, integer, integer, text, integer, integer) is
'SPEC Absences, GET /api/absences/ and Permissions rules 3 and 19: the absences the caller reads (its
own; for the manager workspace, the absences.view_absence_queue perimeter) filtered by status (an
unknown one gives 400 under status), employee, date window, establishment (main or secondary workplace)
and type, newest first; one page with the count, warnings null on every row.';

-- The same list for the REST route (GET /api/absences/): the total, and the page's records as the
-- JSON text absences_list holds under results, byte for byte (app_hidden.absences_list_json_text),
-- which the service sends as it comes (no jsonb built, printed, parsed and serialised again).
create or replace function app_public.absences_list_text(p_status text default null, p_employee int default null,
                                                         p_from date default null, p_to date default null,
                                                         p_page int default 1, p_page_size int default 50,
                                                         p_public_url text default null,
                                                         p_establishment int default null, p_type int default null,
                                                         out count int, out results text)
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp
set plan_cache_mode = force_generic_plan as $$
declare
  v_ids int[];
begin
  select p.o_count, p.o_ids into count, v_ids
  from app_hidden.absences_list_page(p_status, p_employee, p_from, p_to, p_page, p_page_size, p_establishment, p_type) p;
  results := app_hidden.absences_list_json_text(v_ids, p_public_url);
end;
$$;

-- GET /api/absences/<id>/: the record, its documents, whether the caller may decide it now
-- (can_decide), and for the employee and the queue perimeter the planned day of the first day.
create or replace function app_public.absence_get(p_id int, p_public_url text default null) returns jsonb
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v app_public.absences;
begin
  select * into v from app_public.absences a
  where a.id = p_id and a.employee_id in (select app_hidden.absence_api_reader_ids());
  if not found then
    perform app_hidden.not_found('Absence introuvable.', 'WN201');
  end if;
  return app_hidden.absence_json(v.id, p_public_url)
         || jsonb_build_object('can_decide', app_hidden.absence_decidable(v))
         || case when v.employee_id = app_hidden.current_employee_id()
                   or app_hidden.may(app_hidden.current_account_id(), 'absences.view_absence_queue', v.employee_id)
                 then jsonb_build_object('planned_day', app_hidden.planned_day_json(v.employee_id, v.date_start))
                 else '{}'::jsonb end;
end;
$$;
comment on function app_public.absence_get(integer, text) is
'SPEC Absences, GET /api/absences/<id>/: one absence the caller reads (else 404) with its documents (the
file key only for readers of the content, Permissions rule 5), whether the caller may decide it now
(can_decide) and, for the employee and the queue perimeter, the planned day of its first day.';

-- POST /api/absences/: an employee's request for themselves is born pending (deciders
-- notified); a manager's declaration for an employee of the decision perimeter is born
-- validated (nobody notified, no decision date). The author decides the state, not the role.
-- Typed arguments, one per field of the body (the route schema has checked their types);
-- the rules check what a GraphQL caller may still send (missing fields, a long comment).
drop function if exists app_public.absence_create(jsonb, text);
create or replace function app_public.absence_create(
  p_employee int, p_type int, p_date_start date, p_date_end date default null,
  p_start_half text default null, p_end_half text default null,
  p_start_time time default null, p_end_time time default null,
  p_comment text default null, p_add_documents jsonb default null, p_public_url text default null) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp
-- force_generic_plan for every statement it runs, nested ones included (docs/architecture.md, Performance notes).
set plan_cache_mode = force_generic_plan as $$
declare
  v_account int := app_hidden.current_account_id();
  v_today date := app_hidden.today();
  v_now timestamptz := app_hidden.now();
  -- A creation without date_end lies on one date (hourly types, single days).
  d app_hidden.absence_draft := row(p_employee, p_type, p_date_start, coalesce(p_date_end, p_date_start),
                                    p_start_half, p_end_half, p_start_time, p_end_time);
  v_comment text := nullif(btrim(p_comment), '');
  v_own boolean;
  v_filer_error text;
  v_eval jsonb;
  v_errors jsonb;
  v_absence app_public.absences;
  v_has_recipient boolean;
  v_subject text;
  v_name text;
begin
  v_filer_error := app_hidden.absence_filer_error(d.employee_id);
  if v_filer_error is not null then
    perform app_hidden.invalid('employee', v_filer_error, 'WV200');
  end if;
  v_own := d.employee_id = app_hidden.current_employee_id();
  if d.employee_id is not null then
    perform app_hidden.absence_lock_employee(d.employee_id);
  end if;
  v_eval := app_private.absence_evaluate(d, null, case when v_own then 'employee' else 'manager' end,
                                         case when v_own then v_now end, v_today);
  v_errors := (v_eval -> 'errors') || app_hidden.document_metadata_errors(p_add_documents, 'add_documents');
  if char_length(v_comment) > app_hidden.comment_max_length() then
    v_errors := app_hidden.add_error(v_errors, 'comment', app_hidden.max_length_message(app_hidden.comment_max_length()));
  end if;
  if v_errors <> '{}'::jsonb then
    perform app_hidden.invalid_fields(v_errors, 'WV200');
  end if;

  insert into app_public.absences (employee_id, type_id, date_start, date_end, start_half, end_half, start_time,
                                   end_time, comment, status, counted_quantity, counted_unit, author_account_id,
                                   submitted_at, warnings)
  values (d.employee_id, d.type_id, d.date_start, d.date_end, d.start_half, d.end_half, d.start_time, d.end_time,
          v_comment, case when v_own then 'pending' else 'validated' end,
          (v_eval ->> 'quantity')::numeric, v_eval ->> 'unit', v_account,
          case when v_own then v_now end, v_eval -> 'warnings')
  returning * into v_absence;

  perform app_hidden.absence_documents_insert(v_absence.id, p_add_documents);
  -- The counters' target is the plan evaluated above (no error: its counters are open, in the type's unit).
  perform app_private.absence_sync_counters(v_absence.id, 'create', v_today, v_eval -> 'plan');
  perform app_private.absence_alert_events(v_absence, v_eval -> 'events');

  if v_own then
    v_subject := app_hidden.absence_subject(v_absence);
    v_name := app_hidden.employee_name(v_absence.employee_id);
    v_has_recipient := app_private.notify_filing(
      v_absence.employee_id, v_absence.date_start, 'absences.decide_absence', v_account,
      'Nouvelle demande d''absence',
      format('%s demande une absence %s (%s).', v_name, v_subject,
             app_hidden.quantity_fr(v_absence.counted_quantity, v_absence.counted_unit)),
      'Demande d''absence sans valideur',
      format('La demande d''absence %s %s n''a aucun valideur : aucun compte habilité à décider des absences ne couvre ce salarié. Un administrateur doit la traiter.',
             v_subject, app_hidden.de_name(v_name)),
      'absence', v_absence.id);
  end if;

  return app_hidden.absence_json(v_absence.id, p_public_url)
         || jsonb_build_object('has_recipient', v_has_recipient);
end;
$$;
comment on function app_public.absence_create(integer, integer, date, date, text, text, time, time, text, jsonb, text) is
'SPEC Absences, POST /api/absences/ and declaration rules 1-13: files an absence. The request of an
employee for their own record is born pending (counters reserved, deciders notified); the declaration of
a manager for an employee of the decision perimeter is born validated (nobody notified): the author
decides the state, not the role. Returns the absence with its warnings.';

-- The preview answer of CONTRACT section 4.
create or replace function app_hidden.absence_preview_answer(p_eval jsonb, p_effects jsonb) returns jsonb
-- stable, like the to_char wrappers it calls: an immutable SQL function calling a stable one is never
-- inlined, and was parsed and planned at each call.
language sql stable as $$
  select jsonb_build_object(
    'quantity', app_hidden.fmt_quantity((p_eval ->> 'quantity')::numeric),
    'unit', p_eval -> 'unit',
    'counter_effects', coalesce(p_effects, '[]'::jsonb),
    'warnings', coalesce(p_eval -> 'warnings', '[]'::jsonb),
    'errors', coalesce(p_eval -> 'errors', '{}'::jsonb));
$$;

-- POST /api/absences/preview/: what a creation would do, without writing anything. Always
-- answers (errors are part of the answer). Without `employee`, the caller's own record.
-- The typed arguments of absence_create (the comment, which changes nothing, aside).
drop function if exists app_public.absence_preview(jsonb);
create or replace function app_public.absence_preview(
  p_employee int, p_type int, p_date_start date, p_date_end date default null,
  p_start_half text default null, p_end_half text default null,
  p_start_time time default null, p_end_time time default null) returns jsonb
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  d app_hidden.absence_draft := row(p_employee, p_type, p_date_start, coalesce(p_date_end, p_date_start),
                                    p_start_half, p_end_half, p_start_time, p_end_time);
  v_today date := app_hidden.today();
  v_filer_error text;
  v_own boolean;
  v_eval jsonb;
  v_bucket text;
begin
  d.employee_id := coalesce(d.employee_id, app_hidden.current_employee_id());
  v_filer_error := app_hidden.absence_filer_error(d.employee_id);
  if v_filer_error is not null then
    return app_hidden.absence_preview_answer(
      jsonb_build_object('quantity', null,
                         'unit', (select t.unit from app_public.absence_types t where t.id = d.type_id and t.is_active),
                         'warnings', '[]'::jsonb,
                         'errors', jsonb_build_object('employee', jsonb_build_array(v_filer_error))),
      '[]'::jsonb);
  end if;
  v_own := d.employee_id = app_hidden.current_employee_id();
  v_eval := app_private.absence_evaluate(d, null, case when v_own then 'employee' else 'manager' end,
                                         case when v_own then app_hidden.now() end, v_today);
  v_bucket := case when not coalesce(v_own, false) and d.date_start <= v_today then 'taken' else 'planned' end;
  return app_hidden.absence_preview_answer(v_eval, app_private.absence_counter_effects(v_eval -> 'plan', v_bucket, null));
end;
$$;
comment on function app_public.absence_preview(integer, integer, date, date, text, text, time, time) is
'SPEC Absences, POST /api/absences/preview/ and preview rules 1-4: what creating this body would do
(quantity, unit, counter_effects, warnings, errors keyed by the field to correct), writing nothing;
without employee, for the caller''s own record.';

-- The correction keys of an absence, in the order of app_hidden.absence_draft_of's arguments.
create or replace function app_hidden.absence_correction_keys() returns text[]
language sql immutable parallel safe as $$
  select array['type', 'date_start', 'date_end', 'start_half', 'end_half', 'start_time', 'end_time'];
$$;

-- POST /api/absences/<id>/preview/: what a correction would do (manager side). The row
-- excludes itself from overlap, caps and splitting; effects are the difference with what
-- it holds now. The body of a creation, typed, with the keys sent (p_sent): a key left out
-- keeps the stored value; the employee never changes.
drop function if exists app_public.absence_preview_row(int, jsonb);
create or replace function app_public.absence_preview_row(
  p_id int, p_type int default null, p_date_start date default null, p_date_end date default null,
  p_start_half text default null, p_end_half text default null, p_start_time time default null,
  p_end_time time default null, p_sent text[] default null) returns jsonb
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v app_public.absences;
  d app_hidden.absence_draft;
  v_sent text[] := app_hidden.keys_sent(p_sent, app_hidden.absence_correction_keys(),
    array[p_type is not null, p_date_start is not null, p_date_end is not null, p_start_half is not null,
          p_end_half is not null, p_start_time is not null, p_end_time is not null]);
  v_today date := app_hidden.today();
  v_eval jsonb;
  v_bucket text;
begin
  select * into v from app_public.absences a
  where a.id = p_id and a.employee_id in (select app_hidden.absence_api_reader_ids());
  if not found then
    perform app_hidden.not_found('Absence introuvable.', 'WN201');
  end if;
  perform app_hidden.absence_check_corrector(v);
  d := app_hidden.absence_draft_normalize(
    app_hidden.absence_draft_of(v, v_sent, p_type, p_date_start, p_date_end, p_start_half, p_end_half, p_start_time, p_end_time),
    v_sent, v);
  v_eval := app_private.absence_evaluate(d, v.id, 'manager',
                                         case when v.author_account_id = app_private.employee_account_id(v.employee_id)
                                              then v.submitted_at end, v_today);
  v_bucket := app_hidden.absence_counter_bucket(v.status, d.date_start, v_today);
  return app_hidden.absence_preview_answer(v_eval, app_private.absence_counter_effects(v_eval -> 'plan', v_bucket, v.id));
end;
$$;
comment on function app_public.absence_preview_row(integer, integer, date, date, text, text, time, time, text[]) is
'SPEC Absences, POST /api/absences/<id>/preview/ (manager side): what correcting this absence with the
keys sent (p_sent) would do, writing nothing; the row excludes itself from overlap, cap and splitting,
and counter effects are the difference with what it holds now.';

-- PATCH /api/absences/<id>/ (manager side): corrections of the period, the type, the hours
-- or the comment rerun every declaration rule and compensate the counters; documents may
-- be added (add_documents) and removed (remove_document_ids, which must belong to it).
-- Typed arguments with the keys sent (p_sent): a key left out keeps the stored value.
drop function if exists app_public.absence_update(int, jsonb, text);
create or replace function app_public.absence_update(
  p_id int, p_type int default null, p_date_start date default null, p_date_end date default null,
  p_start_half text default null, p_end_half text default null, p_start_time time default null,
  p_end_time time default null, p_comment text default null, p_version int default null,
  p_remove_document_ids int[] default null, p_add_documents jsonb default null, p_sent text[] default null,
  p_public_url text default null) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v app_public.absences;
  v_new app_public.absences;
  d app_hidden.absence_draft;
  v_sent text[] := app_hidden.keys_sent(p_sent, app_hidden.absence_correction_keys() || 'comment'::text,
    array[p_type is not null, p_date_start is not null, p_date_end is not null, p_start_half is not null,
          p_end_half is not null, p_start_time is not null, p_end_time is not null, p_comment is not null]);
  v_comment text := app_hidden.trimmed(p_comment);
  v_add_documents jsonb := nullif(p_add_documents, 'null'::jsonb);
  v_today date := app_hidden.today();
  v_period_changed boolean;
  v_comment_changed boolean;
  v_remove int[] := p_remove_document_ids;
  v_errors jsonb := '{}'::jsonb;
  v_eval jsonb;
  v_bad int;
begin
  v := app_hidden.absence_lock(p_id);
  perform app_hidden.absence_check_corrector(v);
  perform app_hidden.absence_check_version(v, p_version, false);

  d := app_hidden.absence_draft_normalize(
    app_hidden.absence_draft_of(v, v_sent, p_type, p_date_start, p_date_end, p_start_half, p_end_half, p_start_time, p_end_time),
    v_sent, v);
  v_period_changed := row(d.type_id, d.date_start, d.date_end, d.start_half, d.end_half, d.start_time, d.end_time)
    is distinct from row(v.type_id, v.date_start, v.date_end, v.start_half, v.end_half, v.start_time, v.end_time);
  v_comment_changed := app_hidden.sent(v_sent, 'comment', false) and v_comment is distinct from v.comment;

  if v.status in ('refused', 'cancelled') then
    perform app_hidden.invalid('status', format('Une absence %s ne se modifie plus.',
      case when v.status = 'refused' then 'refusée' else 'annulée' end), 'WV210');
  end if;
  if v.status = 'cancellation_requested' and (v_period_changed or v_comment_changed) then
    perform app_hidden.invalid('status',
      'Une demande d''annulation est en cours : décidez-la avant de corriger cette absence.', 'WV210');
  end if;
  -- Correcting, and removing a document (a medical certificate may be the proof of the
  -- absence), need the right to correct: depositing is open to the queue perimeter.
  if (v_period_changed or v_comment_changed or coalesce(cardinality(v_remove), 0) > 0)
     and not app_hidden.may(app_hidden.current_account_id(), 'absences.decide_absence', v.employee_id) then
    perform app_hidden.forbidden(
      case when v_period_changed or v_comment_changed
           then 'Votre rôle ne permet pas de corriger une absence ; vous pouvez seulement y déposer des justificatifs.'
           else 'Votre rôle ne permet pas de retirer un justificatif ; vous pouvez seulement en déposer.' end, 'WF201');
  end if;

  select x into v_bad from unnest(v_remove) x
  where not exists (select 1 from app_public.absence_documents doc where doc.id = x and doc.absence_id = v.id)
  limit 1;
  if v_bad is not null then
    v_errors := app_hidden.add_error(v_errors, 'remove_document_ids',
      format('Le document n° %s n''appartient pas à cette absence : rien n''a été modifié.', v_bad));
  end if;
  v_errors := v_errors || app_hidden.document_metadata_errors(v_add_documents, 'add_documents');
  if v_period_changed then
    perform app_hidden.absence_lock_employee(v.employee_id);
    v_eval := app_private.absence_evaluate(d, v.id, 'manager',
                                           case when v.author_account_id = app_private.employee_account_id(v.employee_id)
                                                then v.submitted_at end, v_today);
    v_errors := (v_eval -> 'errors') || v_errors;
  end if;
  if v_errors <> '{}'::jsonb then
    perform app_hidden.invalid_fields(v_errors, 'WV200');
  end if;

  if not v_period_changed and not v_comment_changed and coalesce(cardinality(v_remove), 0) = 0
     and coalesce(jsonb_array_length(v_add_documents), 0) = 0 then
    return app_hidden.absence_json(v.id, p_public_url);
  end if;

  perform app_private.set_audit_verb(case when v_period_changed or v_comment_changed then 'Correction' else 'Modification' end);
  update app_public.absences a set
    type_id = d.type_id, date_start = d.date_start, date_end = d.date_end, start_half = d.start_half,
    end_half = d.end_half, start_time = d.start_time, end_time = d.end_time,
    comment = case when v_comment_changed then v_comment else a.comment end,
    counted_quantity = case when v_period_changed then (v_eval ->> 'quantity')::numeric else a.counted_quantity end,
    counted_unit = case when v_period_changed then v_eval ->> 'unit' else a.counted_unit end,
    warnings = case when v_period_changed then v_eval -> 'warnings' else a.warnings end,
    corrected_by = case when v_period_changed or v_comment_changed then app_hidden.current_account_id() else a.corrected_by end,
    version = a.version + 1
  where a.id = v.id
  returning * into v_new;
  perform app_private.set_audit_verb('');

  delete from app_public.absence_documents doc where doc.absence_id = v.id and doc.id = any (v_remove);
  perform app_hidden.absence_documents_insert(v.id, v_add_documents);
  if v_period_changed then
    perform app_private.absence_sync_counters(v.id, 'edit', v_today);
    perform app_private.absence_alert_events(v_new, v_eval -> 'events');
  end if;
  return app_hidden.absence_json(v.id, p_public_url);
end;
$$;
comment on function app_public.absence_update(integer, integer, date, date, text, text, time, time, text, integer, integer[], jsonb, text[], text) is
'SPEC Absences, PATCH /api/absences/<id>/ and declaration rules 1-11 and 18 (manager side; an employee
gets 403): corrects the period, type, hours or comment (the keys sent, p_sent), rerunning every
declaration rule and compensating the counters, and adds (add_documents) or removes
(remove_document_ids, which must belong to it) documents. Returns the absence with its warnings and
documents.';

-- POST /api/absences/<id>/documents/ (multipart add_documents): the employee concerned
-- and the manager perimeter deposit documents on an absence that is not refused or
-- cancelled (e.g. after a missing-document reminder).
drop function if exists app_public.absence_add_documents(int, jsonb, text);
create or replace function app_public.absence_add_documents(p_id int, p_add_documents jsonb, p_public_url text default null)
returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v app_public.absences;
  v_errors jsonb;
begin
  v := app_hidden.absence_lock(p_id);
  if v.status in ('refused', 'cancelled') then
    perform app_hidden.invalid('status', format('Une absence %s ne reçoit plus de justificatif.',
      case when v.status = 'refused' then 'refusée' else 'annulée' end), 'WV210');
  end if;
  v_errors := app_hidden.document_metadata_errors(p_add_documents, 'add_documents');
  if v_errors = '{}'::jsonb and coalesce(jsonb_array_length(nullif(p_add_documents, 'null'::jsonb)), 0) = 0 then
    v_errors := app_hidden.add_error(v_errors, 'add_documents', 'Déposez au moins un fichier (PDF, JPG ou PNG).');
  end if;
  perform app_hidden.raise_errors(v_errors);
  perform app_private.set_audit_verb('Modification');
  update app_public.absences a set version = a.version + 1 where a.id = v.id;
  perform app_private.set_audit_verb('');
  perform app_hidden.absence_documents_insert(v.id, p_add_documents);
  return app_hidden.absence_json(v.id, p_public_url);
end;
$$;
comment on function app_public.absence_add_documents(integer, jsonb, text) is
'SPEC Absences, documents (Permissions rule 5, declaration rule 18): the employee concerned or the
manager perimeter deposits documents (add_documents) on an absence that is neither refused nor
cancelled, for example after a missing-document reminder. Returns the absence.';

-- DELETE /api/absences/<id>/
--   owner: a pending request is withdrawn (row erased, reservation released); any other
--          state answers 400 under status (a granted absence is cancelled on request);
--   decider of the perimeter: "Supprimer l'absence" on a granted absence cancels it (the
--          row stays, cancelled; documents deleted; counters recredited; employee told).
create or replace function app_public.absence_delete(p_id int) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v app_public.absences;
begin
  v := app_hidden.absence_lock(p_id);
  if v.employee_id = app_hidden.current_employee_id() then
    if v.status <> 'pending' then
      perform app_hidden.invalid('status', case v.status
        when 'validated' then 'Seule une demande en attente peut être retirée : une absence accordée ne se supprime pas, demandez son annulation.'
        when 'cancellation_requested' then 'Seule une demande en attente peut être retirée : l''annulation de cette absence est déjà demandée.'
        when 'refused' then 'Seule une demande en attente peut être retirée : une demande refusée reste au dossier.'
        else 'Seule une demande en attente peut être retirée : cette absence est annulée.' end, 'WV210');
    end if;
    delete from app_public.absences a where a.id = v.id;
    perform app_private.absence_sync_counters(v.id, 'withdraw');
    return null;
  end if;

  if v.status = 'pending' then
    perform app_hidden.forbidden(
      'Seul le salarié concerné peut retirer une demande en attente ; pour l''écarter, refusez-la.', 'WF206');
  end if;
  if v.status <> 'validated' then
    perform app_hidden.invalid('status', case v.status
      when 'cancellation_requested' then 'Une demande d''annulation est en cours : accordez-la ou refusez-la.'
      when 'refused' then 'Une demande refusée n''est jamais effacée.'
      else 'Cette absence est déjà annulée.' end, 'WV210');
  end if;
  perform app_hidden.absence_check_decider(v);
  perform app_hidden.absence_check_decider_window(v);
  v := app_hidden.absence_cancel(v, false);
  perform app_private.absence_notify_employee(v, 'Absence annulée',
    format('Votre absence %s a été annulée par %s.', app_hidden.absence_subject(v),
           app_hidden.account_display_name(app_hidden.current_account_id())), 'warning');
  return null;
end;
$$;
comment on function app_public.absence_delete(integer) is
'SPEC Absences, DELETE /api/absences/<id>/ and declaration rule 14: the owner withdraws a pending request
(row erased, counter reservation released; any other state gives 400 under status); a decider of the
perimeter cancels a granted absence (Supprimer l''absence: kept on file as cancelled, documents deleted,
counters recredited, employee notified).';

-- POST /api/absences/<id>/validate/ {version, date_end?, type?, start_time?, end_time?, reason?}
--   pending → validated, with an optional correction (end date, requalification, hours)
--             that reruns every declaration rule; a correction needs a reason;
--   cancellation_requested → cancelled (the cancellation is granted; it is not corrected).
-- Typed arguments, one per key of the body (an absent key is null), except the hours: they
-- stay jsonb because an absent key must be told from a null there. An absent start_time or
-- end_time keeps the stored hour, a JSON null clears it (the rules then refuse an hourly type
-- without hours), and a granted cancellation refuses a correction key sent, null included.
-- date_end and type are not nullable in the route schema: null is "not sent".
drop function if exists app_public.absence_validate(int, jsonb, text);
create or replace function app_public.absence_validate(p_id int, p_version int, p_reason text default null,
                                                      p_date_end date default null, p_type int default null,
                                                      p_start_time jsonb default null, p_end_time jsonb default null,
                                                      p_public_url text default null) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v app_public.absences;
  v_new app_public.absences;
  d app_hidden.absence_draft;
  -- The correction's keys sent (the draft functions tell a key sent from one absent): the
  -- hours when given (a JSON null included), date_end and type when not null.
  v_sent text[] := app_hidden.keys_sent(null, array['date_end', 'type', 'start_time', 'end_time'],
                                        array[p_date_end is not null, p_type is not null, p_start_time is not null,
                                              p_end_time is not null]);
  v_reason text := nullif(btrim(p_reason), '');
  v_today date := app_hidden.today();
  v_corrected boolean;
  v_eval jsonb;
begin
  v := app_hidden.absence_lock(p_id);
  perform app_hidden.absence_check_version(v, p_version, true);
  perform app_hidden.absence_check_decider(v);

  if v.status = 'cancellation_requested' then
    -- The first correction key sent, in the order of v_sent.
    if cardinality(v_sent) > 0 then
      perform app_hidden.invalid(v_sent[1], 'Une annulation ne se corrige pas : accordez-la ou refusez-la.', 'WV212');
    end if;
    perform app_hidden.absence_check_decider_window(v);
    v := app_hidden.absence_cancel(v, true);
    perform app_private.absence_notify_employee(v, 'Annulation d''absence acceptée',
      format('Votre demande d''annulation de l''absence %s a été acceptée : l''absence est annulée.',
             app_hidden.absence_subject(v)), 'info');
    return app_hidden.absence_json(v.id, p_public_url);
  end if;
  if v.status <> 'pending' then
    perform app_hidden.invalid('status', 'Seule une demande en attente peut être décidée.', 'WV210');
  end if;
  perform app_hidden.absence_check_text_length('reason', v_reason);
  -- The route schema's format time-hm, for a GraphQL caller (a JSON value of any kind).
  if not app_hidden.json_time_ok(p_start_time) then
    perform app_hidden.invalid('start_time', app_hidden.time_format_message());
  end if;
  if not app_hidden.json_time_ok(p_end_time) then
    perform app_hidden.invalid('end_time', app_hidden.time_format_message());
  end if;

  d := app_hidden.absence_draft_normalize(
    app_hidden.absence_draft_of(v, v_sent, p_type, null, p_date_end, null, null,
                                (p_start_time #>> '{}')::time, (p_end_time #>> '{}')::time),
    v_sent, v);
  v_corrected := row(d.type_id, d.date_start, d.date_end, d.start_half, d.end_half, d.start_time, d.end_time)
    is distinct from row(v.type_id, v.date_start, v.date_end, v.start_half, v.end_half, v.start_time, v.end_time);
  if v_corrected then
    if v_reason is null then
      perform app_hidden.invalid('reason',
        'Un motif est obligatoire quand la décision corrige la demande (date de fin, motif d''absence ou heures).', 'WV211');
    end if;
    perform app_hidden.absence_lock_employee(v.employee_id);
    v_eval := app_private.absence_evaluate(d, v.id, 'manager',
                                           case when v.author_account_id = app_private.employee_account_id(v.employee_id)
                                                then v.submitted_at end, v_today);
    if v_eval -> 'errors' <> '{}'::jsonb then
      perform app_hidden.invalid_fields(v_eval -> 'errors', 'WV200');
    end if;
  end if;

  perform app_private.set_audit_verb('Validation');
  update app_public.absences a set
    type_id = d.type_id, date_start = d.date_start, date_end = d.date_end, start_half = d.start_half,
    end_half = d.end_half, start_time = d.start_time, end_time = d.end_time,
    counted_quantity = case when v_corrected then (v_eval ->> 'quantity')::numeric else a.counted_quantity end,
    counted_unit = case when v_corrected then v_eval ->> 'unit' else a.counted_unit end,
    warnings = case when v_corrected then v_eval -> 'warnings' else a.warnings end,
    status = 'validated',
    decided_by = app_hidden.current_account_id(),
    decided_at = app_hidden.now(),
    decision_reason = v_reason,
    version = a.version + 1
  where a.id = v.id
  returning * into v_new;
  perform app_private.set_audit_verb('');
  perform app_private.absence_sync_counters(v.id, 'validate', v_today);
  if v_corrected then
    perform app_private.absence_alert_events(v_new, v_eval -> 'events');
  end if;
  perform app_private.absence_notify_employee(v_new, 'Demande d''absence validée',
    case when v_corrected then
      format('Votre demande d''absence %s a été validée avec modification : %s accordé(e) (%s). Motif : %s',
             app_hidden.absence_subject(v), app_hidden.absence_subject(v_new),
             app_hidden.quantity_fr(v_new.counted_quantity, v_new.counted_unit), v_reason)
    else
      format('Votre demande d''absence %s a été validée.', app_hidden.absence_subject(v_new))
      || coalesce(' Motif : ' || v_reason, '')
    end, 'info');
  return app_hidden.absence_json(v.id, p_public_url);
end;
$$;
comment on function app_public.absence_validate(integer, integer, text, date, integer, jsonb, jsonb, text) is
'SPEC Absences, POST /api/absences/<id>/validate/ and declaration rules 10, 11, 15 and 20: with the
current version (else 409), a holder of absences.decide_absence who is not the author validates a
pending absence, optionally correcting end date, type or hours (every declaration rule rerun, a reason
required), or grants a requested cancellation (cancelled, counters recredited). The requester is
notified.';

-- POST /api/absences/<id>/refuse/ {version, reason}
--   pending → refused (the reservation is released; the request stays on file);
--   cancellation_requested → validated (the cancellation is refused; counters unchanged).
drop function if exists app_public.absence_refuse(int, jsonb, text);
create or replace function app_public.absence_refuse(p_id int, p_version int, p_reason text default null,
                                                     p_public_url text default null) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v app_public.absences;
  v_reason text := nullif(btrim(p_reason), '');
begin
  v := app_hidden.absence_lock(p_id);
  perform app_hidden.absence_check_version(v, p_version, true);
  perform app_hidden.absence_check_decider(v);
  if v.status not in ('pending', 'cancellation_requested') then
    perform app_hidden.invalid('status', 'Seule une demande en attente peut être décidée.', 'WV210');
  end if;
  if v_reason is null then
    perform app_hidden.invalid('reason', 'Un refus doit être motivé : indiquez la raison.', 'WV211');
  end if;
  perform app_hidden.absence_check_text_length('reason', v_reason);

  perform app_private.set_audit_verb('Refus');
  if v.status = 'pending' then
    update app_public.absences a set
      status = 'refused', decided_by = app_hidden.current_account_id(), decided_at = app_hidden.now(),
      decision_reason = v_reason, version = a.version + 1
    where a.id = v.id
    returning * into v;
    perform app_private.set_audit_verb('');
    perform app_private.absence_sync_counters(v.id, 'refuse');
    perform app_private.absence_notify_employee(v, 'Demande d''absence refusée',
      format('Votre demande d''absence %s a été refusée. Motif : %s', app_hidden.absence_subject(v), v_reason), 'error');
  else
    update app_public.absences a set
      status = 'validated', cancellation_decided_at = app_hidden.now(),
      cancellation_decided_by = app_hidden.current_account_id(), cancellation_decision_reason = v_reason,
      version = a.version + 1
    where a.id = v.id
    returning * into v;
    perform app_private.set_audit_verb('');
    perform app_private.absence_notify_employee(v, 'Annulation d''absence refusée',
      format('Votre demande d''annulation de l''absence %s a été refusée : l''absence est maintenue. Motif : %s',
             app_hidden.absence_subject(v), v_reason), 'error');
  end if;
  return app_hidden.absence_json(v.id, p_public_url);
end;
$$;
comment on function app_public.absence_refuse(integer, integer, text, text) is
'SPEC Absences, POST /api/absences/<id>/refuse/: with the current version (else 409) and a non-empty
reason, a holder of absences.decide_absence refuses a pending absence (reservation released, the request
stays on file) or a requested cancellation (the absence stays validated, counters unchanged). The
requester is notified.';

-- POST /api/absences/<id>/request-cancellation/ {comment?, version?}: the owner of a
-- granted absence starting no earlier than app_hidden.employee_retroactivity_limit asks for
-- its cancellation. It stays drawn and counted until a decider grants it; the deciders are
-- notified.
drop function if exists app_public.absence_request_cancellation(int, jsonb, text);
create or replace function app_public.absence_request_cancellation(p_id int, p_version int default null,
                                                                   p_comment text default null,
                                                                   p_public_url text default null)
returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v app_public.absences;
  v_limit date := app_hidden.employee_retroactivity_limit(app_hidden.today());
  v_comment text := nullif(btrim(p_comment), '');
begin
  v := app_hidden.absence_lock(p_id);
  if v.employee_id is distinct from app_hidden.current_employee_id() then
    perform app_hidden.forbidden('Seul le salarié concerné peut demander l''annulation de son absence.', 'WF205');
  end if;
  perform app_hidden.absence_check_version(v, p_version, false);
  if v.status <> 'validated' then
    perform app_hidden.invalid('status', case v.status
      when 'cancellation_requested' then 'L''annulation de cette absence est déjà demandée.'
      when 'pending' then 'Seule une absence accordée peut faire l''objet d''une demande d''annulation : retirez plutôt votre demande en attente.'
      else 'Seule une absence accordée peut faire l''objet d''une demande d''annulation.' end, 'WV210');
  end if;
  if v.date_start < v_limit then
    perform app_hidden.invalid('date_start', format(
      'L''annulation ne peut plus être demandée : l''absence a commencé avant le %s (%s jours au plus).',
      app_hidden.fr_date(v_limit), app_hidden.retroactivity_days()), 'WV214');
  end if;

  perform app_hidden.absence_check_text_length('comment', v_comment);
  perform app_private.set_audit_verb('Demande d''annulation');
  update app_public.absences a set
    status = 'cancellation_requested', cancellation_comment = v_comment,
    cancellation_requested_at = app_hidden.now(), cancellation_decided_at = null, cancellation_decided_by = null,
    cancellation_decision_reason = null, version = a.version + 1
  where a.id = v.id
  returning * into v;
  perform app_private.set_audit_verb('');
  perform app_private.notify_deciders(v.employee_id, v.date_start, 'absences.decide_absence',
    app_hidden.current_account_id(), 'Demande d''annulation d''absence',
    format('%s demande l''annulation de son absence %s.', app_hidden.employee_name(v.employee_id),
           app_hidden.absence_subject(v)) || coalesce(' Commentaire : ' || v.cancellation_comment, ''),
    'absence', v.id);
  return app_hidden.absence_json(v.id, p_public_url);
end;
$$;
comment on function app_public.absence_request_cancellation(integer, integer, text, text) is
'SPEC Absences, POST /api/absences/<id>/request-cancellation/ and declaration rule 15: the owner of a
granted absence starting no earlier than the employee retroactivity limit (SPEC Limits) asks for its
cancellation; it stays drawn in the planning and counted until a decider rules, and the deciders are
notified.';
--! EndIncluded absences/api.sql
--! Included delegations/api.sql
-- Dated delegations of decisions (issue 30): rules, decisions by delegation, routes.
--
-- | who                                    | creates                        | ends                 | reads         |
-- |----------------------------------------|--------------------------------|----------------------|---------------|
-- | a decider (decide_absence or           | for themself, own rights only  | their own            | given, received|
-- |   decide_shift_change held itself)     |                                |                      |               |
-- | RH n1 / RH n2 / Admin (own role), or a | for an absent decider of their | those of deciders of | those of their|
-- |                                        | perimeter (granted absence over| their perimeter      | perimeter     |
-- |                                        | the interval)                  |                      |               |
-- |   superuser                            |                                |                      |               |
-- | the delegate                           | never re-delegates (no chains) | no                   | received      |
--
-- The delegate's effective perimeter is extended in sql/perimeter.sql (account_permission_codes,
-- permission_scopes); the decisions by delegation are checked and recorded here
-- (on_behalf_of, audit « X, par délégation de Y », the requester's notification).

alter table app_public.absences add column if not exists on_behalf_of int references app_public.accounts on delete set null;
alter table app_public.absences add column if not exists cancellation_on_behalf_of int
  references app_public.accounts on delete set null;
alter table app_public.shift_change_requests add column if not exists on_behalf_of int
  references app_public.accounts on delete set null;

insert into app_private.audit_models (model, label) values
  ('delegation', 'Délégation de décision'),
  ('delegation_establishment', 'Établissement d''une délégation')
on conflict do nothing;

-- The perimeters kept for a transaction are recomputed after a write to the delegations.
do $$
declare
  t text;
begin
  foreach t in array array['delegations', 'delegation_establishments'] loop
    execute format('create or replace trigger _050_perimeter_changed after insert or update or delete or truncate on app_public.%I
                    for each statement execute function app_hidden.tg__perimeter_changed()', t);
  end loop;
end;
$$;

-- Does the account manage the delegations of others: an active RH n1, RH n2 or Admin role of
-- its own today (the Admin holds every right of RH), or an active superuser? Never NULL.
create or replace function app_hidden.account_is_hr(p_account int) returns boolean
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  return coalesce(exists (select 1 from app_public.accounts a where a.id = p_account and a.is_active and a.is_superuser)
                  or exists (select 1 from app_public.role_attributions ra
                             join app_public.roles r on r.id = ra.role_id
                             join app_public.accounts a on a.id = ra.account_id and a.is_active
                             where ra.account_id = p_account and r.name in ('Admin', 'RH n1', 'RH n2')
                               and app_hidden.date_in(app_hidden.today(), ra.start_date, ra.end_date)), false);
end;
$$;

-- The back-office's « Délégations » page is offered to the signed-in account when it is HR (never null).
create or replace function app_hidden.current_account_is_hr() returns boolean
language sql stable as $$
  select coalesce(app_hidden.account_is_hr(app_hidden.current_account_id()), false);
$$;


-- The delegators on whose behalf the account may use the permission on the employee at that
-- time: delegations in force handing the permission, whose delegator (active) covers the
-- employee itself over the delegation's establishments, the delegator's own requests
-- excluded (nobody decides for the person who delegated to them). Ordered by delegator id.
create or replace function app_hidden.delegators_for(p_account int, p_permission text, p_employee int, p_at timestamptz)
returns setof int
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_day date := app_hidden.business_date(p_at);
begin
  if p_employee is null or p_account is null then
    return;
  end if;
  return query
  select distinct d.delegator_account_id
  from app_public.delegations d
  join app_public.accounts da on da.id = d.delegator_account_id and da.is_active
  where d.delegate_account_id = p_account
    and app_hidden.delegation_active(d.start_date, d.end_date, d.ended_at, p_at)
    and app_hidden.delegation_grants(d.kinds, p_permission)
    and da.employee_id is distinct from p_employee
    and app_hidden.may_own(d.delegator_account_id, p_permission, p_employee, p_at)
    and (d.all_establishments
         or exists (select 1 from app_public.delegation_establishments de
                    where de.delegation_id = d.id
                      and de.establishment_id in (select app_hidden.employee_establishments(p_employee, v_day))))
  order by 1;
end;
$$;

-- A decision by the acting account on the employee: null when its own rights cover it, else
-- the delegator it decides for (the first); refuses (403) a decision that only a delegation
-- from the employee themself would allow. Sets app.on_behalf_of for the transaction (the audit
-- lines and the requester's notification name both people).
create or replace function app_hidden.delegation_decision_check(p_permission text, p_employee int) returns int
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_account int := app_hidden.current_account_id();
  v_at timestamptz := app_hidden.now();
  v_delegator int;
begin
  if app_hidden.may_own(v_account, p_permission, p_employee, v_at) then
    return null;
  end if;
  select x into v_delegator from app_hidden.delegators_for(v_account, p_permission, p_employee, v_at) x limit 1;
  if v_delegator is null then
    -- No delegation covers it: the caller's other checks decided (the back-office, a
    -- superuser); only a delegation from the employee themself is refused here.
    if not exists (select 1 from app_public.delegations d
                   join app_public.accounts da on da.id = d.delegator_account_id
                   where d.delegate_account_id = v_account and da.employee_id = p_employee
                     and app_hidden.delegation_active(d.start_date, d.end_date, d.ended_at, v_at)
                     and app_hidden.delegation_grants(d.kinds, p_permission)) then
      return null;
    end if;
    perform app_hidden.forbidden(
      'Vous décidez ici par délégation : une délégation ne permet pas de décider des demandes de la personne qui l''a donnée.',
      'WF803');
  end if;
  perform set_config('app.on_behalf_of', v_delegator::text, true);
  return v_delegator;
end;
$$;

create or replace function app_hidden.on_behalf_of_id() returns int
language sql stable parallel safe as $$
  select nullif(current_setting('app.on_behalf_of', true), '')::int;
$$;

-- Decisions record both names: decided_by (the delegate) and on_behalf_of (the delegator).
create or replace function app_private.tg_absences__on_behalf_of() returns trigger
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  if new.decided_by is distinct from old.decided_by and new.decided_by is not null
     and new.decided_by = app_hidden.current_account_id() then
    new.on_behalf_of := app_hidden.delegation_decision_check('absences.decide_absence', new.employee_id);
  end if;
  if new.cancellation_decided_by is not null
     and new.cancellation_decided_at is distinct from old.cancellation_decided_at
     and new.cancellation_decided_by = app_hidden.current_account_id() then
    new.cancellation_on_behalf_of := app_hidden.delegation_decision_check('absences.decide_absence', new.employee_id);
  end if;
  return new;
end;
$$;
create or replace trigger _200_on_behalf_of before update on app_public.absences
  for each row execute function app_private.tg_absences__on_behalf_of();

create or replace function app_private.tg_shift_change_requests__on_behalf_of() returns trigger
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  if new.decided_by is distinct from old.decided_by and new.decided_by is not null
     and new.decided_by = app_hidden.current_account_id() then
    new.on_behalf_of := app_hidden.delegation_decision_check('planning.decide_shift_change', new.employee_id);
  end if;
  return new;
end;
$$;
create or replace trigger _200_on_behalf_of before update on app_public.shift_change_requests
  for each row execute function app_private.tg_shift_change_requests__on_behalf_of();

-- The queue's mark (issue 30, « par délégation de X »): does the acting account hold a
-- delegation in force now (one check per list, app_hidden.current_account_has_delegation), and
-- the delegator through whom it sees this employee's requests: null when its own queue shows
-- them (or when it holds no delegation).
create or replace function app_hidden.current_account_has_delegation() returns boolean
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  return coalesce(exists (select 1 from app_public.delegations d
                          where d.delegate_account_id = app_hidden.current_account_id()
                            and app_hidden.delegation_active(d.start_date, d.end_date, d.ended_at, app_hidden.now())), false);
end;
$$;

create or replace function app_hidden.delegation_mark(p_employee int) returns text
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_account int := app_hidden.current_account_id();
  v_at timestamptz := app_hidden.now();
begin
  if p_employee is null or v_account is null
     or app_hidden.may_own(v_account, 'absences.view_absence_queue', p_employee, v_at) then
    return null;
  end if;
  return (select n.name
          from app_public.delegations d
          join app_public.accounts da on da.id = d.delegator_account_id and da.is_active
          join app_hidden.account_names(array[d.delegator_account_id]) n on true
          where d.delegate_account_id = v_account
            and app_hidden.delegation_active(d.start_date, d.end_date, d.ended_at, v_at)
            and app_hidden.may_own(d.delegator_account_id, 'absences.view_absence_queue', p_employee, v_at)
            and (d.all_establishments
                 or exists (select 1 from app_public.delegation_establishments de
                            where de.delegation_id = d.id
                              and de.establishment_id in (select app_hidden.employee_establishments(p_employee,
                                                                                                   app_hidden.business_date(v_at)))))
          order by d.delegator_account_id
          limit 1);
end;
$$;

-- « X, par délégation de Y »: the display name of an account deciding for another.
create or replace function app_hidden.delegated_name(p_account int, p_on_behalf_of int) returns text
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select concat((select n.name from app_hidden.account_names(array[p_account]) n),
                ', par délégation de ', (select n.name from app_hidden.account_names(array[p_on_behalf_of]) n));
$$;

-- The requester's notification of a decision by delegation names both people.
create or replace function app_private.tg_notifications__on_behalf_of() returns trigger
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_for int := app_hidden.on_behalf_of_id();
begin
  if v_for is not null and new.model in ('absence', 'shift_change_request')
     and app_hidden.current_account_id() is not null then
    new.body := new.body || ' Décision de ' || app_hidden.delegated_name(app_hidden.current_account_id(), v_for) || '.';
  end if;
  return new;
end;
$$;
create or replace trigger _200_on_behalf_of before insert on app_public.notifications
  for each row execute function app_private.tg_notifications__on_behalf_of();

-- ---------------------------------------------------------------------------------------
-- Reading: the delegator, the delegate, the author, and RH over the delegator's perimeter.
create or replace function app_hidden.readable_delegation_ids() returns setof int
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_account int := app_hidden.current_account_id();
begin
  if v_account is null then
    return;
  end if;
  return query
  select d.id from app_public.delegations d
  where d.delegator_account_id = v_account or d.delegate_account_id = v_account or d.created_by = v_account
  union
  select d.id from app_public.delegations d
  join app_public.accounts a on a.id = d.delegator_account_id
  where app_hidden.account_is_hr(v_account)
    and app_hidden.may(v_account, 'employee.change_employee_record', a.employee_id);
end;
$$;

alter table app_public.delegations enable row level security;
alter table app_public.delegation_establishments enable row level security;
drop policy if exists select_readable on app_public.delegations;
create policy select_readable on app_public.delegations for select to wfm_visitor, wfm_api
  using ((select app_hidden.current_account_id()) in (delegator_account_id, delegate_account_id, created_by)
         or id in (select app_hidden.readable_delegation_ids()));
drop policy if exists select_readable on app_public.delegation_establishments;
create policy select_readable on app_public.delegation_establishments for select to wfm_visitor, wfm_api
  using (delegation_id in (select app_hidden.readable_delegation_ids()));
-- Writes: app_public.delegation_create and delegation_end (which check every rule) run as
-- wfm_api; the policies bound them to the author's own delegations or, for RH, those of the
-- deciders of their perimeter.
drop policy if exists insert_author on app_public.delegations;
create policy insert_author on app_public.delegations for insert to wfm_api
  with check (created_by = (select app_hidden.current_account_id())
              and (delegator_account_id = (select app_hidden.current_account_id())
                   or (select app_hidden.account_is_hr(app_hidden.current_account_id()))));
drop policy if exists update_readable on app_public.delegations;
create policy update_readable on app_public.delegations for update to wfm_api
  using (id in (select app_hidden.readable_delegation_ids()))
  with check (id in (select app_hidden.readable_delegation_ids()));
drop policy if exists insert_author on app_public.delegation_establishments;
create policy insert_author on app_public.delegation_establishments for insert to wfm_api
  with check (exists (select 1 from app_public.delegations d
                      where d.id = delegation_id and d.created_by = (select app_hidden.current_account_id())));

create or replace trigger _500_audit after insert or update on app_public.delegations
  for each row execute function app_private.tg__audit('delegation');
create or replace trigger _500_audit_delete before delete on app_public.delegations
  for each row execute function app_private.tg__audit('delegation');
create or replace trigger _500_audit after insert or update on app_public.delegation_establishments
  for each row execute function app_private.tg__audit_child('delegation_establishment', 'delegation_id');
create or replace trigger _500_audit_delete before delete on app_public.delegation_establishments
  for each row execute function app_private.tg__audit_child('delegation_establishment', 'delegation_id');

create or replace function app_hidden.delegations_json(p_ids int[]) returns table (id int, doc jsonb)
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  with est as (
    select de.delegation_id, jsonb_agg(de.establishment_id order by de.establishment_id) as ids,
           jsonb_agg(e.name order by de.establishment_id) as names
    from app_public.delegation_establishments de
    join app_public.establishments e on e.id = de.establishment_id
    where de.delegation_id = any (p_ids)
    group by de.delegation_id
  ),
  names as (
    select * from app_hidden.account_names(array(
      select x from app_public.delegations d,
             unnest(array[d.delegator_account_id, d.delegate_account_id, d.created_by, d.ended_by]) x
      where d.id = any (p_ids) and x is not null))
  )
  select d.id,
         jsonb_build_object('id', d.id,
                            'delegator', d.delegator_account_id, 'delegator_name', n1.name,
                            'delegate', d.delegate_account_id, 'delegate_name', n2.name,
                            'start_date', d.start_date, 'end_date', d.end_date, 'kinds', d.kinds,
                            'all_establishments', d.all_establishments,
                            'establishments', coalesce(est.ids, '[]'::jsonb),
                            'establishment_names', coalesce(est.names, '[]'::jsonb),
                            'comment', d.comment,
                            'created_by', d.created_by, 'created_by_name', n3.name, 'created_at', d.created_at,
                            'ended_at', d.ended_at, 'ended_by', d.ended_by, 'ended_by_name', n4.name,
                            'is_active', app_hidden.delegation_active(d.start_date, d.end_date, d.ended_at, app_hidden.now()),
                            'is_over', d.ended_at is not null or d.end_date < app_hidden.today())
  from app_public.delegations d
  left join est on est.delegation_id = d.id
  left join names n1 on n1.id = d.delegator_account_id
  left join names n2 on n2.id = d.delegate_account_id
  left join names n3 on n3.id = d.created_by
  left join names n4 on n4.id = d.ended_by
  where d.id = any (p_ids);
$$;

-- The decision permissions the delegator holds itself, among those of the kinds.
create or replace function app_hidden.kinds_permissions(p_kinds text) returns text[]
language sql immutable parallel safe as $$
  select case p_kinds when 'absences' then array['absences.decide_absence']
                      when 'shift_changes' then array['planning.decide_shift_change']
                      when 'both' then array['absences.decide_absence', 'planning.decide_shift_change']
                      else '{}'::text[] end;
$$;

-- POST /api/delegations/ {delegate, start_date, end_date, kinds, establishments?, delegator?, comment?}
create or replace function app_public.delegation_create(p_delegate int, p_start_date date, p_end_date date,
                                                        p_kinds text, p_establishments int[] default null,
                                                        p_delegator int default null, p_comment text default null)
returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_account int := app_hidden.current_account_id();
  v_delegator int := coalesce(p_delegator, app_hidden.current_account_id());
  v_today date := app_hidden.today();
  v_own text[];
  v_errors jsonb := '{}';
  v_delegator_employee int;
  v_perm text;
  v_scope_whole boolean;
  v_scope_ids int[];
  v_outside text;
  v_id int;
  v_comment text := nullif(btrim(p_comment), '');
begin
  if v_account is null then
    perform app_hidden.forbidden('Connectez-vous pour déléguer vos décisions.', 'WF801');
  end if;
  v_own := app_hidden.account_own_permission_codes(v_delegator);
  if v_delegator = v_account then
    if not (app_hidden.permission_in(v_own, 'absences.decide_absence')
            or app_hidden.permission_in(v_own, 'planning.decide_shift_change')) then
      if app_hidden.current_account_has('absences.decide_absence')
         or app_hidden.current_account_has('planning.decide_shift_change') then
        perform app_hidden.forbidden('Une délégation reçue ne se délègue pas : seul le titulaire des décisions peut déléguer.', 'WF802');
      end if;
      perform app_hidden.forbidden('Seul un compte qui décide des absences ou des modifications de journée délègue ses décisions.', 'WF801');
    end if;
  else
    if not app_hidden.account_is_hr(v_account) then
      perform app_hidden.forbidden('Seuls RH n1, RH n2 et Admin créent une délégation pour un autre décideur.', 'WF801');
    end if;
    select a.employee_id into v_delegator_employee from app_public.accounts a where a.id = v_delegator and a.is_active;
    if not found then
      perform app_hidden.invalid('delegator', 'Décideur introuvable ou compte fermé.', 'WV801');
    end if;
    if not app_hidden.may(v_account, 'employee.change_employee_record', v_delegator_employee) then
      perform app_hidden.invalid('delegator', 'Ce décideur est hors de votre périmètre.', 'WV801');
    end if;
    if not (app_hidden.permission_in(v_own, 'absences.decide_absence')
            or app_hidden.permission_in(v_own, 'planning.decide_shift_change')) then
      perform app_hidden.invalid('delegator', 'Ce compte ne décide ni des absences ni des modifications de journée.', 'WV801');
    end if;
    if p_start_date is not null and p_end_date is not null
       and not exists (select 1 from app_public.absences ab
                       where ab.employee_id = v_delegator_employee
                         and ab.status in ('validated', 'cancellation_requested')
                         and ab.date_start <= p_end_date and ab.date_end >= p_start_date) then
      perform app_hidden.invalid('delegator',
        'Ce décideur n''a pas d''absence accordée sur ces dates : c''est à lui de créer sa délégation.', 'WV801');
    end if;
  end if;

  if p_kinds is null or p_kinds not in ('absences', 'shift_changes', 'both') then
    v_errors := app_hidden.add_error(v_errors, 'kinds', 'Choisissez : absences, modifications de journée, ou les deux.');
  elsif not (app_hidden.permission_in(v_own, 'absences.decide_absence') or p_kinds = 'shift_changes')
        or not (app_hidden.permission_in(v_own, 'planning.decide_shift_change') or p_kinds = 'absences') then
    v_errors := app_hidden.add_error(v_errors, 'kinds', 'On ne délègue que les décisions que l''on prend soi-même.');
  end if;
  if p_start_date is null then
    v_errors := app_hidden.add_error(v_errors, 'start_date', 'Indiquez la date de début.');
  end if;
  if p_end_date is null then
    v_errors := app_hidden.add_error(v_errors, 'end_date', 'Indiquez la date de fin.');
  elsif p_start_date is not null and p_end_date < p_start_date then
    v_errors := app_hidden.add_error(v_errors, 'end_date', 'La date de fin précède la date de début.');
  elsif p_end_date < v_today then
    v_errors := app_hidden.add_error(v_errors, 'end_date', 'Une délégation ne se crée pas dans le passé.');
  elsif p_start_date is not null and p_end_date - p_start_date > 365 then
    v_errors := app_hidden.add_error(v_errors, 'end_date', 'Une délégation dure au plus un an.');
  end if;
  if p_delegate is null then
    v_errors := app_hidden.add_error(v_errors, 'delegate', 'Choisissez le délégataire.');
  elsif not exists (select 1 from app_public.accounts a where a.id = p_delegate and a.is_active) then
    v_errors := app_hidden.add_error(v_errors, 'delegate', 'Délégataire introuvable ou compte fermé.');
  elsif p_delegate = v_delegator then
    v_errors := app_hidden.add_error(v_errors, 'delegate', 'On ne se délègue pas ses propres décisions.');
  end if;
  if char_length(v_comment) > app_hidden.comment_max_length() then
    v_errors := app_hidden.add_error(v_errors, 'comment', app_hidden.max_length_message(app_hidden.comment_max_length()));
  end if;
  -- Establishments: within the delegator's own scope of every decision delegated.
  if cardinality(p_establishments) > 0 and p_kinds in ('absences', 'shift_changes', 'both') then
    if exists (select 1 from unnest(p_establishments) x where x is null
               or not exists (select 1 from app_public.establishments e where e.id = x)) then
      v_errors := app_hidden.add_error(v_errors, 'establishments', 'Établissement introuvable.');
    else
      foreach v_perm in array app_hidden.kinds_permissions(p_kinds) loop
        select s.whole, s.establishment_ids into v_scope_whole, v_scope_ids
        from app_hidden.own_permission_scopes(array[v_delegator], v_perm, app_hidden.now()) s;
        if not coalesce(v_scope_whole, false) then
          select string_agg(e.name, ', ' order by e.name) into v_outside
          from app_public.establishments e
          where e.id = any (p_establishments) and not e.id = any (coalesce(v_scope_ids, '{}'));
          if v_outside is not null then
            v_errors := app_hidden.add_error(v_errors, 'establishments',
              format('Hors du périmètre de décision du délégant : %s.', v_outside));
            exit;
          end if;
        end if;
      end loop;
    end if;
  end if;
  if v_errors <> '{}'::jsonb then
    perform app_hidden.invalid_fields(v_errors, 'WV802');
  end if;

  insert into app_public.delegations (delegator_account_id, delegate_account_id, start_date, end_date,
                                      all_establishments, kinds, comment, created_by)
  values (v_delegator, p_delegate, p_start_date, p_end_date, coalesce(cardinality(p_establishments), 0) = 0,
          p_kinds, v_comment, v_account)
  returning id into v_id;
  insert into app_public.delegation_establishments (delegation_id, establishment_id)
  select distinct v_id, x from unnest(coalesce(p_establishments, '{}')) x;
  return (select j.doc from app_hidden.delegations_json(array[v_id]) j);
end;
$$;
comment on function app_public.delegation_create(integer, date, date, text, integer[], integer, text) is
'Issue 30, POST /api/delegations/: a decider delegates its own decisions (absences, day changes or both)
to another active account over a date interval, for all or some establishments of its own perimeter;
RH n1 / RH n2 / Admin (or a superuser) create one for an absent decider of their perimeter (a granted absence over the interval).
A delegation received is never delegated again. Audited.';

-- POST /api/delegations/<id>/end/: ends a delegation now (the delegator, its author, or RH
-- over the delegator's perimeter).
create or replace function app_public.delegation_end(p_id int) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_account int := app_hidden.current_account_id();
  d app_public.delegations;
begin
  if p_id is null or p_id not in (select app_hidden.readable_delegation_ids()) then
    perform app_hidden.not_found('Délégation introuvable.', 'WN801');
  end if;
  select * into d from app_public.delegations x where x.id = p_id for update;
  if not (d.delegator_account_id = v_account or d.created_by is not distinct from v_account and v_account is not null
          or (app_hidden.account_is_hr(v_account)
              and app_hidden.may(v_account, 'employee.change_employee_record',
                                 (select a.employee_id from app_public.accounts a where a.id = d.delegator_account_id)))) then
    perform app_hidden.forbidden('Seuls le délégant, l''auteur de la délégation ou RH y mettent fin.', 'WF804');
  end if;
  if d.ended_at is not null or d.end_date < app_hidden.today() then
    perform app_hidden.invalid('status', 'Cette délégation est déjà terminée.', 'WV803');
  end if;
  update app_public.delegations x set ended_at = app_hidden.now(), ended_by = v_account, updated_at = app_hidden.now()
  where x.id = p_id;
  return (select j.doc from app_hidden.delegations_json(array[p_id]) j);
end;
$$;
comment on function app_public.delegation_end(integer) is
'Issue 30, POST /api/delegations/<id>/end/: ends a delegation at once (the delegator, its author, or RH over
the delegator''s perimeter); an ended or past delegation gives 400 under status. Audited.';

-- GET /api/delegations/?role=given|received&active=&account=&page=&page_size=
create or replace function app_public.delegations_list(p_role text default null, p_active boolean default null,
                                                       p_account int default null,
                                                       p_page int default 1, p_page_size int default 50)
returns jsonb
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_account int := app_hidden.current_account_id();
begin
  if p_role is not null and p_role not in ('given', 'received') then
    perform app_hidden.invalid('role', 'Valeurs possibles : given, received.', 'WV804');
  end if;
  return (
    with filtered as (
      select d.id, d.start_date from app_public.delegations d
      where d.id in (select app_hidden.readable_delegation_ids())
        and (p_role is null or (p_role = 'given' and d.delegator_account_id = v_account)
             or (p_role = 'received' and d.delegate_account_id = v_account))
        and (p_active is null
             or p_active = app_hidden.delegation_active(d.start_date, d.end_date, d.ended_at, app_hidden.now()))
        and (p_account is null or p_account in (d.delegator_account_id, d.delegate_account_id))
    ),
    page as (
      select f.id, row_number() over (order by f.start_date desc, f.id desc) as ord
      from filtered f order by ord limit app_hidden.page_limit(p_page_size) offset app_hidden.page_offset(p_page, p_page_size)
    )
    select jsonb_build_object(
      'count', (select count(*) from filtered),
      'results', coalesce((select jsonb_agg(j.doc order by p.ord)
                           from page p join app_hidden.delegations_json(array(select pg.id from page pg)) j on j.id = p.id),
                          '[]'::jsonb)));
end;
$$;
comment on function app_public.delegations_list(text, boolean, integer, integer, integer) is
'Issue 30, GET /api/delegations/: one page of the delegations the caller reads (given, received, authored;
RH and Admin: those of the deciders of their perimeter), newest first; filters role (given / received), active,
account (delegator or delegate).';

-- The back-office page of one delegation (sql text of src/backoffice/resources/delegations.ts):
-- one the caller reads, else 404.
create or replace function app_public.delegation_get(p_id int) returns jsonb
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_doc jsonb;
begin
  if p_id is not null and p_id in (select app_hidden.readable_delegation_ids()) then
    select j.doc into v_doc from app_hidden.delegations_json(array[p_id]) j;
  end if;
  if v_doc is null then
    perform app_hidden.not_found('Délégation introuvable.', 'WN801');
  end if;
  return v_doc;
end;
$$;
comment on function app_public.delegation_get(integer) is
'Issue 30, back-office: one delegation the caller reads (given, received, authored; RH and Admin: those of
the deciders of their perimeter), else 404.';
--! EndIncluded delegations/api.sql
--! Included delegations/routing.sql
-- Routing of a filing with delegations and presence (issue 30, point 3). Hooked in
-- app_private.route_deciders (sql/notifications/functions.sql), which returns this function's
-- accounts: every notification of a filing or a cancellation request goes through it.
--
-- From the deciders of app_private.decider_candidates (SPEC Events, Notifications: the
-- attached ones first, the unattached when nobody attached qualifies):
--   * a decider is "away" when its own granted absence (validated, or its cancellation
--     requested) covers the day of the filing (today);
--   * the delegates of a decider are those of its delegations in force today that hand over
--     the decision and cover the employee (all establishments, or one of the employee's), the
--     author and the employee themself excluded, active accounts only;
--   * a group (the attached, else the unattached) is kept when some of its deciders is present
--     or has a delegate: its present deciders, its away deciders with a delegate, and those
--     delegates; an away decider without a delegate is skipped;
--   * when every decider of both groups is away without a delegate, the plain SPEC routing
--     stands (they are told; somebody reads it on return).
create or replace function app_private.route_filing_with_delegations(p_employee_id int, p_on date,
                                                                     p_decide_permission text,
                                                                     p_author_account_id int)
returns setof int
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_at timestamptz := app_hidden.now();
  v_today date := app_hidden.business_date(v_at);
  v_attached boolean;
  v_result int[];
begin
  for v_attached in select x from unnest(array[true, false]) x loop
    with c as (
      select dc.account_id,
             exists (select 1 from app_public.accounts a
                     join app_public.absences ab on ab.employee_id = a.employee_id
                     where a.id = dc.account_id
                       and ab.status in ('validated', 'cancellation_requested')
                       and ab.date_start <= v_today and ab.date_end >= v_today) as away
      from app_private.decider_candidates(p_employee_id, p_on, p_decide_permission, p_author_account_id) dc
      where dc.attached = v_attached
    ),
    delegates as (
      select c.account_id as delegator, d.delegate_account_id as delegate
      from c
      join app_public.delegations d on d.delegator_account_id = c.account_id
      join app_public.accounts da on da.id = d.delegate_account_id and da.is_active
      where app_hidden.delegation_active(d.start_date, d.end_date, d.ended_at, v_at)
        and app_hidden.delegation_grants(d.kinds, p_decide_permission)
        and d.delegate_account_id is distinct from p_author_account_id
        and da.employee_id is distinct from p_employee_id
        and (d.all_establishments
             or exists (select 1 from app_public.delegation_establishments de
                        where de.delegation_id = d.id
                          and de.establishment_id in (select app_hidden.employee_establishments(p_employee_id, v_today))))
    )
    select array(select c.account_id from c
                 where not c.away or exists (select 1 from delegates x where x.delegator = c.account_id)
                 union
                 select x.delegate from delegates x
                 order by 1)
      into v_result;
    if cardinality(v_result) > 0 then
      return query select unnest(v_result);
      return;
    end if;
  end loop;
  -- Everybody away without a delegate: the plain routing (attached, else unattached).
  return query
    with candidates as (
      select * from app_private.decider_candidates(p_employee_id, p_on, p_decide_permission, p_author_account_id)
    )
    select c.account_id from candidates c
    where c.attached = exists (select 1 from candidates x where x.attached)
    order by c.account_id;
end;
$$;
--! EndIncluded delegations/routing.sql
--! Included guards.sql
-- Guards are true or false, never NULL.
--
-- `if not app_hidden.x(...) then refuse` lets the caller through when x answers NULL (NOT NULL
-- is NULL, and `if NULL` does not run its branch). A helper that a guard or a policy negates
-- is therefore declared here, and a declared helper is under proof:
--   * test/db/61-guards-never-null.sql calls every declared helper as every kind of caller (no
--     account, accounts of each role without an employee record, an employee without a main
--     workplace, closed accounts) with every mix of NULL and ordinary arguments, and fails on a
--     NULL answer;
--   * the same file reads the catalogue (sources of the plpgsql and sql functions of app_public,
--     app_hidden and app_private, and the expressions of pg_policies) and fails when
--     `not <schema>.<helper>(` names a helper that is not declared here.
-- Declaring is one row: the signature as `regprocedure` prints it, and why the helper cannot
-- answer NULL. See docs/architecture.md, "Guards are never NULL".
create table if not exists app_private.never_null_guards (
  helper text primary key check (helper ~ '^app_(public|hidden|private)\.[a-z_]+\(.*\)$'),
  why text not null check (btrim(why) <> '')
);
alter table app_private.never_null_guards enable row level security;

insert into app_private.never_null_guards (helper, why) values
  ('app_hidden.permission_in(text[],text)', 'coalesce(..., false)'),
  ('app_hidden.account_has_permission(integer,text,timestamp with time zone)', 'permission_in'),
  ('app_hidden.current_account_has(text)', 'permission_in'),
  ('app_hidden.may(integer,text,integer,timestamp with time zone)', 'false for a NULL employee; exists otherwise'),
  ('app_hidden.perimeter_is_whole(text)', 'coalesce(..., false)'),
  ('app_hidden.is_current_employee(integer)', 'coalesce(p_employee = current_employee_id(), false)'),
  ('app_hidden.date_in(date,date,date)', 'coalesce(..., false)'),
  ('app_hidden.current_account_is_staff()', 'exists'),
  ('app_hidden.current_account_is_superuser()', 'coalesce(..., false)'),
  ('app_hidden.account_has_backoffice_access(integer,timestamp with time zone)', 'exists'),
  ('app_hidden.current_account_reads_audit_log()', 'conjunction of never-NULL terms'),
  ('app_hidden.account_rights_covered(integer)', 'true, false, or not exists (...)'),
  ('app_hidden.account_in_role_reach(integer)', 'false for a NULL or unknown account; else true or a never-NULL helper'),
  ('app_hidden.can_read_document_file(integer)', 'disjunction of never-NULL helpers'),
  ('app_hidden.can_deposit_honorability(integer)', 'disjunction of never-NULL helpers'),
  ('app_hidden.in_scope(integer,integer[])', 'coalesce(... = any (scope), false)'),
  ('app_hidden.event_establishment_allowed(integer)', 'in_scope'),
  ('app_hidden.json_bool_ok(jsonb)', 'is null or jsonb_typeof in (...)'),
  ('app_hidden.json_id_ok(jsonb)', 'is null or ... and ...: every term is known'),
  ('app_hidden.json_time_ok(jsonb)', 'is null or ... and ...: every term is known'),
  ('app_hidden.same_slots(app_public.slot[],app_public.slot[])', 'array equality of two arrays built by array(...)'),
  ('app_private.counter_code_has_reason(text,integer,integer)', 'exists'),
  ('app_private.job_is_due(text,timestamp with time zone)', 'coalesce(..., false)'),
  ('app_private.holds_hr_permission(integer)', 'coalesce(exists ... or exists ..., false)'),
  ('app_hidden.current_account_is_verified_superuser()', 'coalesce(is_superuser, false) and coalesce(setting, '''') = ''on'''),
  ('app_hidden.may_write_counter(integer)', 'current_account_is_staff() or coalesce(may(...), false)'),
  ('app_hidden.may_decide_absence_of(integer)', 'coalesce(may(...) and is_current_employee(...) is false, false)'),
  ('app_hidden.calendar_feed_allowed(text)', 'coalesce(case ... end, false)'),
  ('app_hidden.sent(text[],text,boolean)', 'case of two coalesce(..., false)'),
  ('app_hidden.account_is_hr(integer)', 'coalesce(exists ..., false)'),
  ('app_hidden.may_own(integer,text,integer,timestamp with time zone)', 'false for a NULL account or employee; exists otherwise'),
  ('app_hidden.delegation_grants(text,text)', 'coalesce(case ... end, false)'),
  ('app_hidden.delegation_active(date,date,timestamp with time zone,timestamp with time zone)', 'coalesce(..., false)')
on conflict (helper) do update set why = excluded.why;
--! EndIncluded guards.sql
--! Included finalize.sql
-- Last file of sql/ORDER, included by every migration that changes sql/ (npm run db:current):
-- grants, ownership of API functions, RLS check.

grant select on all tables in schema app_public to wfm_visitor;
grant select, insert, update, delete on all tables in schema app_public to wfm_api;
grant usage on all sequences in schema app_public to wfm_api;
grant usage on schema app_private to wfm_api;
grant execute on all functions in schema app_public to wfm_visitor, wfm_api;
grant execute on all functions in schema app_hidden to wfm_visitor, wfm_api;
grant execute on all functions in schema app_private to wfm_api;
grant execute on function app_private.begin_request(int, int, int), app_private.begin_request_or_fail(int, int, boolean, int, text),
  app_private.login_lookup(text), app_private.set_client_address(text),
  app_private.record_login(int), app_private.password_reset_request(text),
  app_private.password_token_check(text), app_private.password_reset_confirm(text, text),
  app_private.rate_limit_hit(text, int, interval), app_private.rate_limit_hit_or_fail(text, int, interval)
  to wfm_authenticator;
-- Login throttling (sql/auth/rate_limits.sql): the API and back-office logins, as the authenticator.
grant execute on function app_private.login_throttle(text, text, text, int, int, interval),
  app_private.login_failed(text, text, text, interval, interval), app_private.login_succeeded(text, text, text)
  to wfm_authenticator;

-- API functions that are security definer run as wfm_api, which does not own the tables:
-- row-level security applies to them exactly as to the visitor.
do $$
declare
  f record;
begin
  for f in
    select p.oid::regprocedure as signature
    from pg_proc p join pg_namespace n on n.oid = p.pronamespace
    where n.nspname = 'app_public' and p.prosecdef and p.proowner <> 'wfm_api'::regrole
  loop
    execute format('alter function %s owner to wfm_api', f.signature);
  end loop;
end;
$$;

-- Every table has row-level security enabled; a migration that forgets it fails here.
do $$
declare
  t record;
begin
  for t in
    select c.oid::regclass as rel
    from pg_class c join pg_namespace n on n.oid = c.relnamespace
    where n.nspname in ('app_public', 'app_private', 'app_hidden') and c.relkind in ('r', 'p')
      and not c.relrowsecurity
  loop
    raise exception 'Table % has no row-level security enabled', t.rel;
  end loop;
end;
$$;
--! EndIncluded finalize.sql
