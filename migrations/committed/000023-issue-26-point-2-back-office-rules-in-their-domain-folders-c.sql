--! Previous: sha1:9c3c75ad3eb14f7ca8e8425df423e59a58b4bfa3
--! Hash: sha1:90e64b4e00399dfce07f2818cbecdc0bef10c729
--! Message: Issue 26 point 2: back-office rules in their domain folders, choices and paging helpers

-- Written by `npm run db:current` from sql/ORDER: edit sql/, never this file, and run it again.
-- The sql/ files changed since the last committed migration (migrations/sql-state.json), in list order.

--! Included backoffice/paging.sql
-- The paging of the back-office's lists (counters, counter rules, role attributions, absence
-- categories and types, posts, counter associations): one shape instead of a « filtered / page /
-- count » query written again in each. A list function selects the ids it lists, filtered and in order, as one
-- array; app_hidden.list_page answers its total and the ids of the asked page; the function builds
-- the JSON of those ids (set-based, in page order) and app_hidden.list_answer wraps it as the list
-- envelope { count, results } the router and the back-office read. The paging rules are
-- app_hidden.page_offset and app_hidden.page_limit (sql/core/errors.sql): the page is checked
-- first, then its size, as LIMIT ... OFFSET evaluated them.

create or replace function app_hidden.list_page(p_ids int[], p_page int, p_page_size int)
returns table (total int, ids int[])
language plpgsql immutable rows 1 as $$
declare
  v_offset int := app_hidden.page_offset(p_page, p_page_size);
  v_limit int := app_hidden.page_limit(p_page_size);
begin
  return query select coalesce(cardinality(p_ids), 0), coalesce(p_ids[v_offset + 1 : v_offset + v_limit], '{}');
end;
$$;

-- The list envelope: the total and the page's records (none: an empty list, never null).
create or replace function app_hidden.list_answer(p_total int, p_results jsonb) returns jsonb
language sql immutable as $$
  select jsonb_build_object('count', p_total, 'results', coalesce(p_results, '[]'::jsonb));
$$;
--! EndIncluded backoffice/paging.sql
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
--! Included audit/policies.sql
-- The audit log lives in app_private: no request role reads it directly. The API function
-- app_public.audit_log_search (sql/audit/search.sql) runs as wfm_api, which reads it through this policy only when
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
--! Included audit/triggers.sql
-- Audited tables of the foundation. Other concerns attach their own triggers next to their
-- tables (absence, shift_change_request, day_modification).

