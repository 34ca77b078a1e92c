--! Previous: sha1:fc0ebffa9e4863fe09025cdb167d96857a551594
--! Hash: sha1:be54f61baec79dd512c8d2770c1e7c2b4036e655
--! Message: Review: permission rule and perimeter memo written once

-- Written by `npm run db:current` from sql/ORDER: edit sql/, never this file, and run it again.
-- The sql/ files changed since the last committed migration (migrations/sql-state.json), in list order.

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

-- The permissions an account may use at a time (no perimeter involved): its explicit ones and
-- those of its role attributions active on that day; '*' alone for a superuser, who holds them
-- all; none for an inactive or unknown account. Never NULL.
create or replace function app_hidden.account_permission_codes(p_account int, p_at timestamptz default null)
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
create or replace function app_hidden.permission_scopes(p_accounts int[], p_permission text, p_at timestamptz)
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
--! EndIncluded perimeter.sql
--! Included absences/policies.sql
-- Absences: the employee reads their own; queue readers read their perimeter; payroll
-- readers read the absences of the people they pay (the payroll routes show no comment,
-- decision reason or document). /api/absences/ narrows this to own + queue perimeter
-- (app_hidden.absence_api_reader_ids, SPEC Permissions rule 3).
create or replace function app_hidden.absence_reader_employee_ids() returns setof int
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp rows 200 as $$
begin
  return query
    select app_hidden.current_employee_id() where app_hidden.current_employee_id() is not null
    union
    select app_hidden.perimeter_employee_ids('absences.view_absence_queue')
    union
    select app_hidden.perimeter_employee_ids('employee.view_payroll');
end;
$$;

-- Who may write an absence row at all (the API functions apply the finer rules): the
-- employee on their own record, the manager workspace on its queue perimeter.
create or replace function app_hidden.absence_writer_employee_ids() returns setof int
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp rows 200 as $$
begin
  return query
    select app_hidden.current_employee_id() where app_hidden.current_employee_id() is not null
    union
    select app_hidden.perimeter_employee_ids('absences.view_absence_queue');
end;
$$;

-- The employees whose absences the acting account reads, as one array kept for the
-- transaction (null: every employee, a reader of the whole association). The select policy
-- asks it in every statement that reads absences (three in a creation), so a repeated ask is one
-- lookup in a transaction-local setting, keyed like the memo of sql/perimeter.sql (account,
-- employee record, instant, generation of the perimeter tables); plain plpgsql, neither
-- security definer nor SET, so that a repeated ask costs no context switch (docs/architecture.md,
-- Performance notes). An account holding neither permission (most employees) reads its own
-- record only: one existence test instead of two perimeter scopes.
create or replace function app_hidden.absence_readers() returns int[]
language plpgsql stable as $$
declare
  v_account int := app_hidden.current_account_id();
  v_key text := pg_catalog.concat(v_account, '|', pg_catalog.current_setting('app.employee_id', true), '|',
                                  app_hidden.now(), '|', app_hidden.perimeter_generation(), '|');
  v_memo text := app_hidden.memo_read('app.memo_absence_readers', v_key);
  v_readers int[];
begin
  if v_memo is not null then
    return case when v_memo = 'W' then null else v_memo::int[] end;
  end if;
  if not (app_hidden.current_account_has('absences.view_absence_queue')
          or app_hidden.current_account_has('employee.view_payroll')) then
    v_readers := array(select x from (select app_hidden.current_employee_id()) e(x) where x is not null);
  elsif app_hidden.perimeter_is_whole('absences.view_absence_queue')
        or app_hidden.perimeter_is_whole('employee.view_payroll') then
    v_readers := null;
  else
    v_readers := array(select app_hidden.absence_reader_employee_ids());
  end if;
  perform pg_catalog.set_config('app.memo_absence_readers', v_key || coalesce(v_readers::text, 'W'), true);
  return v_readers;
end;
$$;

alter table app_public.absences enable row level security;
-- (A reader of the whole association needs no list: the init plan answers for every row.)
drop policy if exists select_own_or_perimeter on app_public.absences;
create policy select_own_or_perimeter on app_public.absences for select to wfm_visitor, wfm_api
  using ((select app_hidden.absence_readers() is null)
         or employee_id in (select unnest(app_hidden.absence_readers())));
