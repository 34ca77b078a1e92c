--! Previous: sha1:708dcf2204690625294e260d342497891cddf35f
--! Hash: sha1:e0cf6bf307c92704ac556a0bf2ecb11b506fe51b
--! Message: Issue 26 point 1 remainder and issue 27 point 5: the back-office saves typed, payroll counter figures

-- Written by `npm run db:current` from sql/ORDER: edit sql/, never this file, and run it again.
-- The sql/ files changed since the last committed migration (migrations/sql-state.json), in list order.

--! Included employees/helpers.sql
-- Helpers shared by the employee, referential, team, event, on-call and payroll API
-- functions: reading a JSON object field by field (a wrong type answers 400 under the field:
-- the items of the JSON lists the API functions take, contracts, team assignments and
-- members, and the stored files' metadata), the caller's establishment scope,
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

-- The back-office's saves take typed arguments (issue 26): their booleans and id lists are no
-- longer read from a JSON body.
drop function if exists app_hidden.in_bool(jsonb, text, text);
drop function if exists app_hidden.in_ids(jsonb, text, text);
drop function if exists app_hidden.in_array(jsonb, text, text);

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
--! Included payroll/api.sql
-- Payroll consultation (SPEC, Permissions rule 8): GET /api/payroll/options/ and
-- GET /api/payroll/?month=YYYY-MM&establishment=&search=&page=, with employee.view_payroll
-- (Admin, RH n1, RH n2, Service Paie) on its perimeter. Read only.
--
-- One line per contract active in the month (for the employees of the perimeter; with an
-- establishment, those attached to it: main, secondary workplace or team at the month's end):
--   * contract: type, dates, weekly hours, job title;
--   * period: the days of the month covered by the contract;
--   * planned_hours: the planned day (app_hidden.planned_slots: template or day
--     modification, net of unpaid breaks) summed over those days;
--   * absence_hours: per day, the planned minutes covered by absences, capped by the planned
--     minutes of the day: a whole day covers the whole planned day, a half-day half of it,
--     an hourly absence its hours; only validated absences (and those whose cancellation is
--     requested, still granted) count;
--   * worked_hours = planned_hours - absence_hours;
--   * absences: grouped by reason, each with its dates and quantity within the period (the
--     absence's counted quantity when it lies entirely in the period; otherwise the days of
--     the period counted on the establishment's base, Sundays and public holidays excluded,
--     a half-day counting half). Never comments, decision reasons or documents;
--   * counters: the balances of the employee's counters of that civil year, from the journal's
--     movements written before the end of the month; and, for each, the figures of « Mes compteurs »
--     (issue 27 point 5, app_private.counter_year_facts, the same function as GET /api/counters/,
--     computed on today's journal): how it acquires, still to come, carried over and until when,
--     what the year end will carry over or lose.

-- Counter balances of employees for a year, from the movements written before p_at.
create or replace function app_private.counter_balances_at(p_employees int[], p_year int, p_at timestamptz)
returns table (employee_id int, code text, name text, unit text, sort_order smallint,
               acquired numeric, taken numeric, planned numeric, remaining numeric)
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select c.employee_id, c.code, k.name, k.unit, k.position,
         coalesce(sum(m.quantity) filter (where m.bucket = 'acquired'), 0),
         coalesce(sum(m.quantity) filter (where m.bucket = 'taken'), 0),
         coalesce(sum(m.quantity) filter (where m.bucket = 'planned'), 0),
         coalesce(sum(m.quantity) filter (where m.bucket = 'acquired'), 0)
           - coalesce(sum(m.quantity) filter (where m.bucket = 'taken'), 0)
           - coalesce(sum(m.quantity) filter (where m.bucket = 'planned'), 0)
  from app_public.counters c
  join app_public.counter_kinds k on k.code = c.code
  left join app_private.counter_movements m on m.counter_id = c.id and m.created_at < p_at
  where c.employee_id = any (p_employees) and c.year = p_year
  group by c.id, c.employee_id, c.code, k.name, k.unit, k.position;
$$;

create or replace function app_hidden.require_payroll() returns void
language plpgsql stable as $$
begin
  if not app_hidden.current_account_has('employee.view_payroll') then
    perform app_hidden.forbidden('Vous n''avez pas accès à la consultation de la paie.', 'WF550');
  end if;
end;
$$;

-- GET /api/payroll/options/
create or replace function app_public.payroll_options() returns jsonb
language plpgsql stable as $$
declare
  v_scope int[];
begin
  perform app_hidden.require_payroll();
  v_scope := app_hidden.perimeter_establishment_ids('employee.view_payroll');
  return jsonb_build_object('establishments', coalesce(
    (select jsonb_agg(jsonb_build_object('id', e.id, 'name', e.name) order by lower(e.name), e.id)
     from app_public.establishments e where app_hidden.in_scope(e.id, v_scope)), '[]'::jsonb));
end;
$$;
comment on function app_public.payroll_options() is
'SPEC Documents and other routes and Permissions rule 8, GET /api/payroll/options/: the establishments
the caller may consult in payroll (employee.view_payroll perimeter; 403 without the permission).';

-- The payroll month, written once for GET /api/payroll/ (a page) and its export (every line,
-- p_limit null): one statement computes the count and the lines (no query per line). Called
-- by the security definer functions below (the balances come from the journal).
create or replace function app_hidden.payroll_month(p_month text, p_establishment int, p_search text,
                                                    p_limit int, p_offset int)
returns jsonb
language plpgsql stable as $$
declare
  v_month_start date;
  v_month_end date;
  v_month_next timestamptz;
  v_scope int[];
begin
  perform app_hidden.require_payroll();
  if p_month is null or btrim(p_month) = '' then
    perform app_hidden.invalid('month', 'Le mois est obligatoire (format AAAA-MM, par exemple 2026-11).', 'WV550');
  end if;
  if p_month !~ '^[0-9]{4}-(0[1-9]|1[0-2])$' then
    perform app_hidden.invalid('month', 'Mois invalide : format attendu AAAA-MM (par exemple 2026-11).', 'WV550');
  end if;
  v_month_start := (p_month || '-01')::date;
  v_month_end := (v_month_start + interval '1 month')::date - 1;
  v_month_next := (v_month_end + 1)::timestamp at time zone app_hidden.business_timezone();
  v_scope := app_hidden.perimeter_establishment_ids('employee.view_payroll');
  if p_establishment is not null
     and (not app_hidden.in_scope(p_establishment, v_scope)
          or not exists (select 1 from app_public.establishments e where e.id = p_establishment)) then
    perform app_hidden.forbidden('Vous n''êtes pas autorisé à consulter la paie de cet établissement.', 'WF551');
  end if;

  return (
    with perimeter as (
      select x.id from app_hidden.perimeter_employee_ids('employee.view_payroll') x(id)
    ),
    establishment_employees as (
      select x.id from app_hidden.employees_of_establishments(array[p_establishment], v_month_end) x(id)
      where p_establishment is not null
    ),
    lines as (
      select c.id as contract_id, c.employee_id, e.first_name, e.last_name,
             greatest(c.start_date, v_month_start) as slice_start,
             least(coalesce(c.end_date, v_month_end), v_month_end) as slice_end
      from app_public.contracts c
      join app_public.employees e on e.id = c.employee_id
      where c.employee_id in (select p.id from perimeter p)
        and (p_establishment is null or c.employee_id in (select ee.id from establishment_employees ee))
        and c.start_date <= v_month_end and (c.end_date is null or c.end_date >= v_month_start)
        and (coalesce(btrim(p_search), '') = ''
             or e.first_name || ' ' || e.last_name ilike app_hidden.like_pattern(p_search)
             or e.last_name || ' ' || e.first_name ilike app_hidden.like_pattern(p_search))
    ),
    page as (
      select l.*, row_number() over (order by lower(l.last_name), lower(l.first_name), l.employee_id,
                                              l.slice_start, l.contract_id) as ord
      from lines l
      order by ord
      limit p_limit offset p_offset
    ),
    days as (
      select p.contract_id, d::date as day,
             app_hidden.slots_minutes(app_hidden.planned_slots(p.employee_id, d::date)) as planned
      from page p, generate_series(p.slice_start, p.slice_end, interval '1 day') d
    ),
    absences as (
      select p.contract_id, p.slice_start, p.slice_end, a.id, a.type_id, a.date_start, a.date_end,
             a.start_half, a.end_half, a.start_time, a.end_time, a.counted_quantity,
             t.code as type_code, t.name as type_name, t.unit,
             app_hidden.employee_count_base(p.employee_id) as count_base
      from page p
      join app_public.absences a on a.employee_id = p.employee_id
      join app_public.absence_types t on t.id = a.type_id
      where a.status in ('validated', 'cancellation_requested')
        and a.date_start <= p.slice_end and a.date_end >= p.slice_start
    ),
    absence_days as (
      select ab.contract_id, ab.id as absence_id, d::date as day,
             case when ab.start_time is null
                  then ((case when d::date = ab.date_start and ab.start_half = 'afternoon' then 0 else 1 end)
                        + (case when d::date = ab.date_end and ab.end_half = 'morning' then 0 else 1 end)) / 2.0 end as share,
             case when ab.start_time is not null then app_hidden.span_minutes(ab.start_time, ab.end_time) end as minutes
      from absences ab,
           generate_series(greatest(ab.date_start, ab.slice_start), least(ab.date_end, ab.slice_end), interval '1 day') d
    ),
    day_totals as (
      select dy.contract_id, dy.day, dy.planned,
             least(dy.planned,
                   coalesce(sum(case when ad.minutes is not null then least(ad.minutes, dy.planned)
                                     else dy.planned * ad.share end), 0)) as absent
      from days dy
      left join absence_days ad on ad.contract_id = dy.contract_id and ad.day = dy.day
      group by dy.contract_id, dy.day, dy.planned
    ),
    hours as (
      select dt.contract_id, sum(dt.planned) as planned, sum(dt.absent) as absent
      from day_totals dt group by dt.contract_id
    ),
    absence_quantities as (
      select ab.*,
             case when ab.date_start >= ab.slice_start and ab.date_end <= ab.slice_end and ab.counted_quantity is not null
                    then ab.counted_quantity
                  when ab.unit = 'hour'
                    then coalesce(ab.counted_quantity, app_hidden.hours_between(ab.start_time, ab.end_time))
                  -- The share of the month, counted by the absences' own rule (base of the
                  -- establishment, Sundays and public holidays excluded, half-days at the bounds).
                  else (select coalesce(sum(c.quantity), 0)
                        from app_hidden.counted_days(ab.count_base,
                               greatest(ab.date_start, ab.slice_start), least(ab.date_end, ab.slice_end),
                               case when ab.date_start >= ab.slice_start then ab.start_half end,
                               case when ab.date_end <= ab.slice_end then ab.end_half end) c) end as quantity
      from absences ab
    ),
    reasons as (
      select aq.contract_id, aq.type_id, aq.type_code, aq.type_name, aq.unit, sum(aq.quantity) as quantity,
             jsonb_agg(jsonb_build_object(
               'date_start', greatest(aq.date_start, aq.slice_start),
               'date_end', least(aq.date_end, aq.slice_end),
               'start_half', case when aq.date_start >= aq.slice_start then aq.start_half end,
               'end_half', case when aq.date_end <= aq.slice_end then aq.end_half end,
               'start_time', to_char(aq.start_time, 'HH24:MI'),
               'end_time', to_char(aq.end_time, 'HH24:MI'),
               'quantity', app_hidden.fmt_quantity(aq.quantity)) order by aq.date_start, aq.id) as items
      from absence_quantities aq
      group by aq.contract_id, aq.type_id, aq.type_code, aq.type_name, aq.unit
    ),
    reason_lists as (
      select r.contract_id,
             jsonb_agg(jsonb_build_object('type', r.type_id, 'type_code', r.type_code, 'type_name', r.type_name,
                                          'unit', r.unit, 'quantity', app_hidden.fmt_quantity(r.quantity),
                                          'absences', r.items) order by r.type_code) as list
      from reasons r group by r.contract_id
    ),
    counters as (
      select * from app_private.counter_balances_at(array(select distinct p.employee_id from page p),
                                                    extract(year from v_month_start)::int, v_month_next)
    ),
    counter_lists as (
      select c.employee_id,
             jsonb_agg(jsonb_build_object('code', c.code, 'name', c.name, 'unit', c.unit,
                                          'acquired', app_hidden.fmt_quantity(c.acquired),
                                          'taken', app_hidden.fmt_quantity(c.taken),
                                          'planned', app_hidden.fmt_quantity(c.planned),
                                          'remaining', app_hidden.fmt_quantity(c.remaining))
                       -- The counter's year as « Mes compteurs » shows it (issue 27 point 5): the same
                       -- function as GET /api/counters/, on today's journal.
                       || app_private.counter_year_facts(k.id, app_hidden.today())
                       order by c.sort_order, c.code) as list
      from counters c
      join app_public.counters k on k.employee_id = c.employee_id and k.code = c.code
                                and k.year = extract(year from v_month_start)::int
      group by c.employee_id
    )
    select jsonb_build_object(
      'count', (select count(*) from lines),
      'results', coalesce((
        select jsonb_agg(jsonb_build_object(
                 'employee', p.employee_id,
                 'employee_name', p.first_name || ' ' || p.last_name,
                 'main_establishment', e.main_establishment_id,
                 'main_establishment_name', est.name,
                 'month', p_month,
                 'contract', jsonb_build_object('id', c.id, 'type', c.contract_type_id, 'type_code', ct.code,
                                                'type_name', ct.name, 'start_date', c.start_date, 'end_date', c.end_date,
                                                'trial_end_date', c.trial_end_date, 'job_title', c.job_title,
                                                'weekly_hours', app_hidden.fmt_quantity(c.weekly_hours)),
                 'period', jsonb_build_object('start', p.slice_start, 'end', p.slice_end),
                 'planned_hours', app_hidden.fmt_quantity(round(coalesce(h.planned, 0) / 60.0, 2)),
                 'absence_hours', app_hidden.fmt_quantity(round(coalesce(h.absent, 0) / 60.0, 2)),
                 'worked_hours', app_hidden.fmt_quantity(round((coalesce(h.planned, 0) - coalesce(h.absent, 0)) / 60.0, 2)),
                 'absences', coalesce(rl.list, '[]'::jsonb),
                 'counters', coalesce(cl.list, '[]'::jsonb)) order by p.ord)
        from page p
        join app_public.contracts c on c.id = p.contract_id
        join app_public.contract_types ct on ct.id = c.contract_type_id
        join app_public.employees e on e.id = p.employee_id
        left join app_public.establishments est on est.id = e.main_establishment_id
        left join hours h on h.contract_id = p.contract_id
        left join reason_lists rl on rl.contract_id = p.contract_id
        left join counter_lists cl on cl.employee_id = p.employee_id), '[]'::jsonb)));
end;
$$;

-- GET /api/payroll/: a page of 25 lines.
create or replace function app_public.payroll_lines(p_month text, p_establishment int default null, p_search text default null,
                                         p_page int default 1, p_page_size int default 25)
returns jsonb
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  return app_hidden.payroll_month(p_month, p_establishment, p_search,
                                  app_hidden.page_limit(p_page_size), app_hidden.page_offset(p_page, p_page_size));
end;
$$;
comment on function app_public.payroll_lines(text, integer, text, integer, integer) is
'SPEC Permissions rule 8 and Limits, GET /api/payroll/?month=: one page (25 by default) of payroll lines
per contract active in the month, for the employee.view_payroll perimeter or an authorised
establishment: planned, absence and worked hours, absences by reason (never comments, decision reasons
or documents) and counter balances.';

-- GET /api/payroll/export/?month=&establishment=&search=&format=: every line of the month, one
-- row per contract, in the list's order. Like the list, never a comment, a decision reason or
-- a document: the absences are their reasons' totals (« CP : 2,00 j ; RTT : 0,50 j »).
-- The counters are one text column per figure, each listing the counters (« CP : 8,5 jours ; RTT : 2 jours »),
-- written from the line's JSON (app_hidden.payroll_counters_text): no figure computed twice.
create or replace function app_hidden.payroll_counters_text(p_counters jsonb, p_figure text) returns text
language sql stable as $$
  select string_agg(format('%s : %s', c ->> 'code',
           case p_figure
             when 'acquisition' then case c ->> 'acquisition' when 'monthly' then 'mensuelle'
                                                              when 'opening' then 'à l''ouverture'
                                                              else 'à la main ou par import' end
             when 'carried_over' then app_hidden.quantity_fr((c ->> 'carried_over')::numeric, c ->> 'unit')
               || case when c ->> 'carry_over_expires_on' is not null
                       then format(' jusqu''au %s (expirerait : %s)',
                                   to_char((c ->> 'carry_over_expires_on')::date, 'DD/MM/YYYY'),
                                   app_hidden.quantity_fr((c ->> 'carry_over_expiring')::numeric, c ->> 'unit'))
                       else '' end
             when 'year_end' then case when jsonb_typeof(c -> 'year_end') = 'object'
               then format('reporte %s%s, perd %s',
                           app_hidden.quantity_fr((c -> 'year_end' ->> 'carries_over')::numeric, c ->> 'unit'),
                           case when c -> 'year_end' ->> 'carry_over_until' is not null
                                then format(' jusqu''au %s', to_char((c -> 'year_end' ->> 'carry_over_until')::date, 'DD/MM/YYYY'))
                                else '' end,
                           app_hidden.quantity_fr((c -> 'year_end' ->> 'expires')::numeric, c ->> 'unit'))
               else 'année close ou sans règle' end
             else app_hidden.quantity_fr((c ->> p_figure)::numeric, c ->> 'unit') end), ' ; ' order by ord)
  from jsonb_array_elements(p_counters) with ordinality as x(c, ord);
$$;

drop function if exists app_public.payroll_export(text, int, text) cascade;
create or replace function app_public.payroll_export(p_month text, p_establishment int default null, p_search text default null)
returns table (employee int, employee_name text, main_establishment_name text, contract_type text,
               contract_start date, contract_end date, job_title text, weekly_hours numeric,
               period_start date, period_end date, planned_hours numeric, absence_hours numeric, worked_hours numeric,
               absences text, counters_acquisition text, counters_acquired text, counters_remaining text,
               counters_to_come text, counters_carried_over text, counters_year_end text)
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select (l ->> 'employee')::int, l ->> 'employee_name', l ->> 'main_establishment_name',
         l -> 'contract' ->> 'type_name', (l -> 'contract' ->> 'start_date')::date, (l -> 'contract' ->> 'end_date')::date,
         l -> 'contract' ->> 'job_title', (l -> 'contract' ->> 'weekly_hours')::numeric,
         (l -> 'period' ->> 'start')::date, (l -> 'period' ->> 'end')::date,
         (l ->> 'planned_hours')::numeric, (l ->> 'absence_hours')::numeric, (l ->> 'worked_hours')::numeric,
         (select string_agg(format('%s : %s %s', r ->> 'type_name', replace(r ->> 'quantity', '.', ','),
                                   case r ->> 'unit' when 'hour' then 'h' else 'j' end), ' ; ' order by ord)
          from jsonb_array_elements(l -> 'absences') with ordinality as x(r, ord)),
         app_hidden.payroll_counters_text(l -> 'counters', 'acquisition'),
         app_hidden.payroll_counters_text(l -> 'counters', 'acquired'),
         app_hidden.payroll_counters_text(l -> 'counters', 'remaining'),
         app_hidden.payroll_counters_text(l -> 'counters', 'to_come'),
         app_hidden.payroll_counters_text(l -> 'counters', 'carried_over'),
         app_hidden.payroll_counters_text(l -> 'counters', 'year_end')
  from jsonb_array_elements(app_hidden.payroll_month(p_month, p_establishment, p_search, null, 0) -> 'results')
       with ordinality as lines(l, n)
  order by n;
$$;
comment on function app_public.payroll_export(text, integer, text) is
'SPEC Permissions rule 8 and issue 16 exports, GET /api/payroll/export/?month=&format=: every payroll line of the month
(the list''s rules and order), one row per contract, for the CSV or XLSX file; absences are their reasons'' totals, never
comments, decision reasons or documents; the counters, one column per figure of « Mes compteurs » (issue 27 point 5).';
--! EndIncluded payroll/api.sql
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
drop function if exists app_public.absence_type_save(int, jsonb) cascade;
drop function if exists app_public.absence_type_save(int, text, text, int, text, boolean, boolean, numeric, text, int[], boolean, boolean, boolean, text, boolean, boolean, int) cascade;
create or replace function app_public.absence_type_save(p_id int, p_code text default null, p_name text default null,
  p_category int default null, p_unit text default null, p_paid boolean default null, p_splittable boolean default null,
  p_annual_cap numeric default null, p_cap_overrun text default null, p_contract_types int[] default null,
  p_half_day_allowed boolean default null, p_documents_expected boolean default null, p_validation_required boolean default null,
  p_annualisation_effect text default null, p_is_active boolean default null, p_employee_requestable boolean default null,
  p_position int default null) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_errors jsonb := '{}';
  v_code text := app_hidden.trimmed(p_code);
  v_name text := app_hidden.trimmed(p_name);
  v_category int := p_category;
  v_unit text := coalesce(app_hidden.trimmed(p_unit), 'day');
  v_cap numeric := p_annual_cap;
  v_overrun text := coalesce(app_hidden.trimmed(p_cap_overrun), 'refuse');
  v_effect text := coalesce(app_hidden.trimmed(p_annualisation_effect), 'none');
  v_half_day boolean := coalesce(p_half_day_allowed, false);
  v_contract_types int[] := coalesce(p_contract_types, '{}');
  v_clash text;
  v_id int := p_id;
begin
  if app_hidden.id_list_refusal(v_contract_types) is not null then
    perform app_hidden.invalid('contract_types', app_hidden.id_list_refusal(v_contract_types));
  end if;
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
    values (v_code, v_name, v_category, v_unit, coalesce(p_paid, false),
            coalesce(p_splittable, true), v_cap, v_overrun,
            coalesce(p_is_active, true), v_half_day,
            coalesce(p_documents_expected, false),
            coalesce(p_validation_required, true), v_effect,
            coalesce(p_position, 0),
            coalesce(p_employee_requestable, app_hidden.absence_type_requestable_default(v_code)))
    returning id into v_id;
  else
    update app_public.absence_types t set
      code = v_code, name = v_name, category_id = v_category, unit = v_unit,
      paid = coalesce(p_paid, t.paid),
      splittable = coalesce(p_splittable, t.splittable),
      annual_cap = v_cap, cap_overrun = v_overrun,
      is_active = coalesce(p_is_active, t.is_active),
      half_day_allowed = v_half_day,
      documents_expected = coalesce(p_documents_expected, t.documents_expected),
      validation_required = coalesce(p_validation_required, t.validation_required),
      annualisation_effect = v_effect,
      position = coalesce(p_position, t.position),
      employee_requestable = coalesce(p_employee_requestable, t.employee_requestable)
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
comment on function app_public.absence_type_save(integer, text, text, integer, text, boolean, boolean, numeric, text, integer[], boolean, boolean, boolean, text, boolean, boolean, integer) is
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
drop function if exists app_public.post_save(int, jsonb) cascade;
drop function if exists app_public.post_save(int, text, text, int, text, text, text, text, boolean, boolean) cascade;
create or replace function app_public.post_save(p_id int, p_code text default null, p_label text default null,
  p_establishment int default null, p_start_time text default null, p_end_time text default null,
  p_break_start_time text default null, p_break_end_time text default null, p_break_paid boolean default null,
  p_is_active boolean default null) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_errors jsonb := '{}';
  v_code text := app_hidden.trimmed(p_code);
  v_label text := app_hidden.trimmed(p_label);
  v_establishment int := p_establishment;
  v_start time;
  v_end time;
  v_break_start time;
  v_break_end time;
  v_clash text;
  v_field text;
  v_time text;
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
  for v_field, v_time in select f, t from unnest(array['start_time', 'end_time', 'break_start_time', 'break_end_time'],
                                                  array[p_start_time, p_end_time, p_break_start_time, p_break_end_time]) u(f, t) loop
    if coalesce(v_time, '') !~ app_hidden.time_pattern()
       and (v_field in ('start_time', 'end_time') or v_time is not null) then
      v_errors := app_hidden.add_error(v_errors, v_field, app_hidden.time_format_message());
    end if;
  end loop;
  perform app_hidden.invalid_fields(v_errors, 'WV517') where v_errors <> '{}'::jsonb;
  v_start := p_start_time::time;
  v_end := p_end_time::time;
  v_break_start := p_break_start_time::time;
  v_break_end := p_break_end_time::time;
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
            coalesce(p_break_paid, false), coalesce(p_is_active, true))
    returning id into v_id;
  else
    update app_public.posts p set
      code = v_code, label = v_label, establishment_id = v_establishment, start_time = v_start, end_time = v_end,
      break_start_time = v_break_start, break_end_time = v_break_end,
      break_paid = coalesce(p_break_paid, p.break_paid),
      is_active = coalesce(p_is_active, p.is_active)
    where p.id = p_id;
  end if;
  return app_public.post_get(v_id);
end;
$$;
comment on function app_public.post_save(integer, text, text, integer, text, text, text, text, boolean, boolean) is
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
drop function if exists app_hidden.role_attribution_fields(int, app_public.roles, int, jsonb) cascade;
drop function if exists app_hidden.role_attribution_fields(int, app_public.roles, int, date, date, int[]) cascade;
create or replace function app_hidden.role_attribution_fields(p_account int, p_role app_public.roles, p_id int,
  p_start_date date, p_end_date date, p_establishments int[])
returns table (start_date date, end_date date, establishment_ids int[])
language plpgsql stable as $$
declare
  v_errors jsonb := '{}';
  v_start date := p_start_date;
  v_end date := p_end_date;
  v_ids int[] := coalesce(p_establishments, '{}');
  v_unknown int;
begin
  if app_hidden.id_list_refusal(v_ids) is not null then
    perform app_hidden.invalid('establishments', app_hidden.id_list_refusal(v_ids));
  end if;
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

-- Grants a role to an account: p_role (its name), p_start_date, p_end_date, p_establishments (ids), each optional but the role.
drop function if exists app_public.role_attribution_grant(int, jsonb) cascade;
drop function if exists app_public.role_attribution_grant(int, text, date, date, int[]) cascade;
create or replace function app_public.role_attribution_grant(p_account int, p_role text, p_start_date date default null,
  p_end_date date default null, p_establishments int[] default null) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_role app_public.roles;
  v_name text;
  v_fields record;
  v_id int;
begin
  perform app_hidden.role_attribution_check_editor(p_account);
  v_name := app_hidden.trimmed(p_role);
  select * into v_role from app_public.roles r where r.name = v_name;
  if v_name is null then
    perform app_hidden.invalid('role', 'Choisissez un rôle.', 'WV580');
  elsif not found then
    perform app_hidden.invalid('role', format('Rôle « %s » inconnu.', v_name), 'WV580');
  end if;
  select * into v_fields from app_hidden.role_attribution_fields(p_account, v_role, null, p_start_date, p_end_date, p_establishments);
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
comment on function app_public.role_attribution_grant(integer, text, date, date, integer[]) is
'SPEC Roles and Permissions rule 6, back-office: a staff account grants a role to an account of its
employee-record perimeter, with optional dates and establishments; never its own roles, never more than
it holds (403), 404 outside its reach.';

-- Changes the dates and establishments of an attribution (the role stays: grant another one).
-- Every argument is written: a null date is none, null establishments are none.
drop function if exists app_public.role_attribution_change(int, jsonb) cascade;
drop function if exists app_public.role_attribution_change(int, date, date, int[]) cascade;
create or replace function app_public.role_attribution_change(p_id int, p_start_date date default null,
  p_end_date date default null, p_establishments int[] default null) returns jsonb
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
  select * into v_fields from app_hidden.role_attribution_fields(v.account_id, v_role, p_id, p_start_date, p_end_date, p_establishments);
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
comment on function app_public.role_attribution_change(integer, date, date, integer[]) is
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

-- p_contract, p_version and the contract's fields (type, start_date, end_date, trial_end_date,
-- job_title, weekly_hours): that contract takes these values (a null argument empties the field).
drop function if exists app_public.employee_contract_change(int, jsonb) cascade;
drop function if exists app_public.employee_contract_change(int, int, text, int, date, date, date, text, numeric) cascade;
create or replace function app_public.employee_contract_change(p_employee int, p_contract int, p_version text,
  p_type int, p_start_date date, p_end_date date default null, p_trial_end_date date default null,
  p_job_title text default null, p_weekly_hours numeric default null) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  perform app_private.employee_contract_gate(p_employee, p_contract, p_version);
  return app_private.employee_contracts_save(p_employee, (
    select jsonb_agg(case when (c ->> 'id')::int = p_contract
                          then jsonb_build_object('id', p_contract, 'type', p_type, 'start_date', p_start_date,
                                                  'end_date', p_end_date, 'trial_end_date', p_trial_end_date,
                                                  'job_title', p_job_title, 'weekly_hours', p_weekly_hours)
                          else c end)
    from jsonb_array_elements(app_private.employee_contracts_input(p_employee)) c));