-- The two audit triggers of a table whose every write is a line of model p_model (its row in
-- app_private.audit_models): after insert or update, before delete. Re-runnable.
create or replace function app_private.audit_writes(p_table text, p_model text) returns void
language plpgsql volatile as $$
begin
  execute format('create or replace trigger _500_audit after insert or update on app_public.%I
                  for each row execute function app_private.tg__audit(%L)', p_table, p_model);
  execute format('create or replace trigger _500_audit_delete before delete on app_public.%I
                  for each row execute function app_private.tg__audit(%L)', p_table, p_model);
end;
$$;

-- Opening and closing an account (PUT /api/employees/<id>/account-activation/ and the
-- back-office) is audited as model 'account'. Logins (last_login_at) and other account
-- columns are not: only a change of is_active writes a line.
create or replace trigger _500_audit after update of is_active on app_public.accounts
  for each row when (old.is_active is distinct from new.is_active)
  execute function app_private.tg__audit('account');
--! EndIncluded audit/triggers.sql
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
--! Included employees/helpers.sql
-- Helpers shared by the employee, referential, team, event, on-call and payroll API
-- functions: reading a JSON object field by field (a wrong type answers 400 under the field:
-- the items of the JSON lists the API functions take, contracts, team assignments and
-- members, and the back-office's own forms), the caller's establishment scope,
-- staff status, names across RLS, search patterns. An API function's body arrives as typed
-- arguments (sql/core/arguments.sql), not through these readers.

-- A field as text: null when absent or null; 400 under the field when not a string.
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

drop function if exists app_hidden.in_timestamptz(jsonb, text, text);

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
create or replace function app_private.tg__audit_child() returns trigger
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
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
--! Included referentials/policies.sql
-- Referentials (divisions, establishments, contract types): readable by every authenticated
-- account (sql/org/policies.sql), written by staff accounts only (SPEC, Permissions rule 6).
select app_private.staff_write_policies(array['divisions', 'establishments', 'contract_types']);
select app_private.audit_writes(t, left(t, -1)) from unnest(array['divisions', 'establishments', 'contract_types']) t;
--! EndIncluded referentials/policies.sql
--! Included counters/rules.sql
-- Counter rules (issue 27 point 1): per establishment and counter code, how much a year's
-- counter acquires, how (all at the opening, or month by month over the acquisition period),
-- prorated or not for a contract starting or ending during the period, and what carries over
-- to the next year (none, all, or up to a ceiling, until a date of the next year after which
-- what is left expires).
--
-- A rule without establishment is the association's default; a rule of an establishment
-- replaces it for the employees whose main workplace it is. No rule for a code (CET, JRS...):
-- its counters are opened, acquired and closed by hand, as before. Written by staff accounts
-- (the back-office), read by staff and by HR (employee.change_employee_record) of their
-- perimeter; every write is audited (model counter_rule).
--
-- Acquisition periods (docs/architecture.md, "The leave year"):
--   * opening: the annual amount is acquired when the counter of year Y opens, prorated on
--     the days of year Y covered by a contract;
--   * monthly: the counter of year Y is what was acquired during the twelve months of Y - 1
--     (paid leave: acquired one year, taken the next), one journal movement per month once
--     the month has ended, the month's part prorated on the days of the month covered by a
--     contract. The parts are the differences of the rounded cumulative amounts (25 a year:
--     2.08, 2.09, 2.08, ...), so twelve full months make exactly the annual amount.

insert into app_private.audit_models (model, label) values
  ('counter_rule', 'Règle de compteur'),
  ('counter_opening', 'Ouverture des compteurs d''une année')
on conflict do nothing;

insert into app_private.settings (key, value, description) values
  ('counters_opening_date', '"01/10"', 'Date (JJ/MM) à partir de laquelle les compteurs de l''année suivante s''ouvrent chaque jour (tâche open_next_year_counters)')
on conflict do nothing;

create table if not exists app_public.counter_rules (
  id int generated always as identity primary key,
  -- Null: the association's default for the code.
  establishment_id int references app_public.establishments on delete cascade,
  counter_code text not null references app_public.counter_kinds on delete restrict,
  -- The amount of a year (days or hours, the unit of the counter); null: no counter is opened.
  annual_amount numeric(6,2) check (annual_amount is null or (annual_amount >= 0 and annual_amount < 1000)),
  -- Day counters of an establishment counting in jours ouvrables (Monday to Saturday); null:
  -- annual_amount whatever the count base.
  annual_amount_ouvrables numeric(6,2) check (annual_amount_ouvrables is null or (annual_amount_ouvrables >= 0 and annual_amount_ouvrables < 1000)),
  acquisition text not null default 'opening' check (acquisition in ('opening', 'monthly')),
  -- Rounding of the cumulative amounts (monthly) and of a prorated amount.
  rounding text not null default 'hundredth' check (rounding in ('hundredth', 'half_up', 'whole_up')),
  prorate boolean not null default true,
  carry_over text not null default 'none' check (carry_over in ('none', 'all', 'ceiling')),
  carry_over_ceiling numeric(6,2) check (carry_over_ceiling is null or (carry_over_ceiling >= 0 and carry_over_ceiling < 1000)),
  -- DD/MM of the next year after which what was carried over and is left expires; null: it
  -- stays for the whole next year.
  carry_over_until text check (carry_over_until is null or carry_over_until ~ '^(0[1-9]|[12][0-9]|3[01])/(0[1-9]|1[0-2])$'),
  created_at timestamptz not null default app_hidden.now(),
  updated_at timestamptz not null default app_hidden.now(),
  constraint counter_rules_ceiling check ((carry_over = 'ceiling') = (carry_over_ceiling is not null))
);
create unique index if not exists counter_rules_key on app_public.counter_rules (coalesce(establishment_id, 0), counter_code);
create index if not exists counter_rules_establishment_idx on app_public.counter_rules (establishment_id);
create index if not exists counter_rules_code_idx on app_public.counter_rules (counter_code);

create or replace trigger _100_timestamps before insert or update on app_public.counter_rules
  for each row execute function app_hidden.tg__timestamps();
create or replace trigger _500_audit after insert or update on app_public.counter_rules
  for each row execute function app_private.tg__audit('counter_rule');
create or replace trigger _500_audit_delete before delete on app_public.counter_rules
  for each row execute function app_private.tg__audit('counter_rule');

alter table app_public.counter_rules enable row level security;
drop policy if exists select_staff_or_hr on app_public.counter_rules;
create policy select_staff_or_hr on app_public.counter_rules for select to wfm_visitor, wfm_api
  using ((select app_hidden.current_account_is_staff())
         or ((select app_hidden.current_account_has('employee.change_employee_record'))
             and (establishment_id is null
                  or app_hidden.in_scope(establishment_id, (select app_hidden.perimeter_establishment_ids('employee.change_employee_record'))))));
drop policy if exists insert_staff on app_public.counter_rules;
create policy insert_staff on app_public.counter_rules for insert to wfm_api
  with check ((select app_hidden.current_account_is_staff()));
drop policy if exists update_staff on app_public.counter_rules;
create policy update_staff on app_public.counter_rules for update to wfm_api
  using ((select app_hidden.current_account_is_staff())) with check ((select app_hidden.current_account_is_staff()));
drop policy if exists delete_staff on app_public.counter_rules;
create policy delete_staff on app_public.counter_rules for delete to wfm_api
  using ((select app_hidden.current_account_is_staff()));

-- Defaults, loaded with the reference data: paid leave 25 jours ouvrés (30 ouvrables) a
-- year acquired month by month, carried over whole until 31 May of the next year; quarterly
-- leave 9 days a year at the opening, not carried over; the others (seniority, RTT,
-- delegation hours) depend on the person: no amount (no counter opened), not carried over.
insert into app_public.counter_rules (establishment_id, counter_code, annual_amount, annual_amount_ouvrables, acquisition,
                                      rounding, prorate, carry_over, carry_over_ceiling, carry_over_until)
select null, x.code, x.amount, x.amount_ouvrables, x.acquisition, 'hundredth', true, x.carry_over, null, x.until
from (values
  ('CP', 25.00, 30.00, 'monthly', 'all', '31/05'),
  ('CT', 9.00, null, 'opening', 'none', null),
  ('ANC', null, null, 'opening', 'none', null),
  ('RTT', null, null, 'opening', 'none', null),
  ('DLG_CSE', null, null, 'opening', 'none', null),
  ('DLG_DS', null, null, 'opening', 'none', null),
  ('DLG_CS', null, null, 'opening', 'none', null)
) as x(code, amount, amount_ouvrables, acquisition, carry_over, until)
where exists (select 1 from app_public.counter_kinds k where k.code = x.code)
  and not exists (select 1 from app_public.counter_rules r where r.establishment_id is null and r.counter_code = x.code);

-- Rounding of an amount as a rule says: to the hundredth (half up), up to the half day, up
-- to the whole unit.
create or replace function app_hidden.counter_rule_round(p_value numeric, p_rounding text) returns numeric
language sql immutable as $$
  select case p_rounding
           when 'half_up' then ceil(p_value * 2) / 2
           when 'whole_up' then ceil(p_value)
           else round(p_value, 2)
         end::numeric(8,2);
$$;

-- The annual amount of a rule for an establishment's count base.
create or replace function app_hidden.counter_rule_amount(p_rule app_public.counter_rules, p_count_base text) returns numeric
language sql immutable as $$
  select case when p_count_base = 'ouvrables' and p_rule.annual_amount_ouvrables is not null
              then p_rule.annual_amount_ouvrables else p_rule.annual_amount end;
$$;

-- The date after which what was carried over from p_year expires (null: no date).
create or replace function app_hidden.counter_carry_over_deadline(p_until text, p_year int) returns date
language sql immutable as $$
  select case when p_until is null then null
              else make_date(p_year + 1, split_part(p_until, '/', 2)::int, split_part(p_until, '/', 1)::int) end;
$$;

-- The rule that applies to an establishment's employees for a code: the establishment's own,
-- else the association's default; none when neither exists. Owner (the jobs and the opening
-- read every rule, whoever asks).
create or replace function app_private.counter_rule_for(p_establishment int, p_code text) returns app_public.counter_rules
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select r.* from app_public.counter_rules r
  where r.counter_code = p_code and (r.establishment_id is null or r.establishment_id = p_establishment)
  order by r.establishment_id nulls last
  limit 1;
$$;

-- The part of a monthly rule for the k-th month (1 to 12) of the acquisition period: the
-- difference of the rounded cumulative amounts, times the share of the month covered by a
-- contract when the rule prorates (rounded to the hundredth).
create or replace function app_hidden.counter_month_part(p_amount numeric, p_rounding text, p_month int,
                                                         p_covered int, p_days int, p_prorate boolean)
returns numeric
language sql immutable as $$
  select case when p_covered <= 0 then 0
              else round((app_hidden.counter_rule_round(p_amount * p_month / 12, p_rounding)
                          - app_hidden.counter_rule_round(p_amount * (p_month - 1) / 12, p_rounding))
                         * case when p_prorate then p_covered::numeric / p_days else 1 end, 2)
         end::numeric(8,2);
$$;

-- The amount a rule acquiring at the opening gives for a year p_covered days of which (out
-- of p_days) are covered by a contract.
create or replace function app_hidden.counter_opening_part(p_amount numeric, p_rounding text, p_covered int, p_days int,
                                                           p_prorate boolean)
returns numeric
language sql immutable as $$
  select case when p_covered <= 0 then 0
              when not p_prorate or p_covered >= p_days then p_amount
              else app_hidden.counter_rule_round(p_amount * p_covered / p_days, p_rounding)
         end::numeric(8,2);
$$;

-- Days of [p_from, p_to] covered by a contract of the employee that is not temporary work
-- (an interim worker's leave is the agency's).
create or replace function app_private.contract_days(p_employee int, p_from date, p_to date) returns int
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select coalesce(sum(upper(r) - lower(r)), 0)::int
  from unnest((select range_agg(daterange(c.start_date, c.end_date, '[]'))
               from app_public.contracts c
               join app_public.contract_types t on t.id = c.contract_type_id
               where c.employee_id = p_employee and not t.is_temporary_work
                 and c.start_date <= p_to and (c.end_date is null or c.end_date >= p_from))
              * datemultirange(daterange(p_from, p_to, '[]'))) r;
$$;

-- The field rules of a counter rule, in the order of the form; '{}' when it passes.
create or replace function app_hidden.counter_rule_errors(p_id int, p_establishment int, p_counter_code text,
                                                          p_annual_amount numeric, p_annual_amount_ouvrables numeric,
                                                          p_acquisition text, p_rounding text, p_prorate boolean,
                                                          p_carry_over text, p_carry_over_ceiling numeric,
                                                          p_carry_over_until text)
returns jsonb
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_errors jsonb := '{}';
  v_kind app_public.counter_kinds;
  v_amount_message text := 'Une quantité entre 0 et 999,99, deux décimales au plus ; vide : aucun compteur ouvert.';
begin
  if p_establishment is not null and not exists (select 1 from app_public.establishments e where e.id = p_establishment) then
    v_errors := app_hidden.add_error(v_errors, 'establishment', 'Établissement inconnu.');
  end if;
  select * into v_kind from app_public.counter_kinds k where k.code = p_counter_code;
  if p_counter_code is null then
    v_errors := app_hidden.add_error(v_errors, 'counter_code', 'Le compteur est obligatoire.');
  elsif v_kind.code is null then
    v_errors := app_hidden.add_error(v_errors, 'counter_code', 'Compteur inconnu.');
  elsif not v_kind.is_consumable then
    v_errors := app_hidden.add_error(v_errors, 'counter_code', format('Le compteur %s n''est pas un compteur de congés ou d''heures consommable : il n''a pas de règle d''acquisition.', p_counter_code));
  elsif exists (select 1 from app_public.counter_rules r
                where coalesce(r.establishment_id, 0) = coalesce(p_establishment, 0) and r.counter_code = p_counter_code
                  and r.id is distinct from p_id) then
    v_errors := app_hidden.add_error(v_errors, 'counter_code', case when p_establishment is null
      then format('Le compteur %s a déjà une règle par défaut de l''association.', p_counter_code)
      else format('Le compteur %s a déjà une règle pour cet établissement.', p_counter_code) end);
  end if;
  if p_annual_amount is not null and (p_annual_amount < 0 or p_annual_amount >= 1000 or p_annual_amount <> round(p_annual_amount, 2)) then
    v_errors := app_hidden.add_error(v_errors, 'annual_amount', v_amount_message);
  end if;
  if p_annual_amount_ouvrables is not null then
    if p_annual_amount_ouvrables < 0 or p_annual_amount_ouvrables >= 1000 or p_annual_amount_ouvrables <> round(p_annual_amount_ouvrables, 2) then
      v_errors := app_hidden.add_error(v_errors, 'annual_amount_ouvrables', v_amount_message);
    elsif v_kind.unit = 'hour' then
      v_errors := app_hidden.add_error(v_errors, 'annual_amount_ouvrables', 'Un compteur en heures ne dépend pas de la base de décompte : laissez ce champ vide.');
    elsif p_annual_amount is null then
      v_errors := app_hidden.add_error(v_errors, 'annual_amount_ouvrables', 'Indiquez d''abord la quantité annuelle (en jours ouvrés).');
    end if;
  end if;
  if p_acquisition is null or p_acquisition not in ('opening', 'monthly') then
    v_errors := app_hidden.add_error(v_errors, 'acquisition', 'Acquisition à l''ouverture (opening) ou mois par mois (monthly).');
  elsif p_acquisition = 'monthly' and p_annual_amount is null then
    v_errors := app_hidden.add_error(v_errors, 'acquisition', 'Une acquisition mois par mois demande une quantité annuelle.');
  end if;
  if p_rounding is null or p_rounding not in ('hundredth', 'half_up', 'whole_up') then
    v_errors := app_hidden.add_error(v_errors, 'rounding', 'Arrondi au centième (hundredth), au demi supérieur (half_up) ou à l''unité supérieure (whole_up).');
  end if;
  if p_prorate is null then
    v_errors := app_hidden.add_error(v_errors, 'prorate', 'Ce champ est obligatoire.');
  end if;
  if p_carry_over is null or p_carry_over not in ('none', 'all', 'ceiling') then
    v_errors := app_hidden.add_error(v_errors, 'carry_over', 'Report : aucun (none), tout (all) ou jusqu''à un plafond (ceiling).');
  elsif p_carry_over = 'ceiling' and p_carry_over_ceiling is null then
    v_errors := app_hidden.add_error(v_errors, 'carry_over_ceiling', 'Le plafond du report est obligatoire pour un report plafonné.');
  elsif p_carry_over <> 'ceiling' and p_carry_over_ceiling is not null then
    v_errors := app_hidden.add_error(v_errors, 'carry_over_ceiling', 'Un plafond ne s''indique que pour un report plafonné : laissez ce champ vide.');
  end if;
  if p_carry_over_ceiling is not null and (p_carry_over_ceiling < 0 or p_carry_over_ceiling >= 1000 or p_carry_over_ceiling <> round(p_carry_over_ceiling, 2)) then
    v_errors := app_hidden.add_error(v_errors, 'carry_over_ceiling', 'Une quantité entre 0 et 999,99, deux décimales au plus.');
  end if;
  if p_carry_over_until is not null then
    if p_carry_over_until !~ '^(0[1-9]|[12][0-9]|3[01])/(0[1-9]|1[0-2])$'
       or split_part(p_carry_over_until, '/', 1)::int
          > extract(day from make_date(2001, split_part(p_carry_over_until, '/', 2)::int, 1) + interval '1 month - 1 day') then
      v_errors := app_hidden.add_error(v_errors, 'carry_over_until', 'Une date de l''année suivante au format JJ/MM, par exemple 31/05 (le 29/02 n''existe pas chaque année).');
    elsif p_carry_over is not distinct from 'none' then
      v_errors := app_hidden.add_error(v_errors, 'carry_over_until', 'Sans report, il n''y a pas de date limite : laissez ce champ vide.');
    end if;
  end if;
  return v_errors;
end;
$$;
comment on function app_hidden.counter_rule_errors(integer, integer, text, numeric, numeric, text, text, boolean, text, numeric, text) is
'Issue 27 point 1: the refusals of a counter rule by field (establishment, counter_code, annual_amount, annual_amount_ouvrables, acquisition, rounding, prorate, carry_over, carry_over_ceiling, carry_over_until), {} when it passes.';

create or replace function app_hidden.counter_rule_json(p_id int) returns jsonb
language sql stable as $$
  select jsonb_build_object(
    'id', r.id, 'establishment', r.establishment_id, 'establishment_name', e.name,
    'counter_code', r.counter_code, 'counter_name', k.name, 'unit', k.unit,
    'annual_amount', app_hidden.fmt_quantity(r.annual_amount),
    'annual_amount_ouvrables', app_hidden.fmt_quantity(r.annual_amount_ouvrables),
    'acquisition', r.acquisition, 'rounding', r.rounding, 'prorate', r.prorate,
    'carry_over', r.carry_over, 'carry_over_ceiling', app_hidden.fmt_quantity(r.carry_over_ceiling),
    'carry_over_until', r.carry_over_until,
    'monthly_amount', case when r.acquisition = 'monthly' then app_hidden.fmt_quantity(app_hidden.counter_rule_round(r.annual_amount / 12, r.rounding)) end,
    'monthly_amount_ouvrables', case when r.acquisition = 'monthly' and r.annual_amount_ouvrables is not null
      then app_hidden.fmt_quantity(app_hidden.counter_rule_round(r.annual_amount_ouvrables / 12, r.rounding)) end,
    'updated_at', r.updated_at)
  from app_public.counter_rules r
  join app_public.counter_kinds k on k.code = r.counter_code
  left join app_public.establishments e on e.id = r.establishment_id
  where r.id = p_id;
$$;

create or replace function app_public.counter_rules_search(p_establishment int default null, p_counter_code text default null,
                                                           p_page int default 1, p_page_size int default 50)
returns jsonb
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select app_hidden.list_answer(l.total,
    (select jsonb_agg(app_hidden.counter_rule_json(u.id) order by u.n) from unnest(l.ids) with ordinality u(id, n)))
  from app_hidden.list_page(array(
    select r.id
    from app_public.counter_rules r
    join app_public.counter_kinds k on k.code = r.counter_code
    left join app_public.establishments e on e.id = r.establishment_id
    where (p_establishment is null or r.establishment_id = p_establishment)
      and (p_counter_code is null or r.counter_code = upper(p_counter_code))
    order by r.establishment_id is not null, lower(e.name), k.position, r.counter_code, r.id),
    p_page, p_page_size) l;
$$;
comment on function app_public.counter_rules_search(integer, text, integer, integer) is
'Issue 27 point 1, back-office: one page of the counter rules the caller reads (staff, or HR of the establishment; the association''s defaults first), filtered by establishment and counter code.';

create or replace function app_public.counter_rule_get(p_id int) returns jsonb
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  if not exists (select 1 from app_public.counter_rules r where r.id = p_id) then
    perform app_hidden.not_found('Règle de compteur introuvable.', 'WN303');
  end if;
  return app_hidden.counter_rule_json(p_id)
         || jsonb_build_object('may_write', app_hidden.current_account_is_staff());
end;
$$;
comment on function app_public.counter_rule_get(integer) is
'Issue 27 point 1, back-office: one counter rule the caller reads (404 otherwise), with may_write for a staff account.';

-- Creates (p_id null) or rewrites a rule: staff only, every field error at once, audited.
create or replace function app_public.counter_rule_save(p_id int, p_establishment int, p_counter_code text,
                                                        p_annual_amount numeric, p_annual_amount_ouvrables numeric,
                                                        p_acquisition text, p_rounding text, p_prorate boolean,
                                                        p_carry_over text, p_carry_over_ceiling numeric,
                                                        p_carry_over_until text)
returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_code text := upper(nullif(btrim(p_counter_code), ''));
  v_until text := nullif(btrim(p_carry_over_until), '');
  v_errors jsonb;
  v_id int := p_id;
begin
  if not app_hidden.current_account_is_staff() then
    perform app_hidden.forbidden('Les règles des compteurs s''écrivent par les comptes du personnel d''administration uniquement.', 'WF302');
  end if;
  if p_id is not null then
    perform 1 from app_public.counter_rules r where r.id = p_id for update;
    if not found then
      perform app_hidden.not_found('Règle de compteur introuvable.', 'WN303');
    end if;
  end if;
  v_errors := app_hidden.counter_rule_errors(p_id, p_establishment, v_code, p_annual_amount, p_annual_amount_ouvrables,
                                             p_acquisition, p_rounding, p_prorate, p_carry_over, p_carry_over_ceiling, v_until);
  perform app_hidden.invalid_fields(v_errors, 'WV314') where v_errors <> '{}'::jsonb;
  if p_id is null then
    insert into app_public.counter_rules (establishment_id, counter_code, annual_amount, annual_amount_ouvrables, acquisition,
                                          rounding, prorate, carry_over, carry_over_ceiling, carry_over_until)
    values (p_establishment, v_code, p_annual_amount, p_annual_amount_ouvrables, p_acquisition,
            p_rounding, p_prorate, p_carry_over, p_carry_over_ceiling, v_until)
    returning id into v_id;
  else
    update app_public.counter_rules r
    set establishment_id = p_establishment, counter_code = v_code, annual_amount = p_annual_amount,
        annual_amount_ouvrables = p_annual_amount_ouvrables, acquisition = p_acquisition, rounding = p_rounding,
        prorate = p_prorate, carry_over = p_carry_over, carry_over_ceiling = p_carry_over_ceiling, carry_over_until = v_until
    where r.id = p_id
      and (r.establishment_id, r.counter_code, r.annual_amount, r.annual_amount_ouvrables, r.acquisition, r.rounding, r.prorate,
           r.carry_over, r.carry_over_ceiling, r.carry_over_until)
          is distinct from (p_establishment, v_code, p_annual_amount, p_annual_amount_ouvrables, p_acquisition, p_rounding, p_prorate,
                            p_carry_over, p_carry_over_ceiling, v_until);
  end if;
  return app_public.counter_rule_get(v_id);
end;
$$;
comment on function app_public.counter_rule_save(integer, integer, text, numeric, numeric, text, text, boolean, text, numeric, text) is
'Issue 27 point 1, back-office: a staff account creates (p_id null) or rewrites the rule of a counter code for an establishment (null: the association''s default); every field error at once; audited.';

-- Deletes an establishment's rule (its employees follow the association's default again).
-- The defaults are edited, not deleted: a code without a default is managed by hand.
create or replace function app_public.counter_rule_delete(p_id int) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_rule app_public.counter_rules;
begin
  if not app_hidden.current_account_is_staff() then
    perform app_hidden.forbidden('Les règles des compteurs s''écrivent par les comptes du personnel d''administration uniquement.', 'WF302');
  end if;
  select * into v_rule from app_public.counter_rules r where r.id = p_id for update;
  if not found then
    perform app_hidden.not_found('Règle de compteur introuvable.', 'WN303');
  end if;
  if v_rule.establishment_id is null then
    perform app_hidden.invalid('non_field_errors', 'Une règle par défaut de l''association ne se supprime pas : modifiez-la (une quantité vide n''ouvre aucun compteur).', 'WV314');
  end if;
  delete from app_public.counter_rules r where r.id = p_id;
  return null;
end;
$$;
comment on function app_public.counter_rule_delete(integer) is
'Issue 27 point 1, back-office: a staff account deletes an establishment''s counter rule (its employees follow the association''s default again); a default is refused.';

-- The choices of the back-office's counter rule forms, as the caller reads them: 'establishments'
-- (value: id) or 'counters' (consumable codes).
create or replace function app_public.counter_rule_choices(p_what text) returns table (value text, label text)
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select x.value, x.label from (
    select e.id::text as value, e.name as label, lower(e.name) as sort_key, 0 as position
    from app_public.establishments e where p_what = 'establishments'
    union all
    select k.code, k.code || ' — ' || k.name, k.code, k.position
    from app_public.counter_kinds k where p_what = 'counters' and k.is_consumable
  ) x
  order by x.position, x.sort_key;
$$;
comment on function app_public.counter_rule_choices(text) is
'Issue 27 points 1 and 2, back-office: the choices of the counter rule and opening forms, establishments (id and name) or consumable counter codes.';
--! EndIncluded counters/rules.sql
--! Included audit/search.sql
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

-- Refuses a caller who does not read the log (403) and bad filters (400 under the field).
-- Returns true for use in a WHERE clause (evaluated once, before the first line).
create or replace function app_hidden.audit_log_filters_check(p_model text, p_target_id bigint, p_from date, p_to date)
returns boolean
language plpgsql stable as $$
declare
  v_models text;
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
  return true;
end;
$$;

-- The lines of a search, written once for GET /api/audit-log/ and its export (inlined into
-- both: the callers are security definer, as the log lives in app_private). p_impersonator:
-- the lines written by that superuser for someone else (issue 25 finding 5), by the account
-- named now or the username frozen in the line.
drop function if exists app_hidden.audit_log_selection(text, bigint, text, text, date, date) cascade;
create or replace function app_hidden.audit_log_selection(
  p_model text, p_target_id bigint, p_actor text, p_verb text, p_from date, p_to date, p_impersonator text)
returns setof app_private.audit_log
language sql stable as $$
  select l.* from app_private.audit_log l
  where app_hidden.audit_log_filters_check(p_model, p_target_id, p_from, p_to)
    and (p_model is null or l.model = p_model)
    and (p_target_id is null or l.target_id = p_target_id)
    and (p_verb is null or l.verb = p_verb)
    and (p_from is null or l.at >= (p_from::timestamp at time zone app_hidden.business_timezone()))
    and (p_to is null or l.at < ((p_to + 1)::timestamp at time zone app_hidden.business_timezone()))
    -- The account named now, or the username frozen in the line at the time.
    and (nullif(lower(btrim(p_actor)), '') is null
         or l.actor_account_id in (select a.id from app_public.accounts a
                                   where lower(a.username) = nullif(lower(btrim(p_actor)), ''))
         or lower(l.actor_username) = nullif(lower(btrim(p_actor)), ''))
    and (nullif(lower(btrim(p_impersonator)), '') is null
         or l.impersonator_account_id in (select a.id from app_public.accounts a
                                          where lower(a.username) = nullif(lower(btrim(p_impersonator)), ''))
         or lower(l.impersonator_username) = nullif(lower(btrim(p_impersonator)), ''));
$$;

drop function if exists app_public.audit_log_search(text, bigint, text, text, date, date, int, int) cascade;
create or replace function app_public.audit_log_search(
  p_model text default null, p_target_id bigint default null, p_actor text default null, p_verb text default null,
  p_from date default null, p_to date default null, p_page int default 1, p_page_size int default 50,
  p_impersonator text default null)
returns jsonb
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  -- Checked first, also when the log is empty.
  perform app_hidden.audit_log_filters_check(p_model, p_target_id, p_from, p_to);
  return (
    with lines as (
      select l.* from app_hidden.audit_log_selection(p_model, p_target_id, p_actor, p_verb, p_from, p_to, p_impersonator) l
    )
    select jsonb_build_object(
      'count', (select count(*) from lines),
      'results', coalesce((
        select jsonb_agg(app_hidden.audit_line_json(p) order by p.at desc, p.id desc)
        from (select * from lines order by at desc, id desc
              limit app_hidden.page_limit(p_page_size) offset app_hidden.page_offset(p_page, p_page_size)) p), '[]'::jsonb)));
end;
$$;
comment on function app_public.audit_log_search(text, bigint, text, text, date, date, integer, integer, text) is
'SPEC Audit log and Permissions (audit.view_actionlog): for accounts holding audit.view_actionlog with
back-office access (else 403), one page of audit lines newest first, filtered by model, target, actor,
verb, date window and impersonator; each line names the impersonator who acted for its actor.';

-- GET /api/audit-log/export/?format=&<the search's filters>: the same lines, newest first;
-- before and after as JSON text; the impersonator and the client address of each line.
drop function if exists app_public.audit_log_export(text, bigint, text, text, date, date) cascade;
create or replace function app_public.audit_log_export(
  p_model text default null, p_target_id bigint default null, p_actor text default null, p_verb text default null,
  p_from date default null, p_to date default null, p_impersonator text default null)
returns table (id bigint, at timestamptz, actor int, actor_username text, actor_display_name text,
               impersonator int, impersonator_username text, impersonator_display_name text, verb text,
               model text, target_id bigint, before text, after text, client_address text)
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select l.id, l.at, l.actor_account_id, l.actor_username, l.actor_display_name,
         l.impersonator_account_id, l.impersonator_username, l.impersonator_display_name, l.verb, l.model, l.target_id,
         l.before::text, l.after::text, l.client_address
  from app_hidden.audit_log_selection(p_model, p_target_id, p_actor, p_verb, p_from, p_to, p_impersonator) l
  order by l.at desc, l.id desc;
$$;
comment on function app_public.audit_log_export(text, bigint, text, text, date, date, text) is 'SPEC Audit log and issue 16 exports, GET /api/audit-log/export/: every audit line the search shows for the same filters (its readers only: audit.view_actionlog), with the impersonator who acted for its author, for the CSV or XLSX file.';

-- The audited models and their French labels (the viewer's model filter), for the same readers.
create or replace function app_public.audit_log_models() returns jsonb
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  perform app_hidden.audit_log_reader_check();
  return (select coalesce(jsonb_agg(jsonb_build_object('model', m.model, 'label', m.label) order by m.label), '[]'::jsonb)
          from app_private.audit_models m);
end;
$$;
comment on function app_public.audit_log_models() is
'SPEC Audit log: the audited models with their French labels (the model filter of the viewer), for the
readers of the audit log.';
--! EndIncluded audit/search.sql
--! Included shift_change/search.sql
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
--! EndIncluded shift_change/search.sql
--! Included reference/administration.sql
-- Reference administration of the back-office (SPEC Permissions rule 6: read by every
-- authenticated account, written by staff accounts only): absence categories (a tree of
-- two levels), absence types (reasons), posts, counter associations. The API keeps the
-- reference read-only (POST /api/absence-types/ answers 405): these functions are called by
-- the back-office only. Each write is checked here, then again by the tables' policies
-- (insert/update/delete for staff) and triggers (two-level tree, shared code namespace,
-- orphan rules of sql/counters/triggers.sql), and audited.

insert into app_private.audit_models (model, label) values
  ('absence_category', 'Catégorie d''absence'),
  ('absence_type', 'Motif d''absence'),
  ('absence_type_contract_type', 'Type de contrat d''un motif d''absence'),
  ('counter_association', 'Association motif – compteur'),
  ('post', 'Poste'),
  ('counter_adjustment', 'Ajustement manuel de compteur')
on conflict do nothing;

select app_private.staff_write_policies(array['absence_categories', 'absence_types', 'absence_type_contract_types',
                                              'counter_associations', 'posts']);
select app_private.audit_writes(x.t, x.model)
from (values ('absence_categories', 'absence_category'), ('absence_types', 'absence_type'),
             ('absence_type_contract_types', 'absence_type_contract_type'), ('counter_associations', 'counter_association'),
             ('posts', 'post')) x(t, model);

-- Absence categories --------------------------------------------------------------------------

create or replace function app_hidden.absence_category_json(c app_public.absence_categories) returns jsonb
language sql stable as $$
  select jsonb_build_object(
    'id', c.id, 'code', c.code, 'name', c.name, 'parent', c.parent_id,
    'parent_name', (select p.name from app_public.absence_categories p where p.id = c.parent_id),
    'position', c.position,
    'children', (select count(*) from app_public.absence_categories k where k.parent_id = c.id),
    'types', (select count(*) from app_public.absence_types t where t.category_id = c.id));
$$;

-- The categories in tree order (each root followed by its sub-categories); p_parent keeps
-- the sub-categories of one root.
create or replace function app_public.absence_categories_search(p_parent int default null, p_page int default 1,
                                                                p_page_size int default 50)
returns jsonb
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select app_hidden.list_answer(l.total,
    (select jsonb_agg(app_hidden.absence_category_json(c) order by u.n)
     from unnest(l.ids) with ordinality u(id, n) join app_public.absence_categories c on c.id = u.id))
  from app_hidden.list_page(array(
    select c.id from app_public.absence_categories c
    left join app_public.absence_categories p on p.id = c.parent_id
    where p_parent is null or c.parent_id = p_parent
    order by coalesce(p.position, c.position), coalesce(p.name, c.name), c.parent_id nulls first, c.position, c.name, c.id),
    p_page, p_page_size) l;
$$;
comment on function app_public.absence_categories_search(integer, integer, integer) is
'SPEC Absence types (category tree of two levels), back-office: one page of the absence categories in
tree order, each root followed by its sub-categories; p_parent keeps the sub-categories of one root.
Readable by every authenticated account.';

create or replace function app_public.absence_category_get(p_id int) returns jsonb
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v app_public.absence_categories;
begin
  select * into v from app_public.absence_categories c where c.id = p_id;
  if not found then
    perform app_hidden.not_found('Catégorie d''absence introuvable.');
  end if;
  return app_hidden.absence_category_json(v);
end;
$$;
comment on function app_public.absence_category_get(integer) is
'SPEC Absence types, back-office: one absence category (404 when absent).';

-- Creates (p_id null) or rewrites a category. The two-level tree is the table's trigger
-- (400 under parent); the code is upper-case letters, digits and _ , unique.
create or replace function app_public.absence_category_save(p_id int, p_code text, p_name text, p_parent int,
                                                            p_position int default 0)
returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_errors jsonb := '{}';
  v_code text := upper(nullif(btrim(p_code), ''));
  v_name text := nullif(btrim(p_name), '');
  v_id int := p_id;
begin
  perform app_hidden.require_staff();
  if p_id is not null then
    perform 1 from app_public.absence_categories c where c.id = p_id for update;
    if not found then
      perform app_hidden.not_found('Catégorie d''absence introuvable.');
    end if;
  end if;
  if v_code is null then
    v_errors := app_hidden.add_error(v_errors, 'code', 'Le code est obligatoire.');
  elsif v_code !~ '^[A-Z][A-Z0-9_]{1,31}$' then
    v_errors := app_hidden.add_error(v_errors, 'code',
      'Code invalide : 2 à 32 caractères, une lettre d''abord, puis lettres, chiffres ou _.');
  elsif exists (select 1 from app_public.absence_categories c where c.code = v_code and c.id is distinct from p_id) then
    v_errors := app_hidden.add_error(v_errors, 'code', format('Le code « %s » est déjà utilisé par une catégorie.', v_code));
  end if;
  if v_name is null then
    v_errors := app_hidden.add_error(v_errors, 'name', 'Le libellé est obligatoire.');
  elsif char_length(v_name) > app_hidden.name_max_length() then
    v_errors := app_hidden.add_error(v_errors, 'name', app_hidden.max_length_message(app_hidden.name_max_length()));
  end if;
  if p_parent is not null and not exists (select 1 from app_public.absence_categories c where c.id = p_parent) then
    v_errors := app_hidden.add_error(v_errors, 'parent', 'Catégorie parente inconnue.');
  end if;
  perform app_hidden.invalid_fields(v_errors, 'WV515') where v_errors <> '{}'::jsonb;
  if p_id is null then
    insert into app_public.absence_categories (code, name, parent_id, position)
    values (v_code, v_name, p_parent, coalesce(p_position, 0))
    returning id into v_id;
  else
    update app_public.absence_categories c
    set code = v_code, name = v_name, parent_id = p_parent, position = coalesce(p_position, 0)
    where c.id = p_id
      and (c.code, c.name, c.parent_id, c.position) is distinct from (v_code, v_name, p_parent, coalesce(p_position, 0));
  end if;
  return app_public.absence_category_get(v_id);
end;
$$;
comment on function app_public.absence_category_save(integer, text, text, integer, integer) is
'SPEC Absence types and Permissions rule 6, back-office: a staff account creates (p_id null) or rewrites
an absence category; the code is upper-case letters, digits and _, unique, and the tree keeps at most
two levels (400 under parent).';

-- Deletes a category that holds neither sub-category nor absence type.
create or replace function app_public.absence_category_delete(p_id int) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  perform app_hidden.require_staff();
  perform 1 from app_public.absence_categories c where c.id = p_id for update;
  if not found then
    perform app_hidden.not_found('Catégorie d''absence introuvable.');
  end if;
  if exists (select 1 from app_public.absence_categories c where c.parent_id = p_id)
     or exists (select 1 from app_public.absence_types t where t.category_id = p_id) then
    perform app_hidden.invalid(null, 'Cette catégorie contient encore des sous-catégories ou des motifs : elle ne peut pas être supprimée.', 'WV515');
  end if;
  delete from app_public.absence_categories c where c.id = p_id;
  return null;
end;
$$;
comment on function app_public.absence_category_delete(integer) is
'SPEC Absence types and Permissions rule 6, back-office: a staff account deletes a category that holds
neither sub-category nor absence type.';

-- Absence types (reasons) -----------------------------------------------------------------------

-- Every field of an absence type as the back-office edits it (the API's absence_type_json
-- plus what the API does not show: ids, activity, position).
create or replace function app_hidden.absence_type_admin_json(p_id int) returns jsonb
language sql stable as $$
  select app_hidden.absence_type_json(t.id) || jsonb_build_object(
    'category_id', t.category_id,
    'category_label', coalesce(p.name || ' › ', '') || c.name,
    'is_active', t.is_active,
    'employee_requestable', t.employee_requestable,
    'position', t.position,
    'contract_type_ids', coalesce((select jsonb_agg(a.contract_type_id order by a.contract_type_id)
                                   from app_public.absence_type_contract_types a where a.absence_type_id = t.id), '[]'::jsonb),
    'associations', coalesce((select jsonb_agg(jsonb_build_object('id', ca.id, 'counter_code', ca.counter_code, 'is_active', ca.is_active)
                                               order by ca.counter_code)
                              from app_public.counter_associations ca where ca.absence_type_id = t.id), '[]'::jsonb),
    'absences', (select count(*) from app_public.absences a where a.type_id = t.id))
  from app_public.absence_types t
  join app_public.absence_categories c on c.id = t.category_id
  left join app_public.absence_categories p on p.id = c.parent_id
  where t.id = p_id;
$$;

-- Every type, inactive ones included; p_category keeps a category and its sub-categories.
create or replace function app_public.absence_types_search(p_category int default null, p_active boolean default null,
                                                           p_page int default 1, p_page_size int default 50)
returns jsonb
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select app_hidden.list_answer(l.total,
    (select jsonb_agg(app_hidden.absence_type_admin_json(u.id) order by u.n) from unnest(l.ids) with ordinality u(id, n)))
  from app_hidden.list_page(array(
    select t.id from app_public.absence_types t
    join app_public.absence_categories c on c.id = t.category_id
    where (p_category is null or c.id = p_category or c.parent_id = p_category)
      and (p_active is null or t.is_active = p_active)
    order by t.position, t.code, t.id),
    p_page, p_page_size) l;
$$;
comment on function app_public.absence_types_search(integer, boolean, integer, integer) is
'SPEC Absence types, back-office: one page of every absence type, inactive ones included, filtered by
category (with its sub-categories) and activity.';

create or replace function app_public.absence_type_get(p_id int) returns jsonb
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  if not exists (select 1 from app_public.absence_types t where t.id = p_id) then
    perform app_hidden.not_found('Motif d''absence introuvable.');
  end if;
  return app_hidden.absence_type_admin_json(p_id);
end;
$$;
comment on function app_public.absence_type_get(integer) is
'SPEC Absence types, back-office: one absence type with every field of the SPEC table, inactive or not
(404 when absent).';

-- Creates (p_id null) or rewrites an absence type from its body (every field of the SPEC's
-- table): all field errors at once (400, WV516), the code clash with a post under code
-- (app_hidden.code_namespace_clash, the trigger guarding it again under concurrency), the
-- orphan rule of a deactivation under is_active (sql/counters/triggers.sql).
create or replace function app_public.absence_type_save(p_id int, p_body jsonb) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_errors jsonb := '{}';
  v_code text := app_hidden.in_trimmed(p_body, 'code');
  v_name text := app_hidden.in_trimmed(p_body, 'name');
  v_category int := app_hidden.in_int(p_body, 'category');
  v_unit text := coalesce(app_hidden.in_trimmed(p_body, 'unit'), 'day');
  v_cap numeric := app_hidden.in_numeric(p_body, 'annual_cap');
  v_overrun text := coalesce(app_hidden.in_trimmed(p_body, 'cap_overrun'), 'refuse');
  v_effect text := coalesce(app_hidden.in_trimmed(p_body, 'annualisation_effect'), 'none');
  v_half_day boolean := coalesce(app_hidden.in_bool(p_body, 'half_day_allowed'), false);
  v_contract_types int[] := coalesce(app_hidden.in_ids(p_body, 'contract_types'), '{}');
  v_clash text;
  v_id int := p_id;
begin
  perform app_hidden.require_staff();
  if p_id is not null then
    perform 1 from app_public.absence_types t where t.id = p_id for update;
    if not found then
      perform app_hidden.not_found('Motif d''absence introuvable.');
    end if;
  end if;
  if v_code is null then
    v_errors := app_hidden.add_error(v_errors, 'code', 'Le code est obligatoire.');
  elsif app_hidden.code_well_formed(v_code) is false then
    v_errors := app_hidden.add_error(v_errors, 'code', 'Code invalide : 1 à 16 caractères, lettres, chiffres et _ + -.');
  elsif exists (select 1 from app_public.absence_types t where lower(t.code) = lower(v_code) and t.id is distinct from p_id) then
    v_errors := app_hidden.add_error(v_errors, 'code', format('Le code « %s » est déjà utilisé par un autre motif d''absence.', v_code));
  else
    v_clash := app_hidden.code_namespace_clash('absence_types', v_code);
    if v_clash is not null then
      v_errors := app_hidden.add_error(v_errors, 'code', v_clash);
    end if;
  end if;
  if v_name is null then
    v_errors := app_hidden.add_error(v_errors, 'name', 'Le libellé est obligatoire.');
  elsif char_length(v_name) > app_hidden.name_max_length() then
    v_errors := app_hidden.add_error(v_errors, 'name', app_hidden.max_length_message(app_hidden.name_max_length()));
  end if;
  if v_category is null then
    v_errors := app_hidden.add_error(v_errors, 'category', 'La catégorie est obligatoire.');
  elsif not exists (select 1 from app_public.absence_categories c where c.id = v_category) then
    v_errors := app_hidden.add_error(v_errors, 'category', 'Catégorie inconnue.');
  end if;
  if v_unit not in ('day', 'hour') then
    v_errors := app_hidden.add_error(v_errors, 'unit', 'Unité inconnue : Jour (day) ou Heure (hour).');
  elsif v_unit = 'hour' and v_half_day then
    v_errors := app_hidden.add_error(v_errors, 'half_day_allowed', 'Un motif saisi en heures ne se prend pas par demi-journée.');
  end if;
  if v_cap is not null and v_cap <= 0 then
    v_errors := app_hidden.add_error(v_errors, 'annual_cap', 'Le plafond annuel est strictement positif, ou vide pour aucun plafond.');
  elsif v_cap is not null and (v_cap >= 1000000 or v_cap <> round(v_cap, 2)) then
    v_errors := app_hidden.add_error(v_errors, 'annual_cap', 'Au plus 999 999,99, avec deux décimales au plus.');
  end if;
  if v_overrun not in ('refuse', 'warn') then
    v_errors := app_hidden.add_error(v_errors, 'cap_overrun', 'Choix inconnu : Refuser (refuse) ou Avertir (warn).');
  end if;
  if v_effect not in ('none', 'neutralise', 'impute') then
    v_errors := app_hidden.add_error(v_errors, 'annualisation_effect', 'Effet inconnu : none, neutralise ou impute.');
  end if;
  if exists (select 1 from unnest(v_contract_types) x(id) where not exists (select 1 from app_public.contract_types ct where ct.id = x.id)) then
    v_errors := app_hidden.add_error(v_errors, 'contract_types', 'Type de contrat inconnu.');
  end if;
  perform app_hidden.invalid_fields(v_errors, 'WV516') where v_errors <> '{}'::jsonb;

  if p_id is null then
    insert into app_public.absence_types (code, name, category_id, unit, paid, splittable, annual_cap, cap_overrun, is_active,
                                          half_day_allowed, documents_expected, validation_required, annualisation_effect, position,
                                          employee_requestable)
    values (v_code, v_name, v_category, v_unit, coalesce(app_hidden.in_bool(p_body, 'paid'), false),
            coalesce(app_hidden.in_bool(p_body, 'splittable'), true), v_cap, v_overrun,
            coalesce(app_hidden.in_bool(p_body, 'is_active'), true), v_half_day,
            coalesce(app_hidden.in_bool(p_body, 'documents_expected'), false),
            coalesce(app_hidden.in_bool(p_body, 'validation_required'), true), v_effect,
            coalesce(app_hidden.in_int(p_body, 'position'), 0),
            coalesce(app_hidden.in_bool(p_body, 'employee_requestable'), app_hidden.absence_type_requestable_default(v_code)))
    returning id into v_id;
  else
    update app_public.absence_types t set
      code = v_code, name = v_name, category_id = v_category, unit = v_unit,
      paid = coalesce(app_hidden.in_bool(p_body, 'paid'), t.paid),
      splittable = coalesce(app_hidden.in_bool(p_body, 'splittable'), t.splittable),
      annual_cap = v_cap, cap_overrun = v_overrun,
      is_active = coalesce(app_hidden.in_bool(p_body, 'is_active'), t.is_active),
      half_day_allowed = v_half_day,
      documents_expected = coalesce(app_hidden.in_bool(p_body, 'documents_expected'), t.documents_expected),
      validation_required = coalesce(app_hidden.in_bool(p_body, 'validation_required'), t.validation_required),
      annualisation_effect = v_effect,
      position = coalesce(app_hidden.in_int(p_body, 'position'), t.position),
      employee_requestable = coalesce(app_hidden.in_bool(p_body, 'employee_requestable'), t.employee_requestable)
    where t.id = p_id;
  end if;
  -- Contract types concerned: empty means every contract.
  delete from app_public.absence_type_contract_types a
  where a.absence_type_id = v_id and a.contract_type_id <> all (v_contract_types);
  insert into app_public.absence_type_contract_types (absence_type_id, contract_type_id)
  select v_id, x.id from unnest(v_contract_types) x(id)
  on conflict do nothing;
  return app_hidden.absence_type_admin_json(v_id);
end;
$$;
comment on function app_public.absence_type_save(integer, jsonb) is
'SPEC Absence types and declaration rule 17, back-office: a staff account creates (p_id null) or rewrites
an absence type (with « demandable par le salarié », issue 29: employee_requestable); all field errors at once, a code equal to a post code refused under code, and a
deactivation that would orphan an active counter refused under is_active.';

-- Deletes a type no absence uses; its associations go first, each under the orphan rule.
create or replace function app_public.absence_type_delete(p_id int) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  perform app_hidden.require_staff();
  perform 1 from app_public.absence_types t where t.id = p_id for update;
  if not found then
    perform app_hidden.not_found('Motif d''absence introuvable.');
  end if;
  if exists (select 1 from app_public.absences a where a.type_id = p_id) then
    perform app_hidden.invalid(null, 'Des absences utilisent ce motif : il ne peut pas être supprimé (désactivez-le).', 'WV516');
  end if;
  delete from app_public.counter_associations ca where ca.absence_type_id = p_id;
  delete from app_public.absence_types t where t.id = p_id;
  return null;
end;
$$;
comment on function app_public.absence_type_delete(integer) is
'SPEC Absence types and declaration rule 17, back-office: a staff account deletes a type that no absence
uses; its counter associations go first, each under the orphan rule.';

-- Posts -----------------------------------------------------------------------------------------

create or replace function app_hidden.post_admin_json(p app_public.posts) returns jsonb
language sql stable as $$
  select jsonb_build_object(
    'id', p.id, 'code', p.code, 'label', p.label, 'establishment', p.establishment_id,
    'establishment_name', (select e.name from app_public.establishments e where e.id = p.establishment_id),
    'start_time', to_char(p.start_time, 'HH24:MI'), 'end_time', to_char(p.end_time, 'HH24:MI'),
    'break_start_time', to_char(p.break_start_time, 'HH24:MI'), 'break_end_time', to_char(p.break_end_time, 'HH24:MI'),
    'break_paid', p.break_paid, 'is_active', p.is_active);
$$;

create or replace function app_public.posts_search(p_establishment int default null, p_active boolean default null,
                                                   p_page int default 1, p_page_size int default 50)
returns jsonb
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select app_hidden.list_answer(l.total,
    (select jsonb_agg(app_hidden.post_admin_json(p) order by u.n)
     from unnest(l.ids) with ordinality u(id, n) join app_public.posts p on p.id = u.id))
  from app_hidden.list_page(array(
    select p.id from app_public.posts p join app_public.establishments e on e.id = p.establishment_id
    where (p_establishment is null or p.establishment_id = p_establishment)
      and (p_active is null or p.is_active = p_active)
    order by e.name, lower(p.code), p.id),
    p_page, p_page_size) l;
$$;
comment on function app_public.posts_search(integer, boolean, integer, integer) is
'SPEC Permissions rule 6, back-office: one page of the posts with their hours and break, filtered by
establishment and activity.';

create or replace function app_public.post_get(p_id int) returns jsonb
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v app_public.posts;
begin
  select * into v from app_public.posts p where p.id = p_id;
  if not found then
    perform app_hidden.not_found('Poste introuvable.');
  end if;
  return app_hidden.post_admin_json(v);
end;
$$;
comment on function app_public.post_get(integer) is
'SPEC Permissions rule 6, back-office: one post with its establishment, hours and break (404 when
absent).';

-- Creates (p_id null) or rewrites a post: field errors at once (400, WV517), the code clash
-- with an absence type under code (the same shared rule as absence_type_save).
create or replace function app_public.post_save(p_id int, p_body jsonb) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_errors jsonb := '{}';
  v_code text := app_hidden.in_trimmed(p_body, 'code');
  v_label text := app_hidden.in_trimmed(p_body, 'label');
  v_establishment int := app_hidden.in_int(p_body, 'establishment');
  v_start time;
  v_end time;
  v_break_start time;
  v_break_end time;
  v_clash text;
  v_field text;
  v_id int := p_id;
begin
  perform app_hidden.require_staff();
  if p_id is not null then
    perform 1 from app_public.posts p where p.id = p_id for update;
    if not found then
      perform app_hidden.not_found('Poste introuvable.');
    end if;
  end if;
  if v_code is null then
    v_errors := app_hidden.add_error(v_errors, 'code', 'Le code est obligatoire.');
  elsif app_hidden.code_well_formed(v_code) is false then
    v_errors := app_hidden.add_error(v_errors, 'code', 'Code invalide : 1 à 16 caractères, lettres, chiffres et _ + -.');
  elsif app_hidden.post_code_used_in_establishment(v_establishment, v_code, p_id) then
    v_errors := app_hidden.add_error(v_errors, 'code', format('Le code « %s » est déjà utilisé par un poste de cet établissement.', v_code));
  else
    v_clash := app_hidden.code_namespace_clash('posts', v_code);
    if v_clash is not null then
      v_errors := app_hidden.add_error(v_errors, 'code', v_clash);
    end if;
  end if;
  if v_label is null then
    v_errors := app_hidden.add_error(v_errors, 'label', 'Le libellé est obligatoire.');
  elsif char_length(v_label) > app_hidden.name_max_length() then
    v_errors := app_hidden.add_error(v_errors, 'label', app_hidden.max_length_message(app_hidden.name_max_length()));
  end if;
  if v_establishment is null then
    v_errors := app_hidden.add_error(v_errors, 'establishment', 'L''établissement est obligatoire.');
  elsif not exists (select 1 from app_public.establishments e where e.id = v_establishment) then
    v_errors := app_hidden.add_error(v_errors, 'establishment', 'Établissement inconnu.');
  end if;
  foreach v_field in array array['start_time', 'end_time', 'break_start_time', 'break_end_time'] loop
    if coalesce(app_hidden.in_text(p_body, v_field), '') !~ app_hidden.time_pattern()
       and (v_field in ('start_time', 'end_time') or app_hidden.in_text(p_body, v_field) is not null) then
      v_errors := app_hidden.add_error(v_errors, v_field, app_hidden.time_format_message());
    end if;
  end loop;
  perform app_hidden.invalid_fields(v_errors, 'WV517') where v_errors <> '{}'::jsonb;
  v_start := (p_body ->> 'start_time')::time;
  v_end := (p_body ->> 'end_time')::time;
  v_break_start := (p_body ->> 'break_start_time')::time;
  v_break_end := (p_body ->> 'break_end_time')::time;
  if v_start = v_end then
    v_errors := app_hidden.add_error(v_errors, 'end_time', 'La fin doit différer du début (une fin avant le début finit le lendemain).');
  end if;
  if (v_break_start is null) <> (v_break_end is null) then
    v_errors := app_hidden.add_error(v_errors, case when v_break_start is null then 'break_start_time' else 'break_end_time' end,
                                     'Une pause a un début et une fin.');
  end if;
  perform app_hidden.invalid_fields(v_errors, 'WV517') where v_errors <> '{}'::jsonb;
  if p_id is null then
    insert into app_public.posts (code, label, establishment_id, start_time, end_time, break_start_time, break_end_time, break_paid, is_active)
    values (v_code, v_label, v_establishment, v_start, v_end, v_break_start, v_break_end,
            coalesce(app_hidden.in_bool(p_body, 'break_paid'), false), coalesce(app_hidden.in_bool(p_body, 'is_active'), true))
    returning id into v_id;
  else
    update app_public.posts p set
      code = v_code, label = v_label, establishment_id = v_establishment, start_time = v_start, end_time = v_end,
      break_start_time = v_break_start, break_end_time = v_break_end,
      break_paid = coalesce(app_hidden.in_bool(p_body, 'break_paid'), p.break_paid),
      is_active = coalesce(app_hidden.in_bool(p_body, 'is_active'), p.is_active)
    where p.id = p_id;
  end if;
  return app_public.post_get(v_id);
end;
$$;
comment on function app_public.post_save(integer, jsonb) is
'SPEC Absence types (code compared with the codes of posts) and Permissions rule 6, back-office: a staff
account creates (p_id null) or rewrites a post; all field errors at once, a code equal to an absence
type code refused under code.';

-- Counter associations (reason – counter) --------------------------------------------------------

create or replace function app_hidden.counter_association_json(p_id int) returns jsonb
language sql stable as $$
  select jsonb_build_object(
    'id', ca.id, 'absence_type', ca.absence_type_id, 'absence_type_code', t.code, 'absence_type_name', t.name,
    'absence_type_active', t.is_active, 'counter_code', ca.counter_code, 'counter_name', k.name,
    'is_consumable', k.is_consumable, 'is_active', ca.is_active)
  from app_public.counter_associations ca
  join app_public.absence_types t on t.id = ca.absence_type_id
  join app_public.counter_kinds k on k.code = ca.counter_code
  where ca.id = p_id;
$$;

create or replace function app_public.counter_associations_search(p_counter_code text default null, p_absence_type int default null,
                                                                   p_page int default 1, p_page_size int default 50)
returns jsonb
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select app_hidden.list_answer(l.total,
    (select jsonb_agg(app_hidden.counter_association_json(u.id) order by u.n) from unnest(l.ids) with ordinality u(id, n)))
  from app_hidden.list_page(array(
    select ca.id from app_public.counter_associations ca join app_public.absence_types t on t.id = ca.absence_type_id
    where (p_counter_code is null or ca.counter_code = p_counter_code)
      and (p_absence_type is null or ca.absence_type_id = p_absence_type)
    order by ca.counter_code, t.code, ca.id),
    p_page, p_page_size) l;
$$;
comment on function app_public.counter_associations_search(text, integer, integer, integer) is
'SPEC Absence types (counter_codes) and declaration rule 17, back-office: one page of the associations
between absence types and counters, filtered by counter code and absence type.';

create or replace function app_public.counter_association_get(p_id int) returns jsonb
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  if not exists (select 1 from app_public.counter_associations ca where ca.id = p_id) then
    perform app_hidden.not_found('Association introuvable.');
  end if;
  return app_hidden.counter_association_json(p_id);
end;
$$;
comment on function app_public.counter_association_get(integer) is
'SPEC declaration rule 17, back-office: one association between an absence type and a counter (404 when
absent).';

