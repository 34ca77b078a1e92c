-- /api/on-call-periods/: Admin, RH, DA and managers read and write the periods of their
-- perimeter; Service Paie reads only; Salarié and Intérimaire have no access (403).
-- A period touching the perimeter is readable; it is written only when all its
-- establishments lie in the writer's perimeter (otherwise 403).

create or replace function app_hidden.on_call_periods_json(p_ids int[]) returns table (id int, doc jsonb)
language sql stable as $$
  with establishments as (
    select ope.period_id, jsonb_agg(ope.establishment_id order by ope.establishment_id) as ids,
           jsonb_agg(e.name order by ope.establishment_id) as names
    from app_public.on_call_period_establishments ope
    join app_public.establishments e on e.id = ope.establishment_id
    where ope.period_id = any (p_ids)
    group by ope.period_id
  ),
  holders as (
    select * from app_hidden.account_names(array(select op.account_id from app_public.on_call_periods op
                                                 where op.id = any (p_ids)))
  )
  select op.id,
         jsonb_build_object('id', op.id, 'account', op.account_id, 'account_name', h.name,
                            'start_at', op.start_at, 'end_at', op.end_at,
                            'establishments', coalesce(est.ids, '[]'::jsonb),
                            'establishment_names', coalesce(est.names, '[]'::jsonb),
                            'comment', op.comment,
                            'is_current', op.start_at <= app_hidden.now() and app_hidden.now() < op.end_at,
                            'created_at', op.created_at, 'updated_at', op.updated_at)
  from app_public.on_call_periods op
  left join establishments est on est.period_id = op.id
  left join holders h on h.id = op.account_id
  where op.id = any (p_ids);
$$;

create or replace function app_hidden.require_on_call_access(p_write boolean) returns void
language plpgsql stable as $$
begin
  if not app_hidden.current_account_has('on_call.view_on_call_period')
     and not app_hidden.current_account_has('on_call.change_on_call_period') then
    perform app_hidden.forbidden('Vous n’avez pas accès aux astreintes.', 'WF540');
  end if;
  if p_write and not app_hidden.current_account_has('on_call.change_on_call_period') then
    perform app_hidden.forbidden('Vous consultez les astreintes sans pouvoir les modifier.', 'WF540');
  end if;
end;
$$;

-- Periods shown by the screens: those with an establishment in the caller's perimeter, and
-- the caller's own periods.
create or replace function app_hidden.on_call_screen_ids() returns setof int
language sql stable as $$
  select app_hidden.on_call_period_ids_in_perimeter('on_call.view_on_call_period')
  union
  select app_hidden.on_call_period_ids_in_perimeter('on_call.change_on_call_period')
  union
  select op.id from app_public.on_call_periods op where op.account_id = app_hidden.current_account_id();
$$;

-- GET /api/on-call-periods/?from=&to=&account=&establishment=
create or replace function app_public.on_call_periods_list(p_from date default null, p_to date default null,
                                                p_account int default null, p_establishment int default null,
                                                p_page int default 1, p_page_size int default 50)
returns jsonb
language plpgsql stable as $$
begin
  perform app_hidden.require_on_call_access(false);
  return (
    with filtered as (
      select op.id, op.start_at from app_public.on_call_periods op
      where op.id in (select app_hidden.on_call_screen_ids())
        and (p_from is null or op.end_at > (p_from::timestamp at time zone app_hidden.business_timezone()))
        and (p_to is null or op.start_at < ((p_to + 1)::timestamp at time zone app_hidden.business_timezone()))
        and (p_account is null or op.account_id = p_account)
        and (p_establishment is null or exists (select 1 from app_public.on_call_period_establishments ope
                                                where ope.period_id = op.id and ope.establishment_id = p_establishment))
    ),
    page as (
      select f.id, row_number() over (order by f.start_at, f.id) as ord
      from filtered f order by ord limit app_hidden.page_limit(p_page_size) offset app_hidden.page_offset(p_page, p_page_size)
    )
    select jsonb_build_object(
      'count', (select count(*) from filtered),
      'results', coalesce((select jsonb_agg(j.doc order by p.ord)
                           from page p join app_hidden.on_call_periods_json(array(select pg.id from page pg)) j on j.id = p.id),
                          '[]'::jsonb)));
end;
$$;
comment on function app_public.on_call_periods_list(date, date, integer, integer, integer, integer) is
'SPEC Permissions rule 9, GET /api/on-call-periods/: one page of the on-call periods with an
establishment in the caller''s perimeter, and its own, by start; filters by window, account and
establishment. Salarié and Intérimaire get 403.';