end;
$$;
comment on function app_public.employee_contract_change(integer, integer, text, integer, date, date, date, text, numeric) is
'SPEC Permissions (employee.change_employee_record), back-office: one contract of an employee takes the
values of the form through employee_update; 409 when the contract list changed since the form was drawn
(version), 400 under contract for a contract of another employee.';

-- p_contract, p_version: the record without that contract.
drop function if exists app_public.employee_contract_remove(int, jsonb) cascade;
drop function if exists app_public.employee_contract_remove(int, int, text) cascade;
create or replace function app_public.employee_contract_remove(p_employee int, p_contract int, p_version text) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  perform app_private.employee_contract_gate(p_employee, p_contract, p_version);
  return app_private.employee_contracts_save(p_employee, coalesce((
    select jsonb_agg(c) from jsonb_array_elements(app_private.employee_contracts_input(p_employee)) c
    where (c ->> 'id')::int <> p_contract), '[]'::jsonb));
end;
$$;
comment on function app_public.employee_contract_remove(integer, integer, text) is
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

-- p_employee: the team without that member (400 under `employee` if absent or no current or
-- future member; 404 / 403 as team_members_replace answers).
drop function if exists app_public.team_member_remove(int, jsonb) cascade;
drop function if exists app_public.team_member_remove(int, int) cascade;
create or replace function app_public.team_member_remove(p_team int, p_employee int) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_members jsonb;
begin
  perform app_hidden.team_for_write(p_team);
  v_members := app_private.team_members_input(p_team);
  if p_employee is null or not exists (select 1 from jsonb_array_elements(v_members) m where (m ->> 'employee')::int = p_employee) then
    perform app_hidden.invalid('employee', 'Ce salarié ne fait pas partie de cette équipe, ni aujourd''hui ni à venir.', 'WV520');
  end if;
  return app_public.team_members_replace(p_team, p_members => (
    select coalesce(jsonb_agg(m), '[]'::jsonb) from jsonb_array_elements(v_members) m
    where (m ->> 'employee')::int <> p_employee));
