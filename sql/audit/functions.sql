-- Audit lines, written by triggers only (never by application code).
--
-- Attach to a table with:
--   create trigger _500_audit after insert or update on <table>
--     for each row execute function app_private.tg_audit('<model>');
--   create trigger _500_audit_delete before delete on <table>
--     for each row execute function app_private.tg_audit('<model>');
-- The deletion line is written by the BEFORE trigger, before the row is erased, in the same
-- transaction. A transition function names its verb (Validation, Refus, Correction, ...)
-- with app_private.set_audit_verb() before its update; otherwise updates are Modification.

create function app_private.set_audit_verb(p_verb text) returns void
language sql volatile as $$
  select set_config('app.audit_verb', coalesce(p_verb, ''), true);
$$;

create function app_private.write_audit(p_verb text, p_model text, p_target_id bigint, p_before jsonb, p_after jsonb)
returns void
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_actor int := app_hidden.current_account_id();
  v_impersonator int := nullif(current_setting('app.impersonator_id', true), '')::int;
begin
  insert into app_private.audit_log (actor_account_id, actor_username, actor_display_name,
                                     impersonator_account_id, impersonator_username,
                                     verb, model, target_id, before, after)
  values (v_actor,
          (select a.username from app_public.accounts a where a.id = v_actor),
          app_hidden.account_display_name(v_actor),
          v_impersonator,
          (select a.username from app_public.accounts a where a.id = v_impersonator),
          p_verb, p_model, p_target_id, p_before, p_after);
end;
$$;

create function app_private.tg_audit() returns trigger
language plpgsql security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_model text := tg_argv[0];
begin
  if tg_op = 'INSERT' then
    perform app_private.write_audit('Creation', v_model, (to_jsonb(new) ->> 'id')::bigint, null, to_jsonb(new));
    return new;
  elsif tg_op = 'UPDATE' then
    perform app_private.write_audit(coalesce(nullif(current_setting('app.audit_verb', true), ''), 'Modification'),
                                    v_model, (to_jsonb(new) ->> 'id')::bigint, to_jsonb(old), to_jsonb(new));
    return new;
  else
    perform app_private.write_audit('Suppression', v_model, (to_jsonb(old) ->> 'id')::bigint, to_jsonb(old), null);
    return old;
  end if;
end;
$$;