-- GET /api/on-call-periods/<id>/
create or replace function app_public.on_call_period_get(p_id int) returns jsonb
language plpgsql stable as $$
declare
  v_doc jsonb;
begin
  perform app_hidden.require_on_call_access(false);
  if p_id in (select app_hidden.on_call_screen_ids()) then
    select j.doc into v_doc from app_hidden.on_call_periods_json(array[p_id]) j;
  end if;
  if v_doc is null then
    perform app_hidden.not_found('Astreinte introuvable.');
  end if;
  return v_doc;
end;
$$;
comment on function app_public.on_call_period_get(integer) is
'SPEC Permissions rule 9, GET /api/on-call-periods/<id>/: one on-call period the caller''s screens show
(else 404), with is_current; Salarié and Intérimaire get 403.';

-- Can this account be on call at that time: does it hold a manager role whose perimeter the
-- period extends? ('unknown', 'inactive', 'no_role' or 'ok')
create or replace function app_private.on_call_eligibility(p_account int, p_at timestamptz) returns text
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select case when a.id is null then 'unknown'
              when not a.is_active then 'inactive'
              when not exists (select 1 from app_public.role_attributions ra
                               join app_public.role_permissions rp on rp.role_id = ra.role_id
                               where ra.account_id = a.id and rp.permission_code = 'absences.view_absence_queue'
                                 and app_hidden.date_in(app_hidden.business_date(p_at), ra.start_date, ra.end_date))
                then 'no_role'
              else 'ok' end
  from (select 1) x left join app_public.accounts a on a.id = p_account;
$$;

-- Another period of the same account overlapping [start, end), whatever the caller reads.
create or replace function app_private.on_call_overlap(p_account int, p_start timestamptz, p_end timestamptz, p_except int)
returns table (id int, start_at timestamptz, end_at timestamptz)
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select op.id, op.start_at, op.end_at from app_public.on_call_periods op
  where op.account_id = p_account and op.id is distinct from p_except
    and tstzrange(op.start_at, op.end_at) && tstzrange(p_start, p_end)
  order by op.start_at limit 1;
$$;

-- Creation and update of a period (PUT and creation: every key but the comment required;
-- PATCH: only the keys sent, p_sent; a null list of establishments leaves them as they are).
drop function if exists app_hidden.on_call_period_save(int, jsonb, boolean);
create or replace function app_hidden.on_call_period_save(p_id int, p_partial boolean, p_sent text[], p_account int,
                                                          p_start_at timestamptz, p_end_at timestamptz,
                                                          p_establishments int[], p_comment text) returns int
language plpgsql volatile as $$
declare
  v_old app_public.on_call_periods;
  v_scope int[] := app_hidden.perimeter_establishment_ids('on_call.change_on_call_period');
  v_errors jsonb := '{}';
  v_account int;
  v_start timestamptz;
  v_end timestamptz;
  v_comment text;
  v_establishments int[] := p_establishments;
  v_old_establishments int[] := '{}';
  v_outside text;
  v_eligibility text;
  v_overlap record;
  v_id int := p_id;
