--! Previous: sha1:b5e03cda06fdca9b93919ba20723b79b28fa54b8
--! Hash: sha1:06b11e991ec429cdef4d6aa49b7e5615c3c60e88
--! Message: Back-office reference administration, absences and organisation pages; decision-panel and impersonation hints; absence list filters by establishment and type; team planning filters and holidays

-- Written by `npm run db:current` from sql/ORDER: edit sql/, never this file, and run it again.
-- The sql/ files changed since the last committed migration (migrations/sql-state.json), in list order.

--! Included reference/tables.sql
-- Reference data of absences and counters: categories (two levels), reasons (absence
-- types), counter kinds and the associations between reasons and counters.

create table if not exists app_public.absence_categories (
  id int generated always as identity primary key,
  code text not null unique check (code ~ '^[A-Z][A-Z0-9_]{1,31}$'),
  name text not null,
  parent_id int references app_public.absence_categories on delete restrict,
  position smallint not null default 0
);
create index if not exists absence_categories_parent_idx on app_public.absence_categories (parent_id);

-- The tree has at most two levels: a sub-category's parent is a root.
create or replace function app_private.tg_absence_categories_depth() returns trigger
language plpgsql security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  if new.parent_id is not null and (
       new.parent_id = new.id
    or exists (select 1 from app_public.absence_categories c where c.id = new.parent_id and c.parent_id is not null)
    or exists (select 1 from app_public.absence_categories c where c.parent_id = new.id)) then
    perform app_hidden.invalid('parent', 'Une catégorie d''absence a au plus deux niveaux (catégorie, sous-catégorie).');
  end if;
  return new;
end;
$$;
create or replace trigger _200_guard before insert or update on app_public.absence_categories
  for each row execute function app_private.tg_absence_categories_depth();

create table if not exists app_public.counter_kinds (
  code text primary key check (code ~ '^[A-Z][A-Z0-9_+]{0,15}$'),
  name text not null,
  unit text not null check (unit in ('day', 'hour')),
  -- Consumable counters are debited by absences (CP, CT, ...); AN and HS are not.
  is_consumable boolean not null default true,
  position smallint not null default 0
);

create table if not exists app_public.absence_types (
  id int generated always as identity primary key,
  code text not null check (code ~ '^[A-Za-z0-9][A-Za-z0-9_+\-]{0,15}$'),
  name text not null,
  category_id int not null references app_public.absence_categories on delete restrict,
  unit text not null check (unit in ('day', 'hour')),
  paid boolean not null default false,
  splittable boolean not null default true,
  annual_cap numeric(8,2) check (annual_cap is null or annual_cap > 0),
  cap_overrun text not null default 'refuse' check (cap_overrun in ('refuse', 'warn')),
  is_active boolean not null default true,
  half_day_allowed boolean not null default true,
  documents_expected boolean not null default false,
  validation_required boolean not null default true,
  -- Effect on the annualisation: none, neutralises theoretical time, or imputed on it (R+).
  annualisation_effect text not null default 'none' check (annualisation_effect in ('none', 'neutralise', 'impute')),
  -- Missing-document reminders: deadline after the first day (hours) or after the last
  -- day (working days).
  document_deadline_hours int check (document_deadline_hours > 0),
  document_deadline_working_days_after_end int check (document_deadline_working_days_after_end > 0),
  -- Agreement rules (warnings only). Notice applies to an employee's own request.
  notice_period interval,
  notice_working_days int check (notice_working_days > 0),
  -- Parental leave: a longer notice when the leave does not follow a maternity leave.
  notice_period_long interval,
  warn_max_hours_per_absence numeric(6,2),
  warn_max_per_quarter int,
  warn_max_hours_per_year numeric(7,2),
  warn_min_duration interval,
  warn_max_duration interval,
  warn_min_seniority interval,
  position smallint not null default 0,
  constraint absence_types_hour_no_half_day check (unit = 'day' or not half_day_allowed)
);
create unique index if not exists absence_types_code_key on app_public.absence_types (lower(code));
create index if not exists absence_types_category_idx on app_public.absence_types (category_id);

create table if not exists app_public.absence_type_contract_types (
  absence_type_id int not null references app_public.absence_types on delete cascade,
  contract_type_id int not null references app_public.contract_types on delete cascade,
  primary key (absence_type_id, contract_type_id)
);

create table if not exists app_public.counter_associations (
  id int generated always as identity primary key,
  absence_type_id int not null references app_public.absence_types on delete restrict,
  counter_code text not null references app_public.counter_kinds on delete restrict,
  is_active boolean not null default true,
  unique (absence_type_id, counter_code)
);
create index if not exists counter_associations_counter_idx on app_public.counter_associations (counter_code);

-- Absence type codes and post codes share one namespace, compared case-insensitively.
-- The message refusing p_code for a row of p_table ('posts' or 'absence_types'), or null
-- when the other table holds no such code. The save functions of the back-office ask it to
-- show the clash with the other field errors; the trigger below is the guard of every write.
create or replace function app_hidden.code_namespace_clash(p_table text, p_code text) returns text
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select case
    when p_table = 'posts' and exists (select 1 from app_public.absence_types t where lower(t.code) = lower(p_code))
      then format('Le code « %s » est déjà utilisé par un motif d''absence.', p_code)
    when p_table = 'absence_types' and exists (select 1 from app_public.posts p where lower(p.code) = lower(p_code))
      then format('Le code « %s » est déjà utilisé par un poste.', p_code)
  end;
$$;

