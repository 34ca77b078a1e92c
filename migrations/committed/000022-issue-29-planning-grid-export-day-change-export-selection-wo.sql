--! Previous: sha1:da44bce9b166d3c61178604da4f07dc6aa060087
--! Hash: sha1:9c3c75ad3eb14f7ca8e8425df423e59a58b4bfa3
--! Message: Issue 29: planning grid export, day-change export selection, wording (quantities, de_name, roles in me)

-- Written by `npm run db:current` from sql/ORDER: edit sql/, never this file, and run it again.
-- The sql/ files changed since the last committed migration (migrations/sql-state.json), in list order.

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
can_decide_shift_changes, can_view_payroll and can_impersonate (the API enforces the rules anyway).';

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

-- The accounts to notify of a filing: the attached deciders, else the unattached ones.
create or replace function app_private.route_deciders(p_employee_id int, p_on date, p_decide_permission text,
                                           p_author_account_id int)
returns setof int
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  return query
    with candidates as (
      select * from app_private.decider_candidates(p_employee_id, p_on, p_decide_permission, p_author_account_id)
    )
    select c.account_id from candidates c
    where c.attached = exists (select 1 from candidates x where x.attached)
    order by c.account_id;
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
--! Included planning/planning.sql
-- GET /api/planning/: the cells of a window (at most 62 days) for the caller's employees,
-- built set-wise in one statement (dates × employees joined to templates, day
-- modifications, absences, pending requests and on-call periods).
-- The answer is json, not jsonb, written as text (app_hidden.json_text and its siblings):
-- docs/architecture.md, Performance notes.