-- Creates (p_id null) or rewrites an association. Deactivating it, or moving it to another
-- reason or counter, is refused under is_active while it would orphan an active counter
-- (trigger of sql/counters/triggers.sql, WV311).
create or replace function app_public.counter_association_save(p_id int, p_absence_type int, p_counter_code text,
                                                               p_is_active boolean default true)
returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_errors jsonb := '{}';
  v_code text := upper(nullif(btrim(p_counter_code), ''));
  v_id int := p_id;
begin
  perform app_hidden.require_staff();
  if p_id is not null then
    perform 1 from app_public.counter_associations ca where ca.id = p_id for update;
    if not found then
      perform app_hidden.not_found('Association introuvable.');
    end if;
  end if;
  if p_absence_type is null then
    v_errors := app_hidden.add_error(v_errors, 'absence_type', 'Le motif est obligatoire.');
  elsif not exists (select 1 from app_public.absence_types t where t.id = p_absence_type) then
    v_errors := app_hidden.add_error(v_errors, 'absence_type', 'Motif inconnu.');
  end if;
  if v_code is null then
    v_errors := app_hidden.add_error(v_errors, 'counter_code', 'Le compteur est obligatoire.');
  elsif not exists (select 1 from app_public.counter_kinds k where k.code = v_code) then
    v_errors := app_hidden.add_error(v_errors, 'counter_code', 'Compteur inconnu.');
  elsif exists (select 1 from app_public.counter_associations ca
                where ca.absence_type_id = p_absence_type and ca.counter_code = v_code and ca.id is distinct from p_id) then
    v_errors := app_hidden.add_error(v_errors, 'counter_code', 'Ce motif est déjà associé à ce compteur.');
  end if;
  perform app_hidden.invalid_fields(v_errors, 'WV312') where v_errors <> '{}'::jsonb;
  if p_id is null then
    insert into app_public.counter_associations (absence_type_id, counter_code, is_active)
    values (p_absence_type, v_code, coalesce(p_is_active, true))
    returning id into v_id;
  else
    update app_public.counter_associations ca
    set absence_type_id = p_absence_type, counter_code = v_code, is_active = coalesce(p_is_active, ca.is_active)
    where ca.id = p_id
      and (ca.absence_type_id, ca.counter_code, ca.is_active) is distinct from (p_absence_type, v_code, coalesce(p_is_active, ca.is_active));
  end if;
  return app_hidden.counter_association_json(v_id);
