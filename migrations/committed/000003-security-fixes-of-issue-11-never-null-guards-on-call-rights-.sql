--! Previous: sha1:fb728fd2fa7cabb9a00b34b32790d22a78fe469e
--! Hash: sha1:b5e03cda06fdca9b93919ba20723b79b28fa54b8
--! Message: Security fixes of issue 11 (never-NULL guards, on-call rights, document removal, contact e-mail, event participants, 404 outside the perimeter, GraphQL surface) and the back-office (sessions and second factor, audit and day-change searches)

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

create or replace function app_hidden.current_employee_id() returns int
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  return coalesce(
    nullif(current_setting('app.employee_id', true), '')::int,
    (select a.employee_id from app_public.accounts a where a.id = app_hidden.current_account_id()));
end;
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

-- May this account use this permission at all at that time? (No perimeter involved.)
create or replace function app_hidden.account_has_permission(p_account int, p_permission text, p_at timestamptz default null)
returns boolean
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  return exists (
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
end;
$$;

create or replace function app_hidden.current_account_has(p_permission text) returns boolean
language sql stable as $$
  select app_hidden.account_has_permission(app_hidden.current_account_id(), p_permission);
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
-- statement (plpgsql: its plan is prepared once per session, not at each call).
-- force_generic_plan: planned once per connection; left to choose, plpgsql re-planned this
-- query at every call (its custom plans were estimated cheaper), longer than it runs.
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

-- Memo of the perimeters within a transaction. One request asks for the same scopes and
-- perimeters many times (a validation: 21 scopes and 12 perimeter lists, through the
-- policies of every table it reads and writes); each is kept in a transaction-local setting,
-- keyed by account, instant and a generation that every write to a table they are computed
-- from advances (statement triggers below), so a transaction that changes roles, attributions,
-- workplaces, teams or on-call periods recomputes them.
create or replace function app_hidden.perimeter_generation() returns text
language sql stable parallel safe as $$
  select coalesce(nullif(current_setting('app.perimeter_generation', true), ''), '0');
$$;

create or replace function app_hidden.tg_perimeter_changed() returns trigger
language plpgsql as $$
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
                    for each statement execute function app_hidden.tg_perimeter_changed()', t);
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
  v_key text := concat(p_account, '|', p_at, '|', app_hidden.perimeter_generation(), '|');
  v_memo text := current_setting(v_name, true);
  v_whole boolean;
  v_ids int[];
begin
  if left(v_memo, length(v_key)) = v_key then
    v_memo := substr(v_memo, length(v_key) + 1);
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
-- The perimeter helpers that run in every request are plpgsql: their plans are prepared
-- once per connection, where a security definer SQL function is planned at each call.
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
  v_key text := concat(v_account, '|', v_at, '|', app_hidden.perimeter_generation(), '|');
  v_memo text := current_setting(v_name, true);
  v_whole boolean;
  v_ids int[];
  v_list int[];
begin
  if left(v_memo, length(v_key)) = v_key then
    return query select unnest(substr(v_memo, length(v_key) + 1)::int[]);
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

alter table app_public.absences enable row level security;
-- (A reader of the whole association needs no list: the init plan answers for every row.)
drop policy if exists select_own_or_perimeter on app_public.absences;
create policy select_own_or_perimeter on app_public.absences for select to wfm_visitor, wfm_api
  using ((select app_hidden.perimeter_is_whole('absences.view_absence_queue')
                 or app_hidden.perimeter_is_whole('employee.view_payroll'))
         or employee_id in (select app_hidden.absence_reader_employee_ids()));
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
--! Included auth/functions.sql
-- Authentication support. Password hashing (argon2id) happens in the HTTP layer; the
-- database only stores and hands back hashes, and never sees a clear password.

-- Display name of an account: the employee's name, else the username.
create or replace function app_hidden.account_display_name(p_account int) returns text
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select coalesce(e.first_name || ' ' || e.last_name, a.username)
  from app_public.accounts a
  left join app_public.employees e on e.id = a.employee_id
  where a.id = p_account;
$$;

-- Start of every authenticated request (called by the authenticator before switching to
-- the visitor role): reloads the account, refuses an inactive one (null), and records the
-- acting account for the transaction.
create or replace function app_private.begin_request(p_account_id int, p_impersonator_id int default null) returns jsonb
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
    perform set_config('app.impersonator_id', p_impersonator_id::text, true);
  end if;
  perform set_config('app.account_id', v_account.id::text, true);
  perform set_config('app.employee_id', coalesce(v_account.employee_id::text, ''), true);
  return jsonb_build_object('id', v_account.id, 'username', v_account.username,
                            'employee_id', v_account.employee_id, 'is_staff', v_account.is_staff,
                            'is_superuser', v_account.is_superuser);
end;
$$;

-- The same, for a prelude sent in one round trip with the call and the commit behind it
-- (src/db/transaction.ts runRequestCall): an inactive or unknown account is an error, which
-- aborts the transaction, so that the call behind it does nothing and the commit rolls back.
create or replace function app_private.begin_request_or_fail(p_account_id int, p_impersonator_id int default null) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_account jsonb := app_private.begin_request(p_account_id, p_impersonator_id);
begin
  if v_account is null then
    raise exception using errcode = 'WA001', message = 'Compte inactif ou inconnu.';
  end if;
  return v_account;
end;
$$;

-- Login: the stored hash of an active account (case-insensitive username).
create or replace function app_private.login_lookup(p_username text)
returns table (account_id int, password_hash text, is_active boolean)
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select a.id, s.password_hash, a.is_active
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
begin
  update app_private.password_tokens t set used_at = app_hidden.now()
  from app_public.accounts a
  where a.id = t.account_id and a.is_active
    and t.token_hash = public.digest(coalesce(p_token, ''), 'sha256')
    and t.used_at is null and t.expires_at > app_hidden.now()
  returning t.account_id into v_account_id;
  if v_account_id is null then
    perform app_hidden.invalid('token', 'Ce lien n''est plus valide : il a expiré ou a déjà servi. Demandez un nouveau lien.', 'WV030');
  end if;
  update app_private.password_tokens set used_at = app_hidden.now()
  where account_id = v_account_id and used_at is null;
  insert into app_private.account_secrets (account_id, password_hash, password_changed_at)
  values (v_account_id, p_password_hash, app_hidden.now())
  on conflict (account_id) do update set password_hash = excluded.password_hash,
                                         password_changed_at = excluded.password_changed_at;
end;
$$;

-- GET /api/auth/me/
create or replace function app_public.me() returns jsonb
language sql stable as $$
  select jsonb_build_object(
           'id', a.id,
           'username', a.username,
           'employee_id', a.employee_id,
           'can_view_absence_queue', app_hidden.current_account_has('absences.view_absence_queue'),
           'can_decide_absences', app_hidden.current_account_has('absences.decide_absence'),
           'can_decide_shift_changes', app_hidden.current_account_has('planning.decide_shift_change'),
           'can_view_payroll', app_hidden.current_account_has('employee.view_payroll'))
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
--     for each row execute function app_private.tg_audit('<model>');
--   create trigger _500_audit_delete before delete on <table>
--     for each row execute function app_private.tg_audit('<model>');
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
declare
  v_actor int := app_hidden.current_account_id();
  v_impersonator int := nullif(current_setting('app.impersonator_id', true), '')::int;
begin
  insert into app_private.audit_log (actor_account_id, actor_username, actor_display_name,
                                     impersonator_account_id, impersonator_username, impersonator_display_name,
                                     verb, model, target_id, before, after)
  values (v_actor,
          (select a.username from app_public.accounts a where a.id = v_actor),
          app_hidden.account_display_name(v_actor),
          v_impersonator,
          (select a.username from app_public.accounts a where a.id = v_impersonator),
          app_hidden.account_display_name(v_impersonator),
          p_verb, p_model, p_target_id, p_before, p_after);
end;
$$;

create or replace function app_private.tg_audit() returns trigger
language plpgsql security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_model text := tg_argv[0];
  v_old jsonb;
  v_new jsonb;
  v_verb text;
begin
  if v_model is null then
    raise exception 'tg_audit on %.%: the model is missing (tg_audit(''<model>''))', tg_table_schema, tg_table_name;
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
      raise exception 'tg_audit on %.%: a deletion is audited by a BEFORE DELETE trigger', tg_table_schema, tg_table_name;
    end if;
    v_old := to_jsonb(old);
    perform app_private.write_audit('Suppression', v_model, (v_old ->> 'id')::bigint, v_old, null);
    return old;
  end if;
  raise exception 'tg_audit: % is not audited', tg_op;
end;
$$;

-- The log is append-only: lines are never changed, and only the retention purge deletes them.
create or replace function app_private.tg_audit_log_append_only() returns trigger
language plpgsql as $$
begin
  if tg_op = 'DELETE' and current_setting('app.audit_purge', true) = 'on' then
    return old;
  end if;
  raise exception using errcode = 'WF901',
    message = 'Le journal d''audit est en ajout seul : ses lignes ne se modifient pas et ne sont supprimées que par la purge de rétention.';
end;
$$;
create or replace trigger _200_append_only before update or delete on app_private.audit_log
  for each row execute function app_private.tg_audit_log_append_only();
create or replace function app_private.tg_audit_log_no_truncate() returns trigger
language plpgsql as $$
begin
  raise exception using errcode = 'WF901',
    message = 'Le journal d''audit est en ajout seul : il ne se vide pas.';
end;
$$;
create or replace trigger _200_no_truncate before truncate on app_private.audit_log
  for each statement execute function app_private.tg_audit_log_no_truncate();

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
     and app_hidden.account_has_permission(app_hidden.current_account_id(), 'audit.view_actionlog')
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
--! Included audit/policies.sql
-- The audit log lives in app_private: no request role reads it directly. The API function
-- app_public.audit_log_search (sql/backoffice/audit.sql) runs as wfm_api, which reads it through this policy only when
-- the acting account holds audit.view_actionlog with back-office access (whole association).
alter table app_private.audit_log enable row level security;
grant select on app_private.audit_log to wfm_api;
drop policy if exists read_with_permission on app_private.audit_log;
create policy read_with_permission on app_private.audit_log for select to wfm_api
  using ((select app_hidden.current_account_reads_audit_log()));

alter table app_private.audit_models enable row level security;
grant select on app_private.audit_models to wfm_api;
drop policy if exists select_all on app_private.audit_models;
create policy select_all on app_private.audit_models for select to wfm_api using (true);
--! EndIncluded audit/policies.sql
--! Included shift_change/functions.sql
-- Day-change requests (/api/shift-change-requests/): filing, reading, withdrawal, the two
-- decisions and the back-office correction. One function per route and per transition;
-- each runs as wfm_api under row-level security (outside the perimeter = not found).

insert into app_private.settings (key, value, description) values
  ('shift_change_notice_days', '7', 'Délai de prévenance d''une modification de journée, en jours (avertissement au détail)')
on conflict (key) do nothing;

-- The records of a set of requests, built in one statement (requester's name, reason label,
-- slots with their posts, names of the decider and of the corrector).
-- force_generic_plan: planned once per connection; left to choose, plpgsql re-planned this
-- query at every call (its custom plans were estimated cheaper), longer than it runs.
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
             array(select x from req, unnest(array[req.decided_by, req.corrected_by]) x where x is not null)) n
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
-- Body: date, reason, comment?, is_remote?, is_offsite?, slots? (employee is ignored: the
-- request is always on the caller's own record). Returns the record with has_recipient.
create or replace function app_public.shift_change_create(p_body jsonb) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_account int := app_hidden.current_account_id();
  v_employee int := app_hidden.current_employee_id();
  v_today date := app_hidden.today();
  v_body jsonb := coalesce(p_body, '{}'::jsonb);
  v_errors jsonb := '{}';
  v_date date;
  v_reason text;
  v_comment text;
  v_remote boolean;
  v_offsite boolean;
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
  if jsonb_typeof(v_body) <> 'object' then
    perform app_hidden.invalid(null, 'Un objet JSON est attendu.');
  end if;

  if v_body -> 'date' is null or jsonb_typeof(v_body -> 'date') = 'null' then
    v_errors := app_hidden.add_error(v_errors, 'date', 'Ce champ est obligatoire.');
  elsif jsonb_typeof(v_body -> 'date') <> 'string' or (v_body ->> 'date') !~ '^\d{4}-\d{2}-\d{2}$' then
    v_errors := app_hidden.add_error(v_errors, 'date', 'Date invalide : format attendu AAAA-MM-JJ.');
  else
    begin
      v_date := (v_body ->> 'date')::date;
    exception when others then
      v_errors := app_hidden.add_error(v_errors, 'date', 'Date invalide : ce jour n''existe pas.');
    end;
  end if;

  if v_body -> 'reason' is null or jsonb_typeof(v_body -> 'reason') = 'null' or btrim(v_body ->> 'reason') = '' then
    v_errors := app_hidden.add_error(v_errors, 'reason', 'Ce champ est obligatoire.');
  elsif jsonb_typeof(v_body -> 'reason') <> 'string'
        or not exists (select 1 from app_public.shift_change_reasons r where r.code = v_body ->> 'reason') then
    v_errors := app_hidden.add_error(v_errors, 'reason',
      'Motif inconnu. Valeurs possibles : '
      || (select string_agg(r.code, ', ' order by r.position) from app_public.shift_change_reasons r) || '.');
  else
    v_reason := v_body ->> 'reason';
  end if;

  if v_body -> 'comment' is not null and jsonb_typeof(v_body -> 'comment') not in ('null', 'string') then
    v_errors := app_hidden.add_error(v_errors, 'comment', 'Une chaîne de caractères est attendue.');
  else
    v_comment := nullif(btrim(v_body ->> 'comment'), '');
    if length(v_comment) > 2000 then
      v_errors := app_hidden.add_error(v_errors, 'comment', 'Au plus 2000 caractères.');
    end if;
  end if;

  if not app_hidden.json_bool_ok(v_body -> 'is_remote') then
    v_errors := app_hidden.add_error(v_errors, 'is_remote', 'Un booléen (true ou false) est attendu.');
  end if;
  if not app_hidden.json_bool_ok(v_body -> 'is_offsite') then
    v_errors := app_hidden.add_error(v_errors, 'is_offsite', 'Un booléen (true ou false) est attendu.');
  end if;
  perform app_hidden.raise_errors(v_errors);
  v_remote := coalesce((v_body ->> 'is_remote')::boolean, false);
  v_offsite := coalesce((v_body ->> 'is_offsite')::boolean, false);

  if v_date < v_today - 14 then
    perform app_hidden.invalid('date',
      format('Une demande de modification ne peut pas porter sur un jour antérieur de plus de 14 jours : au plus tôt le %s.',
             app_hidden.fr_date(v_today - 14)), 'WV101');
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
  v_slots := app_hidden.parse_day_slots(v_body -> 'slots', 'slots', v_employee, v_date, v_planned);

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
    format('La demande de modification de %s pour le %s n''a aucun valideur : aucun compte actif ne peut la décider dans le périmètre du salarié.',
           v_name, app_hidden.fr_date(v_date)),
    'shift_change_request', v_id);

  return app_hidden.shift_change_record(v_id) || jsonb_build_object('has_recipient', v_has_recipient);
end;
$$;

-- GET /api/shift-change-requests/<id>/: the record with current_day and warnings.
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
                               'warnings', app_hidden.shift_change_warnings(v));
end;
$$;

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
  if length(v_reason) > 2000 then
    perform app_hidden.invalid('reason', 'Au plus 2000 caractères.');
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
  if length(v_reason) > 2000 then
    perform app_hidden.invalid('reason', 'Au plus 2000 caractères.');
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
--! EndIncluded shift_change/functions.sql
--! Included absences/rules.sql
-- Declaration and write rules of absences (SPEC, Absences, rules 1-17): counting, half-days,
-- hours, overlap, caps, splitting, contract types, counters, retroactivity, agreement
-- warnings and notice periods. One evaluation function serves creation, correction,
-- validation with requalification and preview, so every path applies the same rules.

-- What an absence would be: the fields the rules read.
do $$
begin
  if to_regtype('app_hidden.absence_draft') is null then
    create type app_hidden.absence_draft as (
      employee_id int,
      type_id int,
      date_start date,
      date_end date,
      start_half text,
      end_half text,
      start_time time,
      end_time time
    );
  end if;
end;
$$;

-- Counting base of an employee: the base of the main workplace; none → ouvrables.
create or replace function app_hidden.employee_count_base(p_employee int) returns text
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select coalesce((select es.count_base
                   from app_public.employees e
                   join app_public.establishments es on es.id = e.main_establishment_id
                   where e.id = p_employee), 'ouvrables');
$$;

-- A counted day: not a Sunday, not a public holiday, and not a Saturday on the ouvrés base.
create or replace function app_hidden.is_counted_day(p_day date, p_base text) returns boolean
language sql immutable parallel safe as $$
  select extract(isodow from p_day) <> 7
     and (p_base = 'ouvrables' or extract(isodow from p_day) <> 6)
     and app_hidden.is_public_holiday(p_day) is not true;
$$;

-- Counted days of a period per civil year; a half-day bound counts half (CONTRACT 7:
-- start_half 'afternoon' = the morning of date_start is worked; end_half 'morning' = the
-- afternoon of date_end is worked). A loop, not a query: its cost is known to the planner
-- of the queries that call it (a generate_series of unknown bounds made them look huge).
create or replace function app_hidden.counted_days(p_base text, p_start date, p_end date, p_start_half text, p_end_half text)
returns table (year int, quantity numeric)
language plpgsql immutable parallel safe rows 2 as $$
declare
  v_holidays date[];
  v_day date := p_start;
  v_year int;
begin
  if p_start is null or p_end is null or p_end < p_start then
    return;
  end if;
  select array_agg(h.day) into v_holidays
  from generate_series(extract(year from p_start)::int, extract(year from p_end)::int) y,
       lateral app_public.public_holidays(y) h;
  while v_day <= p_end loop
    if extract(isodow from v_day) <> 7
       and (p_base = 'ouvrables' or extract(isodow from v_day) <> 6)
       and not (v_day = any (v_holidays)) then
      if v_year is distinct from extract(year from v_day)::int then
        if v_year is not null then
          return next;
        end if;
        v_year := extract(year from v_day)::int;
        year := v_year;
        quantity := 0;
      end if;
      quantity := quantity + 1
                  - case when v_day = p_start and p_start_half = 'afternoon' then 0.5 else 0 end
                  - case when v_day = p_end and p_end_half = 'morning' then 0.5 else 0 end;
    end if;
    v_day := v_day + 1;
  end loop;
  if v_year is not null then
    return next;
  end if;
end;
$$;

-- The n-th counted day after p_from (p_from excluded).
create or replace function app_hidden.add_working_days(p_from date, p_n int, p_base text) returns date
language plpgsql immutable parallel safe as $$
declare
  v_day date := p_from;
  v_left int := greatest(p_n, 1);
begin
  loop
    v_day := v_day + 1;
    if app_hidden.is_counted_day(v_day, p_base) then
      v_left := v_left - 1;
      exit when v_left = 0;
    end if;
  end loop;
  return v_day;
end;
$$;

-- Hours between two times of one day, as a decimal with two digits.
create or replace function app_hidden.hours_between(p_start time, p_end time) returns numeric
language sql immutable parallel safe as $$
  select round((extract(epoch from (p_end - p_start)) / 3600)::numeric, 2);
$$;

-- Time covered by an absence (same expression as app_public.absences.period).
create or replace function app_hidden.absence_period(p_start date, p_end date, p_start_half text, p_end_half text,
                                          p_start_time time, p_end_time time) returns tsrange
language sql immutable parallel safe as $$
  select case when p_start_time is not null then
           tsrange(p_start + p_start_time, p_start + p_end_time)
         else
           tsrange(p_start + case when p_start_half = 'afternoon' then time '12:00' else time '00:00' end,
                   (p_end + case when p_end_half = 'morning' then 0 else 1 end)
                     + case when p_end_half = 'morning' then time '12:00' else time '00:00' end)
         end;
$$;

-- Quantity of an absence per civil year: counted days on the employee's base, or hours
-- (an hourly absence lies on one date).
create or replace function app_hidden.absence_shares(p_employee int, p_unit text, p_start date, p_end date,
                                          p_start_half text, p_end_half text,
                                          p_start_time time, p_end_time time)
returns table (year int, quantity numeric)
language sql stable as $$
  select extract(year from p_start)::int, app_hidden.hours_between(p_start_time, p_end_time)
  where p_unit = 'hour' and p_start_time is not null and p_end_time is not null
  union all
  select c.year, c.quantity
  from app_hidden.counted_days(app_hidden.employee_count_base(p_employee), p_start, p_end, p_start_half, p_end_half) c
  where p_unit = 'day';
$$;

-- Texts of messages and notification bodies.
create or replace function app_hidden.quantity_fr(p_quantity numeric, p_unit text) returns text
language sql immutable as $$
  select app_hidden.fmt_quantity(p_quantity) || ' '
         || case when p_unit = 'hour' then case when p_quantity <= 1 then 'heure' else 'heures' end
                 else case when p_quantity <= 1 then 'jour' else 'jours' end end;
$$;

-- 1.5 → "1 h 30"
create or replace function app_hidden.hours_fr(p_hours numeric) returns text
language sql immutable as $$
  select floor(p_hours)::int || ' h ' || lpad(round((p_hours - floor(p_hours)) * 60)::int::text, 2, '0');
$$;

-- '1 month' → "1 mois", '72 hours' → "72 heures", '60 days' → "60 jours", '1 year' → "1 an".
create or replace function app_hidden.interval_fr(p_interval interval) returns text
language sql immutable as $$
  select case
    when extract(year from p_interval) >= 1 and extract(month from p_interval) = 0 and extract(day from p_interval) = 0 then
      extract(year from p_interval)::int || case when extract(year from p_interval) > 1 then ' ans' else ' an' end
    when extract(year from p_interval) * 12 + extract(month from p_interval) > 0 then
      (extract(year from p_interval) * 12 + extract(month from p_interval))::int || ' mois'
    when extract(day from p_interval) > 0 then
      extract(day from p_interval)::int || case when extract(day from p_interval) > 1 then ' jours' else ' jour' end
    else
      (extract(epoch from p_interval) / 3600)::int || ' heures'
  end;
$$;

-- "le 20/11/2026", "le 20/11/2026 (matin)", "le 20/11/2026 de 09:00 à 11:00",
-- "du 20/11/2026 (après-midi) au 24/11/2026".
create or replace function app_hidden.absence_period_fr(p_start date, p_end date, p_start_half text, p_end_half text,
                                             p_start_time time, p_end_time time) returns text
language sql immutable as $$
  select case
    when p_start_time is not null then
      format('le %s de %s à %s', app_hidden.fr_date(p_start), to_char(p_start_time, 'HH24:MI'), to_char(p_end_time, 'HH24:MI'))
    when p_start = p_end then
      'le ' || app_hidden.fr_date(p_start)
      || case when p_start_half = 'afternoon' then ' (après-midi)' when p_end_half = 'morning' then ' (matin)' else '' end
    else
      'du ' || app_hidden.fr_date(p_start) || case when p_start_half = 'afternoon' then ' (après-midi)' else '' end
      || ' au ' || app_hidden.fr_date(p_end) || case when p_end_half = 'morning' then ' (matin)' else '' end
  end;
$$;

-- "l'absence n° 12 (Congés payés, du 20/11/2026 au 24/11/2026)"
create or replace function app_hidden.absence_label(p_absence app_public.absences) returns text
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select format('l''absence n° %s (%s, %s)', p_absence.id, t.name,
                app_hidden.absence_period_fr(p_absence.date_start, p_absence.date_end, p_absence.start_half,
                                             p_absence.end_half, p_absence.start_time, p_absence.end_time))
  from app_public.absence_types t where t.id = p_absence.type_id;