-- The advisory lock on the lower-cased code makes the check safe under concurrent saves.
create or replace function app_private.tg_code_namespace() returns trigger
language plpgsql security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_clash text;
begin
  if tg_op = 'UPDATE' and lower(old.code) = lower(new.code) then
    return new;
  end if;
  perform pg_advisory_xact_lock(hashtext('code-namespace:' || lower(new.code)));
  v_clash := app_hidden.code_namespace_clash(tg_table_name, new.code);
  if v_clash is not null then
    perform app_hidden.invalid('code', v_clash, 'WV010');
  end if;
  return new;
end;
$$;
create or replace trigger _200_code_namespace before insert or update of code on app_public.posts
  for each row execute function app_private.tg_code_namespace();
create or replace trigger _200_code_namespace before insert or update of code on app_public.absence_types
  for each row execute function app_private.tg_code_namespace();

-- French public holidays of a civil year, computed (Easter by the anonymous Gregorian
-- algorithm). Alsace-Moselle's extra days are not included.
create or replace function app_public.public_holidays(p_year int)
returns table (day date, name text)
language plpgsql immutable strict parallel safe as $$
declare
  a int := p_year % 19;
  b int := p_year / 100;
  c int := p_year % 100;
  d int := b / 4;
  e int := b % 4;
  f int := (b + 8) / 25;
  g int := (b - f + 1) / 3;
  h int := (19 * a + b - d - g + 15) % 30;
  i int := c / 4;
  k int := c % 4;
  l int := (32 + 2 * e + 2 * i - h - k) % 7;
  m int := (a + 11 * h + 22 * l) / 451;
  easter date := make_date(p_year, (h + l - 7 * m + 114) / 31, ((h + l - 7 * m + 114) % 31) + 1);
begin
  if p_year < 1583 or p_year > 9999 then
    raise exception using errcode = 'WV001', message = 'Année hors de la plage prise en charge (1583-9999).', detail = 'year';
  end if;
  return query values
    (make_date(p_year, 1, 1), 'Jour de l''an'),
    (easter + 1, 'Lundi de Pâques'),
    (make_date(p_year, 5, 1), 'Fête du Travail'),
    (make_date(p_year, 5, 8), 'Victoire 1945'),
    (easter + 39, 'Ascension'),
    (easter + 50, 'Lundi de Pentecôte'),
    (make_date(p_year, 7, 14), 'Fête nationale'),
    (make_date(p_year, 8, 15), 'Assomption'),
    (make_date(p_year, 11, 1), 'Toussaint'),
    (make_date(p_year, 11, 11), 'Armistice 1918'),
    (make_date(p_year, 12, 25), 'Noël');
end;
$$;

create or replace function app_hidden.is_public_holiday(p_day date) returns boolean
language sql immutable strict parallel safe as $$
  select exists (select 1 from app_public.public_holidays(extract(year from p_day)::int) h where h.day = p_day);
$$;
--! EndIncluded reference/tables.sql
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
           'can_view_absence_queue', app_hidden.current_account_has('absences.view_absence_queue'),
           'can_decide_absences', app_hidden.current_account_has('absences.decide_absence'),
           'can_decide_shift_changes', app_hidden.current_account_has('planning.decide_shift_change'),
           'can_view_payroll', app_hidden.current_account_has('employee.view_payroll'),
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
--! Included planning/planning.sql
-- GET /api/planning/: the cells of a window (at most 62 days) for the caller's employees,
-- built set-wise in one statement (dates × employees joined to templates, day
-- modifications, absences, pending requests and on-call periods).
-- The answer is json, not jsonb, written as text (app_hidden.json_text and its siblings): a
-- month of 200 employees is some 6 000 cells, and jsonb builds, sorts and re-serialises a
-- tree (several times costlier for a response that is only sent, never queried).