end;
$$;
comment on function app_public.counter_association_save(integer, integer, text, boolean) is
'SPEC declaration rule 17 and Permissions rule 6, back-office: a staff account creates (p_id null) or
rewrites an association between an absence type and a counter; deactivating it or moving it is refused
under is_active while it would orphan an active counter.';

-- Deletes an association, unless it would orphan an active counter (trigger, WV311).
create or replace function app_public.counter_association_delete(p_id int) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  perform app_hidden.require_staff();
  perform 1 from app_public.counter_associations ca where ca.id = p_id for update;
  if not found then
    perform app_hidden.not_found('Association introuvable.');
  end if;
  delete from app_public.counter_associations ca where ca.id = p_id;
  return null;
end;
$$;
comment on function app_public.counter_association_delete(integer) is
'SPEC declaration rule 17 and Permissions rule 6, back-office: a staff account deletes an association
between an absence type and a counter, unless it would orphan an active counter.';
--! EndIncluded reference/administration.sql
--! Included counters/balances.sql
-- Counters in the back-office: lists and the read-only journal for the readers of
-- app_public.counters (row-level security, sql/counters/policies.sql), the activation rule
-- (sql/counters/triggers.sql) and the manual adjustment, written by those who write counters
-- (SPEC Permissions: employee.change_employee_record on the employee, or staff status). An
-- adjustment is one journal movement with its reason, serialised on the counter row like every
-- other movement, and audited; the journal stays the only way a balance moves.