-- On-call periods overlapping the window.
create index if not exists on_call_periods_interval_idx on app_public.on_call_periods (end_at, start_at);
-- Pending requests of a window (the planning's pending_request).
create index if not exists shift_change_requests_pending_date_idx on app_public.shift_change_requests (date, employee_id)
  where status = 'pending';

-- On-call periods of the employees' teams, per employee and day: the periods whose
-- establishments meet the establishments of a team the employee belongs to that day, and
-- whose interval [start, end) meets the day (business time zone). Security definer: an
-- employee reads who is on call for their teams without reading the on-call screens.
-- force_generic_plan: docs/architecture.md, Performance notes.
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

-- JSON text of a value (null → null), for the planning's answer written as text
-- (docs/architecture.md, Performance notes).
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
-- force_generic_plan: docs/architecture.md, Performance notes.
-- Text, not json: the service sends it as is (app_public.planning_read_text, in parts:
-- planning_read_chunks), and a cast to json would parse the whole answer once more only to check it.
-- How it stays cheap for a month of 200 employees (6 000 cells, 2.5 MB):
--   * a worked or rest block is written in two parts: its head, up to "pending_request":, which
--     depends on the planned day only (written once per post of the templates, once per day
--     modification), and its tail, the pending request and the on-call periods of the cell;
--   * most cells are a day of their employee's one template with the usual tail (no pending
--     request, no on-call period): each template's week is written once (seven blocks texts),
--     and such a cell is its employee's week at its weekday, without any join;
--   * the other cells (a day modification, granted absences, a pending request, an on-call
--     period, or an employee with several templates in the window) are computed one by one,
--     the absences' blocks already in order; only a cell with an hourly absence sorts its
--     blocks;
--   * each employee's cells are aggregated in the order of the days, so the answer sorts
--     employees, not cells; the answer is one aggregate of its parts (head, employees' cells,
--     holidays), not concatenations that would each copy its 2.5 MB.
--   * the answer is its parts in order (head, each employee's cells, holidays): the route sends
--     them re-cut in 64 KiB (planning_read_chunks) and never holds the whole 2.5 MB text (each
--     copy of a value that large is fresh memory: page faults, zeroing, copies); planning_cells
--     joins them for the callers that need one text.
drop function if exists app_hidden.planning_cells(int[], date, date);
drop function if exists app_hidden.planning_parts(int[], date, date);
create or replace function app_hidden.planning_parts(p_employee_ids int[], p_from date, p_to date) returns setof text
language plpgsql stable
set plan_cache_mode = force_generic_plan as $$
declare
  -- The head of a rest block in a day without modification.
  v_rest_head constant text := '{"kind":"rest","post":null,"post_code":null,"post_label":null,"establishment":null'
    || ',"start_time":null,"end_time":null,"break_start_time":null,"break_end_time":null'
    || ',"break_paid":false,"minutes":0,"is_remote":false,"is_offsite":false'
    || ',"modified":false,"comment":null,"absence":null,"pending_request":';
  -- The same rest block with the usual tail: no pending request, no on-call period.
  v_rest_block constant text := v_rest_head || 'null,"on_call":[]}';
begin
  return query
    with days as (
      select d::date as date, app_hidden.json_date(d::date) as date_json, extract(isodow from d)::int as weekday
      from generate_series(p_from, p_to, interval '1 day') d
    ),
    emp as (
      select e.id, e.first_name, e.last_name, e.main_establishment_id,
             row_number() over (order by lower(e.last_name), lower(e.first_name), e.id) as ord
      from app_public.employees e
      where e.id = any (p_employee_ids)
    ),
    -- The templates valid at some day of the window.
    tpl as (
      select t.id, t.employee_id, t.valid_from, t.valid_to
      from app_public.planning_templates t
      where t.employee_id = any (p_employee_ids) and t.valid_from <= p_to and (t.valid_to is null or t.valid_to >= p_from)
    ),
    -- Per employee, how many templates the window meets, and the first one (meaningful when one).
    emp_template as (
      select t.employee_id, count(*) as templates, min(t.id) as template_id, min(t.valid_from) as valid_from,
             min(coalesce(t.valid_to, 'infinity')) as valid_to
      from tpl t
      group by t.employee_id
    ),
    -- The slots of those templates.
    template_slot as materialized (
      select ts.template_id, ts.weekday, ts.post_id, ts.position
      from app_public.planning_template_slots ts
      where ts.template_id in (select tpl.id from tpl)
    ),
    -- The head of a worked block of each post the templates plan (a template's slot is its
    -- post's, never remote, in a day without modification): written once per post, not per slot.
    post_head as materialized (
      select p.id, extract(epoch from p.start_time)::int / 60 as start_minute,
             '{"kind":"work","post":' || p.id
             || ',"post_code":' || app_hidden.json_text(p.code) || ',"post_label":' || app_hidden.json_text(p.label)
             || ',"establishment":' || app_hidden.json_int(p.establishment_id)
             || ',"start_time":' || app_hidden.json_hm(p.start_time)
             || ',"end_time":' || app_hidden.json_hm(p.end_time)
             || ',"break_start_time":' || app_hidden.json_hm(p.break_start_time)
             || ',"break_end_time":' || app_hidden.json_hm(p.break_end_time)
             || ',"break_paid":' || app_hidden.json_bool(coalesce(p.break_paid, false))
             || ',"minutes":' || app_hidden.json_int(app_hidden.slot_minutes(app_hidden.post_slot(p)))
             || ',"is_remote":false,"is_offsite":false,"modified":false,"comment":null,"absence":null,"pending_request":'
               as head
      from app_public.posts p
      where p.id in (select ts.post_id from template_slot ts)
    ),
    -- The heads of a template's weekday, by start time, with their start minutes (aggregated
    -- from sorted input: an aggregate's own order by would sort each group apart), and its
    -- blocks with the usual tail.
    template_day as (
      select y.template_id, y.weekday, y.heads, y.starts,
             array_to_string(y.heads, 'null,"on_call":[]},') || 'null,"on_call":[]}' as blocks
      from (
        select x.template_id, x.weekday, array_agg(x.head) as heads, array_agg(x.start_minute) as starts
        from (select ts.template_id, ts.weekday, ph.head, ph.start_minute
              from template_slot ts
              join post_head ph on ph.id = ts.post_id
              order by ts.template_id, ts.weekday, ph.start_minute, ts.position) x
        group by x.template_id, x.weekday
      ) y
    ),
    -- Each template's week: the blocks of its seven weekdays (a rest when none), usual tail.
    template_week as (
      select x.template_id, array_agg(x.blocks) as week
      from (select t.id as template_id, coalesce(td.blocks, v_rest_block) as blocks
            from tpl t
            cross join generate_series(1, 7) wd
            left join template_day td on td.template_id = t.id and td.weekday = wd
            order by t.id, wd) x
      group by x.template_id
    ),
    -- The heads of each day modification, by start time (a rest when it has no slot).
    modification as (
      select x.employee_id, x.date, array_agg(x.head) as heads, array_agg(x.start_minute) as starts
      from (
        select m.employee_id, m.date, coalesce(extract(epoch from m.start_time)::int / 60, 0) as start_minute,
               case when m.n is null
                    then '{"kind":"rest","post":null,"post_code":null,"post_label":null,"establishment":null'
                         || ',"start_time":null,"end_time":null,"break_start_time":null,"break_end_time":null'
                         || ',"break_paid":false,"minutes":0,"is_remote":false,"is_offsite":false'
                         || ',"modified":true,"comment":' || app_hidden.json_text(m.comment)
                         || ',"absence":null,"pending_request":'
                    else '{"kind":"work","post":' || app_hidden.json_int(m.post_id)
                         || ',"post_code":' || app_hidden.json_text(po.code) || ',"post_label":' || app_hidden.json_text(po.label)
                         || ',"establishment":' || app_hidden.json_int(m.establishment_id)
                         || ',"start_time":' || app_hidden.json_hm(m.start_time)
                         || ',"end_time":' || app_hidden.json_hm(m.end_time)
                         || ',"break_start_time":' || app_hidden.json_hm(m.break_start_time)
                         || ',"break_end_time":' || app_hidden.json_hm(m.break_end_time)
                         || ',"break_paid":' || app_hidden.json_bool(coalesce(m.break_paid, false))
                         || ',"minutes":' || app_hidden.json_int(app_hidden.slot_minutes(
                                               row(m.start_time, m.end_time, m.break_start_time, m.break_end_time,
                                                   m.break_paid, m.post_id, m.establishment_id, m.is_remote)::app_public.slot))
                         || ',"is_remote":' || app_hidden.json_bool(coalesce(m.is_remote, false) or coalesce(m.day_remote, false))
                         || ',"is_offsite":' || app_hidden.json_bool(coalesce(m.is_offsite, false))
                         || ',"modified":true,"comment":' || app_hidden.json_text(m.comment)
                         || ',"absence":null,"pending_request":'
               end as head
        from (select m.employee_id, m.date, m.comment, m.is_remote as day_remote, m.is_offsite, sl.*
              from app_public.day_modifications m
              left join lateral unnest(m.slots) with ordinality
                as sl(start_time, end_time, break_start_time, break_end_time, break_paid, post_id, establishment_id, is_remote, n) on true
              where m.employee_id = any (p_employee_ids) and m.date between p_from and p_to
              offset 0) m
        -- the posts joined once, not scanned per day modification
        left join app_public.posts po on po.id = m.post_id
        order by m.employee_id, m.date, 3, m.n
      ) x
      group by x.employee_id, x.date
    ),
    -- head: a granted absence's block up to its part, the same on each of its days: written once
    -- per absence (offset 0: evaluated here, not on each day of the absence).
    absence_day as (
      select a.employee_id, d.date, a.id, a.type_id, a.type_code, a.type_name,
             a.date_start, a.date_end, a.start_half, a.end_half, a.start_time, a.end_time, a.comment, a.status,
             case when a.start_time is not null then 'hours'
                  when d.date = a.date_start and a.start_half is not distinct from 'afternoon' then 'afternoon'
                  when d.date = a.date_end and a.end_half is not distinct from 'morning' then 'morning'
                  else 'day' end as part,
             a.head
      from (
        select a.employee_id, a.id, a.type_id, t.code as type_code, t.name as type_name,
               a.date_start, a.date_end, a.start_half, a.end_half, a.start_time, a.end_time, a.comment, a.status,
               case when a.status <> 'pending' then
                 '{"kind":"absence","post":null,"post_code":null,"post_label":null,"establishment":null'
                 || ',"start_time":' || app_hidden.json_hm(a.start_time) || ',"end_time":' || app_hidden.json_hm(a.end_time)
                 || ',"break_start_time":null,"break_end_time":null,"break_paid":false'
                 || ',"minutes":' || app_hidden.json_int(case when a.start_time is not null
                                                             then app_hidden.span_minutes(a.start_time, a.end_time) end)
                 || ',"is_remote":false,"is_offsite":false,"modified":false,"comment":null'
                 || ',"absence":{"id":' || a.id || ',"type":' || a.type_id || ',"type_code":' || app_hidden.json_text(t.code)
                 || ',"type_name":' || app_hidden.json_text(t.name) || ',"date_start":' || app_hidden.json_date(a.date_start)
                 || ',"date_end":' || app_hidden.json_date(a.date_end) || ',"start_half":' || app_hidden.json_text(a.start_half)
                 || ',"end_half":' || app_hidden.json_text(a.end_half) || ',"start_time":' || app_hidden.json_hm(a.start_time)
                 || ',"end_time":' || app_hidden.json_hm(a.end_time) || ',"comment":' || app_hidden.json_text(a.comment)
                 || ',"status":' || app_hidden.json_text(a.status) || ',"part":'
               end as head
        from app_public.absences a
        join app_public.absence_types t on t.id = a.type_id
        where a.employee_id = any (p_employee_ids) and a.date_start <= p_to and a.date_end >= p_from
          and a.status in ('pending', 'validated', 'cancellation_requested')
        offset 0
      ) a
      cross join lateral generate_series(greatest(a.date_start, p_from), least(a.date_end, p_to), interval '1 day') as g(day)
      cross join lateral (select g.day::date as date) d
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
    -- The tail of the worked or rest blocks of the cells that have a day modification, granted
    -- absences, a pending request or an on-call period: the pending request, the on-call periods.
    cell_tail as (
      select k.employee_id, k.date, pend.pending, coalesce(oc.on_call::text, '[]') as on_call,
             pend.pending || ',"on_call":' || coalesce(oc.on_call::text, '[]') || '}' as tail
      from (select x.employee_id, x.date from modification x
            union select x.employee_id, x.date from granted x
            union select x.employee_id, x.date from pending_absence x
            union select x.employee_id, x.date from pending_shift_change x
            union select x.employee_id, x.date from on_call x) k
      left join pending_absence pa on pa.employee_id = k.employee_id and pa.date = k.date
      left join pending_shift_change ps on ps.employee_id = k.employee_id and ps.date = k.date
      left join on_call oc on oc.employee_id = k.employee_id and oc.date = k.date
      cross join lateral (
        select case when pa.id is not null then '{"kind":"absence","id":' || pa.id || ',"is_cancellation":false}'
                    when ps.id is not null then '{"kind":"shift_change","id":' || ps.id || ',"is_cancellation":false}'
                    else 'null'
               end as pending
      ) pend
    ),
    -- The absence blocks of each cell, in their order (k1: morning or whole day, hourly, afternoon;
    -- k2: start minute), aggregated from sorted input.
    absence_blocks as (
      select b.employee_id, b.date, bool_or(b.whole) as whole,
             array_agg(b.block) as blocks, array_agg(b.k1) as k1s, array_agg(b.k2) as k2s,
             string_agg(b.block, ',') filter (where b.k1 = 0) as before_blocks,
             string_agg(b.block, ',') filter (where b.k1 = 2) as after_blocks, bool_or(b.k1 = 1) as hourly
      from (
        select g.employee_id, g.date, g.whole,
               case g.part when 'afternoon' then 2 when 'hours' then 1 else 0 end as k1,
               coalesce(extract(epoch from g.start_time)::int / 60, 0) as k2,
               g.head || app_hidden.json_text(g.part) || '}'
               || ',"pending_request":' || case when g.status = 'cancellation_requested'
                                                then '{"kind":"absence","id":' || g.id || ',"is_cancellation":true}'
                                                when g.whole then t.pending
                                                else 'null' end
               || ',"on_call":' || t.on_call || '}' as block
        from granted g
        join cell_tail t on t.employee_id = g.employee_id and t.date = g.date
        order by g.employee_id, g.date, 4, 5
      ) b
      group by b.employee_id, b.date
    ),
    cell_extra as (
      select t.employee_id, t.date, t.tail, m.heads, m.starts, ab.whole, ab.blocks, ab.k1s, ab.k2s,
             ab.before_blocks, ab.after_blocks, ab.hourly
      from cell_tail t
      left join modification m on m.employee_id = t.employee_id and m.date = t.date
      left join absence_blocks ab on ab.employee_id = t.employee_id and ab.date = t.date
    ),
    -- The cells computed one by one: those with something of their own, and every cell of an
    -- employee with several templates in the window (the latest valid_from first).
    special_cell as (
      select c.employee_id, c.date,
             case when x.employee_id is null then coalesce(td.blocks, v_rest_block)
                  when x.blocks is null then array_to_string(coalesce(x.heads, td.heads, array[v_rest_head]), x.tail || ',') || x.tail
                  when x.whole then array_to_string(x.blocks, ',')
                  -- a half day: the morning's absence, the worked (or rest) blocks, the afternoon's
                  when not x.hourly
                    then concat_ws(',', x.before_blocks,
                                   array_to_string(coalesce(x.heads, td.heads, array[v_rest_head]), x.tail || ',') || x.tail,
                                   x.after_blocks)
                  -- hourly absences among the worked (or rest) blocks, sorted together; at the same
                  -- start time, the worked slot before the hourly absence
                  else (select string_agg(b.block, ',' order by b.k1, b.k2, b.k3)
                        from (select a.block, a.k1, a.k2, 1 as k3
                              from unnest(x.blocks, x.k1s, x.k2s) as a(block, k1, k2)
                              union all
                              select h.head || x.tail, 1, h.start_minute, 0
                              from unnest(coalesce(x.heads, td.heads, array[v_rest_head]), coalesce(x.starts, td.starts, '{0}'::int[]))
                                as h(head, start_minute)) b)
             end as blocks
      from (
        select distinct on (s.employee_id, s.date) s.employee_id, s.date, t.id as template_id
        from (select x.employee_id, x.date from cell_extra x
              union
              select et.employee_id, d.date from emp_template et cross join days d where et.templates > 1) s
        left join tpl t on t.employee_id = s.employee_id and t.valid_from <= s.date and (t.valid_to is null or t.valid_to >= s.date)
        order by s.employee_id, s.date, t.valid_from desc
      ) c
      left join template_day td on td.template_id = c.template_id and td.weekday = extract(isodow from c.date)::int
      left join cell_extra x on x.employee_id = c.employee_id and x.date = c.date
    ),
    special_of_employee as (
      select s.employee_id, array_agg(s.date) as dates, array_agg(s.blocks) as blocks
      from special_cell s
      group by s.employee_id
    ),
    -- Each employee's cells, in the order of the days: a special cell, else the day of its one
    -- template's week while the template is valid, else a rest.
    employee_cells as (
      select e.ord, cells.text
      from emp e
      left join emp_template et on et.employee_id = e.id and et.templates = 1
      left join template_week tw on tw.template_id = et.template_id
      left join special_of_employee se on se.employee_id = e.id
      cross join lateral (
        select string_agg(case when e.ord = 1 and d.date = p_from then '{"employee":' else ',{"employee":' end
                          || e.id || ',"date":' || d.date_json || ',"blocks":['
                          || coalesce(se.blocks[array_position(se.dates, d.date)],
                                      case when d.date between et.valid_from and et.valid_to then tw.week[d.weekday] end,
                                      v_rest_block)
                          || ']}', '') as text
        from days d
      ) cells
    )
    -- The answer's parts in order (concatenations would copy 2.5 MB each).
    select part.text
    from (
      select 0::bigint as k,
             '{"from":' || app_hidden.json_date(p_from) || ',"to":' || app_hidden.json_date(p_to)
             || ',"employees":[' || coalesce((select string_agg(
                  '{"id":' || e.id || ',"name":' || app_hidden.json_text(e.first_name || ' ' || e.last_name)
                  || ',"first_name":' || app_hidden.json_text(e.first_name) || ',"last_name":' || app_hidden.json_text(e.last_name)
                  || ',"main_establishment":' || app_hidden.json_int(e.main_establishment_id) || '}', ',' order by e.ord)
                  from emp e), '')
             || '],"cells":[' as text
      union all
      select c.ord, c.text from employee_cells c
      union all
      select 9223372036854775807,
             '],"holidays":[' || coalesce((select string_agg(
                  '{"date":' || app_hidden.json_date(h.day) || ',"name":' || app_hidden.json_text(h.name) || '}', ',' order by h.day)
                  from generate_series(extract(year from p_from)::int, extract(year from p_to)::int) y,
                       lateral app_public.public_holidays(y) h
                  where h.day between p_from and p_to), '')
             || ']}'
    ) part
    order by part.k;
end;
$$;

-- The answer as one text: its parts joined in their order.
create or replace function app_hidden.planning_cells(p_employee_ids int[], p_from date, p_to date) returns text
language sql stable as $$
  select string_agg(p.part, '' order by p.n) from app_hidden.planning_parts(p_employee_ids, p_from, p_to) with ordinality as p(part, n);
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
-- planning_read_text is the JSON text as written, which the service passes through (a month
-- of 200 employees is 2.5 MB); the route calls planning_read_chunks, the same bytes in parts.
-- planning_read is the same answer typed json, for SQL callers and GraphQL.
drop function if exists app_public.planning_read(date, date, int);
-- The window and the employees of a planning read (its checks and errors), for planning_read_text
-- and planning_read_chunks; called by them only (security definer), as they were its body.
create or replace function app_hidden.planning_scope(p_from date, p_to date, p_employee int, p_establishment int, p_team int,
                                                     out from_date date, out to_date date, out employee_ids int[])
language plpgsql stable as $$
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
  if v_to - v_from + 1 > app_hidden.planning_max_days() then
    perform app_hidden.invalid('to', format('Le planning se lit sur %s jours au plus (ici %s jours) : réduisez la période.',
                                            app_hidden.planning_max_days(), v_to - v_from + 1), 'WV108');
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
  from_date := v_from;
  to_date := v_to;
  employee_ids := v_ids;
end;
$$;

create or replace function app_public.planning_read_text(p_from date default null, p_to date default null, p_employee int default null,
                                                         p_establishment int default null, p_team int default null)
returns text
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_scope record := app_hidden.planning_scope(p_from, p_to, p_employee, p_establishment, p_team);
begin
  return app_hidden.planning_cells(v_scope.employee_ids, v_scope.from_date, v_scope.to_date);
end;
$$;

create or replace function app_public.planning_read(p_from date default null, p_to date default null, p_employee int default null,
                                                    p_establishment int default null, p_team int default null)
returns json
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  return app_public.planning_read_text(p_from, p_to, p_employee, p_establishment, p_team)::json;
end;
$$;
comment on function app_public.planning_read(date, date, integer, integer, integer) is
'SPEC Planning cell and Permissions rule 3, GET /api/planning/: the cells of a window (the current week
by default, at most 62 days), with absences and pending requests; a directory reader reads its
absences.view_absence_queue perimeter, any other account its own cells; narrowed by employee,
establishment or team.';

-- The same answer in parts of at most 64 KiB, in order, for the route to send as they come: one
-- 2.5 MB value was received whole by the service's driver, in a buffer doubled up to 4 MiB
-- per request (docs/architecture.md, Performance notes). Cut from the answer's parts as they
-- come (a part may straddle two pieces), without ever forming the whole text. Each piece is
-- whole UTF-8 characters (cut before a continuation byte, so 64 KiB less at most 3 bytes): the
-- driver reads every value as UTF-8 text before handing its bytes over, and a character cut in
-- two would become two replacement characters.
create or replace function app_public.planning_read_chunks(p_from date default null, p_to date default null, p_employee int default null,
                                                           p_establishment int default null, p_team int default null)
returns setof bytea
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_scope record := app_hidden.planning_scope(p_from, p_to, p_employee, p_establishment, p_team);
  v_part bytea;
  v_length int;
  v_at int;
  v_cut int;
  v_pieces bytea[] := '{}';  -- of the piece being filled
  v_room int := 65536;       -- bytes still free in it
begin
  for v_part in select convert_to(p.part, 'UTF8')
                from app_hidden.planning_parts(v_scope.employee_ids, v_scope.from_date, v_scope.to_date) as p(part) loop
    v_length := length(v_part);
    v_at := 0;
    while v_length - v_at >= v_room loop
      v_cut := v_room;
      -- never between the bytes of one character (get_byte counts from 0: the next piece's first byte)
      while v_at + v_cut < v_length and get_byte(v_part, v_at + v_cut) between 128 and 191 loop
        v_cut := v_cut - 1;
      end loop;
      v_pieces := array_append(v_pieces, substring(v_part from v_at + 1 for v_cut));
      return next (select string_agg(x.piece, ''::bytea order by x.n) from unnest(v_pieces) with ordinality as x(piece, n));
      v_at := v_at + v_cut;
      v_room := 65536;
      v_pieces := '{}';
    end loop;
    if v_length > v_at then
      v_pieces := array_append(v_pieces, case when v_at = 0 then v_part else substring(v_part from v_at + 1) end);
      v_room := v_room - (v_length - v_at);
    end if;
  end loop;
  if cardinality(v_pieces) > 0 then
    return next (select string_agg(x.piece, ''::bytea order by x.n) from unnest(v_pieces) with ordinality as x(piece, n));
  end if;
end;
$$;

-- The team planning's grid as a spreadsheet (GET /api/planning/export/, issue 29 point 4): one
-- row per employee of the read (same window, perimeter and filters as GET /api/planning/, in its
-- order), one column per day (d1 the first day of the window, up to d62; the days after the
-- window's last are null), each cell what the grid's cell shows: the codes of its blocks in their
-- order (an absence's reason code, a worked post's code; a rest shows nothing), a half-day
-- absence with its half, and « (demande en attente) » or « (annulation demandée) » as the grid
-- marks them. from and to are required (the columns are the window's days).
create or replace function app_hidden.planning_cell_label(p_blocks json) returns text
language sql immutable as $$
  select nullif(concat_ws(' ',
           nullif(string_agg(case
                    when b.value->'absence' is not null and json_typeof(b.value->'absence') = 'object' then
                      (b.value->'absence'->>'type_code')
                      || case b.value->'absence'->>'part' when 'morning' then ' matin' when 'afternoon' then ' après-midi'
                                                          when 'hours' then ' ' || (b.value->'absence'->>'start_time') || '-'
                                                                                 || (b.value->'absence'->>'end_time')
                                                          else '' end
                    when b.value->>'kind' = 'work' then b.value->>'post_code'
                  end, ' / ' order by b.n), ''),
           case when bool_or(json_typeof(b.value->'pending_request') = 'object'
                             and (b.value->'pending_request'->>'is_cancellation')::boolean) then '(annulation demandée)'
                when bool_or(json_typeof(b.value->'pending_request') = 'object') then '(demande en attente)'
           end), '')
  from json_array_elements(p_blocks) with ordinality as b(value, n);
$$;

drop function if exists app_public.planning_export(date, date, int, int, int);
create or replace function app_public.planning_export(p_from date default null, p_to date default null, p_employee int default null,
                                                      p_establishment int default null, p_team int default null)
returns table (employee int, employee_name text,
               d1 text, d2 text, d3 text, d4 text, d5 text, d6 text, d7 text, d8 text, d9 text, d10 text,
               d11 text, d12 text, d13 text, d14 text, d15 text, d16 text, d17 text, d18 text, d19 text, d20 text,
               d21 text, d22 text, d23 text, d24 text, d25 text, d26 text, d27 text, d28 text, d29 text, d30 text,
               d31 text, d32 text, d33 text, d34 text, d35 text, d36 text, d37 text, d38 text, d39 text, d40 text,
               d41 text, d42 text, d43 text, d44 text, d45 text, d46 text, d47 text, d48 text, d49 text, d50 text,
               d51 text, d52 text, d53 text, d54 text, d55 text, d56 text, d57 text, d58 text, d59 text, d60 text,
               d61 text, d62 text)
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_planning json;
begin
  if p_from is null then
    perform app_hidden.invalid('from', 'Indiquez le premier jour de la période exportée.', 'WV108');
  end if;
  if p_to is null then
    perform app_hidden.invalid('to', 'Indiquez le dernier jour de la période exportée.', 'WV108');
  end if;
  v_planning := app_public.planning_read(p_from, p_to, p_employee, p_establishment, p_team);
  return query
  with emp as (
    select (x.value->>'id')::int as id, x.value->>'name' as name, x.n
    from json_array_elements(v_planning->'employees') with ordinality as x(value, n)
  ),
  grid as (
    select (c.value->>'employee')::int as employee_id,
           array_agg(app_hidden.planning_cell_label(c.value->'blocks') order by (c.value->>'date')::date) as labels
    from json_array_elements(v_planning->'cells') as c(value)
    group by 1
  )
  select e.id, e.name,
         g.labels[1], g.labels[2], g.labels[3], g.labels[4], g.labels[5], g.labels[6], g.labels[7], g.labels[8], g.labels[9], g.labels[10],
         g.labels[11], g.labels[12], g.labels[13], g.labels[14], g.labels[15], g.labels[16], g.labels[17], g.labels[18], g.labels[19], g.labels[20],
         g.labels[21], g.labels[22], g.labels[23], g.labels[24], g.labels[25], g.labels[26], g.labels[27], g.labels[28], g.labels[29], g.labels[30],
         g.labels[31], g.labels[32], g.labels[33], g.labels[34], g.labels[35], g.labels[36], g.labels[37], g.labels[38], g.labels[39], g.labels[40],
         g.labels[41], g.labels[42], g.labels[43], g.labels[44], g.labels[45], g.labels[46], g.labels[47], g.labels[48], g.labels[49], g.labels[50],
         g.labels[51], g.labels[52], g.labels[53], g.labels[54], g.labels[55], g.labels[56], g.labels[57], g.labels[58], g.labels[59], g.labels[60],
         g.labels[61], g.labels[62]
  from emp e
  left join grid g on g.employee_id = e.id
  order by e.n;
end;
$$;
comment on function app_public.planning_export(date, date, integer, integer, integer) is
'Issue 29 point 4, GET /api/planning/export/: the team planning grid of GET /api/planning/ (same window,
perimeter and filters), one row per employee, one column per day (d1 = from), each cell the codes the
grid shows.';
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
-- plpgsql: its plan is kept by the connection (a security definer SQL function is never
-- inlined, and was planned again at each of its calls).
create or replace function app_hidden.employee_count_base(p_employee int) returns text
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  return coalesce((select es.count_base
                   from app_public.employees e
                   join app_public.establishments es on es.id = e.main_establishment_id
                   where e.id = p_employee), 'ouvrables');
end;
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
-- stable, like the to_char wrappers it calls: an immutable SQL function calling a stable one is never
-- inlined, and was parsed and planned at each call.
-- French, as the screens write it (issue 29 point 5: « (1 jour) », not « (1.00 jour) »): no
-- trailing zeros, a decimal comma, the singular below 2 (« 1,5 jour », « 0,5 jour », « 2 jours »).
language sql stable as $$
  select replace(rtrim(rtrim(app_hidden.fmt_quantity(p_quantity), '0'), '.'), '.', ',') || ' '
         || case when p_unit = 'hour' then case when abs(p_quantity) < 2 then 'heure' else 'heures' end
                 else case when abs(p_quantity) < 2 then 'jour' else 'jours' end end;
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
-- stable, like the to_char wrappers it calls: an immutable SQL function calling a stable one is never
-- inlined, and was parsed and planned at each call.
language sql stable as $$
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

-- The counter bucket an active absence holds on business date p_today: a granted absence
-- (validated or cancellation requested) that has started is Pris, anything else Planifiés.
create or replace function app_hidden.absence_counter_bucket(p_status text, p_date_start date, p_today date) returns text
language sql immutable parallel safe as $$
  select case when p_status in ('validated', 'cancellation_requested') and p_date_start <= p_today
              then 'taken' else 'planned' end;
$$;

-- Counters an absence would move: one line per consumable counter associated with the
-- type and per civil year of the period (an absence spanning two years moves each year's
-- counter for its share). counter_id is null when the counter of that year is not open.
-- p_shares: the draft's quantity per civil year, [{"year", "quantity"}], when the caller has
-- already counted it (app_private.absence_evaluate); null: counted here.
-- force_generic_plan: docs/architecture.md, Performance notes.
drop function if exists app_private.absence_counter_plan(app_hidden.absence_draft);
create or replace function app_private.absence_counter_plan(p_draft app_hidden.absence_draft, p_shares jsonb default null)
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
    cross join lateral (
      select (x ->> 'year')::int as year, (x ->> 'quantity')::numeric as quantity
      from jsonb_array_elements(p_shares) x
      union all
      select sh.year, sh.quantity
      from app_hidden.absence_shares(p_draft.employee_id, t.unit, p_draft.date_start, p_draft.date_end,
                                     p_draft.start_half, p_draft.end_half, p_draft.start_time, p_draft.end_time) sh
      where p_shares is null) s
    left join app_public.counters c on c.employee_id = p_draft.employee_id and c.code = ca.counter_code
                                    and c.year = s.year and c.is_active
    where t.id = p_draft.type_id and s.quantity > 0
    order by ca.counter_code, s.year;
end;
$$;

-- Net journal position of absences per counter and bucket (what they hold now).
-- force_generic_plan: docs/architecture.md, Performance notes.
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

-- The draft of a stored absence corrected by typed values (PATCH, the correction preview, the
-- validation's correction): a key sent (p_sent, the keys as app_hidden.keys_sent resolves them)
-- wins, null included; a key not sent keeps the stored value. The employee never changes.
drop function if exists app_hidden.absence_draft_of(jsonb, app_public.absences);
create or replace function app_hidden.absence_draft_of(p_base app_public.absences, p_sent text[], p_type int,
                                                       p_date_start date, p_date_end date, p_start_half text,
                                                       p_end_half text, p_start_time time, p_end_time time)
returns app_hidden.absence_draft
language plpgsql stable as $$
declare
  d app_hidden.absence_draft;
begin
  d.employee_id := p_base.employee_id;
  d.type_id := case when app_hidden.sent(p_sent, 'type', false) then p_type else p_base.type_id end;
  d.date_start := case when app_hidden.sent(p_sent, 'date_start', false) then p_date_start else p_base.date_start end;
  d.date_end := case when app_hidden.sent(p_sent, 'date_end', false) then p_date_end else p_base.date_end end;
  d.start_half := case when app_hidden.sent(p_sent, 'start_half', false) then p_start_half else p_base.start_half end;
  d.end_half := case when app_hidden.sent(p_sent, 'end_half', false) then p_end_half else p_base.end_half end;
  d.start_time := case when app_hidden.sent(p_sent, 'start_time', false) then p_start_time else p_base.start_time end;
  d.end_time := case when app_hidden.sent(p_sent, 'end_time', false) then p_end_time else p_base.end_time end;
  return d;
end;
$$;

-- After a requalification or an adjustment, fields the new type cannot carry are dropped
-- unless the correction sends them (p_sent; then the rules refuse them): an hourly type has no
-- half-day, a day type has no hours, and a whole-day type is taken whole ("an adjustment must
-- take it whole"). An unchanged absence keeps what it has (a half-day stored before the rule
-- stays as it is).
drop function if exists app_hidden.absence_draft_normalize(app_hidden.absence_draft, jsonb, app_public.absences);
create or replace function app_hidden.absence_draft_normalize(p_draft app_hidden.absence_draft, p_sent text[],
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
    if not app_hidden.sent(p_sent, 'start_half', false) then d.start_half := null; end if;
    if not app_hidden.sent(p_sent, 'end_half', false) then d.end_half := null; end if;
  else
    if not app_hidden.sent(p_sent, 'start_time', false) then d.start_time := null; end if;
    if not app_hidden.sent(p_sent, 'end_time', false) then d.end_time := null; end if;
    if not v_type.half_day_allowed then
      if not app_hidden.sent(p_sent, 'start_half', false) then d.start_half := null; end if;
      if not app_hidden.sent(p_sent, 'end_half', false) then d.end_half := null; end if;
    end if;
  end if;
  return d;
end;
$$;

-- Events of the employee that the period meets: [{id, title, start_at, end_at}].
-- plpgsql: its plan is kept by the connection (a security definer SQL function is never
-- inlined, and was planned again at each of its calls).
create or replace function app_private.absence_event_conflicts(p_employee int, p_period tsrange) returns jsonb
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  return (select coalesce(jsonb_agg(jsonb_build_object('id', e.id, 'title', e.title, 'start_at', e.start_at, 'end_at', e.end_at)
                            order by e.start_at, e.id), '[]'::jsonb)
  from app_public.event_participants p
  join app_public.events e on e.id = p.event_id
  where p.employee_id = p_employee
    and tstzrange(e.start_at, e.end_at)
        && tstzrange(lower(p_period) at time zone app_hidden.business_timezone(),
                     upper(p_period) at time zone app_hidden.business_timezone()));
end;
$$;

-- "du 20/11/2026 15:00 au 20/11/2026 16:00" for an event.
create or replace function app_hidden.event_period_fr(p_start timestamptz, p_end timestamptz) returns text
language sql stable as $$
  select format('du %s %s au %s %s',
                app_hidden.fr_date(app_hidden.business_date(p_start)),
                to_char(p_start at time zone app_hidden.business_timezone(), 'HH24:MI'),
                app_hidden.fr_date(app_hidden.business_date(p_end)),
                to_char(p_end at time zone app_hidden.business_timezone(), 'HH24:MI'));
$$;

-- The declaration rules, one function each (docs/architecture.md, "Where each rule lives").
-- Each returns its outcome {"errors": {field: [message]}, "warnings": [message]} (a few add
-- what the caller needs next: "plan", "events"); app_private.absence_evaluate composes them in
-- the order of the messages. They take the rows the evaluation already read (type, employee)
-- instead of reading them again, answer an empty outcome when what they need is missing, and
-- run as their caller (absence_evaluate, security definer). The rules that read no table are
-- one SQL expression (inlined into the caller's), those that query are plpgsql (plans kept by
-- the connection): docs/architecture.md, Performance notes.

-- An outcome with nothing to say.
-- stable like jsonb_build_object: a function declared less volatile than its body is never
-- inlined, and a SQL function that is not inlined is planned again in every transaction.
create or replace function app_hidden.rule_outcome(p_errors jsonb default '{}'::jsonb, p_warnings jsonb default '[]'::jsonb)
returns jsonb
language sql stable parallel safe as $$
  select jsonb_build_object('errors', coalesce(p_errors, '{}'::jsonb), 'warnings', coalesce(p_warnings, '[]'::jsonb));
$$;

-- The messages of one field, in order, without the rules that said nothing (null when none).
create or replace function app_hidden.messages(variadic p_messages text[]) returns jsonb
language sql stable parallel safe as $$
  select nullif(to_jsonb(array_remove(p_messages, null)), '[]'::jsonb);
$$;

-- One outcome from several, in their order: each field's messages and the warnings follow
-- those of the outcomes before (a null outcome is a rule that was not called).
create or replace function app_hidden.outcomes_merge(p_outcomes jsonb[]) returns jsonb
language plpgsql stable parallel safe as $$
declare
  v_errors jsonb := '{}'::jsonb;
  v_warnings jsonb := '[]'::jsonb;
  v_outcome jsonb;
  v_field text;
  v_messages jsonb;
begin
  foreach v_outcome in array p_outcomes loop
    continue when v_outcome is null;
    if v_outcome -> 'errors' <> '{}'::jsonb then
      for v_field, v_messages in select e.key, e.value from jsonb_each(v_outcome -> 'errors') e loop
        v_errors := v_errors || jsonb_build_object(v_field, coalesce(v_errors -> v_field, '[]'::jsonb) || v_messages);
      end loop;
    end if;
    v_warnings := v_warnings || coalesce(v_outcome -> 'warnings', '[]'::jsonb);
  end loop;
  return app_hidden.rule_outcome(v_errors, v_warnings);
end;
$$;

create or replace function app_private.absence_rule_identity(p_draft app_hidden.absence_draft,
                                                             p_employee_found boolean, p_type_found boolean)
returns jsonb
language sql stable as $$
  select app_hidden.rule_outcome(jsonb_strip_nulls(jsonb_build_object(
    'employee', app_hidden.messages(case when (p_draft).employee_id is null then 'Ce champ est obligatoire.'
                                         when p_employee_found is not true then 'Salarié introuvable.' end),
    'type', app_hidden.messages(case when (p_draft).type_id is null then 'Ce champ est obligatoire.'
                                     when p_type_found is not true then 'Motif d''absence inconnu ou inactif.' end))));
$$;
comment on function app_private.absence_rule_identity(app_hidden.absence_draft, boolean, boolean) is
'SPEC Absences, fields employee and type: both are required; p_employee_found and p_type_found say
whether the employee, and an active type, were found (otherwise refused under its field).';

create or replace function app_private.absence_rule_period(p_draft app_hidden.absence_draft) returns jsonb
language sql stable as $$
  -- A draft without date_end lies on one date.
  select app_hidden.rule_outcome(jsonb_strip_nulls(jsonb_build_object(
    'date_start', app_hidden.messages(
      case when (p_draft).date_start is null then 'Ce champ est obligatoire.' end,
      case when extract(year from (p_draft).date_start)
                not between app_hidden.first_accepted_year() and app_hidden.last_accepted_year()
           then format('Date hors de la plage acceptée (années %s à %s).',
                       app_hidden.first_accepted_year(), app_hidden.last_accepted_year()) end),
    'date_end', app_hidden.messages(
      case when extract(year from coalesce((p_draft).date_end, (p_draft).date_start))
                not between app_hidden.first_accepted_year() and app_hidden.last_accepted_year()
           then format('Date hors de la plage acceptée (années %s à %s).',
                       app_hidden.first_accepted_year(), app_hidden.last_accepted_year()) end,
      case when (p_draft).date_start is not null
                and coalesce((p_draft).date_end, (p_draft).date_start) < (p_draft).date_start
           then 'La date de fin ne peut pas précéder la date de début.'
           when coalesce((p_draft).date_end, (p_draft).date_start) - (p_draft).date_start > app_hidden.absence_max_days()
           then 'Une absence ne peut pas dépasser trois ans : déposez des périodes successives.' end),
    'start_half', app_hidden.messages(
      case when (p_draft).start_half not in ('morning', 'afternoon') then 'Valeurs possibles : morning, afternoon ou null.' end),
    'end_half', app_hidden.messages(
      case when (p_draft).end_half not in ('morning', 'afternoon') then 'Valeurs possibles : morning, afternoon ou null.' end))));
$$;
comment on function app_private.absence_rule_period(app_hidden.absence_draft) is
'SPEC Absences, fields date_start and date_end: the start is required, both dates lie in the accepted
years, the end does not precede the start, one absence spans at most app_hidden.absence_max_days(), and
the half-day bounds are morning, afternoon or null.';

create or replace function app_private.absence_rule_hourly(p_draft app_hidden.absence_draft, p_type app_public.absence_types)
returns jsonb
language sql stable as $$
  -- Nothing to say without a type and a start (the identity and period rules say it).
  select app_hidden.rule_outcome(jsonb_strip_nulls(jsonb_build_object(
    'start_half', app_hidden.messages(
      case when (p_type).id is not null and (p_draft).date_start is not null and (p_type).unit = 'hour'
                and ((p_draft).start_half is not null or (p_draft).end_half is not null)
           then format('Le motif « %s » se pose en heures : pas de demi-journée.', (p_type).name) end),
    'start_time', app_hidden.messages(
      case when (p_type).id is null or (p_draft).date_start is null then null
           when (p_type).unit = 'hour' and ((p_draft).start_time is null or (p_draft).end_time is null)
           then 'Un motif en heures demande une heure de début et une heure de fin.'
           when (p_type).unit <> 'hour' and ((p_draft).start_time is not null or (p_draft).end_time is not null)
           then format('Le motif « %s » se pose en jours : retirez les heures de début et de fin.', (p_type).name) end),
    'end_time', app_hidden.messages(
      case when (p_type).id is not null and (p_draft).date_start is not null and (p_type).unit = 'hour'
                and (p_draft).end_time <= (p_draft).start_time
           then 'L''heure de fin doit suivre l''heure de début.' end),
    'date_end', app_hidden.messages(
      case when (p_type).id is not null and (p_draft).date_start is not null and (p_type).unit = 'hour'
                and coalesce((p_draft).date_end, (p_draft).date_start) <> (p_draft).date_start
           then 'Une absence en heures porte sur une seule date : la date de fin doit être celle du début.' end))));
$$;
comment on function app_private.absence_rule_hourly(app_hidden.absence_draft, app_public.absence_types) is
'SPEC Absences, declaration rule 5: an hourly type needs start and end hours, the end after the start,
on a single date and without half-day; a type counted in days takes no hours.';

create or replace function app_private.absence_rule_half_days(p_draft app_hidden.absence_draft, p_type app_public.absence_types)
returns jsonb
language sql stable as $$
  select app_hidden.rule_outcome(jsonb_strip_nulls(jsonb_build_object(
    'start_half', app_hidden.messages(
      case when (p_type).id is null or (p_draft).date_start is null or (p_type).unit = 'hour' then null
           when (p_draft).date_start = coalesce((p_draft).date_end, (p_draft).date_start)
                and (p_draft).start_half = 'afternoon' and (p_draft).end_half = 'morning'
           then 'Une absence d''une seule journée ne peut pas commencer l''après-midi et finir le matin.'
           when not (p_type).half_day_allowed and ((p_draft).start_half = 'afternoon' or (p_draft).end_half = 'morning')
           then format('Le motif « %s » se pose par journées entières : pas de demi-journée.', (p_type).name) end))));
$$;
comment on function app_private.absence_rule_half_days(app_hidden.absence_draft, app_public.absence_types) is
'SPEC Absences, declaration rules 2 and 4: one day cannot start in the afternoon and end in the morning,
and a whole-day type (half-day possible false) refuses a half-day bound, under start_half.';

create or replace function app_private.absence_rule_count(p_quantity numeric, p_base text) returns jsonb
language sql stable as $$
  select app_hidden.rule_outcome(p_warnings => case when p_quantity = 0 then jsonb_build_array(format(
    'Cette période ne compte aucun jour décompté (base %s : dimanches et jours fériés exclus%s).',
    case when p_base = 'ouvres' then 'jours ouvrés' else 'jours ouvrables' end,
    case when p_base = 'ouvres' then ', samedis exclus' else '' end)) end);
$$;
comment on function app_private.absence_rule_count(numeric, text) is
'SPEC Absences, declaration rule 1: a period that counts no day on the employee''s base (Sundays and
public holidays excluded, Saturdays too on the ouvrés base) is accepted with a warning.';

create or replace function app_private.absence_rule_retroactivity(p_draft app_hidden.absence_draft, p_retro text, p_today date)
returns jsonb
language sql stable as $$
  select app_hidden.rule_outcome(jsonb_strip_nulls(jsonb_build_object('date_start', app_hidden.messages(
    case when p_retro = 'employee' and (p_draft).date_start < app_hidden.employee_retroactivity_limit(p_today)
         then format('Une demande ne peut pas remonter au-delà de %s jours : la date de début doit être au plus tôt le %s.',
                     app_hidden.retroactivity_days(), app_hidden.fr_date(app_hidden.employee_retroactivity_limit(p_today)))
         when p_retro = 'manager' and (p_draft).date_start < app_hidden.manager_retroactivity_limit(p_today)
         then format('Une déclaration ne peut pas remonter avant le 1er décembre de l''année précédente : la date de début doit être au plus tôt le %s.',
                     app_hidden.fr_date(app_hidden.manager_retroactivity_limit(p_today))) end))));
$$;
comment on function app_private.absence_rule_retroactivity(app_hidden.absence_draft, text, date) is
'SPEC Absences, declaration rule 13: an employee''s own request starts no earlier than
app_hidden.employee_retroactivity_limit(today); a declaration for another no earlier than
app_hidden.manager_retroactivity_limit(today) (1 December of the previous year); p_retro null: no bound.';

create or replace function app_private.absence_rule_contract_types(p_draft app_hidden.absence_draft,
                                                                   p_type app_public.absence_types)
returns jsonb
language plpgsql stable as $$
declare
  v_allowed text;
  v_contract record;
begin
  if p_type.id is null or p_draft.date_start is null or p_draft.employee_id is null then
    return app_hidden.rule_outcome();
  end if;
  select string_agg(ct.code, ', ' order by ct.code) into v_allowed
  from app_public.absence_type_contract_types x
  join app_public.contract_types ct on ct.id = x.contract_type_id
  where x.absence_type_id = p_type.id;
  if v_allowed is null then
    return app_hidden.rule_outcome();
  end if;
  -- The contract in force on the first day.
  select ct.id, ct.code into v_contract
  from app_public.contracts c join app_public.contract_types ct on ct.id = c.contract_type_id
  where c.employee_id = p_draft.employee_id and c.start_date <= p_draft.date_start
    and (c.end_date is null or c.end_date >= p_draft.date_start)
  order by c.start_date desc limit 1;
  if v_contract.id is null then
    return app_hidden.rule_outcome(jsonb_build_object('type', jsonb_build_array(format(
      'Le motif « %s » est réservé aux contrats %s ; aucun contrat n''est en vigueur le %s.',
      p_type.name, v_allowed, app_hidden.fr_date(p_draft.date_start)))));
  elsif not exists (select 1 from app_public.absence_type_contract_types x
                    where x.absence_type_id = p_type.id and x.contract_type_id = v_contract.id) then
    return app_hidden.rule_outcome(jsonb_build_object('type', jsonb_build_array(format(
      'Le motif « %s » est réservé aux contrats %s ; le contrat en vigueur le %s est : %s.',
      p_type.name, v_allowed, app_hidden.fr_date(p_draft.date_start), v_contract.code))));
  end if;
  return app_hidden.rule_outcome();
end;
$$;
comment on function app_private.absence_rule_contract_types(app_hidden.absence_draft, app_public.absence_types) is
'SPEC Absences, declaration rule 8: a type listing contract types is refused, under type, when the
contract in force on the first day is not among them (the message names the contract held, or none).';

create or replace function app_private.absence_rule_overlap(p_draft app_hidden.absence_draft, p_period tsrange,
                                                            p_exclude_id int)
returns jsonb
language plpgsql stable as $$
begin
  return app_hidden.rule_outcome(coalesce(
    (select jsonb_build_object('date_start', jsonb_agg(format('Cette période chevauche %s.', app_hidden.absence_label(a))
                                                       order by a.date_start, a.id))
     from app_public.absences a
     where a.employee_id = p_draft.employee_id and app_hidden.absence_is_active(a.status)
       and a.id is distinct from p_exclude_id and a.period && p_period
     having count(*) > 0),
    '{}'::jsonb));
end;
$$;
comment on function app_private.absence_rule_overlap(app_hidden.absence_draft, tsrange, integer) is
'SPEC Absences, declaration rules 2 and 3: a period (p_period, app_hidden.absence_period) meeting another
active absence of the employee is refused, naming each one and its number; the morning and the
afternoon of one date do not overlap. p_exclude_id: the absence itself.';

create or replace function app_private.absence_rule_annual_cap(p_draft app_hidden.absence_draft,
                                                               p_type app_public.absence_types, p_exclude_id int)
returns jsonb
language plpgsql stable as $$
declare
  v_errors jsonb := '{}'::jsonb;
  v_warnings jsonb := '[]'::jsonb;
  v_total numeric;
  v_message text;
  s record;
begin
  if p_type.annual_cap is null then
    return app_hidden.rule_outcome();
  end if;
  for s in
    select x.year, x.quantity from app_hidden.absence_shares(p_draft.employee_id, p_type.unit, p_draft.date_start, p_draft.date_end,
                                                            p_draft.start_half, p_draft.end_half, p_draft.start_time, p_draft.end_time) x
  loop
    select s.quantity + coalesce(sum(o.quantity), 0) into v_total
    from app_public.absences a
    cross join lateral app_hidden.absence_shares(a.employee_id, p_type.unit, a.date_start, a.date_end, a.start_half,
                                                 a.end_half, a.start_time, a.end_time) o
    where a.employee_id = p_draft.employee_id and a.type_id = p_type.id and app_hidden.absence_is_active(a.status)
      and a.id is distinct from p_exclude_id
      and a.date_start <= make_date(s.year, 12, 31) and a.date_end >= make_date(s.year, 1, 1)
      and o.year = s.year;
    if v_total > p_type.annual_cap then
      v_message := format(
        'Plafond annuel dépassé pour le motif « %s » sur l''année %s : demande de %s, total de %s avec cette demande, pour un plafond de %s.',
        p_type.name, s.year, app_hidden.quantity_fr(s.quantity, p_type.unit), app_hidden.quantity_fr(v_total, p_type.unit),
        app_hidden.quantity_fr(p_type.annual_cap, p_type.unit));
      if p_type.cap_overrun = 'refuse' then
        v_errors := app_hidden.add_error(v_errors, 'date_end', v_message);
      else
        v_warnings := v_warnings || to_jsonb(v_message);
      end if;
    end if;
  end loop;
  return app_hidden.rule_outcome(v_errors, v_warnings);
end;
$$;
comment on function app_private.absence_rule_annual_cap(app_hidden.absence_draft, app_public.absence_types, integer) is
'SPEC Absences, declaration rules 6 and 17: the quantity of the type over each civil year, across the
employee''s active absences, above the annual cap is refused under date_end (overrun Refuser, giving the
request, the year total and the cap) or accepted with that warning (Avertir).';

create or replace function app_private.absence_rule_non_splittable(p_draft app_hidden.absence_draft,
                                                                   p_type app_public.absence_types, p_base text,
                                                                   p_period tsrange, p_exclude_id int)
returns jsonb
language plpgsql stable as $$
declare
  v_other app_public.absences;
begin
  if p_type.id is null or p_type.splittable then
    return app_hidden.rule_outcome();
  end if;
  -- Another period of the same civil year separated by a gap (a counted day between them).
  select a.* into v_other from app_public.absences a
  where a.employee_id = p_draft.employee_id and a.type_id = p_type.id and app_hidden.absence_is_active(a.status)
    and a.id is distinct from p_exclude_id
    and extract(year from a.date_start) in (extract(year from p_draft.date_start), extract(year from p_draft.date_end))
    and not (a.period && p_period)
    and exists (select 1
                from generate_series(least(a.date_end, p_draft.date_end) + 1,
                                     greatest(a.date_start, p_draft.date_start) - 1, interval '1 day') g
                where app_hidden.is_counted_day(g::date, p_base))
  order by a.date_start limit 1;
  if not found then
    return app_hidden.rule_outcome();
  end if;
  return app_hidden.rule_outcome(p_warnings => jsonb_build_array(format(
    'Le motif « %s » n''est pas fractionnable : %s, de la même année, est séparée de cette période.',
    p_type.name, app_hidden.absence_label(v_other))));
end;
$$;
comment on function app_private.absence_rule_non_splittable(app_hidden.absence_draft, app_public.absence_types, text, tsrange, integer) is
'SPEC Absences, declaration rule 7: for a non-splittable type, another period of the same civil year
separated from this one by a counted day (on base p_base) gives a warning; contiguous periods do not.';

create or replace function app_private.absence_rule_counters(p_draft app_hidden.absence_draft,
                                                             p_type app_public.absence_types, p_exclude_id int,
                                                             p_shares jsonb default null)
returns jsonb
language plpgsql stable as $$
declare
  v_errors jsonb := '{}'::jsonb;
  v_plan jsonb := '[]'::jsonb;
  v_held numeric;
  v_error text;
  r record;
begin
  if p_type.id is null or p_draft.employee_id is null then
    return app_hidden.rule_outcome() || jsonb_build_object('plan', v_plan);
  end if;
  for r in select * from app_private.absence_counter_plan(p_draft, p_shares) loop
    v_held := 0;
    if p_exclude_id is not null and r.counter_id is not null then
      -- What the absence itself holds on the counter is released by its new position.
      select coalesce(sum(n.quantity), 0) into v_held
      from app_private.absence_counter_nets(array[p_exclude_id]) n where n.counter_id = r.counter_id;
    end if;
    v_error := app_private.counter_request_error(r.code, r.year, r.counter_id, r.counter_unit, r.type_unit, p_type.name,
                                                 r.quantity, v_held);
    if v_error is not null then
      v_errors := app_hidden.add_error(v_errors, 'counters', v_error);
    end if;
    if r.counter_unit = r.type_unit and r.counter_id is not null then
      v_plan := v_plan || jsonb_build_object('counter_id', r.counter_id, 'code', r.code, 'year', r.year,
                                             'quantity', r.quantity);
    end if;
  end loop;
  return app_hidden.rule_outcome(v_errors) || jsonb_build_object('plan', v_plan);
end;
$$;
comment on function app_private.absence_rule_counters(app_hidden.absence_draft, app_public.absence_types, integer, jsonb) is
'SPEC Absences, declaration rule 9: each counter the type consumes needs an open counter for each civil
year of the period, in the unit of the type, with enough remaining (app_private.counter_request_error),
else an error under counters; "plan" lists the movements the absence would make. p_shares: the count
per year when the caller has it (app_private.absence_counter_plan).';

create or replace function app_private.absence_rule_agreement_warnings(p_draft app_hidden.absence_draft,
                                                                       p_type app_public.absence_types,
                                                                       p_is_polyvalent boolean,
                                                                       p_quantity numeric, p_exclude_id int)
returns jsonb
language plpgsql stable as $$
declare
  v_warnings jsonb := '[]'::jsonb;
  v_count int;
  v_total numeric;
  v_trial_end date;
begin
  if p_type.id is null then
    return app_hidden.rule_outcome();
  end if;
  if p_type.warn_max_hours_per_absence is not null and p_quantity > p_type.warn_max_hours_per_absence then
    v_warnings := v_warnings || to_jsonb(format(
      'Motif « %s » : %s demandées, au-delà des %s (trajet compris) prévues par l''accord.',
      p_type.name, app_hidden.quantity_fr(p_quantity, 'hour'), app_hidden.hours_fr(p_type.warn_max_hours_per_absence)));
  end if;
  if p_type.warn_max_per_quarter is not null then
    select count(*) into v_count from app_public.absences a
    where a.employee_id = p_draft.employee_id and a.type_id = p_type.id and app_hidden.absence_is_active(a.status)
      and a.id is distinct from p_exclude_id
      and date_trunc('quarter', a.date_start) = date_trunc('quarter', p_draft.date_start);
    if v_count + 1 > p_type.warn_max_per_quarter then
      v_warnings := v_warnings || to_jsonb(format(
        'Motif « %s » : l''accord en prévoit %s par trimestre civil ; %s autre(s) absence(s) de ce motif existe(nt) déjà au %se trimestre %s.',
        p_type.name, p_type.warn_max_per_quarter, v_count, extract(quarter from p_draft.date_start),
        extract(year from p_draft.date_start)));
    end if;
  end if;
  if p_type.warn_max_hours_per_year is not null then
    select p_quantity + coalesce(sum(a.counted_quantity), 0) into v_total from app_public.absences a
    where a.employee_id = p_draft.employee_id and a.type_id = p_type.id and app_hidden.absence_is_active(a.status)
      and a.id is distinct from p_exclude_id
      and extract(year from a.date_start) = extract(year from p_draft.date_start);
    if v_total > p_type.warn_max_hours_per_year then
      v_warnings := v_warnings || to_jsonb(format(
        'Motif « %s » : %s sur l''année %s avec cette demande, au-delà des %s par an prévues par l''accord.',
        p_type.name, app_hidden.quantity_fr(v_total, p_type.unit), extract(year from p_draft.date_start),
        app_hidden.quantity_fr(p_type.warn_max_hours_per_year, p_type.unit)));
    end if;
  end if;
  if p_type.warn_min_duration is not null and p_type.warn_max_duration is not null then
    if p_draft.date_end + 1 < p_draft.date_start + p_type.warn_min_duration or p_draft.date_end + 1 > p_draft.date_start + p_type.warn_max_duration then
      v_warnings := v_warnings || to_jsonb(format(
        'Motif « %s » : l''accord prévoit une durée de %s à %s.', p_type.name,
        app_hidden.interval_fr(p_type.warn_min_duration), app_hidden.interval_fr(p_type.warn_max_duration)));
    end if;
  elsif p_type.warn_max_duration is not null and p_draft.date_end + 1 > p_draft.date_start + p_type.warn_max_duration then
    v_warnings := v_warnings || to_jsonb(format(
      'Motif « %s » : durée supérieure aux %s prévus par l''accord.', p_type.name,
      app_hidden.interval_fr(p_type.warn_max_duration)));
  elsif p_type.warn_min_duration is not null and p_draft.date_end + 1 < p_draft.date_start + p_type.warn_min_duration then
    v_warnings := v_warnings || to_jsonb(format(
      'Motif « %s » : durée inférieure aux %s prévus par l''accord.', p_type.name,
      app_hidden.interval_fr(p_type.warn_min_duration)));
  end if;
  if p_type.warn_min_seniority is not null
     and coalesce((select min(c.start_date) from app_public.contracts c where c.employee_id = p_draft.employee_id), p_draft.date_start)
         + p_type.warn_min_seniority > p_draft.date_start then
    v_warnings := v_warnings || to_jsonb(format(
      'Motif « %s » : moins de %s d''ancienneté au %s (condition de l''accord).', p_type.name,
      app_hidden.interval_fr(p_type.warn_min_seniority), app_hidden.fr_date(p_draft.date_start)));
  end if;
  if p_is_polyvalent then
    select c.trial_end_date into v_trial_end from app_public.contracts c
    where c.employee_id = p_draft.employee_id and c.trial_end_date is not null
      and c.start_date <= p_draft.date_end and c.trial_end_date >= p_draft.date_start
    order by c.start_date desc limit 1;
    if found then
      v_warnings := v_warnings || to_jsonb(format(
        'Absence pendant la période d''essai d''un agent polyvalent (fin de la période d''essai le %s).',
        app_hidden.fr_date(v_trial_end)));
    end if;
  end if;
  return app_hidden.rule_outcome(p_warnings => v_warnings);
end;
$$;
comment on function app_private.absence_rule_agreement_warnings(app_hidden.absence_draft, app_public.absence_types, boolean, numeric, integer) is
'SPEC Absences, declaration rule 16: the agreement rules of the type only warn, never refuse (hours per
absence, absences per civil quarter, hours per year, duration bounds, seniority, trial period of a
polyvalent agent: p_is_polyvalent). p_quantity is the count of the draft.';

create or replace function app_private.absence_rule_notice_periods(p_draft app_hidden.absence_draft,
                                                                   p_type app_public.absence_types, p_base text,
                                                                   p_notice_from timestamptz)
returns jsonb
language plpgsql stable as $$
declare
  v_warnings jsonb := '[]'::jsonb;
  v_filed_on date := app_hidden.business_date(p_notice_from);
  v_limit date;
  v_notice interval;
  v_start_at timestamptz;
begin
  if p_notice_from is null or p_type.id is null then
    return app_hidden.rule_outcome();
  end if;
  if p_type.notice_working_days is not null then
    v_limit := app_hidden.add_working_days(v_filed_on, p_type.notice_working_days, p_base);
    if p_draft.date_start < v_limit then
      v_warnings := v_warnings || to_jsonb(format(
        'Délai de prévenance de %s jours %s non respecté pour le motif « %s » : demande du %s pour le %s.',
        p_type.notice_working_days, case when p_base = 'ouvres' then 'ouvrés' else 'ouvrables' end, p_type.name,
        app_hidden.fr_date(v_filed_on), app_hidden.fr_date(p_draft.date_start)));
    end if;
  end if;
  v_notice := p_type.notice_period;
  if p_type.notice_period_long is not null
     and not exists (select 1 from app_public.absences a
                     join app_public.absence_types t on t.id = a.type_id
                     where a.employee_id = p_draft.employee_id and t.code in ('MAT', 'ADO')
                       and app_hidden.absence_is_active(a.status)
                       and a.date_end between p_draft.date_start - app_hidden.notice_follow_days() and p_draft.date_start - 1) then
    -- Parental leave that does not directly follow a maternity or adoption leave.
    v_notice := p_type.notice_period_long;
  end if;
  if v_notice is not null then
    v_start_at := (p_draft.date_start + coalesce(p_draft.start_time, case when p_draft.start_half = 'afternoon' then time '12:00' else time '00:00' end))
                  at time zone app_hidden.business_timezone();
    if p_notice_from + v_notice > v_start_at then
      v_warnings := v_warnings || to_jsonb(format(
        'Délai de prévenance de %s non respecté pour le motif « %s » : demande du %s pour le %s.',
        app_hidden.interval_fr(v_notice), p_type.name, app_hidden.fr_date(v_filed_on), app_hidden.fr_date(p_draft.date_start)));
    end if;
  end if;
  return app_hidden.rule_outcome(p_warnings => v_warnings);
end;
$$;
comment on function app_private.absence_rule_notice_periods(app_hidden.absence_draft, app_public.absence_types, text, timestamptz) is
'SPEC Absences, declaration rule 16: the notice periods of the type (working days on base p_base, or a
duration; parental leave takes the long one unless it directly follows a maternity or adoption leave)
come out as warnings, for an employee''s own request only (p_notice_from: when it was filed; null: none).';

create or replace function app_private.absence_rule_event_conflicts(p_draft app_hidden.absence_draft, p_period tsrange)
returns jsonb
language plpgsql stable as $$
declare
  v_events jsonb := app_private.absence_event_conflicts(p_draft.employee_id, p_period);
begin
  if v_events = '[]'::jsonb then
    return app_hidden.rule_outcome() || jsonb_build_object('events', v_events);
  end if;
  return app_hidden.rule_outcome(p_warnings => (
           select coalesce(jsonb_agg(format('Conflit avec l''événement « %s » %s.', x.e ->> 'title',
                                            app_hidden.event_period_fr((x.e ->> 'start_at')::timestamptz,
                                                                       (x.e ->> 'end_at')::timestamptz))
                                     order by x.n), '[]'::jsonb)
           from jsonb_array_elements(v_events) with ordinality x(e, n)))
         || jsonb_build_object('events', v_events);
end;
$$;
comment on function app_private.absence_rule_event_conflicts(app_hidden.absence_draft, tsrange) is
'SPEC Events: an event of the employee during the absence is an alert, not a refusal: one warning per
event; "events" lists them for the alerts sent after the write.';

/*
 * Evaluates a draft against every declaration rule: reads the employee and the type once,
 * then composes the rule functions above in the order of their messages. Returns
 *   {"quantity": numeric|null, "unit": "day"|"hour"|null, "errors": {field: [msg]},
 *    "warnings": [msg], "plan": [{"counter_id", "code", "year", "quantity"}],
 *    "events": [{"id", "title", "start_at", "end_at"}]}
 * quantity is null when a rule refuses the absence (a counters error alone keeps it).
 *   p_exclude_id : the absence itself (edit, preview of a row, validation): excluded from
 *                  overlap, caps and splitting, and its own counter position is available.
 *   p_retro      : 'employee', 'manager' or null (app_private.absence_rule_retroactivity).
 *   p_notice_from: submission time of an employee's own request (notice periods), or null.
 *   p_today      : the business date.
 */
create or replace function app_private.absence_evaluate(p_draft app_hidden.absence_draft, p_exclude_id int, p_retro text,
                                             p_notice_from timestamptz, p_today date)
returns jsonb
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  d app_hidden.absence_draft := p_draft;
  v_errors jsonb;
  v_type app_public.absence_types;
  v_employee_found boolean := false;
  v_is_polyvalent boolean;
  v_base text;
  v_quantity numeric;
  v_shares jsonb;
  v_period tsrange;
  v_outcome jsonb;
  v_counters jsonb;
  v_events jsonb;
begin
  if d.employee_id is not null then
    select true, e.is_polyvalent into v_employee_found, v_is_polyvalent from app_public.employees e where e.id = d.employee_id;
  end if;
  if d.type_id is not null then
    select * into v_type from app_public.absence_types t where t.id = d.type_id and t.is_active;
  end if;
  if d.date_end is null then
    d.date_end := d.date_start;
  end if;
  v_outcome := app_hidden.outcomes_merge(array[
    app_private.absence_rule_identity(d, v_employee_found, v_type.id is not null),
    app_private.absence_rule_period(d),
    app_private.absence_rule_hourly(d, v_type),
    app_private.absence_rule_half_days(d, v_type)]);
  v_errors := v_outcome -> 'errors';

  -- Without a readable period and type, no other rule can run.
  if v_employee_found is not true or v_type.id is null or d.date_start is null
     or v_errors ?| array['date_start', 'date_end', 'start_half', 'end_half', 'start_time', 'end_time'] then
    return jsonb_build_object('quantity', null, 'unit', v_type.unit, 'errors', v_errors, 'warnings', '[]'::jsonb,
                              'plan', '[]'::jsonb, 'events', '[]'::jsonb);
  end if;

  -- Count (rules 1 and 5): app_hidden.absence_shares on the base read once, per civil year
  -- (the counters rule takes the shares instead of counting again).
  v_base := app_hidden.employee_count_base(d.employee_id);
  if v_type.unit = 'hour' then
    v_quantity := app_hidden.hours_between(d.start_time, d.end_time);
    v_shares := jsonb_build_array(jsonb_build_object('year', extract(year from d.date_start)::int, 'quantity', v_quantity));
  else
    select coalesce(sum(c.quantity), 0), coalesce(jsonb_agg(jsonb_build_object('year', c.year, 'quantity', c.quantity)), '[]'::jsonb)
      into v_quantity, v_shares
    from app_hidden.counted_days(v_base, d.date_start, d.date_end, d.start_half, d.end_half) c;
  end if;
  v_period := app_hidden.absence_period(d.date_start, d.date_end, d.start_half, d.end_half, d.start_time, d.end_time);

  -- The other rules, in the order of their messages. A rule that the type or the call rules out
  -- (its outcome would be empty) is not called: docs/architecture.md, Performance notes.
  v_counters := app_private.absence_rule_counters(d, v_type, p_exclude_id, v_shares);
  v_events := app_private.absence_rule_event_conflicts(d, v_period);
  v_outcome := app_hidden.outcomes_merge(array[
    v_outcome,
    case when v_quantity = 0 then app_private.absence_rule_count(v_quantity, v_base) end,
    case when p_retro is not null then app_private.absence_rule_retroactivity(d, p_retro, p_today) end,
    app_private.absence_rule_contract_types(d, v_type),
    app_private.absence_rule_overlap(d, v_period, p_exclude_id),
    case when v_type.annual_cap is not null then app_private.absence_rule_annual_cap(d, v_type, p_exclude_id) end,
    case when not v_type.splittable then app_private.absence_rule_non_splittable(d, v_type, v_base, v_period, p_exclude_id) end,
    v_counters,
    app_private.absence_rule_agreement_warnings(d, v_type, v_is_polyvalent, v_quantity, p_exclude_id),
    case when p_notice_from is not null then app_private.absence_rule_notice_periods(d, v_type, v_base, p_notice_from) end,
    v_events]);
  v_errors := v_outcome -> 'errors';

  return jsonb_build_object(
    'quantity', case when exists (select 1 from jsonb_object_keys(v_errors) k where k <> 'counters') then null
                     else v_quantity end,
    'unit', v_type.unit,
    'errors', v_errors,
    'warnings', v_outcome -> 'warnings',
    'plan', v_counters -> 'plan',
    'events', v_events -> 'events');
end;
$$;
--! EndIncluded absences/rules.sql
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
-- decision panel's hint (below) and the back-office's abilities (sql/backoffice/absences.sql).
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
--! Included backoffice/shift_change.sql
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
--! EndIncluded backoffice/shift_change.sql
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