-- On-call periods overlapping the window.
create index if not exists on_call_periods_interval_idx on app_public.on_call_periods (end_at, start_at);
-- Pending requests of a window (the planning's pending_request).
create index if not exists shift_change_requests_pending_date_idx on app_public.shift_change_requests (date, employee_id)
  where status = 'pending';

-- On-call periods of the employees' teams, per employee and day: the periods whose
-- establishments meet the establishments of a team the employee belongs to that day, and
-- whose interval [start, end) meets the day (business time zone). Security definer: an
-- employee reads who is on call for their teams without reading the on-call screens.
-- force_generic_plan: planned once per connection; left to choose, plpgsql re-planned this
-- query at every call (its custom plans were estimated cheaper), longer than it runs.
create or replace function app_hidden.team_on_call_by_day(p_employee_ids int[], p_from date, p_to date)
returns table (employee_id int, date date, on_call jsonb)
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp
set plan_cache_mode = force_generic_plan rows 100 as $$
#variable_conflict use_column
begin
  -- Most windows meet no on-call period: then there is nothing to join.
  if not exists (select 1 from app_public.on_call_periods op
                 where op.end_at > p_from::timestamp at time zone app_hidden.business_timezone()
                   and op.start_at < (p_to + 1)::timestamp at time zone app_hidden.business_timezone()) then
    return;
  end if;
  return query
    with days as (
      select d::date as date,
             d::date::timestamp at time zone app_hidden.business_timezone() as day_start,
             (d::date + 1)::timestamp at time zone app_hidden.business_timezone() as day_end
      from generate_series(p_from, p_to, interval '1 day') d
    ),
    periods as (
      select op.id, op.account_id, op.start_at, op.end_at, op.comment,
             coalesce(e.first_name || ' ' || e.last_name, a.username) as name,
             array_agg(ope.establishment_id order by ope.establishment_id) as establishment_ids
      from app_public.on_call_periods op
      join app_public.on_call_period_establishments ope on ope.period_id = op.id
      join app_public.accounts a on a.id = op.account_id
      left join app_public.employees e on e.id = a.employee_id
      where op.end_at > p_from::timestamp at time zone app_hidden.business_timezone()
        and op.start_at < (p_to + 1)::timestamp at time zone app_hidden.business_timezone()
      group by op.id, a.username, e.first_name, e.last_name
    ),
    team_days as (
      select ta.employee_id, d.date, d.day_start, d.day_end, array_agg(distinct te.establishment_id) as establishment_ids
      from app_public.team_assignments ta
      join app_public.team_establishments te on te.team_id = ta.team_id
      join days d on app_hidden.date_in(d.date, ta.start_date, ta.end_date)
      where ta.employee_id = any (p_employee_ids)
      group by ta.employee_id, d.date, d.day_start, d.day_end
    )
    select t.employee_id, t.date,
           jsonb_agg(jsonb_build_object('id', p.id, 'account', p.account_id, 'name', p.name,
                                        'start', p.start_at, 'end', p.end_at,
                                        'establishments', to_jsonb(p.establishment_ids), 'comment', p.comment)
                     order by p.start_at, p.id)
    from team_days t
    join periods p on p.establishment_ids && t.establishment_ids
                  and p.start_at < t.day_end and p.end_at > t.day_start
    group by t.employee_id, t.date;
end;
$$;

-- JSON text of a value (null → null). The planning's answer is written as text: some 6 000
-- blocks of 19 keys for a month of 200 employees, where json_build_object costs 4 µs a block
-- (the type of each argument is looked up at each call) and concatenation half a microsecond.
-- Stable, as to_json and to_char are: an immutable wrapper would not be inlined.
create or replace function app_hidden.json_text(p text) returns text
language sql stable parallel safe as $$
  select coalesce(to_json(p)::text, 'null');
$$;
create or replace function app_hidden.json_hm(p time) returns text
language sql stable parallel safe as $$
  select coalesce('"' || to_char(p, 'HH24:MI') || '"', 'null');
$$;
create or replace function app_hidden.json_date(p date) returns text
language sql stable parallel safe as $$
  select coalesce('"' || to_char(p, 'YYYY-MM-DD') || '"', 'null');
$$;
create or replace function app_hidden.json_int(p bigint) returns text
language sql stable parallel safe as $$
  select coalesce(p::text, 'null');
$$;
create or replace function app_hidden.json_bool(p boolean) returns text
language sql stable parallel safe as $$
  select coalesce(p::text, 'null');
$$;

-- The cells of the employees over [p_from, p_to]. Runs with the caller's row-level security
-- (the caller chose the employees it may read).
--   * the planned day: the day modification, else the template valid that day;
--   * a granted absence (validated, or cancellation_requested: still drawn) prevails: a
--     whole-day absence is one absence block; a half-day absence gives two blocks (the
--     absence on its half, the worked day next to it with absence null); an hourly absence
--     is a block among the worked slots, by time;
--   * pending_request: on an absence block, its requested cancellation; on the worked or rest
--     blocks (or, in a cell without any, on the absence blocks), a pending absence request
--     of the day, else the pending day-change request of the day;
--   * on_call: the on-call periods of the employee's teams that meet the day.
-- force_generic_plan: planned once per connection; left to choose, plpgsql re-planned this
-- query at every call (its custom plans were estimated cheaper), longer than it runs.
create or replace function app_hidden.planning_cells(p_employee_ids int[], p_from date, p_to date) returns json
language plpgsql stable
set plan_cache_mode = force_generic_plan as $$
begin
  return (
    with days as (
      select d::date as date from generate_series(p_from, p_to, interval '1 day') d
    ),
    emp as (
      select e.id, e.first_name, e.last_name, e.main_establishment_id,
             row_number() over (order by lower(e.last_name), lower(e.first_name), e.id) as ord
      from app_public.employees e
      where e.id = any (p_employee_ids)
    ),
    cells as (
      select emp.id as employee_id, emp.ord, days.date from emp cross join days
    ),
    cell_template as (
      select distinct on (c.employee_id, c.date) c.employee_id, c.date, t.id as template_id
      from cells c
      join app_public.planning_templates t
        on t.employee_id = c.employee_id and t.valid_from <= c.date and (t.valid_to is null or t.valid_to >= c.date)
      order by c.employee_id, c.date, t.valid_from desc
    ),
    template_day as (
      select ts.template_id, ts.weekday, array_agg(app_hidden.post_slot(p) order by ts.position) as slots
      from app_public.planning_template_slots ts
      join app_public.posts p on p.id = ts.post_id
      where ts.template_id in (select ct.template_id from cell_template ct)
      group by ts.template_id, ts.weekday
    ),
    modification as (
      select m.* from app_public.day_modifications m
      where m.employee_id = any (p_employee_ids) and m.date between p_from and p_to
    ),
    planned as (
      select c.employee_id, c.ord, c.date,
             coalesce(m.slots, td.slots, '{}'::app_public.slot[]) as slots,
             m.id is not null as modified,
             coalesce(m.is_remote, false) as day_remote,
             coalesce(m.is_offsite, false) as day_offsite,
             m.comment
      from cells c
      left join cell_template ct on ct.employee_id = c.employee_id and ct.date = c.date
      left join template_day td on td.template_id = ct.template_id and td.weekday = extract(isodow from c.date)::int
      left join modification m on m.employee_id = c.employee_id and m.date = c.date
    ),
    absence_day as (
      select c.employee_id, c.date, a.id, a.type_id, t.code as type_code, t.name as type_name,
             a.date_start, a.date_end, a.start_half, a.end_half, a.start_time, a.end_time, a.comment, a.status,
             case when a.start_time is not null then 'hours'
                  when c.date = a.date_start and a.start_half is not distinct from 'afternoon' then 'afternoon'
                  when c.date = a.date_end and a.end_half is not distinct from 'morning' then 'morning'
                  else 'day' end as part
      from app_public.absences a
      join app_public.absence_types t on t.id = a.type_id
      join cells c on c.employee_id = a.employee_id and c.date between a.date_start and a.date_end
      where a.employee_id = any (p_employee_ids) and a.date_start <= p_to and a.date_end >= p_from
        and a.status in ('pending', 'validated', 'cancellation_requested')
    ),
    granted as (
      -- whole: the granted absences of the cell cover the whole day (one whole-day absence, or
      -- a morning and an afternoon): a window over the cell, not a join on an aggregate.
      select a.*,
             coalesce(bool_or(a.part in ('day', 'morning')) over w and bool_or(a.part in ('day', 'afternoon')) over w,
                      false) as whole
      from absence_day a
      where a.status in ('validated', 'cancellation_requested')
      window w as (partition by a.employee_id, a.date)
    ),
    coverage as (
      select distinct g.employee_id, g.date, g.whole from granted g
    ),
    pending_absence as (
      select distinct on (a.employee_id, a.date) a.employee_id, a.date, a.id
      from absence_day a
      where a.status = 'pending'
      order by a.employee_id, a.date, a.id
    ),
    pending_shift_change as (
      select r.employee_id, r.date, r.id
      from app_public.shift_change_requests r
      where r.employee_id = any (p_employee_ids) and r.date between p_from and p_to and r.status = 'pending'
    ),
    on_call as (
      select * from app_hidden.team_on_call_by_day(p_employee_ids, p_from, p_to)
    ),
    -- What every block of a cell carries besides its own keys: the pending request of the day
    -- and the on-call periods.
    pending_request as (
      select p.employee_id, p.date, coalesce(oc.on_call::text, '[]') as on_call,
             case when pa.id is not null then '{"kind":"absence","id":' || pa.id || ',"is_cancellation":false}'
                  when ps.id is not null then '{"kind":"shift_change","id":' || ps.id || ',"is_cancellation":false}'
                  else 'null'
             end as pending
      from planned p
      left join pending_absence pa on pa.employee_id = p.employee_id and pa.date = p.date
      left join pending_shift_change ps on ps.employee_id = p.employee_id and ps.date = p.date
      left join on_call oc on oc.employee_id = p.employee_id and oc.date = p.date
    ),
    blocks as (
      -- granted absences
      select g.employee_id, g.date,
             case g.part when 'afternoon' then 2 when 'hours' then 1 else 0 end as k1,
             coalesce(extract(epoch from g.start_time)::int / 60, 0) as k2,
             -- at the same start time, the worked slot before the hourly absence
             1 as k3,
             '{"kind":"absence","post":null,"post_code":null,"post_label":null,"establishment":null'
             || ',"start_time":' || app_hidden.json_hm(g.start_time) || ',"end_time":' || app_hidden.json_hm(g.end_time)
             || ',"break_start_time":null,"break_end_time":null,"break_paid":false'
             || ',"minutes":' || app_hidden.json_int(case when g.start_time is not null
                                                         then app_hidden.span_minutes(g.start_time, g.end_time) end)
             || ',"is_remote":false,"is_offsite":false,"modified":false,"comment":null'
             || ',"absence":{"id":' || g.id || ',"type":' || g.type_id || ',"type_code":' || app_hidden.json_text(g.type_code)
             || ',"type_name":' || app_hidden.json_text(g.type_name) || ',"date_start":' || app_hidden.json_date(g.date_start)
             || ',"date_end":' || app_hidden.json_date(g.date_end) || ',"start_half":' || app_hidden.json_text(g.start_half)
             || ',"end_half":' || app_hidden.json_text(g.end_half) || ',"start_time":' || app_hidden.json_hm(g.start_time)
             || ',"end_time":' || app_hidden.json_hm(g.end_time) || ',"comment":' || app_hidden.json_text(g.comment)
             || ',"status":' || app_hidden.json_text(g.status) || ',"part":' || app_hidden.json_text(g.part) || '}'
             || ',"pending_request":' || case when g.status = 'cancellation_requested'
                                              then '{"kind":"absence","id":' || g.id || ',"is_cancellation":true}'
                                              when g.whole then pr.pending
                                              else 'null' end
             || ',"on_call":' || pr.on_call || '}' as block
      from granted g
      join pending_request pr on pr.employee_id = g.employee_id and pr.date = g.date
      union all
      -- worked slots of the planned day (unnested once: each field a column, not an element
      -- extracted from the array at each use)
      select p.employee_id, p.date, 1, extract(epoch from sl.start_time)::int / 60, 0,
             '{"kind":"work","post":' || app_hidden.json_int(sl.post_id)
             || ',"post_code":' || app_hidden.json_text(po.code) || ',"post_label":' || app_hidden.json_text(po.label)
             || ',"establishment":' || app_hidden.json_int(sl.establishment_id)
             || ',"start_time":' || app_hidden.json_hm(sl.start_time)
             || ',"end_time":' || app_hidden.json_hm(sl.end_time)
             || ',"break_start_time":' || app_hidden.json_hm(sl.break_start_time)
             || ',"break_end_time":' || app_hidden.json_hm(sl.break_end_time)
             || ',"break_paid":' || app_hidden.json_bool(coalesce(sl.break_paid, false))
             || ',"minutes":' || app_hidden.json_int(app_hidden.slot_minutes(
                                   row(sl.start_time, sl.end_time, sl.break_start_time, sl.break_end_time, sl.break_paid,
                                       sl.post_id, sl.establishment_id, sl.is_remote)::app_public.slot))
             || ',"is_remote":' || app_hidden.json_bool(coalesce(sl.is_remote, false) or p.day_remote)
             || ',"is_offsite":' || app_hidden.json_bool(p.day_offsite)
             || ',"modified":' || app_hidden.json_bool(p.modified) || ',"comment":' || app_hidden.json_text(p.comment)
             || ',"absence":null,"pending_request":' || pr.pending || ',"on_call":' || pr.on_call || '}'
      from planned p
      cross join lateral unnest(p.slots) as sl(start_time, end_time, break_start_time, break_end_time, break_paid,
                                               post_id, establishment_id, is_remote)
      left join app_public.posts po on po.id = sl.post_id
      left join coverage cv on cv.employee_id = p.employee_id and cv.date = p.date
      join pending_request pr on pr.employee_id = p.employee_id and pr.date = p.date
      where not coalesce(cv.whole, false)
      union all
      -- a rest day
      select p.employee_id, p.date, 1, 0, 0,
             '{"kind":"rest","post":null,"post_code":null,"post_label":null,"establishment":null'
             || ',"start_time":null,"end_time":null,"break_start_time":null,"break_end_time":null'
             || ',"break_paid":false,"minutes":0,"is_remote":false,"is_offsite":false'
             || ',"modified":' || app_hidden.json_bool(p.modified) || ',"comment":' || app_hidden.json_text(p.comment)
             || ',"absence":null,"pending_request":' || pr.pending || ',"on_call":' || pr.on_call || '}'
      from planned p
      left join coverage cv on cv.employee_id = p.employee_id and cv.date = p.date
      join pending_request pr on pr.employee_id = p.employee_id and pr.date = p.date
      where cardinality(p.slots) = 0 and not coalesce(cv.whole, false)
    ),
    cell_json as (
      select p.ord, b.date,
             '{"employee":' || b.employee_id || ',"date":' || app_hidden.json_date(b.date)
             || ',"blocks":[' || string_agg(b.block, ',' order by b.k1, b.k2, b.k3) || ']}' as cell
      from blocks b
      join planned p on p.employee_id = b.employee_id and p.date = b.date
      group by p.ord, b.date, b.employee_id
    )
    select ('{"from":' || app_hidden.json_date(p_from) || ',"to":' || app_hidden.json_date(p_to)
            || ',"employees":[' || coalesce((select string_agg(
                 '{"id":' || e.id || ',"name":' || app_hidden.json_text(e.first_name || ' ' || e.last_name)
                 || ',"first_name":' || app_hidden.json_text(e.first_name) || ',"last_name":' || app_hidden.json_text(e.last_name)
                 || ',"main_establishment":' || app_hidden.json_int(e.main_establishment_id) || '}', ',' order by e.ord)
                 from emp e), '')
            || '],"cells":[' || coalesce((select string_agg(c.cell, ',' order by c.ord, c.date) from cell_json c), '')
            || '],"holidays":[' || coalesce((select string_agg(
                 '{"date":' || app_hidden.json_date(h.day) || ',"name":' || app_hidden.json_text(h.name) || '}', ',' order by h.day)
                 from generate_series(extract(year from p_from)::int, extract(year from p_to)::int) y,
                      lateral app_public.public_holidays(y) h
                 where h.day between p_from and p_to), '')
            || ']}')::json
  );
end;
$$;

-- GET /api/planning/?from=&to=&employee=&establishment=&team=
-- Without from/to: the current week (Monday to Sunday); with only one bound, the 7 days
-- from it (or up to it). At most 62 days. The branch depends on the directory permission,
-- never on the size of the perimeter: a holder of employee.view_employee_directory reads
-- the absences.view_absence_queue perimeter (and their own record); any other account
-- reads only its own cells. employee narrows to one readable employee (else 404).
-- establishment and team narrow the readable employees (the team planning of a month): those
-- attached to the establishment (main, secondary, or team of the day), those assigned to the
-- team, on the day of the window nearest today.
drop function if exists app_public.planning_read(date, date, int);
create or replace function app_public.planning_read(p_from date default null, p_to date default null, p_employee int default null,
                                                    p_establishment int default null, p_team int default null)
returns json
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_today date := app_hidden.today();
  v_from date;
  v_to date;
  v_me int := app_hidden.current_employee_id();
  v_ids int[];
  v_on date;
begin
  if p_from is null and p_to is null then
    v_from := date_trunc('week', v_today::timestamp)::date;
    v_to := v_from + 6;
  elsif p_to is null then
    v_from := p_from;
    v_to := p_from + 6;
  elsif p_from is null then
    v_to := p_to;
    v_from := p_to - 6;
  else
    v_from := p_from;
    v_to := p_to;
  end if;
  if v_to < v_from then
    perform app_hidden.invalid('to', 'La date de fin doit être postérieure ou égale à la date de début.', 'WV108');
  end if;
  if v_to - v_from + 1 > 62 then
    perform app_hidden.invalid('to', format('Le planning se lit sur 62 jours au plus (ici %s jours) : réduisez la période.',
                                            v_to - v_from + 1), 'WV108');
  end if;

  if app_hidden.current_account_has('employee.view_employee_directory') then
    v_ids := array(select x from app_hidden.perimeter_employee_ids('absences.view_absence_queue') x
                   union
                   select v_me where v_me is not null);
  else
    v_ids := case when v_me is null then '{}'::int[] else array[v_me] end;
  end if;
  if p_employee is not null then
    if not p_employee = any (v_ids) then
      perform app_hidden.not_found('Salarié introuvable dans votre périmètre.', 'WN102');
    end if;
    v_ids := array[p_employee];
  end if;
  v_on := greatest(v_from, least(v_to, v_today));
  if p_establishment is not null then
    v_ids := array(select x from unnest(v_ids) x
                   where x in (select y from app_hidden.employees_of_establishments(array[p_establishment], v_on) y));
  end if;
  if p_team is not null then
    v_ids := array(select x from unnest(v_ids) x
                   where exists (select 1 from app_public.team_assignments ta
                                 where ta.employee_id = x and ta.team_id = p_team
                                   and app_hidden.date_in(v_on, ta.start_date, ta.end_date)));
  end if;
  return app_hidden.planning_cells(v_ids, v_from, v_to);
end;
$$;
--! EndIncluded planning/planning.sql
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

-- The hint of the decision panel (GET detail's can_decide): would a decision of the caller
-- pass absence_check_decider, on a state a decision accepts (a pending request or a
-- requested cancellation)? Never NULL. The transitions check again.
create or replace function app_hidden.absence_decidable(p_absence app_public.absences) returns boolean
language sql stable as $$
  select coalesce(p_absence.status in ('pending', 'cancellation_requested')
                  and app_hidden.current_account_has('absences.decide_absence')
                  and app_hidden.may(app_hidden.current_account_id(), 'absences.decide_absence', p_absence.employee_id)
                  and app_hidden.is_current_employee(p_absence.employee_id) is false, false);
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

-- GET /api/absences/?status=&employee=&from=&to=&establishment=&type=
-- establishment: the employee's main or secondary workplace (the back-office list's filter,
-- as for day-change requests); type: the absence type. Both come last so that positional
-- calls of the first signature keep their meaning.
drop function if exists app_public.absences_list(text, int, date, date, int, int, text);
create or replace function app_public.absences_list(p_status text default null, p_employee int default null,
                                         p_from date default null, p_to date default null,
                                         p_page int default 1, p_page_size int default 50,
                                         p_public_url text default null,
                                         p_establishment int default null, p_type int default null)
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
      and (p_type is null or a.type_id = p_type)
      and (p_establishment is null
           or exists (select 1 from app_public.employees e
                      where e.id = a.employee_id and e.main_establishment_id = p_establishment)
           or exists (select 1 from app_public.employee_secondary_establishments s
                      where s.employee_id = a.employee_id and s.establishment_id = p_establishment))
  )
  select (select count(*) from visible),
         array(select v.id from visible v order by v.date_start desc, v.id desc
               limit app_hidden.page_limit(p_page_size) offset app_hidden.page_offset(p_page, p_page_size))
    into v_count, v_ids;
  return jsonb_build_object('count', v_count, 'results', app_hidden.absences_json(v_ids, p_public_url, true));
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
  -- The back-office sets a decided absence back to pending (app_public.absence_set_pending
  -- marks its own update): the only way out of refused, and out of validated back to pending.
  if current_setting('app.absence_reopening', true) = 'on' then
    if not (old.status in ('validated', 'refused') and new.status = 'pending') then
      raise exception using errcode = 'WV910', detail = 'status',
        message = format('Transition d''état interdite : %s → %s.', old.status, new.status);
    end if;
  elsif old.status in ('refused', 'cancelled') then
    raise exception using errcode = 'WV910', detail = 'status',
      message = 'Une absence refusée ou annulée est en lecture seule.';
  elsif (old.status, new.status) not in (('pending', 'pending'), ('pending', 'validated'), ('pending', 'refused'),
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
--! Included backoffice/reference.sql
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

do $$
declare
  t text;
begin
  foreach t in array array['absence_categories', 'absence_types', 'absence_type_contract_types',
                           'counter_associations', 'posts'] loop
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

create or replace trigger _500_audit after insert or update on app_public.absence_categories
  for each row execute function app_private.tg_audit('absence_category');
create or replace trigger _500_audit_delete before delete on app_public.absence_categories
  for each row execute function app_private.tg_audit('absence_category');
create or replace trigger _500_audit after insert or update on app_public.absence_types
  for each row execute function app_private.tg_audit('absence_type');
create or replace trigger _500_audit_delete before delete on app_public.absence_types
  for each row execute function app_private.tg_audit('absence_type');
create or replace trigger _500_audit after insert or update on app_public.absence_type_contract_types
  for each row execute function app_private.tg_audit('absence_type_contract_type');
create or replace trigger _500_audit_delete before delete on app_public.absence_type_contract_types
  for each row execute function app_private.tg_audit('absence_type_contract_type');
create or replace trigger _500_audit after insert or update on app_public.counter_associations
  for each row execute function app_private.tg_audit('counter_association');
create or replace trigger _500_audit_delete before delete on app_public.counter_associations
  for each row execute function app_private.tg_audit('counter_association');
create or replace trigger _500_audit after insert or update on app_public.posts
  for each row execute function app_private.tg_audit('post');
create or replace trigger _500_audit_delete before delete on app_public.posts
  for each row execute function app_private.tg_audit('post');

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
  with filtered as (
    select c, c.id, c.name, c.position, c.parent_id,
           coalesce(p.position, c.position) as root_position, coalesce(p.name, c.name) as root_name
    from app_public.absence_categories c
    left join app_public.absence_categories p on p.id = c.parent_id
    where p_parent is null or c.parent_id = p_parent
  ),
  page as (
    select f.c, row_number() over (order by f.root_position, f.root_name, f.parent_id nulls first, f.position, f.name, f.id) as n
    from filtered f
    order by n
    limit app_hidden.page_limit(p_page_size) offset app_hidden.page_offset(p_page, p_page_size)
  )
  select jsonb_build_object(
    'count', (select count(*) from filtered),
    'results', coalesce((select jsonb_agg(app_hidden.absence_category_json(page.c) order by page.n) from page), '[]'::jsonb));
$$;

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
  elsif length(v_name) > 150 then
    v_errors := app_hidden.add_error(v_errors, 'name', 'Au plus 150 caractères.');
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

-- Absence types (reasons) -----------------------------------------------------------------------

-- Every field of an absence type as the back-office edits it (the API's absence_type_json
-- plus what the API does not show: ids, activity, position).
create or replace function app_hidden.absence_type_admin_json(p_id int) returns jsonb
language sql stable as $$
  select app_hidden.absence_type_json(t.id) || jsonb_build_object(
    'category_id', t.category_id,
    'category_label', coalesce(p.name || ' › ', '') || c.name,
    'is_active', t.is_active,
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
  with filtered as (
    select t.id, t.position, t.code
    from app_public.absence_types t
    join app_public.absence_categories c on c.id = t.category_id
    where (p_category is null or c.id = p_category or c.parent_id = p_category)
      and (p_active is null or t.is_active = p_active)
  ),
  page as (
    select f.id, row_number() over (order by f.position, f.code, f.id) as n from filtered f
    order by n
    limit app_hidden.page_limit(p_page_size) offset app_hidden.page_offset(p_page, p_page_size)
  )
  select jsonb_build_object(
    'count', (select count(*) from filtered),
    'results', coalesce((select jsonb_agg(app_hidden.absence_type_admin_json(page.id) order by page.n) from page), '[]'::jsonb));
$$;

create or replace function app_public.absence_type_get(p_id int) returns jsonb
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  if not exists (select 1 from app_public.absence_types t where t.id = p_id) then
    perform app_hidden.not_found('Motif d''absence introuvable.');
  end if;
  return app_hidden.absence_type_admin_json(p_id);
end;
$$;

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
  elsif v_code !~ '^[A-Za-z0-9][A-Za-z0-9_+\-]{0,15}$' then
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
  elsif length(v_name) > 150 then
    v_errors := app_hidden.add_error(v_errors, 'name', 'Au plus 150 caractères.');
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
                                          half_day_allowed, documents_expected, validation_required, annualisation_effect, position)
    values (v_code, v_name, v_category, v_unit, coalesce(app_hidden.in_bool(p_body, 'paid'), false),
            coalesce(app_hidden.in_bool(p_body, 'splittable'), true), v_cap, v_overrun,
            coalesce(app_hidden.in_bool(p_body, 'is_active'), true), v_half_day,
            coalesce(app_hidden.in_bool(p_body, 'documents_expected'), false),
            coalesce(app_hidden.in_bool(p_body, 'validation_required'), true), v_effect,
            coalesce(app_hidden.in_int(p_body, 'position'), 0))
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
      position = coalesce(app_hidden.in_int(p_body, 'position'), t.position)
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
  with filtered as (
    select p, p.id, p.code, e.name as establishment_name
    from app_public.posts p join app_public.establishments e on e.id = p.establishment_id
    where (p_establishment is null or p.establishment_id = p_establishment)
      and (p_active is null or p.is_active = p_active)
  ),
  page as (
    select f.p, row_number() over (order by f.establishment_name, lower(f.code), f.id) as n from filtered f
    order by n
    limit app_hidden.page_limit(p_page_size) offset app_hidden.page_offset(p_page, p_page_size)
  )
  select jsonb_build_object(
    'count', (select count(*) from filtered),
    'results', coalesce((select jsonb_agg(app_hidden.post_admin_json(page.p) order by page.n) from page), '[]'::jsonb));
$$;

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
  elsif v_code !~ '^[A-Za-z0-9][A-Za-z0-9_+\-]{0,15}$' then
    v_errors := app_hidden.add_error(v_errors, 'code', 'Code invalide : 1 à 16 caractères, lettres, chiffres et _ + -.');
  elsif exists (select 1 from app_public.posts p where lower(p.code) = lower(v_code) and p.establishment_id = v_establishment
                and p.id is distinct from p_id) then
    v_errors := app_hidden.add_error(v_errors, 'code', format('Le code « %s » est déjà utilisé par un poste de cet établissement.', v_code));
  else
    v_clash := app_hidden.code_namespace_clash('posts', v_code);
    if v_clash is not null then
      v_errors := app_hidden.add_error(v_errors, 'code', v_clash);
    end if;
  end if;
  if v_label is null then
    v_errors := app_hidden.add_error(v_errors, 'label', 'Le libellé est obligatoire.');
  elsif length(v_label) > 150 then
    v_errors := app_hidden.add_error(v_errors, 'label', 'Au plus 150 caractères.');
  end if;
  if v_establishment is null then
    v_errors := app_hidden.add_error(v_errors, 'establishment', 'L''établissement est obligatoire.');
  elsif not exists (select 1 from app_public.establishments e where e.id = v_establishment) then
    v_errors := app_hidden.add_error(v_errors, 'establishment', 'Établissement inconnu.');
  end if;
  foreach v_field in array array['start_time', 'end_time', 'break_start_time', 'break_end_time'] loop
    if coalesce(app_hidden.in_text(p_body, v_field), '') !~ '^([01][0-9]|2[0-3]):[0-5][0-9]$'
       and (v_field in ('start_time', 'end_time') or app_hidden.in_text(p_body, v_field) is not null) then
      v_errors := app_hidden.add_error(v_errors, v_field, 'Heure invalide : format attendu HH:MM.');
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
  with filtered as (
    select ca.id, ca.counter_code, t.code
    from app_public.counter_associations ca join app_public.absence_types t on t.id = ca.absence_type_id
    where (p_counter_code is null or ca.counter_code = p_counter_code)
      and (p_absence_type is null or ca.absence_type_id = p_absence_type)
  ),
  page as (
    select f.id, row_number() over (order by f.counter_code, f.code, f.id) as n from filtered f
    order by n
    limit app_hidden.page_limit(p_page_size) offset app_hidden.page_offset(p_page, p_page_size)
  )
  select jsonb_build_object(
    'count', (select count(*) from filtered),
    'results', coalesce((select jsonb_agg(app_hidden.counter_association_json(page.id) order by page.n) from page), '[]'::jsonb));
$$;

create or replace function app_public.counter_association_get(p_id int) returns jsonb
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  if not exists (select 1 from app_public.counter_associations ca where ca.id = p_id) then
    perform app_hidden.not_found('Association introuvable.');
  end if;
  return app_hidden.counter_association_json(p_id);
end;
$$;

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
--! EndIncluded backoffice/reference.sql
--! Included backoffice/counters.sql
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
  with filtered as (
    select c.id, c.year, c.code, e.last_name, e.first_name
    from app_public.counters c
    join app_public.employees e on e.id = c.employee_id
    where (p_employee is null or c.employee_id = p_employee)
      and (p_code is null or c.code = p_code)
      and (p_year is null or c.year = p_year)
  ),
  page as (
    select f.id, row_number() over (order by f.year desc, f.last_name, f.first_name, f.code, f.id) as n from filtered f
    order by n
    limit app_hidden.page_limit(p_page_size) offset app_hidden.page_offset(p_page, p_page_size)
  )
  select jsonb_build_object(
    'count', (select count(*) from filtered),
    'results', coalesce((select jsonb_agg(j.doc order by page.n)
                         from page join app_private.counters_admin_json(array(select id from page)) j on j.id = page.id), '[]'::jsonb));
$$;

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
  elsif length(v_reason) > 500 then
    v_errors := app_hidden.add_error(v_errors, 'reason', 'Au plus 500 caractères.');
  end if;
  perform app_hidden.invalid_fields(v_errors, 'WV313') where v_errors <> '{}'::jsonb;
  perform app_private.counter_write_adjustment(p_id, p_bucket, p_quantity, v_reason);
  return app_public.counter_get(p_id);
end;
$$;

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
--! EndIncluded backoffice/counters.sql
--! Included backoffice/role_attributions.sql
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
do $$
declare
  t text;
begin
  foreach t in array array['role_attributions', 'role_attribution_establishments'] loop
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

-- The back-office list of attributions the caller reads, filtered by account, role and
-- establishment (an attribution without establishment covers them all); current ones first.
create or replace function app_public.role_attributions_search(p_account int default null, p_role text default null,
                                                               p_establishment int default null,
                                                               p_page int default 1, p_page_size int default 50)
returns jsonb
language sql stable as $$
  with found as (
    select ra.id, r.precedence, a.username,
           app_hidden.date_in(app_hidden.today(), ra.start_date, ra.end_date) as current
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
  ), page as (
    select f.id, row_number() over (order by f.current desc, f.precedence, lower(f.username), f.id) as ord
    from found f
    order by f.current desc, f.precedence, lower(f.username), f.id
    limit app_hidden.page_limit(p_page_size) offset app_hidden.page_offset(p_page, p_page_size)
  )
  select jsonb_build_object(
    'count', (select count(*) from found),
    'results', coalesce((select jsonb_agg(app_hidden.role_attribution_json(p.id)
                                          || jsonb_build_object('account_username', a.username,
                                                                'account_name', app_hidden.account_display_name(a.id))
                                          order by p.ord)
                         from page p
                         join app_public.role_attributions ra on ra.id = p.id
                         join app_public.accounts a on a.id = ra.account_id), '[]'::jsonb));
$$;

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
--! EndIncluded backoffice/role_attributions.sql
--! Included backoffice/contracts.sql
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
  return app_public.employee_update(p_employee, jsonb_build_object(
    'contracts', app_private.employee_contracts_input(p_employee) || jsonb_build_array(p_contract - 'id')));
end;
$$;
--! EndIncluded backoffice/contracts.sql
--! Included backoffice/absences.sql
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
    'decide', not o.own and app_hidden.may(app_hidden.current_account_id(), 'absences.decide_absence', a.employee_id),
    'correct', not o.own and app_hidden.may(app_hidden.current_account_id(), 'absences.decide_absence', a.employee_id)
               and app_hidden.may(app_hidden.current_account_id(), 'absences.view_absence_queue', a.employee_id))
  from app_public.absences a
  cross join lateral (select app_hidden.is_current_employee(a.employee_id) as own) o
  where a.id = p_id and a.employee_id in (select app_hidden.absence_api_reader_ids());
$$;

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
  perform app_hidden.absence_check_version(v, p_body, true);
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
  return app_public.absence_update(p_id, (p_body - 'status' - 'employee') || jsonb_build_object('version', v.version),
                                   p_public_url);
end;
$$;
--! EndIncluded backoffice/absences.sql
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
  ('app_hidden.may_write_counter(integer)', 'current_account_is_staff() or coalesce(may(...), false)')
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