insert into app_private.audit_models (model, label) values
  ('counter', 'Compteur (activation)')
on conflict do nothing;

-- Does the acting account write the counters of this employee? Never NULL (sql/guards.sql).
create or replace function app_hidden.may_write_counter(p_employee int) returns boolean
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select app_hidden.current_account_is_staff()
      or coalesce(app_hidden.may(app_hidden.current_account_id(), 'employee.change_employee_record', p_employee), false);
$$;

-- The balances and identity of counters the caller already read through RLS (owner: the
-- journal has no policy for the request roles).
create or replace function app_private.counters_admin_json(p_ids int[]) returns table (id int, doc jsonb)
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select b.counter_id, jsonb_build_object(
    'id', b.counter_id, 'employee', b.employee_id,
    'employee_name', e.last_name || ' ' || e.first_name,
    'code', b.code, 'name', k.name, 'unit', k.unit, 'is_consumable', k.is_consumable,
    'year', b.year, 'is_active', b.is_active,
    'acquired', app_hidden.fmt_quantity(b.acquired), 'taken', app_hidden.fmt_quantity(b.taken),
    'planned', app_hidden.fmt_quantity(b.planned), 'remaining', app_hidden.fmt_quantity(b.remaining))
  from app_private.counter_balances b
  join app_public.employees e on e.id = b.employee_id
  join app_public.counter_kinds k on k.code = b.code
  where b.counter_id = any (p_ids);
$$;

create or replace function app_public.counters_search(p_employee int default null, p_code text default null, p_year int default null,
                                                      p_page int default 1, p_page_size int default 50)
returns jsonb
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select app_hidden.list_answer(l.total,
    (select jsonb_agg(j.doc order by u.n)
     from unnest(l.ids) with ordinality u(id, n) join app_private.counters_admin_json(l.ids) j on j.id = u.id))
  from app_hidden.list_page(array(
    select c.id from app_public.counters c
    join app_public.employees e on e.id = c.employee_id
    where (p_employee is null or c.employee_id = p_employee)
      and (p_code is null or c.code = p_code)
      and (p_year is null or c.year = p_year)
    order by c.year desc, e.last_name, e.first_name, c.code, c.id),
    p_page, p_page_size) l;
$$;
comment on function app_public.counters_search(integer, text, integer, integer, integer) is
'SPEC Counters and Permissions (employee.change_employee_record), back-office: one page of the counters
the caller reads, with their balances (Acquis, Pris, Planifiés, Restant), filtered by employee, counter
code and year, latest year first.';

-- One counter the caller reads (else 404), with what it may do on it.
create or replace function app_public.counter_get(p_id int) returns jsonb
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_employee int;
begin
  select c.employee_id into v_employee from app_public.counters c where c.id = p_id;
  if not found then
    perform app_hidden.not_found('Compteur introuvable.', 'WN301');
  end if;
  return (select j.doc from app_private.counters_admin_json(array[p_id]) j)
         || jsonb_build_object('may_write', app_hidden.may_write_counter(v_employee));
end;
$$;
comment on function app_public.counter_get(integer) is
'SPEC Counters, back-office: one counter the caller reads (else 404) with its balances and whether the
caller may write it (may_write).';

-- The journal of a counter the caller reads, in the order it was written, read-only.
create or replace function app_private.counter_journal_rows(p_id int) returns jsonb
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select coalesce(jsonb_agg(jsonb_build_object(
    'id', m.id, 'at', m.created_at, 'bucket', m.bucket, 'quantity', app_hidden.fmt_quantity(m.quantity),
    'kind', m.kind, 'absence', m.absence_id, 'transition', m.transition, 'comment', m.comment,
    'actor_name', (select coalesce(nullif(btrim(coalesce(e.first_name, '') || ' ' || coalesce(e.last_name, '')), ''), a.username)
                   from app_public.accounts a left join app_public.employees e on e.id = a.employee_id
                   where a.id = m.actor_account_id))
    order by m.id), '[]'::jsonb)
  from app_private.counter_movements m where m.counter_id = p_id;
$$;

create or replace function app_public.counter_journal(p_id int) returns jsonb
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  if not exists (select 1 from app_public.counters c where c.id = p_id) then
    perform app_hidden.not_found('Compteur introuvable.', 'WN301');
  end if;
  return app_private.counter_journal_rows(p_id);
end;
$$;
comment on function app_public.counter_journal(integer) is
'SPEC Counters and declaration rule 9, back-office: the movements of the journal of a counter the caller
reads, in the order they were written, read-only (404 otherwise).';

-- Owner-side writes of the two functions below, once they checked the caller.
create or replace function app_private.counter_write_adjustment(p_id int, p_bucket text, p_quantity numeric, p_reason text)
returns bigint
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_counter app_public.counters;
  v_before numeric;
  v_movement bigint;
begin
  -- Serialised with the other movements of the counter (absence_sync_counters locks it too).
  select * into v_counter from app_public.counters c where c.id = p_id for update;
  v_before := app_private.counter_remaining(p_id);
  if (v_before + (case when p_bucket = 'acquired' then p_quantity else -p_quantity end)) < 0 then
    perform app_hidden.invalid('quantity', format(
      'Cet ajustement rendrait le solde restant négatif (restant actuel : %s).', app_hidden.fmt_quantity(v_before)), 'WV313');
  end if;
  insert into app_private.counter_movements (counter_id, bucket, quantity, kind, actor_account_id, comment)
  values (p_id, p_bucket, p_quantity, 'adjustment', app_hidden.current_account_id(), p_reason)
  returning id into v_movement;
  perform app_private.write_audit('Creation', 'counter_adjustment', v_movement, null, jsonb_build_object(
    'counter', p_id, 'employee', v_counter.employee_id, 'code', v_counter.code, 'year', v_counter.year,
    'bucket', p_bucket, 'quantity', app_hidden.fmt_quantity(p_quantity), 'reason', p_reason,
    'remaining_before', app_hidden.fmt_quantity(v_before),
    'remaining_after', app_hidden.fmt_quantity(app_private.counter_remaining(p_id))));
  return v_movement;
end;
$$;

create or replace function app_private.counter_write_activation(p_id int, p_is_active boolean) returns void
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_old app_public.counters;
begin
  select * into v_old from app_public.counters c where c.id = p_id for update;
  if v_old.is_active = p_is_active then
    return;
  end if;
  -- The activation rule (a consumable counter needs an active association to an active
  -- reason) is the trigger of the table: 400 under is_active.
  update app_public.counters c set is_active = p_is_active where c.id = p_id;
  perform app_private.write_audit('Modification', 'counter', p_id,
    jsonb_build_object('is_active', v_old.is_active, 'code', v_old.code, 'year', v_old.year, 'employee', v_old.employee_id),
    jsonb_build_object('is_active', p_is_active, 'code', v_old.code, 'year', v_old.year, 'employee', v_old.employee_id));
end;
$$;