$$;

-- The active statuses: drawn in the planning, counted, overlapping refused.
create or replace function app_hidden.absence_is_active(p_status text) returns boolean
language sql immutable parallel safe as $$
  select p_status in ('pending', 'validated', 'cancellation_requested');
$$;

-- Counters an absence would move: one line per consumable counter associated with the
-- type and per civil year of the period (an absence spanning two years moves each year's
-- counter for its share). counter_id is null when the counter of that year is not open.
-- force_generic_plan: planned once per connection; left to choose, plpgsql re-planned this
-- query at every call (its custom plans were estimated cheaper), longer than it runs.
create or replace function app_private.absence_counter_plan(p_draft app_hidden.absence_draft)
returns table (code text, counter_unit text, type_unit text, year int, quantity numeric, counter_id int)
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp
set plan_cache_mode = force_generic_plan as $$
#variable_conflict use_column
begin
  return query
    select ca.counter_code, k.unit, t.unit, s.year, s.quantity, c.id
    from app_public.absence_types t
    join app_public.counter_associations ca on ca.absence_type_id = t.id and ca.is_active
    join app_public.counter_kinds k on k.code = ca.counter_code and k.is_consumable
    cross join lateral app_hidden.absence_shares(p_draft.employee_id, t.unit, p_draft.date_start, p_draft.date_end,
                                                 p_draft.start_half, p_draft.end_half,
                                                 p_draft.start_time, p_draft.end_time) s
    left join app_public.counters c on c.employee_id = p_draft.employee_id and c.code = ca.counter_code
                                    and c.year = s.year and c.is_active
    where t.id = p_draft.type_id and s.quantity > 0
    order by ca.counter_code, s.year;
end;
$$;

-- Net journal position of absences per counter and bucket (what they hold now).
-- force_generic_plan: planned once per connection; left to choose, plpgsql re-planned this
-- query at every call (its custom plans were estimated cheaper), longer than it runs.
create or replace function app_private.absence_counter_nets(p_absence_ids int[])
returns table (absence_id int, counter_id int, code text, year int, bucket text, quantity numeric)
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp
set plan_cache_mode = force_generic_plan as $$
#variable_conflict use_column
begin
  return query
    select m.absence_id, c.id, c.code, c.year::int, m.bucket, sum(m.quantity)::numeric(8,2)
    from app_private.counter_movements m
    join app_public.counters c on c.id = m.counter_id
    where m.absence_id = any (p_absence_ids)
    group by m.absence_id, c.id, c.code, c.year, m.bucket
    having sum(m.quantity) <> 0
    order by m.absence_id, c.code, c.year, m.bucket;
end;
$$;

-- The draft of a body (creation) or of a stored absence corrected by a body: a key present
-- in the body wins (null included), an absent key keeps the stored value.
create or replace function app_hidden.absence_draft_of(p_body jsonb, p_base app_public.absences default null)
returns app_hidden.absence_draft
language plpgsql stable as $$
declare
  d app_hidden.absence_draft;
begin
  d.employee_id := case when p_body ? 'employee' then (p_body ->> 'employee')::int else p_base.employee_id end;
  d.type_id := case when p_body ? 'type' then (p_body ->> 'type')::int else p_base.type_id end;
  d.date_start := case when p_body ? 'date_start' then (p_body ->> 'date_start')::date else p_base.date_start end;
  d.date_end := case when p_body ? 'date_end' then (p_body ->> 'date_end')::date else p_base.date_end end;
  d.start_half := case when p_body ? 'start_half' then p_body ->> 'start_half' else p_base.start_half end;
  d.end_half := case when p_body ? 'end_half' then p_body ->> 'end_half' else p_base.end_half end;
  d.start_time := case when p_body ? 'start_time' then (p_body ->> 'start_time')::time else p_base.start_time end;
  d.end_time := case when p_body ? 'end_time' then (p_body ->> 'end_time')::time else p_base.end_time end;
  -- A creation without date_end lies on one date (hourly types, single days).
  if p_base.id is null and d.date_end is null then
    d.date_end := d.date_start;
  end if;
  return d;
end;
$$;

-- After a requalification or an adjustment, fields the new type cannot carry are dropped
-- unless the body names them (then the rules refuse them): an hourly type has no half-day,
-- a day type has no hours, and a whole-day type is taken whole ("an adjustment must take
-- it whole"). An unchanged absence keeps what it has (a half-day stored before the rule
-- stays as it is).
create or replace function app_hidden.absence_draft_normalize(p_draft app_hidden.absence_draft, p_body jsonb,
                                                   p_base app_public.absences)
returns app_hidden.absence_draft
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  d app_hidden.absence_draft := p_draft;
  v_type app_public.absence_types;
  v_adjusted boolean;
begin
  select * into v_type from app_public.absence_types t where t.id = d.type_id;
  if not found then
    return d;
  end if;
  v_adjusted := p_base.id is null
    or d.type_id is distinct from p_base.type_id
    or d.date_start is distinct from p_base.date_start
    or d.date_end is distinct from p_base.date_end;
  if not v_adjusted then
    return d;
  end if;
  if v_type.unit = 'hour' then
    if not p_body ? 'start_half' then d.start_half := null; end if;
    if not p_body ? 'end_half' then d.end_half := null; end if;
  else
    if not p_body ? 'start_time' then d.start_time := null; end if;
    if not p_body ? 'end_time' then d.end_time := null; end if;
    if not v_type.half_day_allowed then
      if not p_body ? 'start_half' then d.start_half := null; end if;
      if not p_body ? 'end_half' then d.end_half := null; end if;
    end if;
  end if;
  return d;
end;
$$;

-- Events of the employee that the period meets: [{id, title, start_at, end_at}].
create or replace function app_private.absence_event_conflicts(p_employee int, p_period tsrange) returns jsonb
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select coalesce(jsonb_agg(jsonb_build_object('id', e.id, 'title', e.title, 'start_at', e.start_at, 'end_at', e.end_at)
                            order by e.start_at, e.id), '[]'::jsonb)
  from app_public.event_participants p
  join app_public.events e on e.id = p.event_id
  where p.employee_id = p_employee
    and tstzrange(e.start_at, e.end_at)
        && tstzrange(lower(p_period) at time zone app_hidden.business_timezone(),
                     upper(p_period) at time zone app_hidden.business_timezone());
$$;

-- "du 20/11/2026 14:00 au 20/11/2026 16:00" for an event.
create or replace function app_hidden.event_period_fr(p_start timestamptz, p_end timestamptz) returns text
language sql stable as $$
  select format('du %s %s au %s %s',
                app_hidden.fr_date(app_hidden.business_date(p_start)),
                to_char(p_start at time zone app_hidden.business_timezone(), 'HH24:MI'),
                app_hidden.fr_date(app_hidden.business_date(p_end)),
                to_char(p_end at time zone app_hidden.business_timezone(), 'HH24:MI'));
$$;

/*
 * Evaluates a draft against every declaration rule. Returns
 *   {"quantity": numeric|null, "unit": "day"|"hour"|null, "errors": {field: [msg]},
 *    "warnings": [msg], "plan": [{"counter_id", "code", "year", "quantity"}],
 *    "events": [{"id", "title", "start_at", "end_at"}]}
 * quantity is null when a rule refuses the absence (a counters error alone keeps it).
 *   p_exclude_id : the absence itself (edit, preview of a row, validation): excluded from
 *                  overlap, caps and splitting, and its own counter position is available.
 *   p_retro      : 'employee' (today - 14 days), 'manager' (1 December of the previous
 *                  year) or null (no retroactivity rule).
 *   p_notice_from: submission time of an employee's own request (notice periods), or null.
 *   p_today      : the business date.
 */
create or replace function app_private.absence_evaluate(p_draft app_hidden.absence_draft, p_exclude_id int, p_retro text,
                                             p_notice_from timestamptz, p_today date)
returns jsonb
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  d app_hidden.absence_draft := p_draft;
  v_errors jsonb := '{}'::jsonb;
  v_warnings jsonb := '[]'::jsonb;
  v_plan jsonb := '[]'::jsonb;
  v_events jsonb := '[]'::jsonb;
  v_type app_public.absence_types;
  v_employee app_public.employees;
  v_has_type boolean := false;
  v_has_employee boolean := false;
  v_base text;
  v_quantity numeric;
  v_period tsrange;
  v_limit date;
  v_contract record;
  v_total numeric;
  v_available numeric;
  v_notice interval;
  v_start_at timestamptz;
  v_count int;
  v_other app_public.absences;
  r record;
  s record;
begin
  -- Who and what.
  if d.employee_id is null then
    v_errors := app_hidden.add_error(v_errors, 'employee', 'Ce champ est obligatoire.');
  else
    select * into v_employee from app_public.employees e where e.id = d.employee_id;
    if found then
      v_has_employee := true;
    else
      v_errors := app_hidden.add_error(v_errors, 'employee', 'Salarié introuvable.');
    end if;
  end if;
  if d.type_id is null then
    v_errors := app_hidden.add_error(v_errors, 'type', 'Ce champ est obligatoire.');
  else
    select * into v_type from app_public.absence_types t where t.id = d.type_id and t.is_active;
    if found then
      v_has_type := true;
    else
      v_errors := app_hidden.add_error(v_errors, 'type', 'Motif d''absence inconnu ou inactif.');
    end if;
  end if;

  -- Period, half-days and hours (rules 2, 4, 5).
  if d.date_start is null then
    v_errors := app_hidden.add_error(v_errors, 'date_start', 'Ce champ est obligatoire.');
  end if;
  if d.date_end is null then
    d.date_end := d.date_start;
  end if;
  if d.date_start not between date '2000-01-01' and date '2100-12-31' then
    v_errors := app_hidden.add_error(v_errors, 'date_start', 'Date hors de la plage acceptée (années 2000 à 2100).');
  end if;
  if d.date_end not between date '2000-01-01' and date '2100-12-31' then
    v_errors := app_hidden.add_error(v_errors, 'date_end', 'Date hors de la plage acceptée (années 2000 à 2100).');
  end if;
  if d.date_start is not null and d.date_end < d.date_start then
    v_errors := app_hidden.add_error(v_errors, 'date_end', 'La date de fin ne peut pas précéder la date de début.');
  elsif d.date_end - d.date_start > 1096 then
    -- The longest leaves (parental leave, renewed) last three years; beyond is an input error.
    v_errors := app_hidden.add_error(v_errors, 'date_end',
      'Une absence ne peut pas dépasser trois ans : déposez des périodes successives.');
  end if;
  if d.start_half is not null and d.start_half not in ('morning', 'afternoon') then
    v_errors := app_hidden.add_error(v_errors, 'start_half', 'Valeurs possibles : morning, afternoon ou null.');
  end if;
  if d.end_half is not null and d.end_half not in ('morning', 'afternoon') then
    v_errors := app_hidden.add_error(v_errors, 'end_half', 'Valeurs possibles : morning, afternoon ou null.');
  end if;
  if v_has_type and d.date_start is not null then
    if v_type.unit = 'hour' then
      if d.start_half is not null or d.end_half is not null then
        v_errors := app_hidden.add_error(v_errors, 'start_half',
          format('Le motif « %s » se pose en heures : pas de demi-journée.', v_type.name));
      end if;
      if d.start_time is null or d.end_time is null then
        v_errors := app_hidden.add_error(v_errors, 'start_time',
          'Un motif en heures demande une heure de début et une heure de fin.');
      elsif d.end_time <= d.start_time then
        v_errors := app_hidden.add_error(v_errors, 'end_time', 'L''heure de fin doit suivre l''heure de début.');
      end if;
      if d.date_end <> d.date_start then
        v_errors := app_hidden.add_error(v_errors, 'date_end',
          'Une absence en heures porte sur une seule date : la date de fin doit être celle du début.');
      end if;
    else
      if d.start_time is not null or d.end_time is not null then
        v_errors := app_hidden.add_error(v_errors, 'start_time',
          format('Le motif « %s » se pose en jours : retirez les heures de début et de fin.', v_type.name));
      end if;
      if d.date_start = d.date_end and d.start_half = 'afternoon' and d.end_half = 'morning' then
        v_errors := app_hidden.add_error(v_errors, 'start_half',
          'Une absence d''une seule journée ne peut pas commencer l''après-midi et finir le matin.');
      elsif not v_type.half_day_allowed and (d.start_half = 'afternoon' or d.end_half = 'morning') then
        v_errors := app_hidden.add_error(v_errors, 'start_half',
          format('Le motif « %s » se pose par journées entières : pas de demi-journée.', v_type.name));
      end if;
    end if;
  end if;

  -- Without a readable period and type, no other rule can run.
  if not (v_has_type and v_has_employee and d.date_start is not null)
     or v_errors ?| array['date_start', 'date_end', 'start_half', 'end_half', 'start_time', 'end_time'] then
    return jsonb_build_object('quantity', null, 'unit', case when v_has_type then v_type.unit end,
                              'errors', v_errors, 'warnings', v_warnings, 'plan', v_plan, 'events', v_events);
  end if;

  -- Count (rule 1, rule 5).
  v_base := app_hidden.employee_count_base(d.employee_id);
  select coalesce(sum(x.quantity), 0) into v_quantity
  from app_hidden.absence_shares(d.employee_id, v_type.unit, d.date_start, d.date_end, d.start_half, d.end_half,
                                 d.start_time, d.end_time) x;
  if v_quantity = 0 then
    v_warnings := v_warnings || to_jsonb(format(
      'Cette période ne compte aucun jour décompté (base %s : dimanches et jours fériés exclus%s).',
      case when v_base = 'ouvres' then 'jours ouvrés' else 'jours ouvrables' end,
      case when v_base = 'ouvres' then ', samedis exclus' else '' end));
  end if;
  v_period := app_hidden.absence_period(d.date_start, d.date_end, d.start_half, d.end_half, d.start_time, d.end_time);

  -- Retroactivity (rule 13).
  if p_retro = 'employee' then
    v_limit := p_today - 14;
    if d.date_start < v_limit then
      v_errors := app_hidden.add_error(v_errors, 'date_start', format(
        'Une demande ne peut pas remonter au-delà de 14 jours : la date de début doit être au plus tôt le %s.',
        app_hidden.fr_date(v_limit)));
    end if;
  elsif p_retro = 'manager' then
    v_limit := make_date(extract(year from p_today)::int - 1, 12, 1);
    if d.date_start < v_limit then
      v_errors := app_hidden.add_error(v_errors, 'date_start', format(
        'Une déclaration ne peut pas remonter avant le 1er décembre de l''année précédente : la date de début doit être au plus tôt le %s.',
        app_hidden.fr_date(v_limit)));
    end if;
  end if;

  -- Contract types (rule 8): the contract in force on the first day.
  if exists (select 1 from app_public.absence_type_contract_types x where x.absence_type_id = v_type.id) then
    select ct.id, ct.code into v_contract
    from app_public.contracts c join app_public.contract_types ct on ct.id = c.contract_type_id
    where c.employee_id = d.employee_id and c.start_date <= d.date_start
      and (c.end_date is null or c.end_date >= d.date_start)
    order by c.start_date desc limit 1;
    if v_contract.id is null then
      v_errors := app_hidden.add_error(v_errors, 'type', format(
        'Le motif « %s » est réservé aux contrats %s ; aucun contrat n''est en vigueur le %s.',
        v_type.name, (select string_agg(ct.code, ', ' order by ct.code)
                      from app_public.absence_type_contract_types x
                      join app_public.contract_types ct on ct.id = x.contract_type_id
                      where x.absence_type_id = v_type.id),
        app_hidden.fr_date(d.date_start)));
    elsif not exists (select 1 from app_public.absence_type_contract_types x
                      where x.absence_type_id = v_type.id and x.contract_type_id = v_contract.id) then
      v_errors := app_hidden.add_error(v_errors, 'type', format(
        'Le motif « %s » est réservé aux contrats %s ; le contrat en vigueur le %s est : %s.',
        v_type.name, (select string_agg(ct.code, ', ' order by ct.code)
                      from app_public.absence_type_contract_types x
                      join app_public.contract_types ct on ct.id = x.contract_type_id
                      where x.absence_type_id = v_type.id),
        app_hidden.fr_date(d.date_start), v_contract.code));
    end if;
  end if;

  -- Overlap (rules 2, 3): morning and afternoon of one date do not overlap.
  for v_other in
    select a.* from app_public.absences a
    where a.employee_id = d.employee_id and app_hidden.absence_is_active(a.status)
      and a.id is distinct from p_exclude_id and a.period && v_period
    order by a.date_start, a.id
  loop
    v_errors := app_hidden.add_error(v_errors, 'date_start', format(
      'Cette période chevauche %s.', app_hidden.absence_label(v_other)));
  end loop;

  -- Annual cap over the civil year, across absences (rule 6, SYN_ELU of rule 17).
  if v_type.annual_cap is not null then
    for s in
      select x.year, x.quantity from app_hidden.absence_shares(d.employee_id, v_type.unit, d.date_start, d.date_end,
                                                              d.start_half, d.end_half, d.start_time, d.end_time) x
    loop
      select s.quantity + coalesce(sum(o.quantity), 0) into v_total
      from app_public.absences a
      cross join lateral app_hidden.absence_shares(a.employee_id, v_type.unit, a.date_start, a.date_end, a.start_half,
                                                   a.end_half, a.start_time, a.end_time) o
      where a.employee_id = d.employee_id and a.type_id = v_type.id and app_hidden.absence_is_active(a.status)
        and a.id is distinct from p_exclude_id
        and a.date_start <= make_date(s.year, 12, 31) and a.date_end >= make_date(s.year, 1, 1)
        and o.year = s.year;
      if v_total > v_type.annual_cap then
        if v_type.cap_overrun = 'refuse' then
          v_errors := app_hidden.add_error(v_errors, 'date_end', format(
            'Plafond annuel dépassé pour le motif « %s » sur l''année %s : demande de %s, total de %s avec cette demande, pour un plafond de %s.',
            v_type.name, s.year, app_hidden.quantity_fr(s.quantity, v_type.unit), app_hidden.quantity_fr(v_total, v_type.unit),
            app_hidden.quantity_fr(v_type.annual_cap, v_type.unit)));
        else
          v_warnings := v_warnings || to_jsonb(format(
            'Plafond annuel dépassé pour le motif « %s » sur l''année %s : demande de %s, total de %s avec cette demande, pour un plafond de %s.',
            v_type.name, s.year, app_hidden.quantity_fr(s.quantity, v_type.unit), app_hidden.quantity_fr(v_total, v_type.unit),
            app_hidden.quantity_fr(v_type.annual_cap, v_type.unit)));
        end if;
      end if;
    end loop;
  end if;

  -- Non-splittable type (rule 7): another period of the same civil year separated by a gap
  -- (a counted day between them) warns; contiguous periods do not.
  if not v_type.splittable then
    select a.* into v_other from app_public.absences a
    where a.employee_id = d.employee_id and a.type_id = v_type.id and app_hidden.absence_is_active(a.status)
      and a.id is distinct from p_exclude_id
      and extract(year from a.date_start) in (extract(year from d.date_start), extract(year from d.date_end))
      and not (a.period && v_period)
      and exists (select 1
                  from generate_series(least(a.date_end, d.date_end) + 1,
                                       greatest(a.date_start, d.date_start) - 1, interval '1 day') g
                  where app_hidden.is_counted_day(g::date, v_base))
    order by a.date_start limit 1;
    if found then
      v_warnings := v_warnings || to_jsonb(format(
        'Le motif « %s » n''est pas fractionnable : %s, de la même année, est séparée de cette période.',
        v_type.name, app_hidden.absence_label(v_other)));
    end if;
  end if;

  -- Counters (rule 9): an open counter per year, units that match, enough remaining.
  for r in select * from app_private.absence_counter_plan(d) loop
    if r.counter_unit <> r.type_unit then
      v_errors := app_hidden.add_error(v_errors, 'counters', format(
        'Le compteur %s est tenu en %s alors que le motif « %s » se pose en %s : demande refusée.',
        r.code, case when r.counter_unit = 'hour' then 'heures' else 'jours' end, v_type.name,
        case when r.type_unit = 'hour' then 'heures' else 'jours' end));
    elsif r.counter_id is null then
      v_errors := app_hidden.add_error(v_errors, 'counters', format(
        'Aucun compteur %s ouvert pour %s : le motif « %s » ne peut pas être posé sur cette année.',
        r.code, r.year, v_type.name));
    else
      select app_private.counter_remaining(r.counter_id)
             + coalesce((select sum(n.quantity) from app_private.absence_counter_nets(array[p_exclude_id]) n
                         where p_exclude_id is not null and n.counter_id = r.counter_id), 0)
        into v_available;
      if r.quantity > v_available then
        v_errors := app_hidden.add_error(v_errors, 'counters', format(
          'Solde insuffisant sur le compteur %s %s : demande de %s, solde disponible de %s.',
          r.code, r.year, app_hidden.quantity_fr(r.quantity, r.counter_unit),
          app_hidden.quantity_fr(v_available, r.counter_unit)));
      end if;
      v_plan := v_plan || jsonb_build_object('counter_id', r.counter_id, 'code', r.code, 'year', r.year,
                                             'quantity', r.quantity);
    end if;
  end loop;

  -- Agreement rules: warnings only, never refusals (rule 16).
  if v_type.warn_max_hours_per_absence is not null and v_quantity > v_type.warn_max_hours_per_absence then
    v_warnings := v_warnings || to_jsonb(format(
      'Motif « %s » : %s demandées, au-delà des %s (trajet compris) prévues par l''accord.',
      v_type.name, app_hidden.quantity_fr(v_quantity, 'hour'), app_hidden.hours_fr(v_type.warn_max_hours_per_absence)));
  end if;
  if v_type.warn_max_per_quarter is not null then
    select count(*) into v_count from app_public.absences a
    where a.employee_id = d.employee_id and a.type_id = v_type.id and app_hidden.absence_is_active(a.status)
      and a.id is distinct from p_exclude_id
      and date_trunc('quarter', a.date_start) = date_trunc('quarter', d.date_start);
    if v_count + 1 > v_type.warn_max_per_quarter then
      v_warnings := v_warnings || to_jsonb(format(
        'Motif « %s » : l''accord en prévoit %s par trimestre civil ; %s autre(s) absence(s) de ce motif existe(nt) déjà au %se trimestre %s.',
        v_type.name, v_type.warn_max_per_quarter, v_count, extract(quarter from d.date_start),
        extract(year from d.date_start)));
    end if;
  end if;
  if v_type.warn_max_hours_per_year is not null then
    select v_quantity + coalesce(sum(a.counted_quantity), 0) into v_total from app_public.absences a
    where a.employee_id = d.employee_id and a.type_id = v_type.id and app_hidden.absence_is_active(a.status)
      and a.id is distinct from p_exclude_id
      and extract(year from a.date_start) = extract(year from d.date_start);
    if v_total > v_type.warn_max_hours_per_year then
      v_warnings := v_warnings || to_jsonb(format(
        'Motif « %s » : %s sur l''année %s avec cette demande, au-delà des %s par an prévues par l''accord.',
        v_type.name, app_hidden.quantity_fr(v_total, v_type.unit), extract(year from d.date_start),
        app_hidden.quantity_fr(v_type.warn_max_hours_per_year, v_type.unit)));
    end if;
  end if;
  if v_type.warn_min_duration is not null and v_type.warn_max_duration is not null then
    if d.date_end + 1 < d.date_start + v_type.warn_min_duration or d.date_end + 1 > d.date_start + v_type.warn_max_duration then
      v_warnings := v_warnings || to_jsonb(format(
        'Motif « %s » : l''accord prévoit une durée de %s à %s.', v_type.name,
        app_hidden.interval_fr(v_type.warn_min_duration), app_hidden.interval_fr(v_type.warn_max_duration)));
    end if;
  elsif v_type.warn_max_duration is not null and d.date_end + 1 > d.date_start + v_type.warn_max_duration then
    v_warnings := v_warnings || to_jsonb(format(
      'Motif « %s » : durée supérieure aux %s prévus par l''accord.', v_type.name,
      app_hidden.interval_fr(v_type.warn_max_duration)));
  elsif v_type.warn_min_duration is not null and d.date_end + 1 < d.date_start + v_type.warn_min_duration then
    v_warnings := v_warnings || to_jsonb(format(
      'Motif « %s » : durée inférieure aux %s prévus par l''accord.', v_type.name,
      app_hidden.interval_fr(v_type.warn_min_duration)));
  end if;
  if v_type.warn_min_seniority is not null
     and coalesce((select min(c.start_date) from app_public.contracts c where c.employee_id = d.employee_id), d.date_start)
         + v_type.warn_min_seniority > d.date_start then
    v_warnings := v_warnings || to_jsonb(format(
      'Motif « %s » : moins de %s d''ancienneté au %s (condition de l''accord).', v_type.name,
      app_hidden.interval_fr(v_type.warn_min_seniority), app_hidden.fr_date(d.date_start)));
  end if;
  if v_employee.is_polyvalent then
    select c.trial_end_date into v_limit from app_public.contracts c
    where c.employee_id = d.employee_id and c.trial_end_date is not null
      and c.start_date <= d.date_end and c.trial_end_date >= d.date_start
    order by c.start_date desc limit 1;
    if found then
      v_warnings := v_warnings || to_jsonb(format(
        'Absence pendant la période d''essai d''un agent polyvalent (fin de la période d''essai le %s).',
        app_hidden.fr_date(v_limit)));
    end if;
  end if;

  -- Notice periods: an employee's own request only (rule 16).
  if p_notice_from is not null then
    if v_type.notice_working_days is not null then
      v_limit := app_hidden.add_working_days(app_hidden.business_date(p_notice_from), v_type.notice_working_days, v_base);
      if d.date_start < v_limit then
        v_warnings := v_warnings || to_jsonb(format(
          'Délai de prévenance de %s jours %s non respecté pour le motif « %s » : demande du %s pour le %s.',
          v_type.notice_working_days, case when v_base = 'ouvres' then 'ouvrés' else 'ouvrables' end, v_type.name,
          app_hidden.fr_date(app_hidden.business_date(p_notice_from)), app_hidden.fr_date(d.date_start)));
      end if;
    end if;
    v_notice := v_type.notice_period;
    if v_type.notice_period_long is not null
       and not exists (select 1 from app_public.absences a
                       join app_public.absence_types t on t.id = a.type_id
                       where a.employee_id = d.employee_id and t.code in ('MAT', 'ADO')
                         and app_hidden.absence_is_active(a.status)
                         and a.date_end between d.date_start - 7 and d.date_start - 1) then
      -- Parental leave that does not directly follow a maternity or adoption leave.
      v_notice := v_type.notice_period_long;
    end if;
    if v_notice is not null then
      v_start_at := (d.date_start + coalesce(d.start_time, case when d.start_half = 'afternoon' then time '12:00' else time '00:00' end))
                    at time zone app_hidden.business_timezone();
      if p_notice_from + v_notice > v_start_at then
        v_warnings := v_warnings || to_jsonb(format(
          'Délai de prévenance de %s non respecté pour le motif « %s » : demande du %s pour le %s.',
          app_hidden.interval_fr(v_notice), v_type.name,
          app_hidden.fr_date(app_hidden.business_date(p_notice_from)), app_hidden.fr_date(d.date_start)));
      end if;
    end if;
  end if;

  -- Events of the employee during the absence: an alert, not a refusal.
  v_events := app_private.absence_event_conflicts(d.employee_id, v_period);
  for r in select * from jsonb_array_elements(v_events) x(e) loop
    v_warnings := v_warnings || to_jsonb(format('Conflit avec l''événement « %s » %s.', r.e ->> 'title',
      app_hidden.event_period_fr((r.e ->> 'start_at')::timestamptz, (r.e ->> 'end_at')::timestamptz)));
  end loop;

  return jsonb_build_object(
    'quantity', case when exists (select 1 from jsonb_object_keys(v_errors) k where k <> 'counters') then null
                     else v_quantity end,
    'unit', v_type.unit,
    'errors', v_errors,
    'warnings', v_warnings,
    'plan', v_plan,
    'events', v_events);