begin
  perform app_hidden.require_on_call_access(p_id is null);
  if p_id is not null then
    if not p_id in (select app_hidden.on_call_screen_ids()) then
      perform app_hidden.not_found('Astreinte introuvable.');
    end if;
    perform app_hidden.require_on_call_access(true);
    if not p_id in (select app_hidden.on_call_period_ids_in_perimeter('on_call.change_on_call_period', true)) then
      perform app_hidden.forbidden('Cette astreinte couvre aussi des établissements hors de votre périmètre : '
                                   'vous ne pouvez pas la modifier.', 'WF541');
    end if;
    select * into v_old from app_public.on_call_periods op where op.id = p_id for update;
    v_old_establishments := array(select ope.establishment_id from app_public.on_call_period_establishments ope
                                  where ope.period_id = p_id);
  end if;

  if app_hidden.id_list_refusal(v_establishments) is not null then
    perform app_hidden.invalid('establishments', app_hidden.id_list_refusal(v_establishments));
  end if;

  v_account := case when app_hidden.sent(p_sent, 'account', p_account is not null) then p_account else v_old.account_id end;
  v_start := case when app_hidden.sent(p_sent, 'start_at', p_start_at is not null) then p_start_at else v_old.start_at end;
  v_end := case when app_hidden.sent(p_sent, 'end_at', p_end_at is not null) then p_end_at else v_old.end_at end;
  if v_account is null then
    v_errors := app_hidden.add_error(v_errors, 'account', 'Le compte d’astreinte est obligatoire.');
  end if;
  if v_start is null then
    v_errors := app_hidden.add_error(v_errors, 'start_at', 'Le début est obligatoire.');
  end if;
  if v_end is null then
    v_errors := app_hidden.add_error(v_errors, 'end_at', 'La fin est obligatoire.');
  elsif v_end <= v_start then
    v_errors := app_hidden.add_error(v_errors, 'end_at', 'La fin doit suivre le début.');
  end if;
  if v_account is not null and v_start is not null
     and (v_account is distinct from v_old.account_id or v_start is distinct from v_old.start_at) then
    v_eligibility := app_private.on_call_eligibility(v_account, v_start);
    if v_eligibility = 'unknown' then
      v_errors := app_hidden.add_error(v_errors, 'account', format('Compte n° %s introuvable.', v_account));
    elsif v_eligibility = 'inactive' then
      v_errors := app_hidden.add_error(v_errors, 'account', 'Ce compte est fermé.');
    elsif v_eligibility = 'no_role' then
      v_errors := app_hidden.add_error(v_errors, 'account',
        'Ce compte ne détient aucun rôle d’encadrement à cette date : une astreinte étend le périmètre d’un rôle existant.');
    end if;
  end if;
  if v_account is not null and v_end > v_start then
    select * into v_overlap from app_private.on_call_overlap(v_account, v_start, v_end, p_id);
    if v_overlap.id is not null then
      v_errors := app_hidden.add_error(v_errors, 'start_at',
        format('Ce compte est déjà d’astreinte sur cette période (astreinte n° %s, du %s au %s).', v_overlap.id,
               to_char(v_overlap.start_at at time zone app_hidden.business_timezone(), 'DD/MM/YYYY HH24:MI'),
               to_char(v_overlap.end_at at time zone app_hidden.business_timezone(), 'DD/MM/YYYY HH24:MI')));
    end if;
  end if;

  v_comment := case when app_hidden.sent(p_sent, 'comment', p_comment is not null) then app_hidden.trimmed(p_comment)
                    else v_old.comment end;
  if char_length(v_comment) > app_hidden.on_call_comment_max_length() then
    v_errors := app_hidden.add_error(v_errors, 'comment', app_hidden.max_length_message(app_hidden.on_call_comment_max_length()));
  end if;

  if v_establishments is null and (p_id is null or not p_partial) then
    v_errors := app_hidden.add_error(v_errors, 'establishments', 'Choisissez au moins un établissement.');
  elsif v_establishments is not null then
    if cardinality(v_establishments) = 0 then
      v_errors := app_hidden.add_error(v_errors, 'establishments', 'Choisissez au moins un établissement.');
    elsif exists (select 1 from unnest(v_establishments) x(id)
                  where not exists (select 1 from app_public.establishments e where e.id = x.id)) then
      v_errors := app_hidden.add_error(v_errors, 'establishments',
        format('Établissement introuvable : %s.', (select string_agg(x.id::text, ', ') from unnest(v_establishments) x(id)
                                                   where not exists (select 1 from app_public.establishments e where e.id = x.id))));
    elsif v_scope is not null then
      select string_agg(e.name, ', ' order by e.name) into v_outside
      from unnest(v_establishments) x(id) join app_public.establishments e on e.id = x.id
      where not x.id = any (v_scope);
      if v_outside is not null then
        v_errors := app_hidden.add_error(v_errors, 'establishments', format('Hors de votre périmètre : %s.', v_outside));
      end if;
    end if;
  end if;
  perform app_hidden.invalid_fields(v_errors, 'WV540') where v_errors <> '{}'::jsonb;

  begin
    if p_id is null then
      insert into app_public.on_call_periods (account_id, start_at, end_at, comment)
      values (v_account, v_start, v_end, v_comment);
      -- Not RETURNING: the new row is not yet in the snapshot the read policy consults.
      v_id := currval(pg_get_serial_sequence('app_public.on_call_periods', 'id'));
    else
      update app_public.on_call_periods op
      set account_id = v_account, start_at = v_start, end_at = v_end, comment = v_comment
      where op.id = p_id and (op.account_id, op.start_at, op.end_at, op.comment)
                             is distinct from (v_account, v_start, v_end, v_comment);
    end if;
  exception when exclusion_violation then
    -- A concurrent write took the interval between the check above and this write.
    perform app_hidden.invalid('start_at', 'Ce compte est déjà d’astreinte sur cette période.', 'WV540');
  end;
  if v_establishments is not null then
    delete from app_public.on_call_period_establishments ope
    where ope.period_id = v_id and not ope.establishment_id = any (v_establishments);
    insert into app_public.on_call_period_establishments (period_id, establishment_id)
    select v_id, x.id from unnest(v_establishments) x(id)
    on conflict do nothing;
  end if;
  return v_id;
