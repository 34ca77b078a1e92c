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
      'La consultation du journal d’audit est réservée aux comptes ayant la permission audit.view_actionlog et l’accès au back-office.',
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
    perform app_hidden.invalid('target_id', 'L’identifiant de la cible est un entier strictement positif.', 'WV601');
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