end;
$$;
--! EndIncluded absences/rules.sql
--! Included counters/functions.sql
-- The counter journal seen from absences (SPEC rule 9, CONTRACT section 7).
--
-- An active absence (pending, validated, cancellation requested) holds, on each counter
-- its type consumes and for each civil year of its period, its share of the count:
--   * in Planifiés (planned) while it is a request, or while it has not started;
--   * in Pris (taken) once it is granted and started (date_start <= today).
-- A pending request that already started stays in Planifiés until it is granted: a refusal
-- or a withdrawal then only releases it, and nothing is ever taken by a request that was
-- not granted. An inactive absence (refused, cancelled, withdrawn) holds nothing.
--
-- app_private.absence_sync_counters moves the journal from what the absence holds to what
-- it must hold, after locking every counter concerned (ordered by id, so parallel requests
-- serialise without deadlock) and checking that no counter it debits more goes below zero.

-- Remaining of a counter (acquired - taken - planned), from the journal.
create or replace function app_private.counter_remaining(p_counter_id int) returns numeric
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select coalesce(sum(case when m.bucket = 'acquired' then m.quantity else -m.quantity end), 0)::numeric(8,2)
  from app_private.counter_movements m where m.counter_id = p_counter_id;
$$;

-- What an absence must hold now: one line per (counter, bucket).
create or replace function app_private.absence_counter_target(p_absence app_public.absences, p_today date)
returns table (counter_id int, code text, year int, bucket text, quantity numeric, counter_unit text, type_unit text)
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select p.counter_id, p.code, p.year,
         case when p_absence.status in ('validated', 'cancellation_requested') and p_absence.date_start <= p_today
              then 'taken' else 'planned' end,
         p.quantity, p.counter_unit, p.type_unit
  from app_private.absence_counter_plan(row(p_absence.employee_id, p_absence.type_id, p_absence.date_start,
                                            p_absence.date_end, p_absence.start_half, p_absence.end_half,
                                            p_absence.start_time, p_absence.end_time)::app_hidden.absence_draft) p
  where p_absence.id is not null and app_hidden.absence_is_active(p_absence.status);
$$;

create or replace function app_private.counter_movement(p_counter_id int, p_bucket text, p_quantity numeric, p_kind text,
                                             p_absence_id int, p_transition text)
returns void
language sql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
  insert into app_private.counter_movements (counter_id, bucket, quantity, kind, absence_id, transition, actor_account_id)
  select p_counter_id, p_bucket, p_quantity, p_kind, p_absence_id, p_transition, app_hidden.current_account_id()
  where p_quantity <> 0;
$$;

/*
 * Brings the journal of one absence to what it must hold (the absence may have been
 * deleted: it then holds nothing). p_transition names the cause in the journal:
 * create, edit, validate, refuse, withdraw, request_cancellation, cancel, start.
 *   edit: the old position is compensated and the new one written, so the balance moves
 *         by the difference and the journal shows both;
 *   otherwise: reservation / release (Planifiés), start + consumption (Planifiés → Pris),
 *         consumption / restitution (Pris).
 * Refuses with 400 under `counters` (nothing written: the transaction aborts) when a
 * counter is missing, its unit does not match, or a debit exceeds its remaining.
 * Returns the effects: [{"counter", "year", "column", "direction", "quantity"}].
 */
create or replace function app_private.absence_sync_counters(p_absence_id int, p_transition text, p_today date default null)
returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_today date := coalesce(p_today, app_hidden.today());
  v_absence app_public.absences;
  v_target jsonb := '[]'::jsonb;
  v_current jsonb;
  v_ids int[];
  v_effects jsonb := '[]'::jsonb;
  v_remaining numeric;
  v_moved numeric;
  r record;
begin
  select * into v_absence from app_public.absences a where a.id = p_absence_id;
  for r in select * from app_private.absence_counter_target(v_absence, v_today) loop
    if r.counter_unit <> r.type_unit then
      perform app_hidden.invalid('counters', format(
        'Le compteur %s est tenu en %s alors que le motif se pose en %s : demande refusée.', r.code,
        case when r.counter_unit = 'hour' then 'heures' else 'jours' end,
        case when r.type_unit = 'hour' then 'heures' else 'jours' end), 'WV301');
    elsif r.counter_id is null then
      perform app_hidden.invalid('counters', format('Aucun compteur %s ouvert pour %s.', r.code, r.year), 'WV301');
    end if;
    v_target := v_target || jsonb_build_object('counter_id', r.counter_id, 'code', r.code, 'year', r.year,
                                               'bucket', r.bucket, 'quantity', r.quantity);
  end loop;
  select coalesce(jsonb_agg(jsonb_build_object('counter_id', n.counter_id, 'code', n.code, 'year', n.year,
                                               'bucket', n.bucket, 'quantity', n.quantity)), '[]'::jsonb)
    into v_current
  from app_private.absence_counter_nets(array[p_absence_id]) n;

  v_ids := array(select distinct (x ->> 'counter_id')::int from jsonb_array_elements(v_target || v_current) x order by 1);
  if cardinality(v_ids) = 0 then
    return v_effects;
  end if;
  -- Serialise movements per counter.
  perform 1 from app_public.counters c where c.id = any (v_ids) order by c.id for update;

  -- Per counter and bucket: target (t) and current (c) positions.
  for r in
    with t as (
      select (x ->> 'counter_id')::int as counter_id, x ->> 'bucket' as bucket, (x ->> 'quantity')::numeric as quantity
      from jsonb_array_elements(v_target) x
    ), c as (
      select (x ->> 'counter_id')::int as counter_id, x ->> 'bucket' as bucket, (x ->> 'quantity')::numeric as quantity
      from jsonb_array_elements(v_current) x
    ), per_counter as (
      select k.id as counter_id, k.code, k.year::int as year, kk.unit,
             coalesce((select sum(t.quantity) from t where t.counter_id = k.id and t.bucket = 'planned'), 0) as tp,
             coalesce((select sum(t.quantity) from t where t.counter_id = k.id and t.bucket = 'taken'), 0) as tt,
             coalesce((select sum(c.quantity) from c where c.counter_id = k.id and c.bucket = 'planned'), 0) as cp,
             coalesce((select sum(c.quantity) from c where c.counter_id = k.id and c.bucket = 'taken'), 0) as ct
      from app_public.counters k join app_public.counter_kinds kk on kk.code = k.code
      where k.id = any (v_ids)
    )
    select * from per_counter order by counter_id
  loop
    -- Never overdraw: a counter debited more must keep a remaining >= 0.
    if r.tp + r.tt > r.cp + r.ct then
      v_remaining := app_private.counter_remaining(r.counter_id);
      if v_remaining < (r.tp + r.tt) - (r.cp + r.ct) then
        perform app_hidden.invalid('counters', format(
          'Solde insuffisant sur le compteur %s %s : demande de %s, solde disponible de %s.', r.code, r.year,
          app_hidden.quantity_fr(r.tp + r.tt, r.unit), app_hidden.quantity_fr(v_remaining + r.cp + r.ct, r.unit)), 'WV301');
      end if;
    end if;

    if p_transition = 'edit' then
      if r.tp <> r.cp then
        perform app_private.counter_movement(r.counter_id, 'planned', -r.cp, 'compensation', p_absence_id, p_transition);
        perform app_private.counter_movement(r.counter_id, 'planned', r.tp, 'reservation', p_absence_id, p_transition);
      end if;
      if r.tt <> r.ct then
        perform app_private.counter_movement(r.counter_id, 'taken', -r.ct, 'compensation', p_absence_id, p_transition);
        perform app_private.counter_movement(r.counter_id, 'taken', r.tt, 'consumption', p_absence_id, p_transition);
      end if;
    else
      -- Planifiés → Pris first (the start of a reservation), then what remains.
      v_moved := least(greatest(r.cp - r.tp, 0), greatest(r.tt - r.ct, 0));
      perform app_private.counter_movement(r.counter_id, 'planned', -v_moved, 'start', p_absence_id, p_transition);
      perform app_private.counter_movement(r.counter_id, 'taken', v_moved, 'consumption', p_absence_id, p_transition);
      perform app_private.counter_movement(r.counter_id, 'planned', r.tp - r.cp + v_moved,
                                           case when r.tp - r.cp + v_moved > 0 then 'reservation' else 'release' end,
                                           p_absence_id, p_transition);
      perform app_private.counter_movement(r.counter_id, 'taken', r.tt - r.ct - v_moved,
                                           case when r.tt - r.ct - v_moved > 0 then 'consumption' else 'restitution' end,
                                           p_absence_id, p_transition);
    end if;

    if r.tp <> r.cp then
      v_effects := v_effects || jsonb_build_object('counter', r.code, 'year', r.year, 'column', 'planned',
        'direction', case when r.tp > r.cp then 'debit' else 'credit' end,
        'quantity', app_hidden.fmt_quantity(abs(r.tp - r.cp)));
    end if;
    if r.tt <> r.ct then
      v_effects := v_effects || jsonb_build_object('counter', r.code, 'year', r.year, 'column', 'taken',
        'direction', case when r.tt > r.ct then 'debit' else 'credit' end,
        'quantity', app_hidden.fmt_quantity(abs(r.tt - r.ct)));
    end if;
  end loop;
  return v_effects;
end;
$$;

-- Effects of a draft compared with what an absence holds (preview): the same shape as the
-- effects of absence_sync_counters, without writing anything. p_plan is the "plan" of
-- app_private.absence_evaluate, p_bucket the column the draft would use.
create or replace function app_private.absence_counter_effects(p_plan jsonb, p_bucket text, p_absence_id int)
returns jsonb
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  with t as (
    select x ->> 'code' as code, (x ->> 'year')::int as year, p_bucket as bucket, (x ->> 'quantity')::numeric as quantity
    from jsonb_array_elements(coalesce(p_plan, '[]'::jsonb)) x
  ), c as (
    select n.code, n.year, n.bucket, n.quantity from app_private.absence_counter_nets(array[p_absence_id]) n
  ), keys as (
    select code, year, bucket from t union select code, year, bucket from c
  ), diff as (
    select k.code, k.year, k.bucket,
           coalesce((select sum(t.quantity) from t where t.code = k.code and t.year = k.year and t.bucket = k.bucket), 0)
           - coalesce((select sum(c.quantity) from c where c.code = k.code and c.year = k.year and c.bucket = k.bucket), 0)
             as delta
    from keys k
  )
  select coalesce(jsonb_agg(jsonb_build_object('counter', d.code, 'year', d.year, 'column', d.bucket,
                                               'direction', case when d.delta > 0 then 'debit' else 'credit' end,
                                               'quantity', app_hidden.fmt_quantity(abs(d.delta)))
                            order by d.code, d.year, d.bucket desc), '[]'::jsonb)
  from diff d where d.delta <> 0;
$$;

-- What granting a cancellation would recredit (cancellation_counter_effects), per absence.
-- force_generic_plan: planned once per connection; left to choose, plpgsql re-planned this
-- query at every call (its custom plans were estimated cheaper), longer than it runs.
create or replace function app_private.absence_cancellation_effects(p_absence_ids int[])
returns table (absence_id int, effects jsonb)
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp
set plan_cache_mode = force_generic_plan as $$
#variable_conflict use_column
begin
  return query
    select n.absence_id,
           jsonb_agg(jsonb_build_object('counter', n.code, 'year', n.year, 'column', n.bucket, 'direction', 'credit',
                                        'quantity', app_hidden.fmt_quantity(n.quantity))
                     order by n.code, n.year, n.bucket desc)
    from app_private.absence_counter_nets(p_absence_ids) n
    where n.quantity > 0
    group by n.absence_id;
end;
$$;

-- Daily job: granted absences that started move from Planifiés to Pris. Idempotent (an
-- absence already moved holds nothing in Planifiés). Returns the number of absences moved;
-- an absence whose counter was closed meanwhile is left as it is (a warning is logged).
create or replace function app_private.consume_started_absences(p_today date) returns int
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_id int;
  v_count int := 0;
begin
  for v_id in
    select a.id from app_public.absences a
    where a.status in ('validated', 'cancellation_requested') and a.date_start <= p_today
      and exists (select 1 from app_private.counter_movements m
                  where m.absence_id = a.id and m.bucket = 'planned'
                  group by m.counter_id having sum(m.quantity) > 0)
    order by a.id
  loop
    begin
      perform app_private.absence_sync_counters(v_id, 'start', p_today);
      v_count := v_count + 1;
    exception when sqlstate 'WV301' then
      -- A counter closed since the reservation: this absence stays in Planifiés (its
      -- reservation is visible and released by a cancellation); the others move on.
      raise warning 'consume_started_absences: absence % not moved: %', v_id, sqlerrm;
    end;
  end loop;
  return v_count;
end;
$$;

-- Balances of an employee's counters for a year, summed over the journal.
-- force_generic_plan: planned once per connection; left to choose, plpgsql re-planned this
-- query at every call (its custom plans were estimated cheaper), longer than it runs.
create or replace function app_private.counter_balances_of(p_employee int, p_year int)
returns table (id int, code text, name text, unit text, year int, is_active boolean,
               acquired numeric, taken numeric, planned numeric)
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp
set plan_cache_mode = force_generic_plan as $$
#variable_conflict use_column
begin
  return query
    select c.id, c.code, k.name, k.unit, c.year::int, c.is_active,
           coalesce(sum(m.quantity) filter (where m.bucket = 'acquired'), 0)::numeric(8,2),
           coalesce(sum(m.quantity) filter (where m.bucket = 'taken'), 0)::numeric(8,2),
           coalesce(sum(m.quantity) filter (where m.bucket = 'planned'), 0)::numeric(8,2)
    from app_public.counters c
    join app_public.counter_kinds k on k.code = c.code
    left join app_private.counter_movements m on m.counter_id = c.id
    where c.employee_id = p_employee and c.year = p_year
    group by c.id, k.name, k.unit, k.position
    order by k.position, c.code;
end;
$$;

-- GET /api/counters/?employee=&year=: the employee reads their own; holders of
-- absences.view_absence_queue read their perimeter; anybody else gets 404.
create or replace function app_public.counters_read(p_employee int default null, p_year int default null) returns jsonb
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_employee int := coalesce(p_employee, app_hidden.current_employee_id());
  v_year int := coalesce(p_year, extract(year from app_hidden.today())::int);
begin
  if v_employee is null
     or not exists (select 1 from app_public.employees e where e.id = v_employee)
     or not (app_hidden.is_current_employee(v_employee)
             or exists (select 1 from app_hidden.perimeter_employee_ids('absences.view_absence_queue') x(id)
                        where x.id = v_employee)) then
    perform app_hidden.not_found('Salarié introuvable.');
  end if;
  if v_year not between 2000 and 2100 then
    perform app_hidden.invalid('year', 'Année invalide : entre 2000 et 2100.', 'WV302');
  end if;
  return coalesce((
    select jsonb_object_agg(b.code, jsonb_build_object(
             'id', b.id, 'code', b.code, 'name', b.name, 'unit', b.unit, 'year', b.year, 'is_active', b.is_active,
             'acquired', app_hidden.fmt_quantity(b.acquired), 'taken', app_hidden.fmt_quantity(b.taken),
             'planned', app_hidden.fmt_quantity(b.planned),
             'remaining', app_hidden.fmt_quantity(b.acquired - b.taken - b.planned),
             'labels', jsonb_build_object('acquired', 'Acquis', 'taken', 'Pris', 'planned', 'Planifiés',
                                          'remaining', 'Restant')))
    from app_private.counter_balances_of(v_employee, v_year) b), '{}'::jsonb);
end;
$$;
--! EndIncluded counters/functions.sql
--! Included documents/functions.sql
-- Documents: absence documents (justificatifs) and honorability certificates.
--
-- Files live in the storage directory (outside any web root); rows hold their metadata.
-- The HTTP layer streams uploads to storage, checks their type by content and their size,
-- and hands the metadata {filename, content_type, size_bytes, storage_key, sha256} to SQL
-- in the same transaction. Deleting a row queues its file in app_private.storage_garbage;
-- files are removed after commit (request handler or worker), so a rolled-back deletion
-- never loses a file. Consultation is not audited.

-- May the caller read the content of this employee's documents? The employee concerned,
-- or a holder of absences.view_absencedocument_file whose perimeter covers the record
-- (main or secondary workplace, team assignment, on-call extension).
-- Never NULL (app_private.never_null_guards): false for a caller without an employee record
-- outside the right, or for a NULL record.
create or replace function app_hidden.can_read_document_file(p_employee int) returns boolean
language sql stable as $$
  select app_hidden.is_current_employee(p_employee)
      or app_hidden.may(app_hidden.current_account_id(), 'absences.view_absencedocument_file', p_employee);
$$;

-- Employees whose absences the caller reads through /api/absences/ (SPEC, Permissions
-- rule 3): their own, and for the manager workspace the queue perimeter.
create or replace function app_hidden.absence_api_reader_ids() returns setof int
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp rows 200 as $$
begin
  return query
    select app_hidden.current_employee_id() where app_hidden.current_employee_id() is not null
    union
    select app_hidden.perimeter_employee_ids('absences.view_absence_queue');
end;
$$;

-- Errors of uploaded-file metadata under p_field ({} when fine). The HTTP layer already
-- checked the bytes; this guards every other caller of the API functions.
create or replace function app_hidden.document_metadata_errors(p_files jsonb, p_field text) returns jsonb
language plpgsql immutable as $$
declare
  v_errors jsonb := '{}'::jsonb;
  f jsonb;
begin
  if p_files is null or jsonb_typeof(p_files) = 'null' then
    return v_errors;
  end if;
  if jsonb_typeof(p_files) <> 'array' then
    return app_hidden.add_error(v_errors, p_field, 'Les fichiers se déposent dans un corps multipart/form-data.');
  end if;
  for f in select * from jsonb_array_elements(p_files) loop
    if jsonb_typeof(f) <> 'object'
       or coalesce(f ->> 'storage_key', '') !~ '^[0-9a-f]{32}$'
       or coalesce(f ->> 'sha256', '') !~ '^[0-9a-f]{64}$'
       or length(coalesce(f ->> 'filename', '')) not between 1 and 255
       or coalesce(f ->> 'size_bytes', '') !~ '^[0-9]{1,9}$' then
      v_errors := app_hidden.add_error(v_errors, p_field, 'Fichier illisible : déposez-le de nouveau.');
    elsif f ->> 'content_type' not in ('application/pdf', 'image/jpeg', 'image/png') then
      v_errors := app_hidden.add_error(v_errors, p_field,
        'Format de fichier non accepté : seuls les fichiers PDF, JPG et PNG sont acceptés.');
    elsif (f ->> 'size_bytes')::int > 10485760 or (f ->> 'size_bytes')::int < 1 then
      v_errors := app_hidden.add_error(v_errors, p_field, 'Fichier trop volumineux : 10 Mo au plus par fichier.');
    end if;
  end loop;
  return v_errors;