end;
$$;

-- POST /api/on-call-periods/
drop function if exists app_public.on_call_period_create(jsonb);
create or replace function app_public.on_call_period_create(p_account int, p_start_at timestamptz, p_end_at timestamptz,
                                                            p_establishments int[], p_comment text default null) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_id int;
begin
  -- Two statements: the read sees the write (a stable function keeps its caller's snapshot).
  v_id := app_hidden.on_call_period_save(null, false, null, p_account, p_start_at, p_end_at, p_establishments, p_comment);
  return app_public.on_call_period_get(v_id);
end;
$$;
comment on function app_public.on_call_period_create(integer, timestamptz, timestamptz, integer[], text) is
'SPEC Permissions rule 9, POST /api/on-call-periods/: a writer of on-call periods (not Service Paie)
creates one for an active account holding a manager role, all its establishments in the writer''s
perimeter (else 403), not overlapping another period of that account; it extends that role''s perimeter
from start (inclusive) to end (exclusive).';

-- PATCH /api/on-call-periods/<id>/: only the keys sent (p_sent).
drop function if exists app_public.on_call_period_update(int, jsonb);
create or replace function app_public.on_call_period_update(p_id int, p_account int default null, p_start_at timestamptz default null,
                                                            p_end_at timestamptz default null, p_establishments int[] default null,
                                                            p_comment text default null, p_sent text[] default null) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_id int;
begin
  -- Two statements: the read sees the write (a stable function keeps its caller's snapshot).
  v_id := app_hidden.on_call_period_save(p_id, true, p_sent, p_account, p_start_at, p_end_at, p_establishments, p_comment);
  return app_public.on_call_period_get(v_id);
end;
$$;
comment on function app_public.on_call_period_update(integer, integer, timestamptz, timestamptz, integer[], text, text[]) is
'SPEC Permissions rule 9, PATCH /api/on-call-periods/<id>/: changes the keys sent (p_sent) of a period
whose establishments all lie in the writer''s perimeter (else 403), under the creation rules.';

-- PUT /api/on-call-periods/<id>/: account, start_at, end_at and establishments required.
drop function if exists app_public.on_call_period_replace(int, jsonb);
create or replace function app_public.on_call_period_replace(p_id int, p_account int default null, p_start_at timestamptz default null,
                                                             p_end_at timestamptz default null, p_establishments int[] default null,
                                                             p_comment text default null, p_sent text[] default null) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_id int;
begin
  -- Two statements: the read sees the write (a stable function keeps its caller's snapshot).
  v_id := app_hidden.on_call_period_save(p_id, false, p_sent, p_account, p_start_at, p_end_at, p_establishments, p_comment);
  return app_public.on_call_period_get(v_id);
end;
$$;
comment on function app_public.on_call_period_replace(integer, integer, timestamptz, timestamptz, integer[], text, text[]) is
'SPEC Permissions rule 9, PUT /api/on-call-periods/<id>/: as PATCH, with account, start_at, end_at and
establishments required.';

-- DELETE /api/on-call-periods/<id>/
create or replace function app_public.on_call_period_delete(p_id int) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  perform app_hidden.require_on_call_access(false);
  if not p_id in (select app_hidden.on_call_screen_ids()) then
    perform app_hidden.not_found('Astreinte introuvable.');
  end if;
  perform app_hidden.require_on_call_access(true);
  if not p_id in (select app_hidden.on_call_period_ids_in_perimeter('on_call.change_on_call_period', true)) then
    perform app_hidden.forbidden('Cette astreinte couvre aussi des établissements hors de votre périmètre : '
                                 'vous ne pouvez pas la supprimer.', 'WF541');
  end if;
  delete from app_public.on_call_periods op where op.id = p_id;
  return null;
end;
$$;
comment on function app_public.on_call_period_delete(integer) is
'SPEC Permissions rule 9, DELETE /api/on-call-periods/<id>/: deletes a period whose establishments all
lie in the writer''s perimeter (else 403).';
