-- Security events of accounts (issue 25, findings 3 and 4): each is one audit line (verb
-- Securite, model account_security, target the account concerned; who acted, when and from which
-- address; never a secret), and the events that put an account's credentials in doubt end
-- every session of that account: its back-office sessions are deleted and its credential
-- generation (app_public.accounts.token_generation) is raised, so that every API token issued
-- before is refused by the next request's prelude (app_private.begin_request).
--
-- The events (after.event):
--   login_refused            a right password on an account in a locked state (closed)
--   factor_enrolled          a second factor confirmed (its backup codes are new)
--   factor_removed           a verified superuser removed an account's second factor
--   backup_code_used         a backup code replaced the app's code at a back-office login
--   backup_codes_regenerated new backup codes replaced the unused ones
--   password_changed         the password hash changed otherwise than by a link
--   password_reset           the password was set through a reset or invitation link
--   sessions_ended           every session and token of the account ended (with the cause)
--   impersonation_ended      a superuser gave back the identity it had borrowed
-- (impersonation_started is the line of verb Impersonation, sql/impersonation/api.sql.)

create or replace function app_private.security_event_names() returns text[]
language sql immutable as $$
  select array['login_refused', 'factor_enrolled', 'factor_removed', 'backup_code_used', 'backup_codes_regenerated',
               'password_changed', 'password_reset', 'sessions_ended', 'impersonation_ended'];
$$;

-- Writes the line of one event on account p_account. p_actor: who acted (the account itself
-- at its own login, a superuser removing a factor); null takes the request's acting account.
-- p_details holds no secret (the callers pass counts and causes only).
create or replace function app_private.audit_security_event(p_account int, p_event text, p_details jsonb default '{}'::jsonb,
                                                            p_actor int default null)
returns void
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_actor int := coalesce(p_actor, app_hidden.current_account_id());
begin
  if p_account is null then
    raise exception 'audit_security_event: the account is required';
  end if;
  if p_event is null or not (p_event = any (app_private.security_event_names())) then
    raise exception 'audit_security_event: unknown event %', p_event;
  end if;
  perform app_private.write_audit_as(
    v_actor,
    case when p_actor is null then nullif(current_setting('app.impersonator_id', true), '')::int end,
    'Securite', 'account_security', p_account, null,
    jsonb_build_object('event', p_event, 'account', p_account,
                       'username', (select a.username from app_public.accounts a where a.id = p_account),
                       'address', nullif(current_setting('app.client_address', true), ''))
      || coalesce(p_details, '{}'::jsonb));
end;
$$;

-- Ends every session of an account: its back-office sessions are deleted and its credential
-- generation raised (every API token issued before is refused from the next request on). One
-- audit line sessions_ended with the cause. Returns the number of back-office sessions ended.
-- p_raise_generation false: the caller raises it itself (the closing trigger, on the row it updates).
create or replace function app_private.end_account_sessions(p_account int, p_cause text, p_actor int default null,
                                                            p_raise_generation boolean default true)
returns int
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_sessions int;
begin
  if p_cause is null or p_cause not in ('password_changed', 'password_reset', 'account_closed', 'factor_removed') then
    raise exception 'end_account_sessions: unknown cause %', p_cause;
  end if;
  if p_raise_generation then
    update app_public.accounts set token_generation = token_generation + 1 where id = p_account;
  end if;
  delete from app_private.backoffice_sessions s where s.account_id = p_account;
  get diagnostics v_sessions = row_count;
  perform app_private.audit_security_event(p_account, 'sessions_ended',
    jsonb_build_object('cause', p_cause, 'backoffice_sessions', v_sessions), p_actor);
  return v_sessions;
end;
$$;

-- Tells an account of a security event: an in-app notification, and an e-mail when its
-- employee record has a professional address.
create or replace function app_private.tell_account_security(p_account int, p_title text, p_body text) returns void
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_email text := app_private.account_email(p_account);
begin
  perform app_private.notify(p_account, p_title, p_body, 'warning', 'account', p_account);
  if v_email is not null then
    insert into app_private.email_outbox (kind, to_address, subject, body_text, account_id)
    values ('security_notice', v_email, p_title,
            format(E'Bonjour,\n\n%s\n\nSi vous n’êtes pas à l’origine de ce changement et n’en avez pas été prévenu, '
                   'adressez-vous sans attendre au service des ressources humaines ou à l’administrateur.', p_body),
            p_account);
  end if;
end;
$$;

-- A password hash that changes ends the account's sessions (whatever writes it: the reset
-- link, a future change form, a DBA). The reset link names itself (app.password_change =
-- 'reset' or 'invitation', set by app_private.password_reset_confirm); any other change is
-- password_changed. Setting the first password of an account that had none ends nothing (it
-- had no session) but is audited the same; removing the password (a null hash) ends them.
create or replace function app_private.tg_account_secrets__password_changed() returns trigger
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_via text := nullif(current_setting('app.password_change', true), '');
  v_event text := case when v_via in ('reset', 'invitation') then 'password_reset' else 'password_changed' end;
begin
  perform app_private.audit_security_event(new.account_id, v_event,
    case when v_via in ('reset', 'invitation') then jsonb_build_object('via', v_via) else '{}'::jsonb end,
    -- Through a link, the person holding it acts for the account (there is no acting account yet).
    case when v_via in ('reset', 'invitation') then new.account_id end);
  if old.password_hash is not null then
    perform app_private.end_account_sessions(new.account_id, v_event,
      case when v_via in ('reset', 'invitation') then new.account_id end);
  end if;
  return new;
end;
$$;
create or replace trigger _600_password_changed after update of password_hash on app_private.account_secrets
  for each row when (old.password_hash is distinct from new.password_hash)
  execute function app_private.tg_account_secrets__password_changed();

-- Closing an account ends its sessions in the same update: the generation is raised on the row
-- itself (an AFTER trigger could not update it again without a second line), the back-office
-- sessions are deleted. Reopening it later revives no earlier token.
create or replace function app_private.tg_accounts__closed() returns trigger
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  new.token_generation := old.token_generation + 1;
  perform app_private.end_account_sessions(new.id, 'account_closed', null, false);
  return new;
end;
$$;
create or replace trigger _100_closed before update of is_active on app_public.accounts
  for each row when (old.is_active and not new.is_active)
  execute function app_private.tg_accounts__closed();

-- A right password given for a closed account (API token or back-office login): refused by
-- the caller with the same answer as a wrong password, and audited here.
create or replace function app_private.login_refused(p_account int, p_surface text) returns void
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  if p_surface is null or p_surface not in ('api', 'backoffice') then
    raise exception 'login_refused: unknown surface %', p_surface;
  end if;
  perform app_private.audit_security_event(p_account, 'login_refused',
    jsonb_build_object('reason', 'account_closed', 'surface', p_surface), p_account);
end;
$$;

grant execute on function app_private.login_refused(int, text) to wfm_authenticator;