end;
$$;

-- Adds documents to an absence (as the caller: the insert policy applies).
create or replace function app_hidden.absence_documents_insert(p_absence_id int, p_files jsonb) returns int
language plpgsql volatile as $$
declare
  v_count int;
begin
  insert into app_public.absence_documents (absence_id, filename, content_type, size_bytes, storage_key, sha256,
                                            uploaded_at, uploaded_by, uploaded_by_name)
  select p_absence_id, f ->> 'filename', f ->> 'content_type', (f ->> 'size_bytes')::int, f ->> 'storage_key',
         f ->> 'sha256', app_hidden.now(), app_hidden.current_account_id(),
         coalesce(app_hidden.account_display_name(app_hidden.current_account_id()), 'Inconnu')
  from jsonb_array_elements(coalesce(nullif(p_files, 'null'::jsonb), '[]'::jsonb)) f;
  get diagnostics v_count = row_count;
  return v_count;
end;
$$;

-- Files removed after commit: takes (and forgets) up to p_limit queued keys. The caller
-- removes the files before committing; if it fails, the keys stay queued.
create or replace function app_private.storage_garbage_take(p_limit int default 500) returns setof text
language sql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
  delete from app_private.storage_garbage g
  where g.storage_key in (select x.storage_key from app_private.storage_garbage x
                          order by x.queued_at limit p_limit for update skip locked)
  returning g.storage_key;
$$;

create or replace function app_private.tg_storage_garbage() returns trigger
language plpgsql security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  if tg_op = 'DELETE' or old.storage_key is distinct from new.storage_key then
    insert into app_private.storage_garbage (storage_key) values (old.storage_key) on conflict do nothing;
  end if;
  return null;
end;
$$;

-- GET /api/absence-documents/<id>/file/: the metadata the handler needs to stream the file.
-- 404 when the document is outside the caller's reading (or absent), 403 when the caller
-- reads the absence but not the content.
create or replace function app_public.absence_document_file(p_id int) returns jsonb
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v record;
begin
  select d.filename, d.content_type, d.size_bytes, d.storage_key, a.employee_id into v
  from app_public.absence_documents d
  join app_public.absences a on a.id = d.absence_id
  where d.id = p_id and a.employee_id in (select app_hidden.absence_api_reader_ids());
  if not found then
    perform app_hidden.not_found('Document introuvable.', 'WN401');
  end if;
  if not app_hidden.can_read_document_file(v.employee_id) then
    perform app_hidden.forbidden('Vous n''avez pas le droit de lire le contenu de ce justificatif.', 'WF401');
  end if;
  return jsonb_build_object('filename', v.filename, 'content_type', v.content_type, 'size_bytes', v.size_bytes,
                            'storage_key', v.storage_key);
end;
$$;

-- Honorability certificates ------------------------------------------------------------

create or replace function app_hidden.honorability_json(p_employee int, p_public_url text) returns jsonb
language sql stable as $$
  select jsonb_build_object('employee', h.employee_id, 'filename', h.filename, 'content_type', h.content_type,
                            'size_bytes', h.size_bytes, 'uploaded_at', h.uploaded_at, 'uploaded_by', h.uploaded_by_name)
         || case when app_hidden.can_read_document_file(h.employee_id)
                 then jsonb_build_object('file', coalesce(rtrim(p_public_url, '/'), '')
                                                 || '/api/employees/' || h.employee_id || '/honorability-certificate/file/')
                 else '{}'::jsonb end
  from app_public.honorability_certificates h
  where h.employee_id = p_employee;
$$;

-- Who deposits a certificate: the employee, the manager perimeter (queue readers, without
-- the right to read the content) and HR (employee.change_employee_record).
create or replace function app_hidden.can_deposit_honorability(p_employee int) returns boolean
language sql stable as $$
  select app_hidden.is_current_employee(p_employee)
      or app_hidden.may(app_hidden.current_account_id(), 'absences.view_absence_queue', p_employee)
      or app_hidden.may(app_hidden.current_account_id(), 'employee.change_employee_record', p_employee);
$$;

create or replace function app_hidden.honorability_target(p_employee int) returns void
language plpgsql stable as $$
begin
  -- The record must be readable (directory, own, payroll perimeter): otherwise 404.
  if not exists (select 1 from app_public.employees e where e.id = p_employee) then
    perform app_hidden.not_found('Salarié introuvable.');
  end if;
end;
$$;

-- A refusal about an employee's record (SPEC Errors: "404: row outside perimeter or a
-- colleague's row"): 404 unless the record is the caller's own or lies in the perimeter of a
-- permission the caller holds (whatever that permission is), and only then 403 with the
-- message. So a refusal never tells a caller that a record it cannot reach exists, or holds a
-- certificate.
create or replace function app_hidden.refuse_outside_or_forbid(p_employee int, p_message text, p_code text)
returns void
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  if app_hidden.is_current_employee(p_employee)
     or exists (select 1 from app_public.permissions p
                where app_hidden.may(app_hidden.current_account_id(), p.code, p_employee)) then
    perform app_hidden.forbidden(p_message, p_code);
  end if;
  perform app_hidden.not_found('Salarié introuvable dans votre périmètre.');
end;
$$;

-- GET /api/employees/<id>/honorability-certificate/
create or replace function app_public.honorability_certificate_get(p_employee int, p_public_url text default null) returns jsonb
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v jsonb;
begin
  perform app_hidden.honorability_target(p_employee);
  v := app_hidden.honorability_json(p_employee, p_public_url);
  if v is null then
    perform app_hidden.not_found('Aucune attestation d''honorabilité n''a été déposée pour ce salarié.', 'WN402');
  end if;
  return v;
end;
$$;

-- PUT /api/employees/<id>/honorability-certificate/ (multipart, one file under `file`).
create or replace function app_public.honorability_certificate_put(p_employee int, p_body jsonb, p_public_url text default null)
returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_errors jsonb;
  f jsonb := p_body -> 'file';
begin
  perform app_hidden.honorability_target(p_employee);
  if not app_hidden.can_deposit_honorability(p_employee) then
    perform app_hidden.refuse_outside_or_forbid(p_employee,
      'Vous n''avez pas le droit de déposer l''attestation d''honorabilité de ce salarié.', 'WF402');
  end if;
  v_errors := app_hidden.document_metadata_errors(f, 'file');
  if v_errors = '{}'::jsonb and (f is null or jsonb_typeof(f) <> 'array' or jsonb_array_length(f) <> 1) then
    v_errors := app_hidden.add_error(v_errors, 'file', 'Déposez exactement un fichier (PDF, JPG ou PNG).');
  end if;
  perform app_hidden.raise_errors(v_errors);
  f := f -> 0;
  insert into app_public.honorability_certificates (employee_id, filename, content_type, size_bytes, storage_key,
                                                    sha256, uploaded_at, uploaded_by, uploaded_by_name)
  values (p_employee, f ->> 'filename', f ->> 'content_type', (f ->> 'size_bytes')::int, f ->> 'storage_key',
          f ->> 'sha256', app_hidden.now(), app_hidden.current_account_id(),
          coalesce(app_hidden.account_display_name(app_hidden.current_account_id()), 'Inconnu'))
  on conflict (employee_id) do update
    set filename = excluded.filename, content_type = excluded.content_type, size_bytes = excluded.size_bytes,
        storage_key = excluded.storage_key, sha256 = excluded.sha256, uploaded_at = excluded.uploaded_at,
        uploaded_by = excluded.uploaded_by, uploaded_by_name = excluded.uploaded_by_name;
  return app_hidden.honorability_json(p_employee, p_public_url);
end;
$$;

-- DELETE /api/employees/<id>/honorability-certificate/
create or replace function app_public.honorability_certificate_delete(p_employee int) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  perform app_hidden.honorability_target(p_employee);
  if not app_hidden.can_deposit_honorability(p_employee) then
    perform app_hidden.refuse_outside_or_forbid(p_employee,
      'Vous n''avez pas le droit de retirer l''attestation d''honorabilité de ce salarié.', 'WF402');
  end if;
  if not exists (select 1 from app_public.honorability_certificates h where h.employee_id = p_employee) then
    perform app_hidden.not_found('Aucune attestation d''honorabilité n''a été déposée pour ce salarié.', 'WN402');
  end if;
  delete from app_public.honorability_certificates h where h.employee_id = p_employee;
  return null;
end;
$$;

-- GET /api/employees/<id>/honorability-certificate/file/
create or replace function app_public.honorability_certificate_file(p_employee int) returns jsonb
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v app_public.honorability_certificates;
begin
  perform app_hidden.honorability_target(p_employee);
  -- A reader without the right: 404 outside its perimeter, 403 inside, in both cases before
  -- saying whether a certificate exists.
  if not app_hidden.can_read_document_file(p_employee) then
    perform app_hidden.refuse_outside_or_forbid(p_employee,
      'Vous n''avez pas le droit de lire le contenu de cette attestation.', 'WF401');
  end if;
  select * into v from app_public.honorability_certificates h where h.employee_id = p_employee;
  if not found then
    perform app_hidden.not_found('Aucune attestation d''honorabilité n''a été déposée pour ce salarié.', 'WN402');
  end if;
  return jsonb_build_object('filename', v.filename, 'content_type', v.content_type, 'size_bytes', v.size_bytes,
                            'storage_key', v.storage_key);
end;
$$;

-- The request handlers purge the files of a request right after its commit, as the
-- authenticator (no acting account); the worker purges what they could not.
grant execute on function app_private.storage_garbage_take(int) to wfm_authenticator;
--! EndIncluded documents/functions.sql
--! Included absences/api.sql
-- The absence API (/api/absences/): one function per route and per state transition.
-- Each runs as wfm_api (security definer): reads and writes go through the policies, so a
-- row outside the caller's perimeter is simply not found. Rules live in
-- app_private.absence_evaluate (declaration rules) and app_private.absence_sync_counters
-- (counter journal); notifications go through the notification service in the same
-- transaction (a failed notification aborts the write).

-- Texts ---------------------------------------------------------------------------------

-- "« Congés payés » du 20/11/2026 au 24/11/2026"
create or replace function app_hidden.absence_subject(p_absence app_public.absences) returns text
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select format('« %s » %s', t.name,
                app_hidden.absence_period_fr(p_absence.date_start, p_absence.date_end, p_absence.start_half,
                                             p_absence.end_half, p_absence.start_time, p_absence.end_time))
  from app_public.absence_types t where t.id = p_absence.type_id;
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
create or replace function app_hidden.absence_check_version(p_absence app_public.absences, p_body jsonb, p_required boolean)
returns void
language plpgsql stable as $$
begin
  if p_body ? 'version' and jsonb_typeof(p_body -> 'version') <> 'null' then
    if (p_body ->> 'version')::int <> p_absence.version then
      perform app_hidden.conflict(
        'Quelqu''un d''autre a déjà traité cette absence (version périmée) : rechargez la file et recommencez.', 'WC201');
    end if;
  elsif p_required then
    perform app_hidden.invalid('version', 'Ce champ est obligatoire.');
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
    when app_hidden.may(app_hidden.current_account_id(), 'absences.decide_absence', p_employee) then null
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
        format('L''absence %s de %s chevauche l''événement « %s » %s.', app_hidden.absence_subject(p_absence),
               app_hidden.employee_name(p_absence.employee_id), e ->> 'title',
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

-- The retroactive window of a decider (1 December of the previous year), applied when a
-- decider grants a cancellation or cancels a granted absence.
create or replace function app_hidden.absence_check_decider_window(p_absence app_public.absences) returns void
language plpgsql stable as $$
declare
  v_limit date := make_date(extract(year from app_hidden.today())::int - 1, 12, 1);
begin
  if p_absence.date_start < v_limit then
    perform app_hidden.invalid('date_start', format(
      'Cette absence commence avant le %s : elle est hors de la période sur laquelle une décision peut revenir (1er décembre de l''année précédente).',
      app_hidden.fr_date(v_limit)), 'WV213');
  end if;
end;
$$;

-- Routes --------------------------------------------------------------------------------

-- GET /api/absences/?status=&employee=&from=&to=
create or replace function app_public.absences_list(p_status text default null, p_employee int default null,
                                         p_from date default null, p_to date default null,
                                         p_page int default 1, p_page_size int default 50,
                                         p_public_url text default null)
returns jsonb
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp
-- Planned with each call's values: whether there is a list of readers, and its size, decide
-- between the index on (status, employee) and the one on (status, date).
set plan_cache_mode = force_custom_plan as $$
declare
  v_count int;
  v_ids int[];
  -- Employees whose absences the list shows; null for the whole association (no filter).
  v_readers int[];
begin
  if p_status is not null and p_status not in ('pending', 'validated', 'refused', 'cancellation_requested', 'cancelled') then
    perform app_hidden.invalid('status', format(
      'Paramètre status inconnu : « %s ». Valeurs possibles : pending, validated, refused, cancellation_requested, cancelled.',
      p_status), 'WV220');
  end if;
  if p_from is not null and p_to is not null and p_to < p_from then
    perform app_hidden.invalid('to', 'Le paramètre to ne peut pas précéder from.', 'WV220');
  end if;
  if not app_hidden.perimeter_is_whole('absences.view_absence_queue') then
    v_readers := array(select app_hidden.absence_api_reader_ids());
  end if;
  with visible as (
    select a.id, a.date_start
    from app_public.absences a
    where (v_readers is null or a.employee_id = any (v_readers))
      and (p_status is null or a.status = p_status)
      and (p_employee is null or a.employee_id = p_employee)
      and (p_from is null or a.date_end >= p_from)
      and (p_to is null or a.date_start <= p_to)
  )
  select (select count(*) from visible),
         array(select v.id from visible v order by v.date_start desc, v.id desc
               limit app_hidden.page_limit(p_page_size) offset app_hidden.page_offset(p_page, p_page_size))
    into v_count, v_ids;
  return jsonb_build_object('count', v_count, 'results', app_hidden.absences_json(v_ids, p_public_url, true));
end;
$$;

-- GET /api/absences/<id>/: the record, its documents, and for the employee and the queue
-- perimeter the planned day of the first day.
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
         || case when v.employee_id = app_hidden.current_employee_id()
                   or app_hidden.may(app_hidden.current_account_id(), 'absences.view_absence_queue', v.employee_id)
                 then jsonb_build_object('planned_day', app_hidden.planned_day_json(v.employee_id, v.date_start))
                 else '{}'::jsonb end;
end;
$$;

-- POST /api/absences/: an employee's request for themselves is born pending (deciders
-- notified); a manager's declaration for an employee of the decision perimeter is born
-- validated (nobody notified, no decision date). The author decides the state, not the role.
create or replace function app_public.absence_create(p_body jsonb, p_public_url text default null) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_account int := app_hidden.current_account_id();
  v_today date := app_hidden.today();
  v_now timestamptz := app_hidden.now();
  d app_hidden.absence_draft := app_hidden.absence_draft_of(p_body, null);
  v_own boolean;
  v_filer_error text;
  v_eval jsonb;
  v_errors jsonb;
  v_absence app_public.absences;
  v_has_recipient boolean;
  v_subject text;
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
  v_errors := (v_eval -> 'errors') || app_hidden.document_metadata_errors(p_body -> 'add_documents', 'add_documents');
  if v_errors <> '{}'::jsonb then
    perform app_hidden.invalid_fields(v_errors, 'WV200');
  end if;

  insert into app_public.absences (employee_id, type_id, date_start, date_end, start_half, end_half, start_time,
                                   end_time, comment, status, counted_quantity, counted_unit, author_account_id,
                                   submitted_at, warnings)
  values (d.employee_id, d.type_id, d.date_start, d.date_end, d.start_half, d.end_half, d.start_time, d.end_time,
          nullif(btrim(p_body ->> 'comment'), ''), case when v_own then 'pending' else 'validated' end,
          (v_eval ->> 'quantity')::numeric, v_eval ->> 'unit', v_account,
          case when v_own then v_now end, v_eval -> 'warnings')
  returning * into v_absence;

  perform app_hidden.absence_documents_insert(v_absence.id, p_body -> 'add_documents');
  perform app_private.absence_sync_counters(v_absence.id, 'create', v_today);
  perform app_private.absence_alert_events(v_absence, v_eval -> 'events');

  if v_own then
    v_subject := app_hidden.absence_subject(v_absence);
    v_has_recipient := app_private.notify_filing(
      v_absence.employee_id, v_absence.date_start, 'absences.decide_absence', v_account,
      'Nouvelle demande d''absence',
      format('%s demande une absence %s (%s).', app_hidden.employee_name(v_absence.employee_id), v_subject,
             app_hidden.quantity_fr(v_absence.counted_quantity, v_absence.counted_unit)),
      'Demande d''absence sans valideur',
      format('La demande d''absence %s de %s n''a aucun valideur : aucun compte habilité à décider des absences ne couvre ce salarié. Un administrateur doit la traiter.',
             v_subject, app_hidden.employee_name(v_absence.employee_id)),
      'absence', v_absence.id);
  end if;

  return app_hidden.absence_json(v_absence.id, p_public_url)
         || jsonb_build_object('has_recipient', v_has_recipient);
end;
$$;

-- The preview answer of CONTRACT section 4.
create or replace function app_hidden.absence_preview_answer(p_eval jsonb, p_effects jsonb) returns jsonb
language sql immutable as $$
  select jsonb_build_object(
    'quantity', app_hidden.fmt_quantity((p_eval ->> 'quantity')::numeric),
    'unit', p_eval -> 'unit',
    'counter_effects', coalesce(p_effects, '[]'::jsonb),
    'warnings', coalesce(p_eval -> 'warnings', '[]'::jsonb),
    'errors', coalesce(p_eval -> 'errors', '{}'::jsonb));
$$;

-- POST /api/absences/preview/: what a creation would do, without writing anything. Always
-- answers (errors are part of the answer). Without `employee`, the caller's own record.
create or replace function app_public.absence_preview(p_body jsonb) returns jsonb
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  d app_hidden.absence_draft := app_hidden.absence_draft_of(p_body, null);
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

-- POST /api/absences/<id>/preview/: what a correction would do (manager side). The row
-- excludes itself from overlap, caps and splitting; effects are the difference with what
-- it holds now.
create or replace function app_public.absence_preview_row(p_id int, p_body jsonb) returns jsonb
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v app_public.absences;
  d app_hidden.absence_draft;
  v_body jsonb := p_body - 'employee';
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
  d := app_hidden.absence_draft_normalize(app_hidden.absence_draft_of(v_body, v), v_body, v);
  v_eval := app_private.absence_evaluate(d, v.id, 'manager',
                                         case when v.author_account_id = app_private.employee_account_id(v.employee_id)
                                              then v.submitted_at end, v_today);
  v_bucket := case when v.status in ('validated', 'cancellation_requested') and d.date_start <= v_today
                   then 'taken' else 'planned' end;
  return app_hidden.absence_preview_answer(v_eval, app_private.absence_counter_effects(v_eval -> 'plan', v_bucket, v.id));
end;
$$;

-- PATCH /api/absences/<id>/ (manager side): corrections of the period, the type, the hours
-- or the comment rerun every declaration rule and compensate the counters; documents may
-- be added (add_documents) and removed (remove_document_ids, which must belong to it).
create or replace function app_public.absence_update(p_id int, p_body jsonb, p_public_url text default null) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v app_public.absences;
  v_new app_public.absences;
  d app_hidden.absence_draft;
  v_body jsonb := p_body - 'employee' - 'status';
  v_today date := app_hidden.today();
  v_period_changed boolean;
  v_comment_changed boolean;
  v_remove int[];
  v_errors jsonb := '{}'::jsonb;
  v_eval jsonb;
  v_bad int;