-- Filing: for oneself, or a declaration inside the decision perimeter.
drop policy if exists insert_own_or_decider on app_public.absences;
create policy insert_own_or_decider on app_public.absences for insert to wfm_api
  with check (employee_id = (select app_hidden.current_employee_id())
              or employee_id in (select app_hidden.perimeter_employee_ids('absences.decide_absence')));
drop policy if exists update_own_or_perimeter on app_public.absences;
create policy update_own_or_perimeter on app_public.absences for update to wfm_api
  using (employee_id in (select app_hidden.absence_writer_employee_ids()))
  with check (employee_id in (select app_hidden.absence_writer_employee_ids()));
-- Only the owner withdraws (a pending request; the guard trigger refuses any other state).
drop policy if exists delete_own on app_public.absences;
create policy delete_own on app_public.absences for delete to wfm_api
  using (employee_id = (select app_hidden.current_employee_id()));

-- Correlated: each document looks up its absence (primary key, the absence's own policy
-- applies), where "absence_id in (select a.id from absences)" hashed every readable absence
-- (100 000 for a whole-association reader) for each statement that touched documents.
alter table app_public.absence_documents enable row level security;
drop policy if exists select_visible_absence on app_public.absence_documents;
create policy select_visible_absence on app_public.absence_documents for select to wfm_visitor, wfm_api
  using (exists (select 1 from app_public.absences a where a.id = absence_documents.absence_id));
-- Depositing is open to the owner and to the manager perimeter without the read right.
drop policy if exists insert_writer on app_public.absence_documents;
create policy insert_writer on app_public.absence_documents for insert to wfm_api
  with check (exists (select 1 from app_public.absences a
                      where a.id = absence_documents.absence_id
                        and a.employee_id in (select app_hidden.absence_writer_employee_ids())));
-- Removing needs the right to correct the absence (issue 11): the decision perimeter. (A
-- withdrawal by the owner erases the absence; its documents go by the foreign key's cascade.)
drop policy if exists delete_writer on app_public.absence_documents;
create policy delete_writer on app_public.absence_documents for delete to wfm_api
  using (exists (select 1 from app_public.absences a
                 where a.id = absence_documents.absence_id
                   and a.employee_id in (select app_hidden.perimeter_employee_ids('absences.decide_absence'))));

alter table app_public.honorability_certificates enable row level security;
drop policy if exists select_own_or_directory on app_public.honorability_certificates;
create policy select_own_or_directory on app_public.honorability_certificates for select to wfm_visitor, wfm_api
  using ((select app_hidden.current_account_has('employee.view_employee_directory'))
         or employee_id in (select app_hidden.readable_employee_ids()));
create or replace function app_hidden.honorability_writer_employee_ids() returns setof int
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select app_hidden.current_employee_id() where app_hidden.current_employee_id() is not null
  union
  select app_hidden.perimeter_employee_ids('absences.view_absence_queue')
  union
  select app_hidden.perimeter_employee_ids('employee.change_employee_record');
$$;
drop policy if exists insert_writer on app_public.honorability_certificates;
create policy insert_writer on app_public.honorability_certificates for insert to wfm_api
  with check (employee_id in (select app_hidden.honorability_writer_employee_ids()));
drop policy if exists update_writer on app_public.honorability_certificates;
create policy update_writer on app_public.honorability_certificates for update to wfm_api
  using (employee_id in (select app_hidden.honorability_writer_employee_ids()))
  with check (employee_id in (select app_hidden.honorability_writer_employee_ids()));
drop policy if exists delete_writer on app_public.honorability_certificates;
create policy delete_writer on app_public.honorability_certificates for delete to wfm_api
  using (employee_id in (select app_hidden.honorability_writer_employee_ids()));

alter table app_private.storage_garbage enable row level security;
--! EndIncluded absences/policies.sql
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
  ('app_hidden.calendar_feed_allowed(text)', 'coalesce(case ... end, false)')
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
grant execute on function app_private.begin_request(int, int), app_private.begin_request_or_fail(int, int, boolean),
  app_private.login_lookup(text),
  app_private.record_login(int), app_private.password_reset_request(text),
  app_private.password_token_check(text), app_private.password_reset_confirm(text, text),
  app_private.rate_limit_hit(text, int, interval), app_private.rate_limit_hit_or_fail(text, int, interval)
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