end;
$$;
comment on function app_public.team_member_remove(integer, integer) is
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

-- The back-office form of an absence: p_version, p_status, p_type, p_date_start, p_date_end,
-- p_start_half, p_end_half, p_start_time, p_end_time, p_comment, and the form's keys in p_sent
-- (a key not sent keeps the stored value). p_version is required (409 when stale). p_status:
-- only "pending" may be written, from validated or refused (the decisions have their own
-- actions); in the states cancellation requested and cancelled the field is not editable. The
-- other arguments are the manager-side correction of PATCH /api/absences/<id>/ (absence_update:
-- same rules, same counter compensation). One transaction: a refusal of either part writes nothing.
drop function if exists app_public.absence_backoffice_save(int, jsonb, text) cascade;
drop function if exists app_public.absence_backoffice_save(int, int, text, int, date, date, text, text, time, time, text, text[], text) cascade;
create or replace function app_public.absence_backoffice_save(p_id int, p_version int, p_status text default null,
  p_type int default null, p_date_start date default null, p_date_end date default null, p_start_half text default null,
  p_end_half text default null, p_start_time time default null, p_end_time time default null, p_comment text default null,
  p_sent text[] default null, p_public_url text default null)
returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v app_public.absences;
  v_status text := nullif(p_status, '');
begin
  v := app_hidden.absence_lock(p_id);
  perform app_hidden.absence_check_version(v, p_version, true);
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
  return app_public.absence_update(p_id,
    p_type => p_type, p_date_start => p_date_start, p_date_end => p_date_end, p_start_half => p_start_half,
    p_end_half => p_end_half, p_start_time => p_start_time, p_end_time => p_end_time,
    p_comment => p_comment, p_version => v.version,
    p_sent => array_remove(array_remove(p_sent, 'status'), 'employee'), p_public_url => p_public_url);
end;
$$;
comment on function app_public.absence_backoffice_save(integer, integer, text, integer, date, date, text, text, time without time zone, time without time zone, text, text[], text) is
'SPEC States and transitions, Absence (back-office form): with the current version (else 409), may put a
validated or refused absence back to pending (the only status it writes) and apply the manager-side
correction of PATCH /api/absences/<id>/ (same rules, same counter compensation) in one transaction; the
status is not editable once a cancellation is requested or granted.';
--! EndIncluded absences/corrections.sql
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