-- A manual adjustment: one movement of the journal (kind adjustment) with its reason.
-- Acquis moves the balance up or down by the quantity; Pris the other way.
create or replace function app_public.counter_adjust(p_id int, p_bucket text, p_quantity numeric, p_reason text) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_employee int;
  v_errors jsonb := '{}';
  v_reason text := nullif(btrim(p_reason), '');
begin
  select c.employee_id into v_employee from app_public.counters c where c.id = p_id;
  if not found then
    perform app_hidden.not_found('Compteur introuvable.', 'WN301');
  end if;
  if not app_hidden.may_write_counter(v_employee) then
    perform app_hidden.forbidden('Les compteurs s''ajustent par les comptes RH du périmètre du salarié ou du personnel d''administration.', 'WF301');
  end if;
  if p_bucket is null or p_bucket not in ('acquired', 'taken') then
    v_errors := app_hidden.add_error(v_errors, 'bucket', 'Colonne inconnue : Acquis (acquired) ou Pris (taken).');
  end if;
  if p_quantity is null then
    v_errors := app_hidden.add_error(v_errors, 'quantity', 'La quantité est obligatoire.');
  elsif p_quantity = 0 or abs(p_quantity) >= 1000 or p_quantity <> round(p_quantity, 2) then
    v_errors := app_hidden.add_error(v_errors, 'quantity', 'Une quantité non nulle, entre -999,99 et 999,99, deux décimales au plus.');
  end if;
  if v_reason is null then
    v_errors := app_hidden.add_error(v_errors, 'reason', 'Le motif de l''ajustement est obligatoire.');
  elsif char_length(v_reason) > app_hidden.adjustment_reason_max_length() then
    v_errors := app_hidden.add_error(v_errors, 'reason', app_hidden.max_length_message(app_hidden.adjustment_reason_max_length()));
  end if;
  perform app_hidden.invalid_fields(v_errors, 'WV313') where v_errors <> '{}'::jsonb;
  perform app_private.counter_write_adjustment(p_id, p_bucket, p_quantity, v_reason);
  return app_public.counter_get(p_id);
end;
$$;
comment on function app_public.counter_adjust(integer, text, numeric, text) is
'SPEC Counters and Permissions (employee.change_employee_record), back-office: HR of the employee''s
perimeter or a staff account adjusts a counter by one journal movement with its reason (Acquis moves the
balance by the quantity, Pris the other way); audited.';

-- Opens or closes a counter; opening a consumable one needs an active association to an
-- active reason (trigger, WV310 under is_active).
create or replace function app_public.counter_set_active(p_id int, p_is_active boolean) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_employee int;
begin
  select c.employee_id into v_employee from app_public.counters c where c.id = p_id;
  if not found then
    perform app_hidden.not_found('Compteur introuvable.', 'WN301');
  end if;
  if not app_hidden.may_write_counter(v_employee) then
    perform app_hidden.forbidden('Les compteurs s''ajustent par les comptes RH du périmètre du salarié ou du personnel d''administration.', 'WF301');
  end if;
  if p_is_active is null then
    perform app_hidden.invalid('is_active', 'Ce champ est obligatoire.', 'WV313');
  end if;
  perform app_private.counter_write_activation(p_id, p_is_active);
  return app_public.counter_get(p_id);
end;
$$;
comment on function app_public.counter_set_active(integer, boolean) is
'SPEC declaration rule 17 and Permissions (employee.change_employee_record), back-office: HR of the
employee''s perimeter or a staff account opens or closes a counter; a consumable counter opens only with
an active association to an active reason (400 under is_active).';
--! EndIncluded counters/balances.sql
--! Included org/role_attributions.sql
-- Role attributions in the back-office (issue 13, point 4): a role given to an account with
-- optional dates and establishments (SPEC Roles). Reference administration: written by staff
-- accounts only (SPEC Permissions rule 6). Who may grant what:
--   * the account must be in the editor's employee-record perimeter (its record is in the
--     perimeter of employee.change_employee_record; an account without record needs that
--     permission on the whole association); a superuser reaches every account. Outside: 404
--     (app_hidden.refuse_outside_or_forbid), never a 403 that would confirm the account;
--   * a non-staff account of that reach: 403 (WF580);
--   * nobody changes their own roles (WF581);
--   * the editor covers every right of the account before the write and after it
--     (app_hidden.account_rights_covered: ranks among the manager roles, permissions over
--     their establishments, staff and superuser accounts): an editor never grants more than
--     it holds, nor removes the roles of an account that outranks it (WF582).
-- Reads follow the policies of role_attributions (one's own, and the directory readers).

insert into app_private.audit_models (model, label) values ('role_attribution', 'Attribution de rôle')
on conflict do nothing;

-- Writes: API functions run as wfm_api; staff only, the functions check the rest.
select app_private.staff_write_policies(array['role_attributions', 'role_attribution_establishments']);

-- One audit line per write of an attribution, establishments included (written by the
-- functions below, which know the whole attribution; the import and the Salarié grant of a
-- new account are not role administration).
create or replace function app_private.role_attribution_snapshot(p_id int) returns jsonb
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select jsonb_build_object('id', ra.id, 'account_id', ra.account_id, 'role', r.name,
                            'start_date', ra.start_date, 'end_date', ra.end_date,
                            'establishments', coalesce((select jsonb_agg(x.establishment_id order by x.establishment_id)
                                                        from app_public.role_attribution_establishments x
                                                        where x.attribution_id = ra.id), '[]'::jsonb))
  from app_public.role_attributions ra join app_public.roles r on r.id = ra.role_id
  where ra.id = p_id;
$$;

-- Is this account in the caller's reach for role administration (see the head of the file)?
-- Never NULL (app_private.never_null_guards): false for an unknown or NULL account.
create or replace function app_hidden.account_in_role_reach(p_account int) returns boolean
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_employee int;
begin
  if p_account is null or not exists (select 1 from app_public.accounts a where a.id = p_account) then
    return false;
  end if;
  if app_hidden.current_account_is_superuser() then
    return true;
  end if;
  select a.employee_id into v_employee from app_public.accounts a where a.id = p_account;
  if v_employee is null then
    return app_hidden.perimeter_is_whole('employee.change_employee_record');
  end if;
  return app_hidden.may(app_hidden.current_account_id(), 'employee.change_employee_record', v_employee);
end;
$$;

-- The refusals before any write on the attributions of an account, in the SPEC's order:
-- outside the reach 404, then 403 (not staff, one's own roles, rights not covered).
create or replace function app_hidden.role_attribution_check_editor(p_account int) returns void
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_employee int;
begin
  if not app_hidden.account_in_role_reach(p_account) then
    select a.employee_id into v_employee from app_public.accounts a where a.id = p_account;
    if v_employee is null then
      perform app_hidden.not_found('Compte introuvable dans votre périmètre.', 'WN580');
    end if;
    perform app_hidden.refuse_outside_or_forbid(v_employee,
      'Les attributions de rôle s''écrivent par les comptes du personnel d''administration uniquement.', 'WF580');
  end if;
  if not app_hidden.current_account_is_staff() then
    perform app_hidden.forbidden(
      'Les attributions de rôle s''écrivent par les comptes du personnel d''administration uniquement.', 'WF580');
  end if;
  if p_account = app_hidden.current_account_id() then
    perform app_hidden.forbidden('Vous ne pouvez pas modifier vos propres rôles.', 'WF581');
  end if;
  if not app_hidden.account_rights_covered(p_account) then
    perform app_hidden.forbidden(
      'Ce compte détient des droits que vous ne détenez pas (rôle de rang supérieur, établissements hors de votre périmètre, statut staff ou superutilisateur) : vous ne pouvez pas modifier ses rôles.',
      'WF582');
  end if;
end;
$$;

-- After the write, in a statement of its own (it sees the write): the editor covers every
-- right the account now holds.
create or replace function app_hidden.role_attribution_check_granted(p_account int) returns void
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  if not app_hidden.account_rights_covered(p_account) then
    perform app_hidden.forbidden(
      'Vous ne pouvez attribuer un rôle que si vous détenez vous-même un rôle de même rang ou supérieur sur ces établissements.',
      'WF582');
  end if;
end;
$$;

create or replace function app_hidden.role_attribution_json(p_id int) returns jsonb
language sql stable as $$
  select jsonb_build_object(
    'id', ra.id, 'account', ra.account_id, 'role', r.name,
    'start_date', ra.start_date, 'end_date', ra.end_date,
    'establishments', coalesce((select jsonb_agg(x.establishment_id order by x.establishment_id)
                                from app_public.role_attribution_establishments x where x.attribution_id = ra.id), '[]'::jsonb),
    'establishment_names', coalesce((select jsonb_agg(e.name order by e.name)
                                     from app_public.role_attribution_establishments x
                                     join app_public.establishments e on e.id = x.establishment_id
                                     where x.attribution_id = ra.id), '[]'::jsonb),
    'restricts_by_establishment', r.opens_manager_workspace,
    'is_current', app_hidden.date_in(app_hidden.today(), ra.start_date, ra.end_date),
    'created_at', ra.created_at)
  from app_public.role_attributions ra join app_public.roles r on r.id = ra.role_id
  where ra.id = p_id;
$$;

-- The attributions of an account that the caller reads (policies: its own, directory readers).
create or replace function app_public.account_role_attributions(p_account int) returns jsonb
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v app_public.accounts;
begin
  select * into v from app_public.accounts a where a.id = p_account;
  if not found then
    perform app_hidden.not_found('Compte introuvable.', 'WN580');
  end if;
  return jsonb_build_object(
    'account', jsonb_build_object('id', v.id, 'username', v.username, 'employee', v.employee_id,
                                  'name', app_hidden.account_display_name(v.id), 'is_active', v.is_active,
                                  'is_staff', v.is_staff, 'is_superuser', v.is_superuser),
    'can_edit', app_hidden.current_account_is_staff() and app_hidden.account_in_role_reach(v.id)
                and v.id is distinct from app_hidden.current_account_id() and app_hidden.account_rights_covered(v.id),
    'results', coalesce((select jsonb_agg(app_hidden.role_attribution_json(ra.id)
                                          order by ra.start_date nulls first, ra.id)
                         from app_public.role_attributions ra where ra.account_id = p_account), '[]'::jsonb));
end;
$$;
comment on function app_public.account_role_attributions(integer) is
'SPEC Roles, back-office: the role attributions of an account that the caller reads (its own, or as a
directory reader), with their dates and establishments (404 when the account is not found).';

-- Validates dates and establishments of an attribution of role p_role (new or changed) and
-- writes its establishments; field errors under role, start_date, end_date, establishments.
create or replace function app_hidden.role_attribution_fields(p_account int, p_role app_public.roles, p_id int, p_body jsonb)
returns table (start_date date, end_date date, establishment_ids int[])
language plpgsql stable as $$
declare
  v_errors jsonb := '{}';
  v_start date := app_hidden.in_date(p_body, 'start_date');
  v_end date := app_hidden.in_date(p_body, 'end_date');
  v_ids int[] := coalesce(app_hidden.in_ids(p_body, 'establishments'), '{}');
  v_unknown int;
begin
  if v_start is not null and v_end is not null and v_end < v_start then
    v_errors := app_hidden.add_error(v_errors, 'end_date', 'La fin doit être le jour du début ou après.');
  end if;
  if cardinality(v_ids) > 0 and not p_role.opens_manager_workspace then
    v_errors := app_hidden.add_error(v_errors, 'establishments',
      format('Le rôle %s ne se restreint pas par établissement : laissez la liste vide.', p_role.name));
  end if;
  select i into v_unknown from unnest(v_ids) i
  where not exists (select 1 from app_public.establishments e where e.id = i) limit 1;
  if v_unknown is not null then
    v_errors := app_hidden.add_error(v_errors, 'establishments', format('Établissement n° %s introuvable.', v_unknown));
  end if;
  if not v_errors ? 'end_date' and exists (select 1 from app_public.role_attributions ra
             where ra.account_id = p_account and ra.role_id = p_role.id and ra.id is distinct from p_id
               and daterange(ra.start_date, ra.end_date, '[]') && daterange(v_start, v_end, '[]')) then
    v_errors := app_hidden.add_error(v_errors, 'start_date',
      format('Ce compte détient déjà le rôle %s sur une période qui chevauche celle-ci.', p_role.name));
  end if;
  perform app_hidden.invalid_fields(v_errors, 'WV580') where v_errors <> '{}'::jsonb;
  return query select v_start, v_end, v_ids;
end;
$$;

-- Grants a role to an account: {"role": "<name>", "start_date"?, "end_date"?, "establishments"?: [ids]}.
create or replace function app_public.role_attribution_grant(p_account int, p_body jsonb) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_role app_public.roles;
  v_name text;
  v_fields record;
  v_id int;
begin
  perform app_hidden.role_attribution_check_editor(p_account);
  v_name := app_hidden.in_trimmed(p_body, 'role');
  select * into v_role from app_public.roles r where r.name = v_name;
  if v_name is null then
    perform app_hidden.invalid('role', 'Choisissez un rôle.', 'WV580');
  elsif not found then
    perform app_hidden.invalid('role', format('Rôle « %s » inconnu.', v_name), 'WV580');
  end if;
  select * into v_fields from app_hidden.role_attribution_fields(p_account, v_role, null, p_body);
  insert into app_public.role_attributions (account_id, role_id, start_date, end_date)
  values (p_account, v_role.id, v_fields.start_date, v_fields.end_date)
  returning id into v_id;
  insert into app_public.role_attribution_establishments (attribution_id, establishment_id)
  select v_id, i from unnest(v_fields.establishment_ids) i;
  perform app_hidden.role_attribution_check_granted(p_account);
  perform app_private.write_audit('Creation', 'role_attribution', v_id, null, app_private.role_attribution_snapshot(v_id));
  return app_hidden.role_attribution_json(v_id);
end;
$$;
comment on function app_public.role_attribution_grant(integer, jsonb) is
'SPEC Roles and Permissions rule 6, back-office: a staff account grants a role to an account of its
employee-record perimeter, with optional dates and establishments; never its own roles, never more than
it holds (403), 404 outside its reach.';

-- Changes the dates and establishments of an attribution (the role stays: grant another one).
-- Every key is written: an absent date is none, absent establishments are none.
create or replace function app_public.role_attribution_change(p_id int, p_body jsonb) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v app_public.role_attributions;
  v_role app_public.roles;
  v_before jsonb;
  v_fields record;
begin
  -- Read, refuse, then lock: FOR UPDATE passes the write policies (staff), so a non-staff
  -- reader would get 404 instead of the 403 it is owed.
  select * into v from app_public.role_attributions ra where ra.id = p_id;
  if not found then
    perform app_hidden.not_found('Attribution de rôle introuvable.', 'WN580');
  end if;
  perform app_hidden.role_attribution_check_editor(v.account_id);
  perform 1 from app_public.role_attributions ra where ra.id = p_id for update;
  select * into v_role from app_public.roles r where r.id = v.role_id;
  select * into v_fields from app_hidden.role_attribution_fields(v.account_id, v_role, p_id, p_body);
  v_before := app_private.role_attribution_snapshot(p_id);
  update app_public.role_attributions ra set start_date = v_fields.start_date, end_date = v_fields.end_date
  where ra.id = p_id;
  delete from app_public.role_attribution_establishments x
  where x.attribution_id = p_id and x.establishment_id <> all (v_fields.establishment_ids);
  insert into app_public.role_attribution_establishments (attribution_id, establishment_id)
  select p_id, i from unnest(v_fields.establishment_ids) i
  on conflict do nothing;
  perform app_hidden.role_attribution_check_granted(v.account_id);
  if v_before is distinct from app_private.role_attribution_snapshot(p_id) then
    perform app_private.write_audit('Modification', 'role_attribution', p_id, v_before, app_private.role_attribution_snapshot(p_id));
  end if;
  return app_hidden.role_attribution_json(p_id);
end;
$$;
comment on function app_public.role_attribution_change(integer, jsonb) is
'SPEC Roles, back-office: changes the dates and establishments of an attribution (every key written; the
role stays), under the rules of the grant.';