begin
  v := app_hidden.absence_lock(p_id);
  perform app_hidden.absence_check_corrector(v);
  perform app_hidden.absence_check_version(v, v_body, false);

  d := app_hidden.absence_draft_normalize(app_hidden.absence_draft_of(v_body, v), v_body, v);
  v_period_changed := row(d.type_id, d.date_start, d.date_end, d.start_half, d.end_half, d.start_time, d.end_time)
    is distinct from row(v.type_id, v.date_start, v.date_end, v.start_half, v.end_half, v.start_time, v.end_time);
  v_comment_changed := v_body ? 'comment' and nullif(btrim(v_body ->> 'comment'), '') is distinct from v.comment;
  if jsonb_typeof(v_body -> 'remove_document_ids') = 'array' then
    v_remove := array(select (x #>> '{}')::int from jsonb_array_elements(v_body -> 'remove_document_ids') x);
  end if;

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
  v_errors := v_errors || app_hidden.document_metadata_errors(v_body -> 'add_documents', 'add_documents');
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
     and coalesce(jsonb_array_length(nullif(v_body -> 'add_documents', 'null'::jsonb)), 0) = 0 then
    return app_hidden.absence_json(v.id, p_public_url);
  end if;

  perform app_private.set_audit_verb(case when v_period_changed or v_comment_changed then 'Correction' else 'Modification' end);
  update app_public.absences a set
    type_id = d.type_id, date_start = d.date_start, date_end = d.date_end, start_half = d.start_half,
    end_half = d.end_half, start_time = d.start_time, end_time = d.end_time,
    comment = case when v_comment_changed then nullif(btrim(v_body ->> 'comment'), '') else a.comment end,
    counted_quantity = case when v_period_changed then (v_eval ->> 'quantity')::numeric else a.counted_quantity end,
    counted_unit = case when v_period_changed then v_eval ->> 'unit' else a.counted_unit end,
    warnings = case when v_period_changed then v_eval -> 'warnings' else a.warnings end,
    corrected_by = case when v_period_changed or v_comment_changed then app_hidden.current_account_id() else a.corrected_by end,
    version = a.version + 1
  where a.id = v.id
  returning * into v_new;
  perform app_private.set_audit_verb('');

  delete from app_public.absence_documents doc where doc.absence_id = v.id and doc.id = any (v_remove);
  perform app_hidden.absence_documents_insert(v.id, v_body -> 'add_documents');
  if v_period_changed then
    perform app_private.absence_sync_counters(v.id, 'edit', v_today);
    perform app_private.absence_alert_events(v_new, v_eval -> 'events');
  end if;
  return app_hidden.absence_json(v.id, p_public_url);
end;
$$;

-- POST /api/absences/<id>/documents/ (multipart add_documents): the employee concerned
-- and the manager perimeter deposit documents on an absence that is not refused or
-- cancelled (e.g. after a missing-document reminder).
create or replace function app_public.absence_add_documents(p_id int, p_body jsonb, p_public_url text default null) returns jsonb
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
  v_errors := app_hidden.document_metadata_errors(p_body -> 'add_documents', 'add_documents');
  if v_errors = '{}'::jsonb and coalesce(jsonb_array_length(nullif(p_body -> 'add_documents', 'null'::jsonb)), 0) = 0 then
    v_errors := app_hidden.add_error(v_errors, 'add_documents', 'Déposez au moins un fichier (PDF, JPG ou PNG).');
  end if;
  perform app_hidden.raise_errors(v_errors);
  perform app_private.set_audit_verb('Modification');
  update app_public.absences a set version = a.version + 1 where a.id = v.id;
  perform app_private.set_audit_verb('');
  perform app_hidden.absence_documents_insert(v.id, p_body -> 'add_documents');
  return app_hidden.absence_json(v.id, p_public_url);
end;
$$;

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

-- POST /api/absences/<id>/validate/ {version, date_end?, type?, start_time?, end_time?, reason?}
--   pending → validated, with an optional correction (end date, requalification, hours)
--             that reruns every declaration rule; a correction needs a reason;
--   cancellation_requested → cancelled (the cancellation is granted; it is not corrected).
create or replace function app_public.absence_validate(p_id int, p_body jsonb, p_public_url text default null) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v app_public.absences;
  v_new app_public.absences;
  d app_hidden.absence_draft;
  v_body jsonb;
  v_reason text := nullif(btrim(p_body ->> 'reason'), '');
  v_today date := app_hidden.today();
  v_corrected boolean;
  v_eval jsonb;
  v_key text;
begin
  v := app_hidden.absence_lock(p_id);
  perform app_hidden.absence_check_version(v, p_body, true);
  perform app_hidden.absence_check_decider(v);

  if v.status = 'cancellation_requested' then
    foreach v_key in array array['date_end', 'type', 'start_time', 'end_time'] loop
      if p_body ? v_key then
        perform app_hidden.invalid(v_key, 'Une annulation ne se corrige pas : accordez-la ou refusez-la.', 'WV212');
      end if;
    end loop;
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

  v_body := (select coalesce(jsonb_object_agg(k, p_body -> k), '{}'::jsonb)
             from unnest(array['date_end', 'type', 'start_time', 'end_time']) k where p_body ? k);
  d := app_hidden.absence_draft_normalize(app_hidden.absence_draft_of(v_body, v), v_body, v);
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

-- POST /api/absences/<id>/refuse/ {version, reason}
--   pending → refused (the reservation is released; the request stays on file);
--   cancellation_requested → validated (the cancellation is refused; counters unchanged).
create or replace function app_public.absence_refuse(p_id int, p_body jsonb, p_public_url text default null) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v app_public.absences;
  v_reason text := nullif(btrim(p_body ->> 'reason'), '');
begin
  v := app_hidden.absence_lock(p_id);
  perform app_hidden.absence_check_version(v, p_body, true);
  perform app_hidden.absence_check_decider(v);
  if v.status not in ('pending', 'cancellation_requested') then
    perform app_hidden.invalid('status', 'Seule une demande en attente peut être décidée.', 'WV210');
  end if;
  if v_reason is null then
    perform app_hidden.invalid('reason', 'Un refus doit être motivé : indiquez la raison.', 'WV211');
  end if;

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

-- POST /api/absences/<id>/request-cancellation/ {comment?, version?}: the owner of a
-- granted absence starting at most 14 days ago asks for its cancellation. It stays drawn
-- and counted until a decider grants it; the deciders are notified.
create or replace function app_public.absence_request_cancellation(p_id int, p_body jsonb, p_public_url text default null)
returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v app_public.absences;
  v_limit date := app_hidden.today() - 14;
begin
  v := app_hidden.absence_lock(p_id);
  if v.employee_id is distinct from app_hidden.current_employee_id() then
    perform app_hidden.forbidden('Seul le salarié concerné peut demander l''annulation de son absence.', 'WF205');
  end if;
  perform app_hidden.absence_check_version(v, p_body, false);
  if v.status <> 'validated' then
    perform app_hidden.invalid('status', case v.status
      when 'cancellation_requested' then 'L''annulation de cette absence est déjà demandée.'
      when 'pending' then 'Seule une absence accordée peut faire l''objet d''une demande d''annulation : retirez plutôt votre demande en attente.'
      else 'Seule une absence accordée peut faire l''objet d''une demande d''annulation.' end, 'WV210');
  end if;
  if v.date_start < v_limit then
    perform app_hidden.invalid('date_start', format(
      'L''annulation ne peut plus être demandée : l''absence a commencé avant le %s (14 jours au plus).',
      app_hidden.fr_date(v_limit)), 'WV214');
  end if;

  perform app_private.set_audit_verb('Demande d''annulation');
  update app_public.absences a set
    status = 'cancellation_requested', cancellation_comment = nullif(btrim(p_body ->> 'comment'), ''),
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
--! EndIncluded absences/api.sql
--! Included absences/triggers.sql
-- Triggers of absences: the state machine guard, the audit lines, and the storage garbage
-- of deleted documents. (Included after the audit machinery it calls.)

-- The SPEC's state table as a guard: an update must follow a legal transition and advance
-- the version by exactly one; a refused or cancelled absence is read-only; the employee
-- and the author never change. The API functions never hit it: it refuses direct writes
-- (back-office, scripts) that would bypass them.
create or replace function app_private.tg_absences_guard() returns trigger
language plpgsql as $$
begin
  if old.status in ('refused', 'cancelled') then
    raise exception using errcode = 'WV910', detail = 'status',
      message = 'Une absence refusée ou annulée est en lecture seule.';
  end if;
  if (old.status, new.status) not in (('pending', 'pending'), ('pending', 'validated'), ('pending', 'refused'),
                                      ('validated', 'validated'), ('validated', 'cancellation_requested'),
                                      ('validated', 'cancelled'), ('cancellation_requested', 'validated'),
                                      ('cancellation_requested', 'cancellation_requested'),
                                      ('cancellation_requested', 'cancelled')) then
    raise exception using errcode = 'WV910', detail = 'status',
      message = format('Transition d''état interdite : %s → %s.', old.status, new.status);
  end if;
  if new.version <> old.version + 1 then
    raise exception using errcode = 'WV910', detail = 'version',
      message = 'Chaque écriture d''une absence avance sa version d''une unité.';
  end if;
  if new.employee_id <> old.employee_id or new.author_account_id is distinct from old.author_account_id
     or new.created_at <> old.created_at then
    raise exception using errcode = 'WV910', detail = 'employee',
      message = 'Le salarié et l''auteur d''une absence ne changent pas.';
  end if;
  return new;
end;
$$;
drop trigger if exists _200_guard on app_public.absences;
create or replace trigger _200_guard before update on app_public.absences
  for each row execute function app_private.tg_absences_guard();

-- A request is erased only while pending (a withdrawal): a refused request is never
-- erased, a granted one is cancelled, not deleted. Deleting the employee record cascades.
create or replace function app_private.tg_absences_guard_delete() returns trigger
language plpgsql as $$
begin
  if old.status <> 'pending' and pg_trigger_depth() = 1 then
    raise exception using errcode = 'WV910', detail = 'status',
      message = 'Seule une demande en attente peut être effacée.';
  end if;
  return old;
end;
$$;
drop trigger if exists _200_guard_delete on app_public.absences;
create or replace trigger _200_guard_delete before delete on app_public.absences
  for each row execute function app_private.tg_absences_guard_delete();

drop trigger if exists _500_audit on app_public.absences;
create or replace trigger _500_audit after insert or update on app_public.absences
  for each row execute function app_private.tg_audit('absence');
drop trigger if exists _500_audit_delete on app_public.absences;
create or replace trigger _500_audit_delete before delete on app_public.absences
  for each row execute function app_private.tg_audit('absence');

drop trigger if exists _900_storage_garbage on app_public.absence_documents;
create or replace trigger _900_storage_garbage after delete on app_public.absence_documents
  for each row execute function app_private.tg_storage_garbage();
drop trigger if exists _900_storage_garbage on app_public.honorability_certificates;
create or replace trigger _900_storage_garbage after delete or update of storage_key on app_public.honorability_certificates
  for each row execute function app_private.tg_storage_garbage();

-- Deposits and removals of absence documents, named (issue 11): one line per document under
-- the model absence_document, target the absence, with the document's name, type, size and
-- depositor (not its storage key).
insert into app_private.audit_models (model, label) values ('absence_document', 'Justificatif d''absence')
on conflict (model) do nothing;

create or replace function app_private.tg_audit_absence_document() returns trigger
language plpgsql security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_row app_public.absence_documents := case when tg_op = 'DELETE' then old else new end;
  v_doc jsonb := jsonb_build_object('id', v_row.id, 'absence_id', v_row.absence_id, 'filename', v_row.filename,
                                    'content_type', v_row.content_type, 'size_bytes', v_row.size_bytes,
                                    'uploaded_at', v_row.uploaded_at, 'uploaded_by', v_row.uploaded_by_name);
begin
  if tg_op = 'INSERT' then
    perform app_private.write_audit('Creation', 'absence_document', v_row.absence_id, null, v_doc);
  else
    perform app_private.write_audit('Suppression', 'absence_document', v_row.absence_id, v_doc, null);
  end if;
  return null;
end;
$$;
drop trigger if exists _500_audit on app_public.absence_documents;
create or replace trigger _500_audit after insert or delete on app_public.absence_documents
  for each row execute function app_private.tg_audit_absence_document();
--! EndIncluded absences/triggers.sql
--! Included employees/helpers.sql
-- Helpers shared by the employee, referential, team, event, on-call and payroll API
-- functions: reading a JSON body field by field (a wrong type answers 400 under the field),
-- the caller's establishment scope, staff status, names across RLS, search patterns.

-- A body field as text: null when absent or null; 400 under the field when not a string.
create or replace function app_hidden.in_text(p_body jsonb, p_key text, p_field text default null) returns text
language plpgsql immutable as $$
declare
  v jsonb := p_body -> p_key;
begin
  if v is null or jsonb_typeof(v) = 'null' then
    return null;
  end if;
  if jsonb_typeof(v) <> 'string' then
    perform app_hidden.invalid(coalesce(p_field, p_key), 'Une chaîne de caractères est attendue.');
  end if;
  return v #>> '{}';
end;
$$;

-- A trimmed text field; an empty string counts as null.
create or replace function app_hidden.in_trimmed(p_body jsonb, p_key text, p_field text default null) returns text
language sql immutable as $$
  select nullif(btrim(app_hidden.in_text(p_body, p_key, p_field)), '');
$$;

create or replace function app_hidden.in_int(p_body jsonb, p_key text, p_field text default null) returns int
language plpgsql immutable as $$
declare
  v jsonb := p_body -> p_key;
begin
  if v is null or jsonb_typeof(v) = 'null' then
    return null;
  end if;
  if jsonb_typeof(v) <> 'number' or (v #>> '{}') !~ '^-?[0-9]{1,9}$' then
    perform app_hidden.invalid(coalesce(p_field, p_key), 'Un nombre entier est attendu.');
  end if;
  return (v #>> '{}')::int;
end;
$$;

create or replace function app_hidden.in_numeric(p_body jsonb, p_key text, p_field text default null) returns numeric
language plpgsql immutable as $$
declare
  v jsonb := p_body -> p_key;
begin
  if v is null or jsonb_typeof(v) = 'null' then
    return null;
  end if;
  if jsonb_typeof(v) = 'number' then
    return (v #>> '{}')::numeric;
  end if;
  if jsonb_typeof(v) = 'string' and (v #>> '{}') ~ '^-?[0-9]{1,6}(\.[0-9]{1,2})?$' then
    return (v #>> '{}')::numeric;
  end if;
  perform app_hidden.invalid(coalesce(p_field, p_key), 'Un nombre est attendu (par exemple 35 ou "35.00").');
end;
$$;

create or replace function app_hidden.in_bool(p_body jsonb, p_key text, p_field text default null) returns boolean
language plpgsql immutable as $$
declare
  v jsonb := p_body -> p_key;
begin
  if v is null or jsonb_typeof(v) = 'null' then
    return null;
  end if;
  if jsonb_typeof(v) <> 'boolean' then
    perform app_hidden.invalid(coalesce(p_field, p_key), 'Un booléen (true ou false) est attendu.');
  end if;
  return v::boolean;
end;
$$;

-- A date YYYY-MM-DD read from any JSON object; p_field names the field in the error.
create or replace function app_hidden.in_date(p_body jsonb, p_key text, p_field text default null) returns date
language plpgsql immutable as $$
declare
  v jsonb := p_body -> p_key;
  v_text text;
begin
  if v is null or jsonb_typeof(v) = 'null' then
    return null;
  end if;
  v_text := v #>> '{}';
  if jsonb_typeof(v) <> 'string' or v_text !~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}$' then
    perform app_hidden.invalid(coalesce(p_field, p_key), 'Date invalide : format attendu AAAA-MM-JJ.');
  end if;
  begin
    return v_text::date;
  exception when others then
    perform app_hidden.invalid(coalesce(p_field, p_key), format('Date invalide : %s n''existe pas.', v_text));
  end;
end;
$$;

-- A timestamp with an explicit offset (ISO 8601).
create or replace function app_hidden.in_timestamptz(p_body jsonb, p_key text, p_field text default null) returns timestamptz
language plpgsql stable as $$
declare
  v jsonb := p_body -> p_key;
  v_text text;
begin
  if v is null or jsonb_typeof(v) = 'null' then
    return null;
  end if;
  v_text := v #>> '{}';
  if jsonb_typeof(v) <> 'string'
     or v_text !~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}[T ][0-9]{2}:[0-9]{2}(:[0-9]{2}(\.[0-9]{1,6})?)?(Z|[+-][0-9]{2}(:?[0-9]{2})?)$' then
    perform app_hidden.invalid(coalesce(p_field, p_key), 'Horodatage invalide : format ISO 8601 avec fuseau attendu (2026-11-16T09:00:00+01:00).');
  end if;
  begin
    return v_text::timestamptz;
  exception when others then
    perform app_hidden.invalid(coalesce(p_field, p_key), format('Horodatage invalide : %s n''existe pas.', v_text));
  end;
end;
$$;

-- A JSON array field (null when absent or null; 400 when not an array).
create or replace function app_hidden.in_array(p_body jsonb, p_key text, p_field text default null) returns jsonb
language plpgsql immutable as $$
declare
  v jsonb := p_body -> p_key;
begin
  if v is null or jsonb_typeof(v) = 'null' then
    return null;
  end if;
  if jsonb_typeof(v) <> 'array' then
    perform app_hidden.invalid(coalesce(p_field, p_key), 'Une liste est attendue.');
  end if;
  return v;
end;
$$;

-- A list of ids; duplicates are refused.
create or replace function app_hidden.in_ids(p_body jsonb, p_key text, p_field text default null) returns int[]
language plpgsql immutable as $$
declare
  v jsonb := app_hidden.in_array(p_body, p_key, p_field);
  v_ids int[];
begin
  if v is null then
    return null;
  end if;
  if exists (select 1 from jsonb_array_elements(v) x
             where jsonb_typeof(x) <> 'number' or (x #>> '{}') !~ '^[0-9]{1,9}$') then
    perform app_hidden.invalid(coalesce(p_field, p_key), 'Une liste d''identifiants (nombres entiers) est attendue.');
  end if;
  v_ids := array(select (x #>> '{}')::int from jsonb_array_elements(v) x);
  if cardinality(v_ids) <> (select count(distinct i) from unnest(v_ids) i) then
    perform app_hidden.invalid(coalesce(p_field, p_key), 'La liste contient des doublons.');
  end if;
  return v_ids;
end;
$$;

-- "%text%" for ILIKE, with the wildcards of the text escaped.
create or replace function app_hidden.like_pattern(p_search text) returns text
language sql immutable as $$
  select '%' || replace(replace(replace(btrim(p_search), '\', '\\'), '%', '\%'), '_', '\_') || '%';
$$;

-- Lower-case ASCII slug for usernames: accents removed, other characters dropped.
create or replace function app_hidden.ascii_slug(p_text text) returns text
language sql immutable as $$
  select regexp_replace(
           replace(replace(replace(replace(
             translate(lower(coalesce(p_text, '')),
                       'àáâãäåçèéêëìíîïñòóôõöùúûüýÿ’'' ',
                       'aaaaaaceeeeiiiinooooouuuuyy---'),
             'æ', 'ae'), 'œ', 'oe'), 'ß', 'ss'), '--', '-'),
           '[^a-z0-9.\-]', '', 'g');
$$;

create or replace function app_hidden.current_account_is_superuser() returns boolean
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select coalesce((select a.is_superuser and a.is_active
                   from app_public.accounts a where a.id = app_hidden.current_account_id()), false);
$$;

-- The establishments of "scope=perimeter" (null = the whole association): those on which the
-- account holds absences.view_absence_queue (encadrement) or employee.view_payroll (payroll),
-- as app_hidden.permission_scope computes them (dated role attributions, a role without
-- establishment covering everything, on-call extensions start inclusive, end exclusive);
-- for an account holding neither, its own workplaces (main, secondary, teams of the day).
create or replace function app_hidden.scope_establishment_ids(p_account int default null, p_at timestamptz default null)
returns int[]
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_account int := coalesce(p_account, app_hidden.current_account_id());
  v_at timestamptz := coalesce(p_at, app_hidden.now());
  v_queue record;
  v_payroll record;
  v_employee int;
begin
  select * into v_queue from app_hidden.permission_scope(v_account, 'absences.view_absence_queue', v_at);
  select * into v_payroll from app_hidden.permission_scope(v_account, 'employee.view_payroll', v_at);
  if v_queue.whole or v_payroll.whole then
    return null;
  end if;
  if cardinality(v_queue.establishment_ids) > 0 or cardinality(v_payroll.establishment_ids) > 0 then
    return array(select unnest(v_queue.establishment_ids) union select unnest(v_payroll.establishment_ids));
  end if;
  select a.employee_id into v_employee from app_public.accounts a where a.id = v_account and a.is_active;
  if v_employee is null then
    return '{}';
  end if;
  return array(select app_hidden.employee_establishments(v_employee, app_hidden.business_date(v_at)));
end;
$$;

-- Is the establishment within a scope (null scope = everything)?
-- Never NULL: a NULL establishment is within the whole association only.
create or replace function app_hidden.in_scope(p_establishment int, p_scope int[]) returns boolean
language sql immutable as $$
  select p_scope is null or coalesce(p_establishment = any (p_scope), false);
$$;

-- Names of employees by id, whatever the caller may read of their records: used to name the
-- participants of an event the caller sees, or the holder of an on-call period.
create or replace function app_hidden.employee_names(p_ids int[]) returns table (id int, name text)
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select e.id, e.first_name || ' ' || e.last_name from app_public.employees e where e.id = any (p_ids);
$$;

-- Display names of accounts (employee name, else username), whatever the caller may read.
create or replace function app_hidden.account_names(p_ids int[]) returns table (id int, name text)
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select a.id, coalesce(e.first_name || ' ' || e.last_name, a.username)
  from app_public.accounts a left join app_public.employees e on e.id = a.employee_id
  where a.id = any (p_ids);
$$;

-- An audit trigger for tables whose line belongs to a parent (join tables without id):
-- tg_argv[0] is the model, tg_argv[1] the column holding the target id.
create or replace function app_private.tg_audit_child() returns trigger
language plpgsql security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_model text := tg_argv[0];
  v_column text := tg_argv[1];
begin
  if tg_op = 'INSERT' then
    perform app_private.write_audit('Creation', v_model, (to_jsonb(new) ->> v_column)::bigint, null, to_jsonb(new));
    return new;
  elsif tg_op = 'UPDATE' then
    perform app_private.write_audit(coalesce(nullif(current_setting('app.audit_verb', true), ''), 'Modification'),
                                    v_model, (to_jsonb(new) ->> v_column)::bigint, to_jsonb(old), to_jsonb(new));
    return new;
  else
    perform app_private.write_audit('Suppression', v_model, (to_jsonb(old) ->> v_column)::bigint, to_jsonb(old), null);
    return old;
  end if;
end;
$$;

-- Does the acting account cover every right this account holds (issue 11)? Its contact
-- address receives the password-reset links, so changing it hands the account over: only an
-- editor who could do everything the account does may change it. Covered when the editor is
-- a superuser, or: the account is not a superuser; staff only under a staff editor; each role
-- the account holds (active or future) is matched by an editor's role of the same or a higher
-- rank among the manager roles (Admin > RH n1 > RH n2 > DA > Manager n1 > Manager n2; Admin
-- is the only one above RH n1); and each permission the account holds (roles and explicit
-- grants), over its establishments, lies within the editor's scope of that permission (or of
-- employee.change_account_activation for employee.change_interim_account_activation).
-- Never NULL (app_private.never_null_guards): an unknown or NULL account is covered (nothing
-- to take over), no acting account covers nothing.
create or replace function app_hidden.account_rights_covered(p_account int) returns boolean
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_editor int := app_hidden.current_account_id();
  v_target app_public.accounts;
  v_now timestamptz := app_hidden.now();
  v_today date := app_hidden.today();
begin
  select * into v_target from app_public.accounts a where a.id = p_account;
  if not found then
    return true;
  end if;
  if app_hidden.current_account_is_superuser() then
    return true;
  end if;
  if v_editor is null or v_target.is_superuser
     or (v_target.is_staff and not app_hidden.current_account_is_staff()) then
    return false;
  end if;
  -- Ranks: a manager-workspace role of the account needs an editor's role ranked at least as high.
  if exists (select 1 from app_public.role_attributions ra
             join app_public.roles r on r.id = ra.role_id
             where ra.account_id = p_account and r.opens_manager_workspace and r.name <> 'Service Paie'
               and (ra.end_date is null or ra.end_date >= v_today)
               and not exists (select 1 from app_public.role_attributions er
                               join app_public.roles eroles on eroles.id = er.role_id
                               where er.account_id = v_editor and eroles.opens_manager_workspace
                                 and eroles.name <> 'Service Paie'
                                 and app_hidden.date_in(v_today, er.start_date, er.end_date)
                                 and eroles.precedence <= r.precedence)) then
    return false;
  end if;
  -- Permissions, over their establishments (a role outside the manager workspace, or without
  -- establishments, covers the whole association).
  return not exists (
    with held as (
      select rp.permission_code as permission,
             not r.opens_manager_workspace
             or not exists (select 1 from app_public.role_attribution_establishments rae where rae.attribution_id = ra.id)
               as whole,
             array(select rae.establishment_id from app_public.role_attribution_establishments rae
                   where rae.attribution_id = ra.id) as establishment_ids
      from app_public.role_attributions ra
      join app_public.roles r on r.id = ra.role_id
      join app_public.role_permissions rp on rp.role_id = ra.role_id
      where ra.account_id = p_account and (ra.end_date is null or ra.end_date >= v_today)
      union all
      select ap.permission_code, true, '{}'::int[] from app_public.account_permissions ap where ap.account_id = p_account
    )
    select 1 from held h
    where not exists (
      -- Opening any account covers opening temporary workers' accounts.
      select 1
      from unnest(case when h.permission = 'employee.change_interim_account_activation'
                       then array[h.permission, 'employee.change_account_activation'] else array[h.permission] end) q(p)
      cross join lateral app_hidden.permission_scope(v_editor, q.p, v_now) s
      where s.whole or (not h.whole and h.establishment_ids <@ s.establishment_ids)));
end;
$$;
--! EndIncluded employees/helpers.sql
--! Included employees/api.sql
-- /api/employees/: the directory (list, detail) and the employee record (create, update).
--
-- Reading (RLS of sql/org/policies.sql): holders of employee.view_employee_directory read the
-- whole directory; Service Paie reads the people of its payroll perimeter; every account
-- reads its own record. scope=perimeter restricts a list to the employees attached (main,
-- secondary workplace, team of the day) to the caller's establishments
-- (app_hidden.scope_establishment_ids: its absences.view_absence_queue or employee.view_payroll
-- perimeter, on-call extensions included; else its own workplaces).
--
-- The key social_security_number is present only for readers holding
-- employee.view_social_security_number on that employee; any write carrying the key by
-- another caller is refused (403) before anything is written.

-- JSON of employees, set-based (one statement whatever the number of ids), with the
-- caller's rights.
create or replace function app_hidden.employees_json(p_ids int[]) returns table (id int, doc jsonb)
language sql stable as $$
  with emp as (
    select e.* from app_public.employees e where e.id = any (p_ids)
  ),
  ssn_readable as (
    select x.id from app_hidden.perimeter_employee_ids('employee.view_social_security_number') x(id)
    where x.id = any (p_ids)
  ),
  secondaries as (
    select ses.employee_id, jsonb_agg(ses.establishment_id order by ses.establishment_id) as list
    from app_public.employee_secondary_establishments ses
    where ses.employee_id = any (p_ids)
    group by ses.employee_id
  ),
  assignments as (
    select ta.employee_id,
           jsonb_agg(jsonb_build_object('id', ta.id, 'team', ta.team_id, 'team_name', t.name,
                                        'start_date', ta.start_date, 'end_date', ta.end_date)
                     order by ta.start_date nulls first, ta.id) as list
    from app_public.team_assignments ta
    join app_public.teams t on t.id = ta.team_id
    where ta.employee_id = any (p_ids)
    group by ta.employee_id
  ),
  contracts as (
    select c.employee_id,
           jsonb_agg(jsonb_build_object('id', c.id, 'type', c.contract_type_id, 'type_code', ct.code,
                                        'type_name', ct.name, 'start_date', c.start_date, 'end_date', c.end_date,
                                        'trial_end_date', c.trial_end_date, 'job_title', c.job_title,
                                        'weekly_hours', app_hidden.fmt_quantity(c.weekly_hours))
                     order by c.start_date, c.id) as list
    from app_public.contracts c
    join app_public.contract_types ct on ct.id = c.contract_type_id
    where c.employee_id = any (p_ids)
    group by c.employee_id
  )
  select emp.id,
         jsonb_build_object(
           'id', emp.id,
           'first_name', emp.first_name,
           'last_name', emp.last_name,
           'name', emp.first_name || ' ' || emp.last_name,
           'professional_email', emp.professional_email,
           'birth_date', emp.birth_date,
           'is_polyvalent', emp.is_polyvalent,
           'main_establishment', emp.main_establishment_id,
           'main_establishment_name', est.name,
           'secondary_establishments', coalesce(sec.list, '[]'::jsonb),
           'teams', coalesce(asg.list, '[]'::jsonb),
           'contracts', coalesce(con.list, '[]'::jsonb),
           'account', case when acc.id is not null
                           then jsonb_build_object('id', acc.id, 'username', acc.username, 'is_active', acc.is_active) end,
           'created_at', emp.created_at,
           'updated_at', emp.updated_at)
         || case when emp.id in (select r.id from ssn_readable r)
                 then jsonb_build_object('social_security_number', ssn.social_security_number)
                 else '{}'::jsonb end
  from emp
  left join app_public.establishments est on est.id = emp.main_establishment_id
  left join app_public.employee_social_security_numbers ssn on ssn.employee_id = emp.id
  left join secondaries sec on sec.employee_id = emp.id
  left join assignments asg on asg.employee_id = emp.id
  left join contracts con on con.employee_id = emp.id
  left join app_public.accounts acc on acc.employee_id = emp.id;
$$;

-- GET /api/employees/
create or replace function app_public.employees_list(p_scope text default null, p_search text default null,
                                          p_establishment int default null, p_team int default null,
                                          p_page int default 1, p_page_size int default 50)
returns jsonb
language sql stable as $$
  with scope as (
    select app_hidden.scope_establishment_ids() as ids where p_scope = 'perimeter'
  ),
  scope_employees as (
    select x.id from scope, lateral app_hidden.employees_of_establishments(scope.ids, app_hidden.today()) x(id)
    where scope.ids is not null
  ),
  establishment_employees as (
    select x.id from app_hidden.employees_of_establishments(array[p_establishment], app_hidden.today()) x(id)
    where p_establishment is not null
  ),
  filtered as (
    select e.id, e.first_name, e.last_name
    from app_public.employees e
    where (p_scope is distinct from 'perimeter' or (select s.ids from scope s) is null
           or e.id in (select se.id from scope_employees se))
      and (p_establishment is null or e.id in (select ee.id from establishment_employees ee))
      and (p_team is null or exists (select 1 from app_public.team_assignments ta
                                     where ta.employee_id = e.id and ta.team_id = p_team
                                       and app_hidden.date_in(app_hidden.today(), ta.start_date, ta.end_date)))
      and (coalesce(btrim(p_search), '') = ''
           or e.first_name || ' ' || e.last_name ilike app_hidden.like_pattern(p_search)
           or e.last_name || ' ' || e.first_name ilike app_hidden.like_pattern(p_search)
           or e.professional_email ilike app_hidden.like_pattern(p_search))
  ),
  page as (
    select f.id, row_number() over (order by lower(f.last_name), lower(f.first_name), f.id) as ord
    from filtered f
    order by ord
    limit app_hidden.page_limit(p_page_size) offset app_hidden.page_offset(p_page, p_page_size)
  )
  select jsonb_build_object(
    'count', (select count(*) from filtered),
    'results', coalesce((select jsonb_agg(j.doc order by p.ord)
                         from page p
                         join app_hidden.employees_json(array(select pg.id from page pg)) j on j.id = p.id),
                        '[]'::jsonb));
$$;

-- GET /api/employees/<id>/
create or replace function app_public.employee_get(p_id int) returns jsonb
language plpgsql stable as $$
declare
  v_doc jsonb;
begin
  select j.doc into v_doc from app_hidden.employees_json(array[p_id]) j;
  if v_doc is null then
    perform app_hidden.not_found('Salarié introuvable.');
  end if;
  return v_doc;
end;
$$;

-- The contact address of an employee's account changed: the old address is told by e-mail
-- (outbox) and the account in the application, so a takeover does not go unnoticed. (The
-- employee audit line carries the addresses before and after.)
create or replace function app_private.tell_email_changed(p_employee int, p_old text, p_new text) returns void
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_account int := app_private.employee_account_id(p_employee);
  v_by text := coalesce(app_hidden.account_display_name(app_hidden.current_account_id()), 'Inconnu');
  v_body text;
begin
  if v_account is null then
    return;
  end if;
  v_body := format('L''adresse e-mail de votre compte a été modifiée par %s le %s : %s. '
                   'Si vous n''êtes pas à l''origine de ce changement, prévenez immédiatement votre service RH.',
                   v_by, app_hidden.fr_date(app_hidden.today()), coalesce(p_new, 'aucune adresse'));
  perform app_private.notify(v_account, 'Adresse e-mail modifiée', v_body, 'warning', 'employee', p_employee);
  if p_old is not null then
    insert into app_private.email_outbox (kind, to_address, subject, body_text, account_id)
    values ('email_changed', p_old, 'Adresse e-mail de votre compte modifiée',
            E'Bonjour,\n\n' || v_body || E'\n\nCe message est envoyé à votre ancienne adresse.', v_account);
  end if;
end;
$$;

-- Is a username free (case-insensitive), whatever accounts the caller may read?
create or replace function app_private.username_taken(p_username text) returns boolean
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select exists (select 1 from app_public.accounts a where lower(a.username) = lower(p_username));
$$;

-- Opens the account of a new employee record: no usable password (null hash), the username
-- given or derived from the name (first.last, then first.last2, ...), Salarié granted by the
-- accounts trigger, and the set-password invitation queued when a professional e-mail exists.
create or replace function app_private.open_employee_account(p_employee_id int, p_username text) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_employee app_public.employees;
  v_base text;
  v_username text := p_username;
  v_suffix int := 1;
  v_account_id int;
  v_invited boolean;
begin
  select * into v_employee from app_public.employees e where e.id = p_employee_id;
  if v_username is null then
    v_base := left(trim(both '.-' from app_hidden.ascii_slug(v_employee.first_name) || '.'
                                      || app_hidden.ascii_slug(v_employee.last_name)), 140);
    if length(v_base) < 2 then
      v_base := 'salarie' || p_employee_id;
    end if;
    perform pg_advisory_xact_lock(hashtext('username:' || v_base));
    v_username := v_base;
    while exists (select 1 from app_public.accounts a where lower(a.username) = lower(v_username)) loop
      v_suffix := v_suffix + 1;
      v_username := v_base || v_suffix;
    end loop;
  end if;
  insert into app_public.accounts (username, employee_id) values (v_username, p_employee_id)
  returning id into v_account_id;
  insert into app_private.account_secrets (account_id, password_hash) values (v_account_id, null);
  v_invited := app_private.queue_invitation(v_account_id);
  return jsonb_build_object('id', v_account_id, 'username', v_username, 'invitation_queued', v_invited);
end;
$$;

-- Validation and write of the record, shared by creation (p_id null) and update. Runs as
-- the API function's role (wfm_api): every write goes through the policies.
create or replace function app_hidden.employee_save(p_id int, p_body jsonb, p_partial boolean) returns int
language plpgsql volatile as $$
declare
  v_creating boolean := p_id is null;
  v_me int := app_hidden.current_account_id();
  v_scope int[] := app_hidden.perimeter_establishment_ids('employee.change_employee_record');
  v_old app_public.employees;
  v_errors jsonb := '{}';
  v_id int := p_id;
  v_first_name text;
  v_last_name text;
  v_email text;
  v_birth_date date;
  v_polyvalent boolean;
  v_main int;
  v_secondaries int[];
  v_old_secondaries int[];
  v_ssn text;
  v_username text;
  v_contracts jsonb;
  v_teams jsonb;
  v_item jsonb;
  v_label text;
  v_type int;
  v_start date;
  v_end date;
  v_trial date;
  v_job text;
  v_hours numeric;
  v_item_id int;
  v_team int;
  v_kept int[] := '{}';
  i int;
  j int;
  v_ranges daterange[];
  v_starts date[];
  v_team_ids int[];
  v_existing app_public.team_assignments;
begin
  if not v_creating then
    select * into v_old from app_public.employees e where e.id = p_id;
    if not found then
      perform app_hidden.not_found('Salarié introuvable.');
    end if;
  end if;

  -- The key itself is refused to whoever may not read the number (before anything else).
  if p_body ? 'social_security_number' then
    if v_creating and not app_hidden.current_account_has('employee.view_social_security_number')
       or not v_creating and not app_hidden.may(v_me, 'employee.view_social_security_number', p_id) then
      perform app_hidden.forbidden('Vous n''avez pas le droit de lire ni d''écrire le numéro de sécurité sociale : '
                                   'retirez ce champ de la requête.', 'WF501');
    end if;
  end if;
  if not app_hidden.current_account_has('employee.change_employee_record') then
    if v_creating then
      perform app_hidden.forbidden('Vous n''avez pas le droit de créer ou de modifier une fiche salarié.', 'WF502');
    end if;
    -- A record outside every perimeter of the caller: not found before forbidden (SPEC Errors).
    perform app_hidden.refuse_outside_or_forbid(p_id,
      'Vous n''avez pas le droit de créer ou de modifier une fiche salarié.', 'WF502');
  end if;
  if not v_creating and not app_hidden.may(v_me, 'employee.change_employee_record', p_id) then
    -- Outside the perimeter: not found (SPEC Errors), as for every row outside it.
    perform app_hidden.not_found('Salarié introuvable dans votre périmètre.');
  end if;

  -- Scalar fields.
  v_first_name := coalesce(app_hidden.in_trimmed(p_body, 'first_name'), case when p_body ? 'first_name' then null else v_old.first_name end);
  if (v_creating or not p_partial or p_body ? 'first_name') and app_hidden.in_trimmed(p_body, 'first_name') is null then
    v_errors := app_hidden.add_error(v_errors, 'first_name', 'Le prénom est obligatoire.');
  elsif length(v_first_name) > 100 then
    v_errors := app_hidden.add_error(v_errors, 'first_name', 'Au plus 100 caractères.');
  end if;
  v_last_name := coalesce(app_hidden.in_trimmed(p_body, 'last_name'), case when p_body ? 'last_name' then null else v_old.last_name end);
  if (v_creating or not p_partial or p_body ? 'last_name') and app_hidden.in_trimmed(p_body, 'last_name') is null then
    v_errors := app_hidden.add_error(v_errors, 'last_name', 'Le nom est obligatoire.');
  elsif length(v_last_name) > 100 then
    v_errors := app_hidden.add_error(v_errors, 'last_name', 'Au plus 100 caractères.');
  end if;

  v_email := case when p_body ? 'professional_email' then app_hidden.in_trimmed(p_body, 'professional_email')
                  else v_old.professional_email end;
  if p_body ? 'professional_email' and v_email is not null
     and (v_email !~ '^[^@\s]+@[^@\s]+\.[^@\s]+$' or length(v_email) > 254) then
    v_errors := app_hidden.add_error(v_errors, 'professional_email', 'Adresse e-mail invalide (exemple : prenom.nom@etablissement.fr).');
  elsif not v_creating and v_email is distinct from v_old.professional_email
        and not app_hidden.account_rights_covered(app_private.employee_account_id(p_id)) then
    -- The address receives the password-reset links of the account: changing it hands the
    -- account over (issue 11).
    v_errors := app_hidden.add_error(v_errors, 'professional_email',
      'Ce compte détient des droits que vous ne couvrez pas : seul un responsable qui les couvre peut changer '
      'son adresse e-mail (elle reçoit les liens de réinitialisation du mot de passe).');
  end if;

  v_birth_date := case when p_body ? 'birth_date' then app_hidden.in_date(p_body, 'birth_date') else v_old.birth_date end;
  if p_body ? 'birth_date' and v_birth_date is not null
     and (v_birth_date >= app_hidden.today() or v_birth_date < date '1900-01-01') then
    v_errors := app_hidden.add_error(v_errors, 'birth_date', 'Date de naissance invalide : elle doit être passée et postérieure au 01/01/1900.');
  end if;

  v_polyvalent := coalesce(app_hidden.in_bool(p_body, 'is_polyvalent'), v_old.is_polyvalent, false);

  v_main := case when p_body ? 'main_establishment' then app_hidden.in_int(p_body, 'main_establishment')
                 else v_old.main_establishment_id end;
  if p_body ? 'main_establishment' and v_main is not null
     and not exists (select 1 from app_public.establishments e where e.id = v_main) then
    v_errors := app_hidden.add_error(v_errors, 'main_establishment', format('Établissement n° %s introuvable.', v_main));
  elsif v_scope is not null and (v_creating or v_main is distinct from v_old.main_establishment_id) then
    if v_main is null then
      v_errors := app_hidden.add_error(v_errors, 'main_establishment',
        'Choisissez un établissement principal de votre périmètre : sans lui, la fiche sortirait de votre périmètre.');
    elsif not v_main = any (v_scope) then
      v_errors := app_hidden.add_error(v_errors, 'main_establishment', 'Cet établissement n''est pas dans votre périmètre.');
    end if;
  end if;

  v_old_secondaries := case when v_creating then '{}'::int[]
                            else array(select ses.establishment_id from app_public.employee_secondary_establishments ses
                                       where ses.employee_id = p_id) end;
  v_secondaries := app_hidden.in_ids(p_body, 'secondary_establishments');
  if v_secondaries is not null then
    if exists (select 1 from unnest(v_secondaries) s(id)
               where not exists (select 1 from app_public.establishments e where e.id = s.id)) then
      v_errors := app_hidden.add_error(v_errors, 'secondary_establishments',
        format('Établissement introuvable : %s.', (select string_agg(s.id::text, ', ') from unnest(v_secondaries) s(id)
                                                   where not exists (select 1 from app_public.establishments e where e.id = s.id))));
    elsif v_main = any (v_secondaries) then
      v_errors := app_hidden.add_error(v_errors, 'secondary_establishments',
        'L''établissement principal ne peut pas être aussi un établissement secondaire.');
    elsif v_scope is not null and exists (
        select 1 from ((select unnest(v_secondaries) except select unnest(v_old_secondaries))
                       union
                       (select unnest(v_old_secondaries) except select unnest(v_secondaries))) d(id)
        where not d.id = any (v_scope)) then
      v_errors := app_hidden.add_error(v_errors, 'secondary_establishments',
        'Vous ne pouvez ajouter ou retirer que des établissements de votre périmètre.');
    end if;
  end if;

  if p_body ? 'social_security_number' then
    v_ssn := upper(replace(app_hidden.in_trimmed(p_body, 'social_security_number'), ' ', ''));
    if v_ssn is not null
       and v_ssn !~ '^[12][0-9]{2}(0[1-9]|1[0-2]|[2-9][0-9])(2[AB]|[0-9]{2})[0-9]{6}([0-9]{2})?$' then
      v_errors := app_hidden.add_error(v_errors, 'social_security_number',
        'Numéro de sécurité sociale invalide : 13 chiffres, ou 15 avec la clé (exemple : 2850175123456).');
    end if;
  end if;

  if p_body ? 'username' then
    if not v_creating then
      v_errors := app_hidden.add_error(v_errors, 'username', 'L''identifiant se choisit à la création de la fiche seulement.');
    else
      v_username := app_hidden.in_trimmed(p_body, 'username');
      if v_username is not null and v_username !~ '^[A-Za-z0-9._@+\-]{2,150}$' then
        v_errors := app_hidden.add_error(v_errors, 'username',
          'Identifiant invalide : de 2 à 150 caractères parmi lettres, chiffres et . _ @ + -.');
      elsif v_username is not null and app_private.username_taken(v_username) then
        v_errors := app_hidden.add_error(v_errors, 'username', format('L''identifiant « %s » est déjà utilisé.', v_username));
      end if;
    end if;
  end if;

  -- Contracts: the list sent replaces the record's contracts (an item with id updates that
  -- contract, an item without id creates one, a contract left out is deleted).
  v_contracts := app_hidden.in_array(p_body, 'contracts');
  if v_contracts is not null then
    v_ranges := '{}';
    v_starts := '{}';
    for i in 0 .. jsonb_array_length(v_contracts) - 1 loop
      v_item := v_contracts -> i;
      v_label := format('Contrat n° %s : ', i + 1);
      if jsonb_typeof(v_item) <> 'object' then
        v_errors := app_hidden.add_error(v_errors, 'contracts', v_label || 'un objet est attendu.');
        continue;
      end if;
      v_item_id := app_hidden.in_int(v_item, 'id', 'contracts');
      if v_item_id is not null and (v_creating or not exists (select 1 from app_public.contracts c
                                                            where c.id = v_item_id and c.employee_id = p_id)) then
        v_errors := app_hidden.add_error(v_errors, 'contracts', v_label || 'ce contrat n''appartient pas à ce salarié.');
      end if;
      v_type := app_hidden.in_int(v_item, 'type', 'contracts');
      if v_type is null then
        v_errors := app_hidden.add_error(v_errors, 'contracts', v_label || 'le type de contrat est obligatoire.');
      elsif not exists (select 1 from app_public.contract_types ct where ct.id = v_type) then
        v_errors := app_hidden.add_error(v_errors, 'contracts', v_label || format('type de contrat n° %s introuvable.', v_type));
      end if;
      v_start := app_hidden.in_date(v_item, 'start_date', 'contracts');
      v_end := app_hidden.in_date(v_item, 'end_date', 'contracts');
      v_trial := app_hidden.in_date(v_item, 'trial_end_date', 'contracts');
      if v_start is null then
        v_errors := app_hidden.add_error(v_errors, 'contracts', v_label || 'la date de début est obligatoire.');
      else
        if v_end < v_start then
          v_errors := app_hidden.add_error(v_errors, 'contracts', v_label || 'la date de fin précède la date de début.');
        end if;
        if v_trial < v_start then
          v_errors := app_hidden.add_error(v_errors, 'contracts', v_label || 'la fin de période d''essai précède la date de début.');
        elsif v_trial > v_end then
          v_errors := app_hidden.add_error(v_errors, 'contracts', v_label || 'la fin de période d''essai dépasse la fin du contrat.');
        end if;
      end if;
      v_job := app_hidden.in_trimmed(v_item, 'job_title', 'contracts');
      if length(v_job) > 200 then
        v_errors := app_hidden.add_error(v_errors, 'contracts', v_label || 'l''intitulé de poste fait au plus 200 caractères.');
      end if;
      v_hours := app_hidden.in_numeric(v_item, 'weekly_hours', 'contracts');
      if v_hours is not null and (v_hours <= 0 or v_hours > 48) then
        v_errors := app_hidden.add_error(v_errors, 'contracts', v_label || 'la durée hebdomadaire doit être comprise entre 0 et 48 heures.');
      end if;
      if v_start is not null and (v_end is null or v_end >= v_start) then
        for j in 1 .. coalesce(array_length(v_ranges, 1), 0) loop
          if v_ranges[j] && daterange(v_start, v_end, '[]') then
            v_errors := app_hidden.add_error(v_errors, 'contracts',
              format('Les contrats n° %s et n° %s se chevauchent : un salarié a un seul contrat à la fois.', j, i + 1));
          end if;
        end loop;
      end if;
      v_ranges := v_ranges || case when v_start is not null and (v_end is null or v_end >= v_start)
                                   then daterange(v_start, v_end, '[]') else 'empty'::daterange end;
    end loop;
  end if;

  -- Team assignments: same replacement rule; a restricted writer adds, changes or removes
  -- only assignments to teams having an establishment in their perimeter.
  v_teams := app_hidden.in_array(p_body, 'teams');
  if v_teams is not null then
    v_ranges := '{}';
    v_team_ids := '{}';
    for i in 0 .. jsonb_array_length(v_teams) - 1 loop
      v_item := v_teams -> i;
      v_label := format('Affectation n° %s : ', i + 1);
      if jsonb_typeof(v_item) <> 'object' then
        v_errors := app_hidden.add_error(v_errors, 'teams', v_label || 'un objet est attendu.');
        v_ranges := v_ranges || 'empty'::daterange;
        v_team_ids := v_team_ids || null::int;
        continue;
      end if;
      v_item_id := app_hidden.in_int(v_item, 'id', 'teams');
      v_existing := null;
      if v_item_id is not null then
        select * into v_existing from app_public.team_assignments ta where ta.id = v_item_id and ta.employee_id = p_id;
        if v_creating or v_existing.id is null then
          v_errors := app_hidden.add_error(v_errors, 'teams', v_label || 'cette affectation n''appartient pas à ce salarié.');
        end if;
      end if;
      v_team := app_hidden.in_int(v_item, 'team', 'teams');
      v_start := app_hidden.in_date(v_item, 'start_date', 'teams');
      v_end := app_hidden.in_date(v_item, 'end_date', 'teams');
      if v_team is null then
        v_errors := app_hidden.add_error(v_errors, 'teams', v_label || 'l''équipe est obligatoire.');
      elsif not exists (select 1 from app_public.teams t where t.id = v_team) then
        v_errors := app_hidden.add_error(v_errors, 'teams', v_label || format('équipe n° %s introuvable.', v_team));
      elsif v_scope is not null
            and (v_existing.id is null or v_existing.team_id <> v_team or v_existing.start_date is distinct from v_start
                 or v_existing.end_date is distinct from v_end)
            and not exists (select 1 from app_public.team_establishments te
                            where te.team_id = v_team and te.establishment_id = any (v_scope)) then
        v_errors := app_hidden.add_error(v_errors, 'teams', v_label || 'cette équipe n''a aucun établissement dans votre périmètre.');
      end if;
      if v_end < v_start then
        v_errors := app_hidden.add_error(v_errors, 'teams', v_label || 'la date de fin précède la date de début.');
      elsif v_team is not null then
        for j in 1 .. coalesce(array_length(v_ranges, 1), 0) loop
          if v_team_ids[j] = v_team and v_ranges[j] && daterange(v_start, v_end, '[]') then
            v_errors := app_hidden.add_error(v_errors, 'teams',
              format('Les affectations n° %s et n° %s à la même équipe se chevauchent.', j, i + 1));
          end if;
        end loop;
      end if;
      v_ranges := v_ranges || case when v_end is null or v_start is null or v_end >= v_start
                                   then daterange(v_start, v_end, '[]') else 'empty'::daterange end;
      v_team_ids := v_team_ids || v_team;
    end loop;
    if v_scope is not null and not v_creating and exists (
        select 1 from app_public.team_assignments ta
        where ta.employee_id = p_id
          and not ta.id in (select (x ->> 'id')::int from jsonb_array_elements(v_teams) x
                            where jsonb_typeof(x) = 'object' and jsonb_typeof(x -> 'id') = 'number')
          and not exists (select 1 from app_public.team_establishments te
                          where te.team_id = ta.team_id and te.establishment_id = any (v_scope))) then
      v_errors := app_hidden.add_error(v_errors, 'teams',
        'Vous ne pouvez pas retirer une affectation à une équipe hors de votre périmètre.');
    end if;
  end if;

  perform app_hidden.invalid_fields(v_errors, 'WV501') where v_errors <> '{}'::jsonb;

  -- Writes.
  if v_creating then
    insert into app_public.employees (first_name, last_name, professional_email, birth_date, is_polyvalent,
                                      main_establishment_id)
    values (v_first_name, v_last_name, v_email, v_birth_date, v_polyvalent, v_main);
    -- Not RETURNING: the new row is not yet in the snapshot the read policy consults.
    v_id := currval(pg_get_serial_sequence('app_public.employees', 'id'));
  else
    update app_public.employees e
    set first_name = v_first_name, last_name = v_last_name, professional_email = v_email,
        birth_date = v_birth_date, is_polyvalent = v_polyvalent, main_establishment_id = v_main
    where e.id = p_id
      and (e.first_name, e.last_name, e.professional_email, e.birth_date, e.is_polyvalent, e.main_establishment_id)
          is distinct from (v_first_name, v_last_name, v_email, v_birth_date, v_polyvalent, v_main);
    if v_email is distinct from v_old.professional_email then
      perform app_private.tell_email_changed(p_id, v_old.professional_email, v_email);
    end if;
  end if;

  if p_body ? 'social_security_number' then
    -- Created records: the number needs the right on the new record too.
    if v_creating and not app_hidden.may(v_me, 'employee.view_social_security_number', v_id) then
      perform app_hidden.forbidden('Vous n''avez pas le droit d''écrire le numéro de sécurité sociale de ce salarié : '
                                   'retirez ce champ de la requête.', 'WF501');
    end if;
    if v_ssn is null then
      delete from app_public.employee_social_security_numbers s where s.employee_id = v_id;
    else
      insert into app_public.employee_social_security_numbers (employee_id, social_security_number)
      values (v_id, v_ssn)
      on conflict (employee_id) do update set social_security_number = excluded.social_security_number
      where app_public.employee_social_security_numbers.social_security_number is distinct from excluded.social_security_number;
    end if;
  end if;

  if v_secondaries is not null then
    delete from app_public.employee_secondary_establishments ses
    where ses.employee_id = v_id and not ses.establishment_id = any (v_secondaries);
    insert into app_public.employee_secondary_establishments (employee_id, establishment_id)
    select v_id, s.id from unnest(v_secondaries) s(id)
    on conflict do nothing;
  end if;

  if v_contracts is not null then
    delete from app_public.contracts c
    where c.employee_id = v_id
      and not c.id in (select (x ->> 'id')::int from jsonb_array_elements(v_contracts) x where x ? 'id' and x ->> 'id' is not null);
    for v_item in select x from jsonb_array_elements(v_contracts) x loop
      v_item_id := app_hidden.in_int(v_item, 'id', 'contracts');
      if v_item_id is null then
        insert into app_public.contracts (employee_id, contract_type_id, start_date, end_date, trial_end_date, job_title, weekly_hours)
        values (v_id, app_hidden.in_int(v_item, 'type'), app_hidden.in_date(v_item, 'start_date'),
                app_hidden.in_date(v_item, 'end_date'), app_hidden.in_date(v_item, 'trial_end_date'),
                app_hidden.in_trimmed(v_item, 'job_title'), app_hidden.in_numeric(v_item, 'weekly_hours'));
      else
        update app_public.contracts c
        set contract_type_id = app_hidden.in_int(v_item, 'type'), start_date = app_hidden.in_date(v_item, 'start_date'),
            end_date = app_hidden.in_date(v_item, 'end_date'), trial_end_date = app_hidden.in_date(v_item, 'trial_end_date'),
            job_title = app_hidden.in_trimmed(v_item, 'job_title'), weekly_hours = app_hidden.in_numeric(v_item, 'weekly_hours')
        where c.id = v_item_id
          and (c.contract_type_id, c.start_date, c.end_date, c.trial_end_date, c.job_title, c.weekly_hours)
              is distinct from (app_hidden.in_int(v_item, 'type'), app_hidden.in_date(v_item, 'start_date'),
                                app_hidden.in_date(v_item, 'end_date'), app_hidden.in_date(v_item, 'trial_end_date'),
                                app_hidden.in_trimmed(v_item, 'job_title'), app_hidden.in_numeric(v_item, 'weekly_hours'));
      end if;
    end loop;
  end if;

  if v_teams is not null then
    delete from app_public.team_assignments ta
    where ta.employee_id = v_id
      and not ta.id in (select (x ->> 'id')::int from jsonb_array_elements(v_teams) x where x ? 'id' and x ->> 'id' is not null);
    for v_item in select x from jsonb_array_elements(v_teams) x loop
      v_item_id := app_hidden.in_int(v_item, 'id', 'teams');
      if v_item_id is null then
        insert into app_public.team_assignments (employee_id, team_id, start_date, end_date)
        values (v_id, app_hidden.in_int(v_item, 'team'), app_hidden.in_date(v_item, 'start_date'), app_hidden.in_date(v_item, 'end_date'));
      else
        update app_public.team_assignments ta
        set team_id = app_hidden.in_int(v_item, 'team'), start_date = app_hidden.in_date(v_item, 'start_date'),
            end_date = app_hidden.in_date(v_item, 'end_date')
        where ta.id = v_item_id
          and (ta.team_id, ta.start_date, ta.end_date)
              is distinct from (app_hidden.in_int(v_item, 'team'), app_hidden.in_date(v_item, 'start_date'),
                                app_hidden.in_date(v_item, 'end_date'));
      end if;
    end loop;
  end if;

  return v_id;
end;
$$;

-- POST /api/employees/: the record, its contracts and assignments, and its account (no
-- usable password; invitation queued when a professional e-mail exists).
create or replace function app_public.employee_create(p_body jsonb) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_id int;
  v_account jsonb;
  v_doc jsonb;
begin
  v_id := app_hidden.employee_save(null, p_body, false);
  v_account := app_private.open_employee_account(v_id, app_hidden.in_trimmed(p_body, 'username'));
  select j.doc into v_doc from app_hidden.employees_json(array[v_id]) j;
  return v_doc || jsonb_build_object('account', (v_account - 'invitation_queued') || jsonb_build_object('is_active', true),
                                     'invitation_queued', (v_account ->> 'invitation_queued')::boolean);
end;
$$;

-- PATCH /api/employees/<id>/: only the keys sent.
create or replace function app_public.employee_update(p_id int, p_body jsonb) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_doc jsonb;
begin
  perform app_hidden.employee_save(p_id, p_body, true);
  select j.doc into v_doc from app_hidden.employees_json(array[p_id]) j;
  return v_doc;
end;
$$;

-- PUT /api/employees/<id>/: first_name and last_name required; other keys as PATCH (lists
-- absent stay as they are).
create or replace function app_public.employee_replace(p_id int, p_body jsonb) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_doc jsonb;
begin
  perform app_hidden.employee_save(p_id, p_body, false);
  select j.doc into v_doc from app_hidden.employees_json(array[p_id]) j;
  return v_doc;
end;
$$;
--! EndIncluded employees/api.sql
--! Included events/api.sql
-- /api/events/ and /api/events/participant-options/.
--
-- Without a parameter, lists are restricted to the caller's perimeter: events of an
-- establishment of app_hidden.scope_establishment_ids, events with a participant attached to
-- one of them, and the events the caller created or takes part in. scope=all lifts the
-- restriction (within what the caller may read).
--
-- Conflict alert: creating or updating an event whose participant has an absence (pending,
-- validated or cancellation requested) overlapping the event answers a `warnings` list and,
-- inside the same transaction, notifies through app_private.notify the author and the
-- deciders of the participant's absences (the participant is not notified of their own
-- absence). An update notifies only the conflicts it creates. Warnings and alerts name only
-- the absences the author reads; participants added are of the author's perimeter (404).

create or replace function app_hidden.events_json(p_ids int[]) returns table (id int, doc jsonb)
language sql stable as $$
  with participants as (
    select ep.event_id,
           jsonb_agg(jsonb_build_object('employee', ep.employee_id, 'employee_name', n.name)
                     order by n.name, ep.employee_id) as list
    from app_public.event_participants ep
    join app_hidden.employee_names(array(select x.employee_id from app_public.event_participants x
                                         where x.event_id = any (p_ids))) n on n.id = ep.employee_id
    where ep.event_id = any (p_ids)
    group by ep.event_id
  ),
  authors as (
    select * from app_hidden.account_names(array(select ev.created_by from app_public.events ev where ev.id = any (p_ids)))
  )
  select ev.id,
         jsonb_build_object('id', ev.id, 'title', ev.title, 'description', ev.description,
                            'establishment', ev.establishment_id, 'establishment_name', est.name,
                            'start_at', ev.start_at, 'end_at', ev.end_at,
                            'participants', coalesce(p.list, '[]'::jsonb),
                            'created_by', ev.created_by, 'created_by_name', au.name,
                            'created_at', ev.created_at, 'updated_at', ev.updated_at,
                            'warnings', null)
  from app_public.events ev
  left join app_public.establishments est on est.id = ev.establishment_id
  left join participants p on p.event_id = ev.id
  left join authors au on au.id = ev.created_by
  where ev.id = any (p_ids);
$$;

-- GET /api/events/?scope=&from=&to=&establishment=&employee=
create or replace function app_public.events_list(p_scope text default null, p_from date default null, p_to date default null,
                                       p_establishment int default null, p_employee int default null,
                                       p_page int default 1, p_page_size int default 50)
returns jsonb
language sql stable as $$
  with scope as (
    select app_hidden.scope_establishment_ids() as ids where p_scope is distinct from 'all'
  ),
  scope_employees as (
    select x.id from scope, lateral app_hidden.employees_of_establishments(scope.ids, app_hidden.today()) x(id)
    where scope.ids is not null
  ),
  filtered as (
    select ev.id, ev.start_at from app_public.events ev
    where (p_scope = 'all' or (select s.ids from scope s) is null
           or ev.establishment_id = any (coalesce((select s.ids from scope s), '{}'))
           or ev.created_by = app_hidden.current_account_id()
           or exists (select 1 from app_public.event_participants ep
                      where ep.event_id = ev.id
                        and (ep.employee_id = app_hidden.current_employee_id()
                             or ep.employee_id in (select se.id from scope_employees se))))
      and (p_from is null or ev.end_at > (p_from::timestamp at time zone app_hidden.business_timezone()))
      and (p_to is null or ev.start_at < ((p_to + 1)::timestamp at time zone app_hidden.business_timezone()))
      and (p_establishment is null or ev.establishment_id = p_establishment)
      and (p_employee is null or exists (select 1 from app_public.event_participants ep
                                         where ep.event_id = ev.id and ep.employee_id = p_employee))
  ),
  page as (
    select f.id, row_number() over (order by f.start_at, f.id) as ord
    from filtered f order by ord limit app_hidden.page_limit(p_page_size) offset app_hidden.page_offset(p_page, p_page_size)
  )
  select jsonb_build_object(
    'count', (select count(*) from filtered),
    'results', coalesce((select jsonb_agg(j.doc order by p.ord)
                         from page p join app_hidden.events_json(array(select pg.id from page pg)) j on j.id = p.id),
                        '[]'::jsonb));
$$;

-- GET /api/events/<id>/
create or replace function app_public.event_get(p_id int) returns jsonb
language plpgsql stable as $$
declare
  v_doc jsonb;
begin
  select j.doc into v_doc from app_hidden.events_json(array[p_id]) j;
  if v_doc is null then
    perform app_hidden.not_found('Événement introuvable.');
  end if;
  return v_doc;
end;
$$;

-- GET /api/events/participant-options/?scope=&search=: the employees the caller may invite.
-- Without a parameter, the employees of its events.change_event perimeter; scope=all, every
-- employee it reads in the directory.
create or replace function app_public.event_participant_options(p_scope text default null, p_search text default null,
                                                     p_page int default 1, p_page_size int default 50)
returns jsonb
language plpgsql stable as $$
begin
  if not app_hidden.current_account_has('events.change_event') then
    perform app_hidden.forbidden('Vous n''avez pas le droit de créer des événements.', 'WF530');
  end if;
  return (
    with perimeter as (
      select x.id from app_hidden.perimeter_employee_ids('events.change_event') x(id) where p_scope is distinct from 'all'
    ),
    filtered as (
      select e.id, e.first_name, e.last_name, e.main_establishment_id from app_public.employees e
      where (p_scope = 'all' or e.id in (select p.id from perimeter p))
        and (coalesce(btrim(p_search), '') = ''
             or e.first_name || ' ' || e.last_name ilike app_hidden.like_pattern(p_search)
             or e.last_name || ' ' || e.first_name ilike app_hidden.like_pattern(p_search))
    ),
    page as (
      select f.*, row_number() over (order by lower(f.last_name), lower(f.first_name), f.id) as ord
      from filtered f order by ord limit app_hidden.page_limit(p_page_size) offset app_hidden.page_offset(p_page, p_page_size)
    )
    select jsonb_build_object(
      'count', (select count(*) from filtered),
      'results', coalesce((select jsonb_agg(jsonb_build_object('id', p.id, 'name', p.first_name || ' ' || p.last_name,
                                                               'main_establishment', p.main_establishment_id,
                                                               'main_establishment_name', est.name) order by p.ord)
                           from page p left join app_public.establishments est on est.id = p.main_establishment_id),
                          '[]'::jsonb)));
end;
$$;

-- Absences of the event's participants that overlap it (whatever the caller may read).
create or replace function app_private.event_absence_conflicts(p_event_id int)
returns table (employee_id int, absence_id int, status text, date_start date, date_end date)
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select a.employee_id, a.id, a.status, a.date_start, a.date_end
  from app_public.events ev
  join app_public.event_participants ep on ep.event_id = ev.id
  join app_public.absences a on a.employee_id = ep.employee_id
  where ev.id = p_event_id
    and a.status in ('pending', 'validated', 'cancellation_requested')
    and a.period && tsrange(ev.start_at at time zone app_hidden.business_timezone(),
                            ev.end_at at time zone app_hidden.business_timezone())
  order by a.date_start, a.id;
$$;

create or replace function app_hidden.event_conflict_text(p_employee int, p_status text, p_start date, p_end date) returns text
language sql stable as $$
  select format('%s a une absence %s %s qui chevauche cet événement.',
                (select n.name from app_hidden.employee_names(array[p_employee]) n),
                case p_status when 'pending' then 'en attente de décision'
                              when 'cancellation_requested' then 'validée (annulation demandée)'
                              else 'validée' end,
                case when p_start = p_end then 'le ' || app_hidden.fr_date(p_start)
                     else format('du %s au %s', app_hidden.fr_date(p_start), app_hidden.fr_date(p_end)) end);
$$;

-- Warnings of the event, and the alerts of the conflicts not in p_known (absence ids).
create or replace function app_private.event_conflicts_alert(p_event_id int, p_known int[]) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_author int := app_hidden.current_account_id();
  v_event app_public.events;
  v_conflict record;
  v_text text;
  v_warnings jsonb := '[]';
  v_recipient int;
begin
  select * into v_event from app_public.events ev where ev.id = p_event_id;
  -- Only the absences the author reads are named, in the warnings and in the alerts.
  for v_conflict in select c.* from app_private.event_absence_conflicts(p_event_id) c
                    where c.employee_id in (select app_hidden.absence_api_reader_ids()) loop
    v_text := app_hidden.event_conflict_text(v_conflict.employee_id, v_conflict.status,
                                             v_conflict.date_start, v_conflict.date_end);
    v_warnings := v_warnings || to_jsonb(v_text);
    if v_conflict.absence_id = any (coalesce(p_known, '{}')) then
      continue;
    end if;
    for v_recipient in
      select r from (select v_author as r
                     union
                     select app_private.route_deciders(v_conflict.employee_id,
                                                       greatest(v_conflict.date_start,
                                                                app_hidden.business_date(v_event.start_at)),
                                                       'absences.decide_absence', v_author)) x
      where r is not null and r is distinct from app_private.employee_account_id(v_conflict.employee_id)
    loop
      perform app_private.notify(v_recipient, 'Conflit entre un événement et une absence',
        format('%s a une absence %s %s qui chevauche l''événement « %s » du %s.',
               app_hidden.employee_name(v_conflict.employee_id),
               case v_conflict.status when 'pending' then 'en attente de décision'
                                      when 'cancellation_requested' then 'validée (annulation demandée)'
                                      else 'validée' end,
               case when v_conflict.date_start = v_conflict.date_end then 'le ' || app_hidden.fr_date(v_conflict.date_start)
                    else format('du %s au %s', app_hidden.fr_date(v_conflict.date_start), app_hidden.fr_date(v_conflict.date_end)) end,
               v_event.title, app_hidden.fr_date(app_hidden.business_date(v_event.start_at))),
        'warning', 'event', p_event_id);
    end loop;
  end loop;
  return v_warnings;
end;
$$;

-- Validation and write of an event (creation: p_id null). Returns the event id.
create or replace function app_hidden.event_save(p_id int, p_body jsonb, p_partial boolean) returns int
language plpgsql volatile as $$
declare
  v_old app_public.events;
  v_errors jsonb := '{}';
  v_title text;
  v_description text;
  v_establishment int;
  v_start timestamptz;
  v_end timestamptz;
  v_participants int[];
  v_missing text;
  v_id int := p_id;
begin
  if p_id is not null then
    select * into v_old from app_public.events ev where ev.id = p_id;
    if not found then
      perform app_hidden.not_found('Événement introuvable.');
    end if;
  end if;
  if not app_hidden.current_account_has('events.change_event') then
    perform app_hidden.forbidden('Vous n''avez pas le droit de créer ou de modifier des événements.', 'WF530');
  end if;
  if p_id is not null then
    if not p_id in (select app_hidden.writable_event_ids()) then
      perform app_hidden.forbidden('Vous ne modifiez que les événements que vous avez créés ou ceux d''un établissement de votre périmètre.', 'WF531');
    end if;
    perform 1 from app_public.events ev where ev.id = p_id for update;
  end if;

  v_title := coalesce(app_hidden.in_trimmed(p_body, 'title'), case when p_body ? 'title' then null else v_old.title end);
  if (p_id is null or not p_partial or p_body ? 'title') and app_hidden.in_trimmed(p_body, 'title') is null then
    v_errors := app_hidden.add_error(v_errors, 'title', 'Le titre est obligatoire.');
  elsif length(v_title) > 200 then
    v_errors := app_hidden.add_error(v_errors, 'title', 'Au plus 200 caractères.');
  end if;
  v_description := case when p_body ? 'description' then app_hidden.in_trimmed(p_body, 'description') else v_old.description end;
  if length(v_description) > 5000 then
    v_errors := app_hidden.add_error(v_errors, 'description', 'Au plus 5000 caractères.');
  end if;

  v_start := case when p_body ? 'start_at' then app_hidden.in_timestamptz(p_body, 'start_at') else v_old.start_at end;
  v_end := case when p_body ? 'end_at' then app_hidden.in_timestamptz(p_body, 'end_at') else v_old.end_at end;
  if v_start is null then
    v_errors := app_hidden.add_error(v_errors, 'start_at', 'Le début est obligatoire.');
  end if;
  if v_end is null then
    v_errors := app_hidden.add_error(v_errors, 'end_at', 'La fin est obligatoire.');
  elsif v_end <= v_start then
    v_errors := app_hidden.add_error(v_errors, 'end_at', 'La fin doit suivre le début.');
  end if;

  v_establishment := case when p_body ? 'establishment' then app_hidden.in_int(p_body, 'establishment') else v_old.establishment_id end;
  if p_body ? 'establishment' and v_establishment is not null then
    if not exists (select 1 from app_public.establishments e where e.id = v_establishment) then
      v_errors := app_hidden.add_error(v_errors, 'establishment', format('Établissement n° %s introuvable.', v_establishment));
    elsif v_establishment is distinct from v_old.establishment_id
          and not app_hidden.event_establishment_allowed(v_establishment) then
      v_errors := app_hidden.add_error(v_errors, 'establishment', 'Cet établissement n''est pas dans votre périmètre.');
    end if;
  end if;

  v_participants := app_hidden.in_ids(p_body, 'participants');
  if v_participants is null and p_id is null then
    v_participants := '{}';
  end if;
  if cardinality(v_participants) > 500 then
    v_errors := app_hidden.add_error(v_errors, 'participants', 'Au plus 500 participants.');
  elsif v_participants is not null then
    -- Participants are employees the author reads in the directory.
    select string_agg(x.id::text, ', ' order by x.id) into v_missing
    from unnest(v_participants) x(id)
    where not exists (select 1 from app_public.employees e where e.id = x.id);
    if v_missing is not null then
      v_errors := app_hidden.add_error(v_errors, 'participants', format('Salarié introuvable : %s.', v_missing));
    end if;
  end if;
  perform app_hidden.invalid_fields(v_errors, 'WV530') where v_errors <> '{}'::jsonb;
  -- A participant added is oneself or an employee of the events.change_event perimeter: an
  -- employee outside is not found (the conflict warnings would otherwise reveal absences).
  -- Participants already on the event stay.
  select string_agg(x.id::text, ', ' order by x.id) into v_missing
  from unnest(v_participants) x(id)
  where not app_hidden.is_current_employee(x.id)
    and not exists (select 1 from app_public.event_participants ep where ep.event_id = p_id and ep.employee_id = x.id)
    and not exists (select 1 from app_hidden.perimeter_employee_ids('events.change_event') pe(id) where pe.id = x.id);
  if v_missing is not null then
    perform app_hidden.not_found(format('Salarié introuvable dans votre périmètre : %s.', v_missing), 'WN530');
  end if;

  if p_id is null then
    insert into app_public.events (title, description, establishment_id, start_at, end_at, created_by)
    values (v_title, v_description, v_establishment, v_start, v_end, app_hidden.current_account_id());
    -- Not RETURNING: the new row is not yet in the snapshot the read policy consults.
    v_id := currval(pg_get_serial_sequence('app_public.events', 'id'));
  else
    update app_public.events ev
    set title = v_title, description = v_description, establishment_id = v_establishment, start_at = v_start, end_at = v_end
    where ev.id = p_id
      and (ev.title, ev.description, ev.establishment_id, ev.start_at, ev.end_at)
          is distinct from (v_title, v_description, v_establishment, v_start, v_end);
  end if;
  if v_participants is not null then
    delete from app_public.event_participants ep where ep.event_id = v_id and not ep.employee_id = any (v_participants);
    insert into app_public.event_participants (event_id, employee_id)
    select v_id, x.id from unnest(v_participants) x(id)
    on conflict do nothing;
  end if;
  return v_id;
end;
$$;

-- POST /api/events/
create or replace function app_public.event_create(p_body jsonb) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_id int;
  v_warnings jsonb;
begin
  v_id := app_hidden.event_save(null, p_body, false);
  v_warnings := app_private.event_conflicts_alert(v_id, '{}');
  return app_public.event_get(v_id) || jsonb_build_object('warnings', v_warnings);
end;
$$;

-- PATCH /api/events/<id>/: only the keys sent.
create or replace function app_public.event_update(p_id int, p_body jsonb) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_known int[];
  v_warnings jsonb;
begin
  v_known := array(select c.absence_id from app_private.event_absence_conflicts(p_id) c
                   where p_id in (select app_hidden.readable_event_ids()));
  perform app_hidden.event_save(p_id, p_body, true);
  v_warnings := app_private.event_conflicts_alert(p_id, v_known);
  return app_public.event_get(p_id) || jsonb_build_object('warnings', v_warnings);
end;
$$;

-- PUT /api/events/<id>/: title, start_at and end_at required.
create or replace function app_public.event_replace(p_id int, p_body jsonb) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_known int[];
  v_warnings jsonb;
begin
  v_known := array(select c.absence_id from app_private.event_absence_conflicts(p_id) c
                   where p_id in (select app_hidden.readable_event_ids()));
  perform app_hidden.event_save(p_id, p_body, false);
  v_warnings := app_private.event_conflicts_alert(p_id, v_known);
  return app_public.event_get(p_id) || jsonb_build_object('warnings', v_warnings);
end;
$$;

-- DELETE /api/events/<id>/
create or replace function app_public.event_delete(p_id int) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  if not exists (select 1 from app_public.events ev where ev.id = p_id) then
    perform app_hidden.not_found('Événement introuvable.');
  end if;
  if not app_hidden.current_account_has('events.change_event') then
    perform app_hidden.forbidden('Vous n''avez pas le droit de supprimer des événements.', 'WF530');
  end if;
  if not p_id in (select app_hidden.writable_event_ids()) then
    perform app_hidden.forbidden('Vous ne supprimez que les événements que vous avez créés ou ceux d''un établissement de votre périmètre.', 'WF531');
  end if;
  delete from app_public.events ev where ev.id = p_id;
  return null;
end;
$$;
--! EndIncluded events/api.sql
--! Included impersonation/api.sql
-- Impersonation (POST /api/auth/impersonate/, only when ALLOW_IMPERSONATION is on): a
-- superuser obtains a token whose subject is another account and whose `act` claim names
-- the superuser. The start is audited (verb Impersonation, model account); every audit line
-- written with such a token carries the impersonator (app_private.begin_request sets
-- app.impersonator_id, app_private.write_audit records it).
-- Off unless the server turns it on for the transaction (app.allow_impersonation = 'on', set
-- by the REST route when ALLOW_IMPERSONATION is on): any other caller (GraphQL, a future
-- route) is refused as by an unknown address, and nothing is written.

-- The account to impersonate, whatever the caller may read of accounts.
create or replace function app_private.impersonation_target(p_account int)
returns table (id int, username text, employee_id int, is_active boolean, is_superuser boolean)
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select a.id, a.username, a.employee_id, a.is_active, a.is_superuser from app_public.accounts a where a.id = p_account;
$$;

create or replace function app_public.impersonation_start(p_account int) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_me int := app_hidden.current_account_id();
  v_target record;
begin
  if coalesce(current_setting('app.allow_impersonation', true), '') <> 'on' then
    perform app_hidden.not_found('L''emprunt d''identité n''est pas activé sur ce service.', 'WN570');
  end if;
  if nullif(current_setting('app.impersonator_id', true), '') is not null then
    perform app_hidden.forbidden('Vous empruntez déjà l''identité d''un compte : reprenez d''abord votre propre session.', 'WF571');
  end if;
  if not app_hidden.current_account_is_superuser() then
    perform app_hidden.forbidden('Seul un superutilisateur peut emprunter l''identité d''un compte.', 'WF570');
  end if;
  if p_account is null then
    perform app_hidden.invalid('account', 'Le compte est obligatoire.', 'WV570');
  end if;
  select * into v_target from app_private.impersonation_target(p_account);
  if v_target.id is null then
    perform app_hidden.invalid('account', format('Compte n° %s introuvable.', p_account), 'WV570');
  elsif v_target.id = v_me then
    perform app_hidden.invalid('account', 'Vous ne pouvez pas emprunter votre propre identité.', 'WV570');
  elsif not v_target.is_active then
    perform app_hidden.invalid('account', 'Ce compte est fermé : son identité ne peut pas être empruntée.', 'WV570');
  elsif v_target.is_superuser then
    perform app_hidden.forbidden('L''identité d''un autre superutilisateur ne peut pas être empruntée.', 'WF572');
  end if;
  perform app_private.write_audit('Impersonation', 'account', v_target.id, null,
    jsonb_build_object('account', v_target.id, 'username', v_target.username,
                       'impersonator', v_me,
                       'impersonator_username', (select t.username from app_private.impersonation_target(v_me) t)));
  return jsonb_build_object(
    'account', jsonb_build_object('id', v_target.id, 'username', v_target.username, 'employee_id', v_target.employee_id),
    'impersonator', jsonb_build_object('id', v_me, 'username', (select t.username from app_private.impersonation_target(v_me) t)));
end;
$$;
--! EndIncluded impersonation/api.sql
--! Included graphql.sql
-- PostGraphile smart comments. /graphql offers the API functions only (src/graphql.ts leaves
-- every table out): the aggregates once opted in here on tables are gone with them.
comment on table app_public.absences is null;
comment on table app_public.shift_change_requests is null;
comment on table app_public.counters is null;
comment on table app_public.day_modifications is null;
comment on table app_public.events is null;
-- Impersonation hands out a token, which only the REST route signs: GraphQL does not offer it
-- (and the function refuses unless the server turned impersonation on, sql/impersonation/api.sql).
comment on function app_public.impersonation_start(int) is E'@behavior -*';
--! EndIncluded graphql.sql
--! Included backoffice/sessions.sql
-- Back-office authentication (SPEC Authentication rule 3): sessions with a second factor.
-- Secrets are never stored in clear: a session token is kept as its SHA-256, backup codes
-- as a keyed hash computed by the HTTP layer; the TOTP secret is stored encrypted by the
-- HTTP layer (AES-256-GCM), so that a copy of the database alone opens no session.

-- One row per browser session. stage 'pre' is the pre-authentication: it holds only the
-- account and the method of the second factor, and lives 10 minutes; 'full' is the
-- authenticated session, which dies after its idle time or its absolute lifetime.
create table if not exists app_private.backoffice_sessions (
  id bigint generated always as identity primary key,
  token_hash bytea not null unique,
  account_id int not null references app_public.accounts on delete cascade,
  stage text not null check (stage in ('pre', 'full')),
  -- pre: 'totp' (enrolled: TOTP or backup code) or 'enrol' (first login);
  -- full: 'totp', 'backup_code' or 'password' (the DEBUG-only bypass).
  method text not null check (method in ('totp', 'enrol', 'backup_code', 'password')),
  created_at timestamptz not null default app_hidden.now(),
  last_seen_at timestamptz not null default app_hidden.now(),
  expires_at timestamptz not null
);
create index if not exists backoffice_sessions_account_idx on app_private.backoffice_sessions (account_id);
alter table app_private.backoffice_sessions enable row level security;

-- The authenticator of an account. confirmed_at null: enrolment started, not confirmed.
-- last_step: the TOTP time step last accepted; a code of that step or an earlier one is refused.
create table if not exists app_private.backoffice_factors (
  account_id int primary key references app_public.accounts on delete cascade,
  secret_encrypted text not null,
  created_at timestamptz not null default app_hidden.now(),
  confirmed_at timestamptz,
  last_step bigint
);
alter table app_private.backoffice_factors enable row level security;

create table if not exists app_private.backoffice_backup_codes (
  id bigint generated always as identity primary key,
  account_id int not null references app_public.accounts on delete cascade,
  code_hash bytea not null,
  used_at timestamptz
);
create index if not exists backoffice_backup_codes_account_idx on app_private.backoffice_backup_codes (account_id);
alter table app_private.backoffice_backup_codes enable row level security;

insert into app_private.settings (key, value, description) values
  ('backoffice_preauth_minutes', '10', 'Durée de la pré-authentification du back-office (minutes)'),
  ('backoffice_idle_minutes', '30', 'Inactivité au-delà de laquelle une session du back-office expire (minutes)'),
  ('backoffice_session_hours', '12', 'Durée maximale d''une session du back-office (heures)')
on conflict (key) do nothing;

-- After a valid password: the state of the account's second factor.
create or replace function app_private.backoffice_login_state(p_account_id int) returns jsonb
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select jsonb_build_object(
    -- The rule of SPEC Authentication rule 3, shared with the audit log's reader check.
    'may_enter', app_hidden.account_has_backoffice_access(p_account_id),
    'enrolled', exists (select 1 from app_private.backoffice_factors f
                        where f.account_id = p_account_id and f.confirmed_at is not null));
$$;

-- Opens a session (pre or full) under a token hash. A full session is opened only for an
-- account that may enter; a pre-authentication lives backoffice_preauth_minutes.
create or replace function app_private.backoffice_session_open(p_token_hash bytea, p_account_id int, p_stage text, p_method text)
returns void
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  if not app_hidden.account_has_backoffice_access(p_account_id) then
    raise exception using errcode = 'WF070', message = 'Ce compte n''a pas accès au back-office.';
  end if;
  insert into app_private.backoffice_sessions (token_hash, account_id, stage, method, expires_at)
  values (p_token_hash, p_account_id, p_stage, p_method,
          app_hidden.now() + case p_stage
            when 'pre' then make_interval(mins => (app_hidden.setting('backoffice_preauth_minutes'))::int)
            else make_interval(hours => (app_hidden.setting('backoffice_session_hours'))::int) end);
end;
$$;

-- The live session of a token hash, touched (idle expiry runs from the last request).
-- Expired sessions, and sessions of an account that may no longer enter, are deleted and
-- give no row.
create or replace function app_private.backoffice_session_get(p_token_hash bytea)
returns table (account_id int, stage text, method text, username text, is_superuser boolean)
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_session app_private.backoffice_sessions;
begin
  select * into v_session from app_private.backoffice_sessions s where s.token_hash = p_token_hash;
  if not found then
    return;
  end if;
  if v_session.expires_at <= app_hidden.now()
     or (v_session.stage = 'full' and v_session.last_seen_at
         + make_interval(mins => (app_hidden.setting('backoffice_idle_minutes'))::int) <= app_hidden.now())
     or not app_hidden.account_has_backoffice_access(v_session.account_id) then
    delete from app_private.backoffice_sessions s where s.id = v_session.id;
    return;
  end if;
  update app_private.backoffice_sessions s set last_seen_at = app_hidden.now() where s.id = v_session.id;
  return query
    select v_session.account_id, v_session.stage, v_session.method, a.username, a.is_superuser
    from app_public.accounts a where a.id = v_session.account_id;
end;
$$;

create or replace function app_private.backoffice_session_close(p_token_hash bytea) returns void
language sql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
  delete from app_private.backoffice_sessions where token_hash = p_token_hash;
$$;

-- The factor of an account (encrypted secret, confirmation, last accepted step).
create or replace function app_private.backoffice_factor(p_account_id int)
returns table (secret_encrypted text, confirmed boolean, last_step bigint)
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select f.secret_encrypted, f.confirmed_at is not null, f.last_step
  from app_private.backoffice_factors f where f.account_id = p_account_id;
$$;

-- Enrolment: a new unconfirmed secret replaces an unconfirmed one; a confirmed factor is
-- never replaced here (only app_public.backoffice_factors_delete removes it).
create or replace function app_private.backoffice_enrol_start(p_account_id int, p_secret_encrypted text) returns void
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  if exists (select 1 from app_private.backoffice_factors f where f.account_id = p_account_id and f.confirmed_at is not null) then
    raise exception using errcode = 'WF071', message = 'Un authentificateur est déjà enregistré pour ce compte.';
  end if;
  insert into app_private.backoffice_factors (account_id, secret_encrypted)
  values (p_account_id, p_secret_encrypted)
  on conflict (account_id) do update set secret_encrypted = excluded.secret_encrypted, created_at = app_hidden.now(),
                                         last_step = null;
end;
$$;

-- Confirms the enrolment with the step of the code just verified and stores the hashes of
-- the backup codes (the previous ones die). False when the factor is already confirmed.
create or replace function app_private.backoffice_enrol_confirm(p_account_id int, p_step bigint, p_code_hashes bytea[])
returns boolean
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  update app_private.backoffice_factors f set confirmed_at = app_hidden.now(), last_step = p_step
  where f.account_id = p_account_id and f.confirmed_at is null;
  if not found then
    return false;
  end if;
  delete from app_private.backoffice_backup_codes c where c.account_id = p_account_id;
  insert into app_private.backoffice_backup_codes (account_id, code_hash)
  select p_account_id, h from unnest(p_code_hashes) h;
  return true;
end;
$$;

-- Accepts a TOTP time step once: true only when it is later than the last accepted one
-- (a code is never accepted twice, even within its tolerance window).
create or replace function app_private.backoffice_totp_accept(p_account_id int, p_step bigint) returns boolean
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  update app_private.backoffice_factors f set last_step = p_step
  where f.account_id = p_account_id and f.confirmed_at is not null
    and (f.last_step is null or f.last_step < p_step);
  return found;
end;
$$;

-- The unused backup codes of an account (the HTTP layer compares them in constant time).
create or replace function app_private.backoffice_backup_codes(p_account_id int)
returns table (id bigint, code_hash bytea)
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select c.id, c.code_hash from app_private.backoffice_backup_codes c
  where c.account_id = p_account_id and c.used_at is null order by c.id;
$$;

-- Uses a backup code once: false when it was used meanwhile.
create or replace function app_private.backoffice_backup_code_use(p_account_id int, p_code_id bigint) returns boolean
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  update app_private.backoffice_backup_codes c set used_at = app_hidden.now()
  where c.id = p_code_id and c.account_id = p_account_id and c.used_at is null;
  return found;
end;
$$;

-- Back-office accounts and the state of their second factor.
create or replace function app_private.backoffice_factor_list() returns jsonb
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select coalesce(jsonb_agg(jsonb_build_object(
             'id', a.id, 'username', a.username, 'name', app_hidden.account_display_name(a.id),
             'enrolled', f.confirmed_at is not null, 'enrolled_at', f.confirmed_at,
             'backup_codes_left', (select count(*) from app_private.backoffice_backup_codes c
                                   where c.account_id = a.id and c.used_at is null))
           order by lower(a.username)), '[]'::jsonb)
  from app_public.accounts a
  left join app_private.backoffice_factors f on f.account_id = a.id
  where app_hidden.account_has_backoffice_access(a.id);
$$;

-- Removes the authenticator, the backup codes and the sessions of an account.
create or replace function app_private.backoffice_factor_delete(p_account_id int) returns void
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  delete from app_private.backoffice_factors f where f.account_id = p_account_id;
  delete from app_private.backoffice_backup_codes c where c.account_id = p_account_id;
  delete from app_private.backoffice_sessions s where s.account_id = p_account_id;
end;
$$;

-- Is the acting account a superuser whose back-office session passed a second factor?
-- (app.second_factor_verified is set by the back-office for its own sessions only.)
create or replace function app_hidden.current_account_is_verified_superuser() returns boolean
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select coalesce((select a.is_superuser from app_public.accounts a where a.id = app_hidden.current_account_id()), false)
     and coalesce(current_setting('app.second_factor_verified', true), '') = 'on';
$$;

-- The accounts that may enter the back-office, with their authenticator (verified superusers).
create or replace function app_public.backoffice_factor_accounts() returns jsonb
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  if not app_hidden.current_account_is_verified_superuser() then
    perform app_hidden.forbidden('Seul un superutilisateur connecté avec un second facteur gère les authentificateurs.', 'WF072');
  end if;
  return app_private.backoffice_factor_list();
end;
$$;

-- A verified superuser deletes the factors of an account: the next login enrols again.
create or replace function app_public.backoffice_factors_delete(p_account_id int) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  if not app_hidden.current_account_is_verified_superuser() then
    perform app_hidden.forbidden('Seul un superutilisateur connecté avec un second facteur gère les authentificateurs.', 'WF072');
  end if;
  if not exists (select 1 from app_public.accounts a where a.id = p_account_id) then
    perform app_hidden.not_found('Compte introuvable.');
  end if;
  perform app_private.backoffice_factor_delete(p_account_id);
  return jsonb_build_object('id', p_account_id, 'enrolled', false);
end;
$$;

grant execute on function app_private.backoffice_login_state(int),
  app_private.backoffice_session_open(bytea, int, text, text), app_private.backoffice_session_get(bytea),
  app_private.backoffice_session_close(bytea), app_private.backoffice_factor(int),
  app_private.backoffice_enrol_start(int, text), app_private.backoffice_enrol_confirm(int, bigint, bytea[]),
  app_private.backoffice_totp_accept(int, bigint), app_private.backoffice_backup_codes(int),
  app_private.backoffice_backup_code_use(int, bigint)
  to wfm_authenticator;
--! EndIncluded backoffice/sessions.sql
--! Included backoffice/audit.sql
-- Audit log search (back-office viewer and GET /api/audit-log/): filters by model, target,
-- actor, verb and date window, newest first, for accounts holding audit.view_actionlog with
-- back-office access; RLS on the log filters again. It replaces app_public.audit_log_list
-- (model and target only) of the first migration.
drop function if exists app_public.audit_log_list(text, bigint, int, int);

-- Refuses (403) an account that does not read the audit log.
create or replace function app_hidden.audit_log_reader_check() returns void
language plpgsql stable as $$
begin
  if not app_hidden.current_account_reads_audit_log() then
    perform app_hidden.forbidden(
      'La consultation du journal d''audit est réservée aux comptes ayant la permission audit.view_actionlog et l''accès au back-office.',
      'WF601');
  end if;
end;
$$;

create or replace function app_public.audit_log_search(
  p_model text default null, p_target_id bigint default null, p_actor text default null, p_verb text default null,
  p_from date default null, p_to date default null, p_page int default 1, p_page_size int default 50)
returns jsonb
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_models text;
  v_from timestamptz := (p_from::timestamp at time zone app_hidden.business_timezone());
  v_to timestamptz := ((p_to + 1)::timestamp at time zone app_hidden.business_timezone());
  v_actor text := nullif(lower(btrim(p_actor)), '');
begin
  perform app_hidden.audit_log_reader_check();
  if p_model is not null and not exists (select 1 from app_private.audit_models m where m.model = p_model) then
    select string_agg(m.model, ', ' order by m.model) into v_models from app_private.audit_models m;
    perform app_hidden.invalid('model', format('Modèle inconnu « %s ». Valeurs possibles : %s.', p_model, v_models), 'WV601');
  end if;
  if p_target_id is not null and p_target_id < 1 then
    perform app_hidden.invalid('target_id', 'L''identifiant de la cible est un entier strictement positif.', 'WV601');
  end if;
  if p_from is not null and p_to is not null and p_to < p_from then
    perform app_hidden.invalid('to', 'La fin de la période précède son début.', 'WV601');
  end if;
  return (
    with lines as (
      select l.* from app_private.audit_log l
      where (p_model is null or l.model = p_model)
        and (p_target_id is null or l.target_id = p_target_id)
        and (p_verb is null or l.verb = p_verb)
        and (p_from is null or l.at >= v_from)
        and (p_to is null or l.at < v_to)
        -- The account named now, or the username frozen in the line at the time.
        and (v_actor is null
             or l.actor_account_id in (select a.id from app_public.accounts a where lower(a.username) = v_actor)
             or lower(l.actor_username) = v_actor)
    )
    select jsonb_build_object(
      'count', (select count(*) from lines),
      'results', coalesce((
        select jsonb_agg(app_hidden.audit_line_json(p) order by p.at desc, p.id desc)
        from (select * from lines order by at desc, id desc
              limit app_hidden.page_limit(p_page_size) offset app_hidden.page_offset(p_page, p_page_size)) p), '[]'::jsonb)));
end;
$$;

-- The audited models and their French labels (the viewer's model filter), for the same readers.
create or replace function app_public.audit_log_models() returns jsonb
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  perform app_hidden.audit_log_reader_check();
  return (select coalesce(jsonb_agg(jsonb_build_object('model', m.model, 'label', m.label) order by m.label), '[]'::jsonb)
          from app_private.audit_models m);
end;
$$;
--! EndIncluded backoffice/audit.sql
--! Included backoffice/shift_change.sql
-- Day-change requests read by the back-office and GET /api/shift-change-requests/: the
-- filters of the list (status, date window, employee) and the establishment of the employee
-- (main or secondary workplace). Row-level security keeps each reader in their perimeter.
-- The requester reads their own requests; absences.view_absence_queue holders read their
-- perimeter. from/to are inclusive bounds on date. Newest date first. It replaces
-- app_public.shift_change_list (without the establishment) of the first migration.
drop function if exists app_public.shift_change_list(text, date, date, int, int, int);
create or replace function app_public.shift_change_search(
  p_status text default null, p_from date default null, p_to date default null, p_employee int default null,
  p_establishment int default null, p_page int default 1, p_page_size int default 50)
returns jsonb
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_size int := app_hidden.page_limit(p_page_size);
  v_offset int := app_hidden.page_offset(p_page, p_page_size);
begin
  if p_status is not null and p_status not in ('pending', 'validated', 'refused') then
    perform app_hidden.invalid('status', 'Statut inconnu. Valeurs possibles : pending, validated, refused.', 'WV109');
  end if;
  if p_from is not null and p_to is not null and p_to < p_from then
    perform app_hidden.invalid('to', 'La date de fin doit être postérieure ou égale à la date de début.', 'WV108');
  end if;
  return (
    with filtered as (
      select r.id, r.date
      from app_public.shift_change_requests r
      where (p_status is null or r.status = p_status)
        and (p_from is null or r.date >= p_from)
        and (p_to is null or r.date <= p_to)
        and (p_employee is null or r.employee_id = p_employee)
        and (p_establishment is null
             or exists (select 1 from app_public.employees e
                        where e.id = r.employee_id and e.main_establishment_id = p_establishment)
             or exists (select 1 from app_public.employee_secondary_establishments s
                        where s.employee_id = r.employee_id and s.establishment_id = p_establishment))
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
--! EndIncluded backoffice/shift_change.sql
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
  ('app_hidden.account_has_permission(integer,text,timestamp with time zone)', 'exists'),
  ('app_hidden.current_account_has(text)', 'account_has_permission'),
  ('app_hidden.may(integer,text,integer,timestamp with time zone)', 'false for a NULL employee; exists otherwise'),
  ('app_hidden.perimeter_is_whole(text)', 'coalesce(..., false)'),
  ('app_hidden.is_current_employee(integer)', 'coalesce(p_employee = current_employee_id(), false)'),
  ('app_hidden.date_in(date,date,date)', 'coalesce(..., false)'),
  ('app_hidden.current_account_is_staff()', 'exists'),
  ('app_hidden.current_account_is_superuser()', 'coalesce(..., false)'),
  ('app_hidden.account_has_backoffice_access(integer,timestamp with time zone)', 'exists'),
  ('app_hidden.current_account_reads_audit_log()', 'conjunction of never-NULL terms'),
  ('app_hidden.account_rights_covered(integer)', 'true, false, or not exists (...)'),
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
  ('app_hidden.current_account_is_verified_superuser()', 'coalesce(is_superuser, false) and coalesce(setting, '''') = ''on''')
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
grant execute on function app_private.begin_request(int, int), app_private.begin_request_or_fail(int, int),
  app_private.login_lookup(text),
  app_private.record_login(int), app_private.password_reset_request(text),
  app_private.password_token_check(text), app_private.password_reset_confirm(text, text)
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
