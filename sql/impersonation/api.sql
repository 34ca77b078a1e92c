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
    perform app_hidden.not_found('L’emprunt d’identité n’est pas activé sur ce service.', 'WN570');
  end if;
  if nullif(current_setting('app.impersonator_id', true), '') is not null then
    perform app_hidden.forbidden('Vous empruntez déjà l’identité d’un compte : reprenez d’abord votre propre session.', 'WF571');
  end if;
  if not app_hidden.current_account_is_superuser() then
    perform app_hidden.forbidden('Seul un superutilisateur peut emprunter l’identité d’un compte.', 'WF570');
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
    perform app_hidden.forbidden('L’identité d’un autre superutilisateur ne peut pas être empruntée.', 'WF572');
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

-- POST /api/auth/impersonate/end/: the superuser gives the borrowed identity back (the client
-- then takes its own token again). One audit line impersonation_ended (model account_security,
-- target the borrowed account, by the superuser). Off, like the start, unless the REST route
-- turned it on; called without an impersonation token: 400 under non_field_errors.
create or replace function app_public.impersonation_end() returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_impersonator int := nullif(current_setting('app.impersonator_id', true), '')::int;
  v_account int := app_hidden.current_account_id();
begin
  if coalesce(current_setting('app.allow_impersonation', true), '') <> 'on' then
    perform app_hidden.not_found('L’emprunt d’identité n’est pas activé sur ce service.', 'WN570');
  end if;
  if v_impersonator is null then
    perform app_hidden.invalid('non_field_errors', 'Vous n’empruntez aucune identité : il n’y a rien à terminer.', 'WV571');
  end if;
  perform app_private.audit_security_event(v_account, 'impersonation_ended',
    jsonb_build_object('impersonator', v_impersonator,
                       'impersonator_username', (select t.username from app_private.impersonation_target(v_impersonator) t)),
    v_impersonator);
  return jsonb_build_object('account', v_account, 'impersonator', v_impersonator, 'ended', true);
end;
$$;
-- Its comment (hidden from GraphQL) is in sql/graphql.sql.