-- Removes an attribution (to keep its history, change its end date instead).
create or replace function app_public.role_attribution_delete(p_id int) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v app_public.role_attributions;
begin
  -- Read, refuse, then lock: FOR UPDATE passes the write policies (staff), so a non-staff
  -- reader would get 404 instead of the 403 it is owed.
  select * into v from app_public.role_attributions ra where ra.id = p_id;
  if not found then
    perform app_hidden.not_found('Attribution de rôle introuvable.', 'WN580');
  end if;
  perform app_hidden.role_attribution_check_editor(v.account_id);
  perform 1 from app_public.role_attributions ra where ra.id = p_id for update;
  perform app_private.write_audit('Suppression', 'role_attribution', p_id, app_private.role_attribution_snapshot(p_id), null);
  delete from app_public.role_attributions ra where ra.id = p_id;
  return null;
end;
$$;
comment on function app_public.role_attribution_delete(integer) is
'SPEC Roles, back-office: removes an attribution under the rules of the grant; to keep its history,
change its end date instead.';

-- The back-office list of attributions the caller reads, filtered by account, role and
-- establishment (an attribution without establishment covers them all); current ones first.
create or replace function app_public.role_attributions_search(p_account int default null, p_role text default null,
                                                               p_establishment int default null,
                                                               p_page int default 1, p_page_size int default 50)
returns jsonb
language sql stable as $$
  select app_hidden.list_answer(l.total,
    (select jsonb_agg(app_hidden.role_attribution_json(ra.id)
                      || jsonb_build_object('account_username', a.username, 'account_name', app_hidden.account_display_name(a.id))
                      order by u.n)
     from unnest(l.ids) with ordinality u(id, n)
     join app_public.role_attributions ra on ra.id = u.id
     join app_public.accounts a on a.id = ra.account_id))
  from app_hidden.list_page(array(
    select ra.id
    from app_public.role_attributions ra
    join app_public.roles r on r.id = ra.role_id
    join app_public.accounts a on a.id = ra.account_id
    where (p_account is null or ra.account_id = p_account)
      and (p_role is null or r.name = p_role)
      and (p_establishment is null
           or (r.opens_manager_workspace
               and (not exists (select 1 from app_public.role_attribution_establishments x where x.attribution_id = ra.id)
                    or exists (select 1 from app_public.role_attribution_establishments x
                               where x.attribution_id = ra.id and x.establishment_id = p_establishment))))
    order by app_hidden.date_in(app_hidden.today(), ra.start_date, ra.end_date) desc, r.precedence, lower(a.username), ra.id),
    p_page, p_page_size) l;
$$;
comment on function app_public.role_attributions_search(integer, text, integer, integer, integer) is
'SPEC Roles, back-office: one page of the role attributions the caller reads, filtered by account, role
and establishment (an attribution without establishment covers them all), current ones first.';

-- One attribution as the caller reads it, with what the back-office shows and may do.
create or replace function app_public.role_attribution_get(p_id int) returns jsonb
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v app_public.role_attributions;
begin
  select * into v from app_public.role_attributions ra where ra.id = p_id;
  if not found then
    perform app_hidden.not_found('Attribution de rôle introuvable.', 'WN580');
  end if;
  return app_hidden.role_attribution_json(p_id)
      || jsonb_build_object(
           'account_username', (select a.username from app_public.accounts a where a.id = v.account_id),
           'account_name', app_hidden.account_display_name(v.account_id),
           'account_employee', (select a.employee_id from app_public.accounts a where a.id = v.account_id),
           'can_edit', app_hidden.current_account_is_staff() and app_hidden.account_in_role_reach(v.account_id)
                       and v.account_id is distinct from app_hidden.current_account_id()
                       and app_hidden.account_rights_covered(v.account_id));
end;
$$;
comment on function app_public.role_attribution_get(integer) is
'SPEC Roles, back-office: one role attribution the caller reads (else 404), with what the back-office
shows and may do on it.';
--! EndIncluded org/role_attributions.sql
--! Included employees/contracts.sql
-- Adding a contract from the back-office (issue 13, point 4): the API writes contracts through
-- the employee record (PUT/PATCH /api/employees/<id>/ with the whole `contracts` list), so the
-- back-office form of one new contract goes through that same function, its rules, perimeter
-- and audit: the record's contracts as they are, plus the new one.

-- The contracts of an employee as the `contracts` input of employee_update, every one kept.
-- Read as the owner: the list only feeds employee_update, which decides whether the caller may
-- write this record at all (a list shortened by the caller's reading would delete contracts).
create or replace function app_private.employee_contracts_input(p_employee int) returns jsonb
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select coalesce(jsonb_agg(jsonb_build_object('id', c.id, 'type', c.contract_type_id, 'start_date', c.start_date,
                                               'end_date', c.end_date, 'trial_end_date', c.trial_end_date,
                                               'job_title', c.job_title, 'weekly_hours', c.weekly_hours)
                            order by c.start_date, c.id), '[]'::jsonb)
  from app_public.contracts c where c.employee_id = p_employee;
$$;

-- {"type", "start_date", "end_date"?, "trial_end_date"?, "job_title"?, "weekly_hours"?}: the
-- employee record with its new contract (errors under `contracts`, as the API answers them).
create or replace function app_public.employee_contract_add(p_employee int, p_contract jsonb) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  if jsonb_typeof(p_contract) is distinct from 'object' then
    perform app_hidden.invalid('contracts', 'Un contrat (objet) est attendu.', 'WV501');
  end if;
  return app_public.employee_update(p_employee, p_contracts =>
    app_private.employee_contracts_input(p_employee) || jsonb_build_array(p_contract - 'id'));
end;
$$;
comment on function app_public.employee_contract_add(integer, jsonb) is
'SPEC Permissions (employee.change_employee_record), back-office: adds one contract to an employee record
through employee_update, with its rules, perimeter and audit; returns the record (errors under the
contract fields).';

-- Editing or removing one contract (issue 13, point 4): the same path as the add, the record's
-- contracts with that one changed or left out, through employee_update. Employees carry no
-- version column: the form's `version` is the fingerprint of the contract list it was drawn
-- from, so a list changed meanwhile (another HR's edit) answers 409 and writes nothing.
-- Given to the accounts that may write the record only (the form's hidden field), null otherwise.
create or replace function app_hidden.employee_contracts_version(p_employee int) returns text
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select md5(app_private.employee_contracts_input(p_employee)::text)
  where app_hidden.may(app_hidden.current_account_id(), 'employee.change_employee_record', p_employee);
$$;

-- employee_update's errors on `contracts` name the contract by its rank in the rebuilt list;
-- the back-office form shows one contract: each message goes under the field it concerns,
-- without the rank. p_detail is the DETAIL of the refusal (a JSON object of fields, or one field).
create or replace function app_private.employee_contract_form_errors(p_message text, p_detail text) returns jsonb
language sql immutable as $$
  with errors as (
    select e.key, m
    from jsonb_each(case when left(p_detail, 1) = '{' then p_detail::jsonb
                         else jsonb_build_object(coalesce(p_detail, 'non_field_errors'), jsonb_build_array(p_message)) end) e,
         jsonb_array_elements_text(e.value) m
  ), placed as (
    select case when key <> 'contracts' then key
                when m ~ 'se chevauchent' then 'start_date'
                when m ~ 'type de contrat' then 'type'
                when m ~ 'période d''essai' then 'trial_end_date'
                when m ~ 'date de fin' then 'end_date'
                when m ~ 'date de début' then 'start_date'
                when m ~ 'intitulé de poste' then 'job_title'
                when m ~ 'durée hebdomadaire' then 'weekly_hours'
                else 'non_field_errors' end as field,
           case when m ~ 'se chevauchent'
                then 'Ce contrat chevauche un autre contrat du salarié : un salarié a un seul contrat à la fois.'
                else regexp_replace(m, '^Contrat n° [0-9]+ : (.)', '\1') end as message
    from errors
  )
  select jsonb_object_agg(field, messages)
  from (select field, jsonb_agg(upper(left(message, 1)) || substr(message, 2)) as messages from placed group by field) f;
$$;

-- employee_update with the contract list given, its field refusals re-raised under the form's fields.
create or replace function app_private.employee_contracts_save(p_employee int, p_contracts jsonb) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_message text;
  v_detail text;
begin
  return app_public.employee_update(p_employee, p_contracts => p_contracts);
exception when sqlstate 'WV501' then
  get stacked diagnostics v_message = message_text, v_detail = pg_exception_detail;
  perform app_hidden.invalid_fields(app_private.employee_contract_form_errors(v_message, v_detail), 'WV501');
  return null;
end;
$$;

-- The gate of a change to one contract, in the API's order: 404 outside the perimeter, 403
-- without the right (an empty PATCH through employee_update, which writes nothing), then 409
-- when the list changed since the form was drawn, then 400 under `contract` for a contract
-- that is not this employee's.
create or replace function app_private.employee_contract_gate(p_employee int, p_contract int, p_version text) returns void
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  perform app_public.employee_update(p_employee, p_sent => '{}');
  if p_version is distinct from app_hidden.employee_contracts_version(p_employee) then
    perform app_hidden.conflict('Les contrats de ce salarié ont changé depuis l''affichage du formulaire : '
                                'rechargez la fiche puis recommencez.', 'WC501');
  end if;
  if not exists (select 1 from app_public.contracts c where c.id = p_contract and c.employee_id = p_employee) then
    perform app_hidden.invalid('contract', 'Ce contrat n''appartient pas à ce salarié.', 'WV501');
  end if;
end;
$$;

-- {"contract", "version", "type", "start_date", "end_date"?, "trial_end_date"?, "job_title"?,
-- "weekly_hours"?}: that contract takes these values (an absent key empties the field).
drop function if exists app_public.employee_contract_change(int, jsonb);
create or replace function app_public.employee_contract_change(p_employee int, p_body jsonb) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_contract int;
begin
  if jsonb_typeof(p_body) is distinct from 'object' then
    perform app_hidden.invalid(null, 'Un contrat (objet) est attendu.', 'WV501');
  end if;
  v_contract := app_hidden.in_int(p_body, 'contract');
  perform app_private.employee_contract_gate(p_employee, v_contract, p_body ->> 'version');
  return app_private.employee_contracts_save(p_employee, (
    select jsonb_agg(case when (c ->> 'id')::int = v_contract
                          then jsonb_build_object('id', v_contract) || (p_body - 'contract' - 'version' - 'id')
                          else c end)
    from jsonb_array_elements(app_private.employee_contracts_input(p_employee)) c));
end;
$$;
comment on function app_public.employee_contract_change(integer, jsonb) is
'SPEC Permissions (employee.change_employee_record), back-office: one contract of an employee takes the
values of the form through employee_update; 409 when the contract list changed since the form was drawn
(version), 400 under contract for a contract of another employee.';

-- {"contract", "version"}: the record without that contract.
drop function if exists app_public.employee_contract_remove(int, jsonb);
create or replace function app_public.employee_contract_remove(p_employee int, p_body jsonb) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_contract int;
begin
  if jsonb_typeof(p_body) is distinct from 'object' then
    perform app_hidden.invalid(null, 'Un contrat (objet) est attendu.', 'WV501');
  end if;
  v_contract := app_hidden.in_int(p_body, 'contract');
  perform app_private.employee_contract_gate(p_employee, v_contract, p_body ->> 'version');
  return app_private.employee_contracts_save(p_employee, coalesce((
    select jsonb_agg(c) from jsonb_array_elements(app_private.employee_contracts_input(p_employee)) c
    where (c ->> 'id')::int <> v_contract), '[]'::jsonb));
end;
$$;
comment on function app_public.employee_contract_remove(integer, jsonb) is
'SPEC Permissions (employee.change_employee_record), back-office: removes one contract of an employee
through employee_update; 409 when the contract list changed since the form was drawn (version).';

-- An employee record as the API reads it (employee_get: its perimeter, its 404) with the version of
-- its contract list that the contract forms carry (sql/employees/contracts.sql).
create or replace function app_hidden.employee_with_contracts_version(p_id int) returns jsonb
language sql stable as $$
  select app_public.employee_get(p_id) || jsonb_build_object('contracts_version', app_hidden.employee_contracts_version(p_id));
$$;

-- What the signed-in account may do on an employee record: close or open its account (never its
-- own), write the record, remove the honorability certificate.
create or replace function app_hidden.employee_abilities(p_id int) returns jsonb
language sql stable as $$
  select jsonb_build_object(
    'activation', not app_hidden.is_current_employee(p_id)
                  and (app_hidden.may(null, 'employee.change_account_activation', p_id)
                       or app_hidden.may(null, 'employee.change_interim_account_activation', p_id)),
    'edit', app_hidden.may(null, 'employee.change_employee_record', p_id),
    'remove_certificate', app_hidden.can_deposit_honorability(p_id)
                          and exists (select 1 from app_public.honorability_certificates h where h.employee_id = p_id));
$$;
--! EndIncluded employees/contracts.sql
--! Included teams/members.sql
-- Removing one member of a team from the back-office (issue 13, point 4): through the API's
-- PUT /api/teams/<id>/members/ (team_members_replace), the team's current and future members
-- as they are, without that one. Its rules apply: the right and perimeter on the team, the
-- member leaves yesterday, or their assignment is deleted when it has not started yet.

-- The current and future members of a team as the `members` input of team_members_replace,
-- each with the dates of the assignment that function matches (so that they stay as they are).
-- Read as the owner: the list only feeds team_members_replace, which decides whether the caller
-- may write this team (a list shortened by the caller's reading would remove members).
create or replace function app_private.team_members_input(p_team int) returns jsonb
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select coalesce(jsonb_agg(jsonb_build_object('employee', m.employee_id, 'start_date', m.start_date, 'end_date', m.end_date)
                            order by m.employee_id), '[]'::jsonb)
  from (select distinct on (ta.employee_id) ta.employee_id, ta.start_date, ta.end_date
        from app_public.team_assignments ta
        where ta.team_id = p_team and (ta.end_date is null or ta.end_date >= app_hidden.today())
        order by ta.employee_id, ta.start_date nulls first) m;
$$;

-- {"employee"}: the team without that member (400 under `employee` if they are no current or
-- future member; 404 / 403 as team_members_replace answers).
drop function if exists app_public.team_member_remove(int, jsonb);
create or replace function app_public.team_member_remove(p_team int, p_body jsonb) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_employee int;
  v_members jsonb;
begin
  perform app_hidden.team_for_write(p_team);
  if jsonb_typeof(p_body) is distinct from 'object' then
    perform app_hidden.invalid(null, 'Un objet est attendu.', 'WV520');
  end if;
  v_employee := app_hidden.in_int(p_body, 'employee');
  v_members := app_private.team_members_input(p_team);
  if v_employee is null or not exists (select 1 from jsonb_array_elements(v_members) m where (m ->> 'employee')::int = v_employee) then
    perform app_hidden.invalid('employee', 'Ce salarié ne fait pas partie de cette équipe, ni aujourd''hui ni à venir.', 'WV520');
  end if;
  return app_public.team_members_replace(p_team, p_members => (
    select coalesce(jsonb_agg(m), '[]'::jsonb) from jsonb_array_elements(v_members) m
    where (m ->> 'employee')::int <> v_employee));
end;
$$;
comment on function app_public.team_member_remove(integer, jsonb) is
'SPEC Permissions rule 7 (back-office): removes one current or future member of a team through
team_members_replace and its rules (400 under employee when not a member).';

-- Whether the signed-in account writes this team: employee.change_team, and the team has an
-- establishment of that perimeter (SPEC Permissions rule 7; the writes check it again).
create or replace function app_hidden.team_writable(p_id int) returns boolean
language sql stable as $$
  select app_hidden.current_account_has('employee.change_team')
     and (app_hidden.perimeter_is_whole('employee.change_team')
          or exists (select 1 from app_public.team_establishments te where te.team_id = p_id
                     and te.establishment_id = any (app_hidden.perimeter_establishment_ids('employee.change_team'))));
$$;

-- The employees of the account's team-writing perimeter, « Last First », to add as members.
create or replace function app_hidden.team_member_choices() returns table (value text, label text)
language sql stable rows 200 as $$
  select e.id::text, e.last_name || ' ' || e.first_name from app_public.employees e
  where app_hidden.may(null, 'employee.change_team', e.id) order by e.last_name, e.first_name;
$$;
--! EndIncluded teams/members.sql
--! Included absences/corrections.sql
-- Absences in the back-office (issue 13, point 3). The decisions, the cancellation decisions
-- and the cancel action of a granted absence are the API's own functions (absence_validate,
-- absence_refuse, absence_delete); what the API lacks lives here: what the reader may do on
-- an absence, and the form's save with its status field (SPEC, absence state table: the
-- technical state may be set back to pending; cancellation requested and cancelled are
-- neither offered nor left through that field).

-- What the signed-in account may do on an absence (the back-office shows only those forms;
-- the transition functions check again): decide (absences.decide_absence on the employee,
-- never on its own absence), correct (the manager-side correction of absence_update).
create or replace function app_public.absence_abilities(p_id int) returns jsonb
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select jsonb_build_object(
    'own', o.own,
    'decide', app_hidden.may_decide_absence_of(a.employee_id),
    'correct', app_hidden.may_decide_absence_of(a.employee_id)
               and app_hidden.may(app_hidden.current_account_id(), 'absences.view_absence_queue', a.employee_id))
  from app_public.absences a
  cross join lateral (select app_hidden.is_current_employee(a.employee_id) as own) o
  where a.id = p_id and a.employee_id in (select app_hidden.absence_api_reader_ids());
$$;
comment on function app_public.absence_abilities(integer) is
'SPEC Permissions rules 1 and 4 (back-office): what the signed-in account may do on an absence: decide
(absences.decide_absence on the employee, never on its own absence) and correct (the manager-side
correction). The back-office shows only those forms; the transition functions check again.';

-- Sets a decided absence (validated or refused) back to pending, as a decider of its
-- perimeter (never on its own absence) inside the decider's retroactive window: version + 1,
-- the decision (decided_by, decided_at, decision_reason) is cleared (the audit line keeps
-- it), the counters go back to a reservation in Planifiés (a refused request reserves again,
-- so its declaration rules run again: overlap, caps, counters), and the employee is told.
create or replace function app_hidden.absence_reopen(p_absence app_public.absences) returns app_public.absences
language plpgsql volatile as $$
declare
  v app_public.absences;
  v_eval jsonb;
begin
  perform app_hidden.absence_check_decider(p_absence);
  perform app_hidden.absence_check_decider_window(p_absence);
  if p_absence.status = 'refused' then
    perform app_hidden.absence_lock_employee(p_absence.employee_id);
    v_eval := app_private.absence_evaluate(
      row(p_absence.employee_id, p_absence.type_id, p_absence.date_start, p_absence.date_end, p_absence.start_half,
          p_absence.end_half, p_absence.start_time, p_absence.end_time)::app_hidden.absence_draft,
      p_absence.id, 'manager', null, app_hidden.today());
    if v_eval -> 'errors' <> '{}'::jsonb then
      perform app_hidden.invalid_fields(v_eval -> 'errors', 'WV200');
    end if;
  end if;
  perform set_config('app.absence_reopening', 'on', true);
  perform app_private.set_audit_verb('Modification');
  update app_public.absences a set
    status = 'pending', decided_by = null, decided_at = null, decision_reason = null, version = a.version + 1
  where a.id = p_absence.id
  returning * into v;
  perform app_private.set_audit_verb('');
  perform set_config('app.absence_reopening', '', true);
  perform app_private.absence_sync_counters(v.id, 'reopen');
  perform app_private.absence_notify_employee(v, 'Absence remise en attente',
    format('Votre absence %s, %s, a été remise en attente par %s : elle sera de nouveau décidée.',
           app_hidden.absence_subject(v), case when p_absence.status = 'refused' then 'refusée' else 'validée' end,
           app_hidden.account_display_name(app_hidden.current_account_id())), 'warning');
  return v;
end;
$$;

-- The back-office form of an absence: {version, status?, type?, date_start?, date_end?,
-- start_half?, end_half?, start_time?, end_time?, comment?}. version is required (409 when
-- stale). status: only "pending" may be written, from validated or refused (the decisions
-- have their own actions); in the states cancellation requested and cancelled the field is
-- not editable. The other fields are the manager-side correction of PATCH /api/absences/<id>/
-- (absence_update: same rules, same counter compensation). One transaction: a refusal of
-- either part writes nothing.
create or replace function app_public.absence_backoffice_save(p_id int, p_body jsonb, p_public_url text default null)
returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v app_public.absences;
  v_status text := nullif(p_body ->> 'status', '');
begin
  v := app_hidden.absence_lock(p_id);
  perform app_hidden.absence_check_version(v, (p_body ->> 'version')::int, true);
  if v_status is not null and v_status is distinct from v.status then
    if v.status in ('cancellation_requested', 'cancelled') then
      perform app_hidden.invalid('status', format(
        'Le statut d''une absence « %s » ne se modifie pas : %s', app_hidden.absence_status_label(v.status),
        case when v.status = 'cancelled' then 'elle est annulée.' else 'accordez ou refusez la demande d''annulation.' end),
        'WV215');
    end if;
    if v_status <> 'pending' then
      perform app_hidden.invalid('status',
        'Le statut ne peut être remis qu''« En attente » : validez ou refusez la demande avec les actions de décision.',
        'WV215');
    end if;
    v := app_hidden.absence_reopen(v);
  end if;
  -- The form's keys as absence_update's typed arguments (the form's schema has checked their types).
  return app_public.absence_update(p_id,
    p_type => (p_body ->> 'type')::int, p_date_start => (p_body ->> 'date_start')::date,
    p_date_end => (p_body ->> 'date_end')::date, p_start_half => p_body ->> 'start_half', p_end_half => p_body ->> 'end_half',
    p_start_time => (p_body ->> 'start_time')::time, p_end_time => (p_body ->> 'end_time')::time,
    p_comment => p_body ->> 'comment', p_version => v.version,
    p_sent => array(select jsonb_object_keys(p_body - 'status' - 'employee')), p_public_url => p_public_url);
end;
$$;
comment on function app_public.absence_backoffice_save(integer, jsonb, text) is
'SPEC States and transitions, Absence (back-office form): with the current version (else 409), may put a
validated or refused absence back to pending (the only status it writes) and apply the manager-side
correction of PATCH /api/absences/<id>/ (same rules, same counter compensation) in one transaction; the
status is not editable once a cancellation is requested or granted.';
--! EndIncluded absences/corrections.sql
--! Included backoffice/choices.sql
-- The back-office's own reads: the choices of its selects (filters and form fields) and the rows
-- a page shows beside a record, each a named function that src/backoffice/resources/ declares
-- (src/backoffice/calls.ts) and the start-up check compares with pg_proc. They run as the signed-in
-- account (security invoker, wfm_visitor): row-level security decides what each one lists, as it
-- did when these statements were written in the resources. Choices answer (value, label).

-- Establishments and divisions, by name.
create or replace function app_hidden.establishment_choices() returns table (value text, label text)
language sql stable rows 50 as $$
  select e.id::text, e.name from app_public.establishments e order by e.name;
$$;

create or replace function app_hidden.division_choices() returns table (value text, label text)
language sql stable rows 20 as $$
  select d.id::text, d.name from app_public.divisions d order by d.name;
$$;

-- The establishments of a list of ids, by name (a division's, an employee's secondary ones).
create or replace function app_hidden.establishments_named(p_ids int[]) returns table (id int, name text)
language sql stable rows 20 as $$
  select e.id, e.name from app_public.establishments e where e.id = any (p_ids) order by e.name;
$$;

-- Contract types « CODE — name », in creation order (a contract's type) or by code (an absence
-- type's contract types).
create or replace function app_hidden.contract_type_choices(p_by_code boolean default false) returns table (value text, label text)
language sql stable rows 10 as $$
  select t.id::text, t.code || ' — ' || t.name from app_public.contract_types t
  order by case when p_by_code then t.code end, t.id;
$$;

-- Accounts « username — display name », by username.
create or replace function app_hidden.account_choices() returns table (value text, label text)
language sql stable rows 200 as $$
  select a.id::text, a.username || ' — ' || coalesce(app_hidden.account_display_name(a.id), a.username)
  from app_public.accounts a order by lower(a.username);
$$;

-- Employees « Last First » who have rows in one of the lists of the back-office: 'absences',
-- 'counters' or 'shift_change_requests' (the filters of those lists offer no one else).
create or replace function app_hidden.employee_choices(p_having text) returns table (value text, label text)
language sql stable rows 200 as $$
  select e.id::text, e.last_name || ' ' || e.first_name from app_public.employees e
  where case p_having
          when 'absences' then e.id in (select a.employee_id from app_public.absences a)
          when 'counters' then e.id in (select c.employee_id from app_public.counters c)
          when 'shift_change_requests' then e.id in (select r.employee_id from app_public.shift_change_requests r)
        end
  order by e.last_name, e.first_name;
$$;

-- Absence categories: the roots (a category's parent), or every category « Root › Sub » in tree order.
create or replace function app_hidden.absence_category_choices(p_roots_only boolean default false) returns table (value text, label text)
language sql stable rows 50 as $$
  select c.id::text, case when p_roots_only then c.name else coalesce(p.name || ' › ', '') || c.name end
  from app_public.absence_categories c left join app_public.absence_categories p on p.id = c.parent_id
  where not p_roots_only or c.parent_id is null
  order by coalesce(p.position, c.position), coalesce(p.name, c.name), c.parent_id nulls first, c.position, c.name;
$$;

-- The sub-categories and the absence types of a category (its page's related rows).
create or replace function app_hidden.absence_category_children(p_id int) returns table (id int, code text, name text)
language sql stable rows 10 as $$
  select c.id, c.code, c.name from app_public.absence_categories c where c.parent_id = p_id order by c.position, c.name;
$$;

create or replace function app_hidden.absence_category_types(p_id int) returns table (id int, code text, name text, is_active boolean)
language sql stable rows 10 as $$
  select t.id, t.code, t.name, t.is_active from app_public.absence_types t where t.category_id = p_id order by t.position, t.code;
$$;

-- Absence types « CODE — name » by code: 'all' of them (inactive ones marked), the 'active' ones
-- and those of an absence ('filed': the filter of the absences), or the active ones and p_kept
-- (the type of the absence being corrected).
create or replace function app_hidden.absence_type_choices(p_which text, p_kept int default null) returns table (value text, label text)
language sql stable rows 50 as $$
  select t.id::text, t.code || ' — ' || t.name || case when p_which = 'all' and not t.is_active then ' (inactif)' else '' end
  from app_public.absence_types t
  where case p_which
          when 'all' then true
          when 'filed' then t.is_active or t.id in (select a.type_id from app_public.absences a)
          when 'kept' then t.is_active or t.id = p_kept
        end
  order by t.code;
$$;

-- Counter kinds « CODE — name », in their order.
create or replace function app_hidden.counter_kind_choices() returns table (value text, label text)
language sql stable rows 10 as $$
  select k.code, k.code || ' — ' || k.name from app_public.counter_kinds k order by k.position, k.code;
$$;
--! EndIncluded backoffice/choices.sql
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
