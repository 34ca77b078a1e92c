-- Dated delegations of decisions (issue 30): rules, decisions by delegation, routes.
--
-- | who                                    | creates                        | ends                 | reads         |
-- |----------------------------------------|--------------------------------|----------------------|---------------|
-- | a decider (decide_absence or           | for themself, own rights only  | their own            | given, received|
-- |   decide_shift_change held itself)     |                                |                      |               |
-- | RH n1 / RH n2 / Admin (own role), or a | for an absent decider of their | those of deciders of | those of their|
-- |                                        | perimeter (granted absence over| their perimeter      | perimeter     |
-- |                                        | the interval)                  |                      |               |
-- |   superuser                            |                                |                      |               |
-- | the delegate                           | never re-delegates (no chains) | no                   | received      |
--
-- The delegate's effective perimeter is extended in sql/perimeter.sql (account_permission_codes,
-- permission_scopes); the decisions by delegation are checked and recorded here
-- (on_behalf_of, audit « X, par délégation de Y », the requester's notification).

alter table app_public.absences add column if not exists on_behalf_of int references app_public.accounts on delete set null;
alter table app_public.absences add column if not exists cancellation_on_behalf_of int
  references app_public.accounts on delete set null;
alter table app_public.shift_change_requests add column if not exists on_behalf_of int
  references app_public.accounts on delete set null;

insert into app_private.audit_models (model, label) values
  ('delegation', 'Délégation de décision'),
  ('delegation_establishment', 'Établissement d’une délégation')
on conflict do nothing;

-- The perimeters kept for a transaction are recomputed after a write to the delegations.
do $$
declare
  t text;
begin
  foreach t in array array['delegations', 'delegation_establishments'] loop
    execute format('create or replace trigger _050_perimeter_changed after insert or update or delete or truncate on app_public.%I
                    for each statement execute function app_hidden.tg__perimeter_changed()', t);
  end loop;
end;
$$;

-- Does the account manage the delegations of others: an active RH n1, RH n2 or Admin role of
-- its own today (the Admin holds every right of RH), or an active superuser? Never NULL.
create or replace function app_hidden.account_is_hr(p_account int) returns boolean
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  return coalesce(exists (select 1 from app_public.accounts a where a.id = p_account and a.is_active and a.is_superuser)
                  or exists (select 1 from app_public.role_attributions ra
                             join app_public.roles r on r.id = ra.role_id
                             join app_public.accounts a on a.id = ra.account_id and a.is_active
                             where ra.account_id = p_account and r.name in ('Admin', 'RH n1', 'RH n2')
                               and app_hidden.date_in(app_hidden.today(), ra.start_date, ra.end_date)), false);
end;
$$;

-- The back-office's « Délégations » page is offered to the signed-in account when it is HR (never null).
create or replace function app_hidden.current_account_is_hr() returns boolean
language sql stable as $$
  select coalesce(app_hidden.account_is_hr(app_hidden.current_account_id()), false);
$$;


-- The delegators on whose behalf the account may use the permission on the employee at that
-- time: delegations in force handing the permission, whose delegator (active) covers the
-- employee itself over the delegation's establishments, the delegator's own requests
-- excluded (nobody decides for the person who delegated to them). Ordered by delegator id.
create or replace function app_hidden.delegators_for(p_account int, p_permission text, p_employee int, p_at timestamptz)
returns setof int
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_day date := app_hidden.business_date(p_at);
begin
  if p_employee is null or p_account is null then
    return;
  end if;
  return query
  select distinct d.delegator_account_id
  from app_public.delegations d
  join app_public.accounts da on da.id = d.delegator_account_id and da.is_active
  where d.delegate_account_id = p_account
    and app_hidden.delegation_active(d.start_date, d.end_date, d.ended_at, p_at)
    and app_hidden.delegation_grants(d.kinds, p_permission)
    and da.employee_id is distinct from p_employee
    and app_hidden.may_own(d.delegator_account_id, p_permission, p_employee, p_at)
    and (d.all_establishments
         or exists (select 1 from app_public.delegation_establishments de
                    where de.delegation_id = d.id
                      and de.establishment_id in (select app_hidden.employee_establishments(p_employee, v_day))))
  order by 1;
end;
$$;

-- A decision by the acting account on the employee: null when its own rights cover it, else
-- the delegator it decides for (the first); refuses (403) a decision that only a delegation
-- from the employee themself would allow. Sets app.on_behalf_of for the transaction (the audit
-- lines and the requester's notification name both people).
create or replace function app_hidden.delegation_decision_check(p_permission text, p_employee int) returns int
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_account int := app_hidden.current_account_id();
  v_at timestamptz := app_hidden.now();
  v_delegator int;
begin
  if app_hidden.may_own(v_account, p_permission, p_employee, v_at) then
    return null;
  end if;
  select x into v_delegator from app_hidden.delegators_for(v_account, p_permission, p_employee, v_at) x limit 1;
  if v_delegator is null then
    -- No delegation covers it: the caller's other checks decided (the back-office, a
    -- superuser); only a delegation from the employee themself is refused here.
    if not exists (select 1 from app_public.delegations d
                   join app_public.accounts da on da.id = d.delegator_account_id
                   where d.delegate_account_id = v_account and da.employee_id = p_employee
                     and app_hidden.delegation_active(d.start_date, d.end_date, d.ended_at, v_at)
                     and app_hidden.delegation_grants(d.kinds, p_permission)) then
      return null;
    end if;
    perform app_hidden.forbidden(
      'Vous décidez ici par délégation : une délégation ne permet pas de décider des demandes de la personne qui l’a donnée.',
      'WF803');
  end if;
  perform set_config('app.on_behalf_of', v_delegator::text, true);
  return v_delegator;
end;
$$;

create or replace function app_hidden.on_behalf_of_id() returns int
language sql stable parallel safe as $$
  select nullif(current_setting('app.on_behalf_of', true), '')::int;
$$;

-- Decisions record both names: decided_by (the delegate) and on_behalf_of (the delegator).
create or replace function app_private.tg_absences__on_behalf_of() returns trigger
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  if new.decided_by is distinct from old.decided_by and new.decided_by is not null
     and new.decided_by = app_hidden.current_account_id() then
    new.on_behalf_of := app_hidden.delegation_decision_check('absences.decide_absence', new.employee_id);
  end if;
  if new.cancellation_decided_by is not null
     and new.cancellation_decided_at is distinct from old.cancellation_decided_at
     and new.cancellation_decided_by = app_hidden.current_account_id() then
    new.cancellation_on_behalf_of := app_hidden.delegation_decision_check('absences.decide_absence', new.employee_id);
  end if;
  return new;
end;
$$;
create or replace trigger _200_on_behalf_of before update on app_public.absences
  for each row execute function app_private.tg_absences__on_behalf_of();

create or replace function app_private.tg_shift_change_requests__on_behalf_of() returns trigger
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  if new.decided_by is distinct from old.decided_by and new.decided_by is not null
     and new.decided_by = app_hidden.current_account_id() then
    new.on_behalf_of := app_hidden.delegation_decision_check('planning.decide_shift_change', new.employee_id);
  end if;
  return new;
end;
$$;
create or replace trigger _200_on_behalf_of before update on app_public.shift_change_requests
  for each row execute function app_private.tg_shift_change_requests__on_behalf_of();

-- The queue's mark (issue 30, « par délégation de X »): does the acting account hold a
-- delegation in force now (one check per list, app_hidden.current_account_has_delegation), and
-- the delegator through whom it sees this employee's requests: null when its own queue shows
-- them (or when it holds no delegation).
create or replace function app_hidden.current_account_has_delegation() returns boolean
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  return coalesce(exists (select 1 from app_public.delegations d
                          where d.delegate_account_id = app_hidden.current_account_id()
                            and app_hidden.delegation_active(d.start_date, d.end_date, d.ended_at, app_hidden.now())), false);
end;
$$;

create or replace function app_hidden.delegation_mark(p_employee int) returns text
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_account int := app_hidden.current_account_id();
  v_at timestamptz := app_hidden.now();
begin
  if p_employee is null or v_account is null
     or app_hidden.may_own(v_account, 'absences.view_absence_queue', p_employee, v_at) then
    return null;
  end if;
  return (select n.name
          from app_public.delegations d
          join app_public.accounts da on da.id = d.delegator_account_id and da.is_active
          join app_hidden.account_names(array[d.delegator_account_id]) n on true
          where d.delegate_account_id = v_account
            and app_hidden.delegation_active(d.start_date, d.end_date, d.ended_at, v_at)
            and app_hidden.may_own(d.delegator_account_id, 'absences.view_absence_queue', p_employee, v_at)
            and (d.all_establishments
                 or exists (select 1 from app_public.delegation_establishments de
                            where de.delegation_id = d.id
                              and de.establishment_id in (select app_hidden.employee_establishments(p_employee,
                                                                                                   app_hidden.business_date(v_at)))))
          order by d.delegator_account_id
          limit 1);
end;
$$;

-- « X, par délégation de Y »: the display name of an account deciding for another.
create or replace function app_hidden.delegated_name(p_account int, p_on_behalf_of int) returns text
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select concat((select n.name from app_hidden.account_names(array[p_account]) n),
                ', par délégation de ', (select n.name from app_hidden.account_names(array[p_on_behalf_of]) n));
$$;

-- The requester's notification of a decision by delegation names both people.
create or replace function app_private.tg_notifications__on_behalf_of() returns trigger
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_for int := app_hidden.on_behalf_of_id();
begin
  if v_for is not null and new.model in ('absence', 'shift_change_request')
     and app_hidden.current_account_id() is not null then
    new.body := new.body || ' Décision de ' || app_hidden.delegated_name(app_hidden.current_account_id(), v_for) || '.';
  end if;
  return new;
end;
$$;
create or replace trigger _200_on_behalf_of before insert on app_public.notifications
  for each row execute function app_private.tg_notifications__on_behalf_of();

-- ---------------------------------------------------------------------------------------
-- Reading: the delegator, the delegate, the author, and RH over the delegator's perimeter.
create or replace function app_hidden.readable_delegation_ids() returns setof int
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_account int := app_hidden.current_account_id();
begin
  if v_account is null then
    return;
  end if;
  return query
  select d.id from app_public.delegations d
  where d.delegator_account_id = v_account or d.delegate_account_id = v_account or d.created_by = v_account
  union
  select d.id from app_public.delegations d
  join app_public.accounts a on a.id = d.delegator_account_id
  where app_hidden.account_is_hr(v_account)
    and app_hidden.may(v_account, 'employee.change_employee_record', a.employee_id);
end;
$$;

alter table app_public.delegations enable row level security;
alter table app_public.delegation_establishments enable row level security;
drop policy if exists select_readable on app_public.delegations;
create policy select_readable on app_public.delegations for select to wfm_visitor, wfm_api
  using ((select app_hidden.current_account_id()) in (delegator_account_id, delegate_account_id, created_by)
         or id in (select app_hidden.readable_delegation_ids()));
drop policy if exists select_readable on app_public.delegation_establishments;
create policy select_readable on app_public.delegation_establishments for select to wfm_visitor, wfm_api
  using (delegation_id in (select app_hidden.readable_delegation_ids()));
-- Writes: app_public.delegation_create and delegation_end (which check every rule) run as
-- wfm_api; the policies bound them to the author's own delegations or, for RH, those of the
-- deciders of their perimeter.
drop policy if exists insert_author on app_public.delegations;
create policy insert_author on app_public.delegations for insert to wfm_api
  with check (created_by = (select app_hidden.current_account_id())
              and (delegator_account_id = (select app_hidden.current_account_id())
                   or (select app_hidden.account_is_hr(app_hidden.current_account_id()))));
drop policy if exists update_readable on app_public.delegations;
create policy update_readable on app_public.delegations for update to wfm_api
  using (id in (select app_hidden.readable_delegation_ids()))
  with check (id in (select app_hidden.readable_delegation_ids()));
drop policy if exists insert_author on app_public.delegation_establishments;
create policy insert_author on app_public.delegation_establishments for insert to wfm_api
  with check (exists (select 1 from app_public.delegations d
                      where d.id = delegation_id and d.created_by = (select app_hidden.current_account_id())));

create or replace trigger _500_audit after insert or update on app_public.delegations
  for each row execute function app_private.tg__audit('delegation');
create or replace trigger _500_audit_delete before delete on app_public.delegations
  for each row execute function app_private.tg__audit('delegation');
create or replace trigger _500_audit after insert or update on app_public.delegation_establishments
  for each row execute function app_private.tg__audit_child('delegation_establishment', 'delegation_id');
create or replace trigger _500_audit_delete before delete on app_public.delegation_establishments
  for each row execute function app_private.tg__audit_child('delegation_establishment', 'delegation_id');

create or replace function app_hidden.delegations_json(p_ids int[]) returns table (id int, doc jsonb)
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  with est as (
    select de.delegation_id, jsonb_agg(de.establishment_id order by de.establishment_id) as ids,
           jsonb_agg(e.name order by de.establishment_id) as names
    from app_public.delegation_establishments de
    join app_public.establishments e on e.id = de.establishment_id
    where de.delegation_id = any (p_ids)
    group by de.delegation_id
  ),
  names as (
    select * from app_hidden.account_names(array(
      select x from app_public.delegations d,
             unnest(array[d.delegator_account_id, d.delegate_account_id, d.created_by, d.ended_by]) x
      where d.id = any (p_ids) and x is not null))
  )
  select d.id,
         jsonb_build_object('id', d.id,
                            'delegator', d.delegator_account_id, 'delegator_name', n1.name,
                            'delegate', d.delegate_account_id, 'delegate_name', n2.name,
                            'start_date', d.start_date, 'end_date', d.end_date, 'kinds', d.kinds,
                            'all_establishments', d.all_establishments,
                            'establishments', coalesce(est.ids, '[]'::jsonb),
                            'establishment_names', coalesce(est.names, '[]'::jsonb),
                            'comment', d.comment,
                            'created_by', d.created_by, 'created_by_name', n3.name, 'created_at', d.created_at,
                            'ended_at', d.ended_at, 'ended_by', d.ended_by, 'ended_by_name', n4.name,
                            'is_active', app_hidden.delegation_active(d.start_date, d.end_date, d.ended_at, app_hidden.now()),
                            'is_over', d.ended_at is not null or d.end_date < app_hidden.today())
  from app_public.delegations d
  left join est on est.delegation_id = d.id
  left join names n1 on n1.id = d.delegator_account_id
  left join names n2 on n2.id = d.delegate_account_id
  left join names n3 on n3.id = d.created_by
  left join names n4 on n4.id = d.ended_by
  where d.id = any (p_ids);
$$;

-- The decision permissions the delegator holds itself, among those of the kinds.
create or replace function app_hidden.kinds_permissions(p_kinds text) returns text[]
language sql immutable parallel safe as $$
  select case p_kinds when 'absences' then array['absences.decide_absence']
                      when 'shift_changes' then array['planning.decide_shift_change']
                      when 'both' then array['absences.decide_absence', 'planning.decide_shift_change']
                      else '{}'::text[] end;
$$;

-- POST /api/delegations/ {delegate, start_date, end_date, kinds, establishments?, delegator?, comment?}
create or replace function app_public.delegation_create(p_delegate int, p_start_date date, p_end_date date,
                                                        p_kinds text, p_establishments int[] default null,
                                                        p_delegator int default null, p_comment text default null)
returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_account int := app_hidden.current_account_id();
  v_delegator int := coalesce(p_delegator, app_hidden.current_account_id());
  v_today date := app_hidden.today();
  v_own text[];
  v_errors jsonb := '{}';
  v_delegator_employee int;
  v_perm text;
  v_scope_whole boolean;
  v_scope_ids int[];
  v_outside text;
  v_id int;
  v_comment text := nullif(btrim(p_comment), '');
begin
  if v_account is null then
    perform app_hidden.forbidden('Connectez-vous pour déléguer vos décisions.', 'WF801');
  end if;
  v_own := app_hidden.account_own_permission_codes(v_delegator);
  if v_delegator = v_account then
    if not (app_hidden.permission_in(v_own, 'absences.decide_absence')
            or app_hidden.permission_in(v_own, 'planning.decide_shift_change')) then
      if app_hidden.current_account_has('absences.decide_absence')
         or app_hidden.current_account_has('planning.decide_shift_change') then
        perform app_hidden.forbidden('Une délégation reçue ne se délègue pas : seul le titulaire des décisions peut déléguer.', 'WF802');
      end if;
      perform app_hidden.forbidden('Seul un compte qui décide des absences ou des modifications de journée délègue ses décisions.', 'WF801');
    end if;
  else
    if not app_hidden.account_is_hr(v_account) then
      perform app_hidden.forbidden('Seuls RH n1, RH n2 et Admin créent une délégation pour un autre décideur.', 'WF801');
    end if;
    select a.employee_id into v_delegator_employee from app_public.accounts a where a.id = v_delegator and a.is_active;
    if not found then
      perform app_hidden.invalid('delegator', 'Décideur introuvable ou compte fermé.', 'WV801');
    end if;
    if not app_hidden.may(v_account, 'employee.change_employee_record', v_delegator_employee) then
      perform app_hidden.invalid('delegator', 'Ce décideur est hors de votre périmètre.', 'WV801');
    end if;
    if not (app_hidden.permission_in(v_own, 'absences.decide_absence')
            or app_hidden.permission_in(v_own, 'planning.decide_shift_change')) then
      perform app_hidden.invalid('delegator', 'Ce compte ne décide ni des absences ni des modifications de journée.', 'WV801');
    end if;
    if p_start_date is not null and p_end_date is not null
       and not exists (select 1 from app_public.absences ab
                       where ab.employee_id = v_delegator_employee
                         and ab.status in ('validated', 'cancellation_requested')
                         and ab.date_start <= p_end_date and ab.date_end >= p_start_date) then
      perform app_hidden.invalid('delegator',
        'Ce décideur n’a pas d’absence accordée sur ces dates : c’est à lui de créer sa délégation.', 'WV801');
    end if;
  end if;

  if p_kinds is null or p_kinds not in ('absences', 'shift_changes', 'both') then
    v_errors := app_hidden.add_error(v_errors, 'kinds', 'Choisissez : absences, modifications de journée, ou les deux.');
  elsif not (app_hidden.permission_in(v_own, 'absences.decide_absence') or p_kinds = 'shift_changes')
        or not (app_hidden.permission_in(v_own, 'planning.decide_shift_change') or p_kinds = 'absences') then
    v_errors := app_hidden.add_error(v_errors, 'kinds', 'On ne délègue que les décisions que l’on prend soi-même.');
  end if;
  if p_start_date is null then
    v_errors := app_hidden.add_error(v_errors, 'start_date', 'Indiquez la date de début.');
  end if;
  if p_end_date is null then
    v_errors := app_hidden.add_error(v_errors, 'end_date', 'Indiquez la date de fin.');
  elsif p_start_date is not null and p_end_date < p_start_date then
    v_errors := app_hidden.add_error(v_errors, 'end_date', 'La date de fin précède la date de début.');
  elsif p_end_date < v_today then
    v_errors := app_hidden.add_error(v_errors, 'end_date', 'Une délégation ne se crée pas dans le passé.');
  elsif p_start_date is not null and p_end_date - p_start_date > 365 then
    v_errors := app_hidden.add_error(v_errors, 'end_date', 'Une délégation dure au plus un an.');
  end if;
  if p_delegate is null then
    v_errors := app_hidden.add_error(v_errors, 'delegate', 'Choisissez le délégataire.');
  elsif not exists (select 1 from app_public.accounts a where a.id = p_delegate and a.is_active) then
    v_errors := app_hidden.add_error(v_errors, 'delegate', 'Délégataire introuvable ou compte fermé.');
  elsif p_delegate = v_delegator then
    v_errors := app_hidden.add_error(v_errors, 'delegate', 'On ne se délègue pas ses propres décisions.');
  end if;
  if char_length(v_comment) > app_hidden.comment_max_length() then
    v_errors := app_hidden.add_error(v_errors, 'comment', app_hidden.max_length_message(app_hidden.comment_max_length()));
  end if;
  -- Establishments: within the delegator's own scope of every decision delegated.
  if cardinality(p_establishments) > 0 and p_kinds in ('absences', 'shift_changes', 'both') then
    if exists (select 1 from unnest(p_establishments) x where x is null
               or not exists (select 1 from app_public.establishments e where e.id = x)) then
      v_errors := app_hidden.add_error(v_errors, 'establishments', 'Établissement introuvable.');
    else
      foreach v_perm in array app_hidden.kinds_permissions(p_kinds) loop
        select s.whole, s.establishment_ids into v_scope_whole, v_scope_ids
        from app_hidden.own_permission_scopes(array[v_delegator], v_perm, app_hidden.now()) s;
        if not coalesce(v_scope_whole, false) then
          select string_agg(e.name, ', ' order by e.name) into v_outside
          from app_public.establishments e
          where e.id = any (p_establishments) and not e.id = any (coalesce(v_scope_ids, '{}'));
          if v_outside is not null then
            v_errors := app_hidden.add_error(v_errors, 'establishments',
              format('Hors du périmètre de décision du délégant : %s.', v_outside));
            exit;
          end if;
        end if;
      end loop;
    end if;
  end if;
  if v_errors <> '{}'::jsonb then
    perform app_hidden.invalid_fields(v_errors, 'WV802');
  end if;

  insert into app_public.delegations (delegator_account_id, delegate_account_id, start_date, end_date,
                                      all_establishments, kinds, comment, created_by)
  values (v_delegator, p_delegate, p_start_date, p_end_date, coalesce(cardinality(p_establishments), 0) = 0,
          p_kinds, v_comment, v_account)
  returning id into v_id;
  insert into app_public.delegation_establishments (delegation_id, establishment_id)
  select distinct v_id, x from unnest(coalesce(p_establishments, '{}')) x;
  return (select j.doc from app_hidden.delegations_json(array[v_id]) j);
end;
$$;
comment on function app_public.delegation_create(integer, date, date, text, integer[], integer, text) is
'Issue 30, POST /api/delegations/: a decider delegates its own decisions (absences, day changes or both)
to another active account over a date interval, for all or some establishments of its own perimeter;
RH n1 / RH n2 / Admin (or a superuser) create one for an absent decider of their perimeter (a granted absence over the interval).
A delegation received is never delegated again. Audited.';

-- POST /api/delegations/<id>/end/: ends a delegation now (the delegator, its author, or RH
-- over the delegator's perimeter).
create or replace function app_public.delegation_end(p_id int) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_account int := app_hidden.current_account_id();
  d app_public.delegations;
begin
  if p_id is null or p_id not in (select app_hidden.readable_delegation_ids()) then
    perform app_hidden.not_found('Délégation introuvable.', 'WN801');
  end if;
  select * into d from app_public.delegations x where x.id = p_id for update;
  if not (d.delegator_account_id = v_account or d.created_by is not distinct from v_account and v_account is not null
          or (app_hidden.account_is_hr(v_account)
              and app_hidden.may(v_account, 'employee.change_employee_record',
                                 (select a.employee_id from app_public.accounts a where a.id = d.delegator_account_id)))) then
    perform app_hidden.forbidden('Seuls le délégant, l’auteur de la délégation ou RH y mettent fin.', 'WF804');
  end if;
  if d.ended_at is not null or d.end_date < app_hidden.today() then
    perform app_hidden.invalid('status', 'Cette délégation est déjà terminée.', 'WV803');
  end if;
  update app_public.delegations x set ended_at = app_hidden.now(), ended_by = v_account, updated_at = app_hidden.now()
  where x.id = p_id;
  return (select j.doc from app_hidden.delegations_json(array[p_id]) j);
end;
$$;
comment on function app_public.delegation_end(integer) is
'Issue 30, POST /api/delegations/<id>/end/: ends a delegation at once (the delegator, its author, or RH over
the delegator''s perimeter); an ended or past delegation gives 400 under status. Audited.';

-- GET /api/delegations/?role=given|received&active=&account=&page=&page_size=
create or replace function app_public.delegations_list(p_role text default null, p_active boolean default null,
                                                       p_account int default null,
                                                       p_page int default 1, p_page_size int default 50)
returns jsonb
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_account int := app_hidden.current_account_id();
begin
  if p_role is not null and p_role not in ('given', 'received') then
    perform app_hidden.invalid('role', 'Valeurs possibles : given, received.', 'WV804');
  end if;
  return (
    with filtered as (
      select d.id, d.start_date from app_public.delegations d
      where d.id in (select app_hidden.readable_delegation_ids())
        and (p_role is null or (p_role = 'given' and d.delegator_account_id = v_account)
             or (p_role = 'received' and d.delegate_account_id = v_account))
        and (p_active is null
             or p_active = app_hidden.delegation_active(d.start_date, d.end_date, d.ended_at, app_hidden.now()))
        and (p_account is null or p_account in (d.delegator_account_id, d.delegate_account_id))
    ),
    page as (
      select f.id, row_number() over (order by f.start_date desc, f.id desc) as ord
      from filtered f order by ord limit app_hidden.page_limit(p_page_size) offset app_hidden.page_offset(p_page, p_page_size)
    )
    select jsonb_build_object(
      'count', (select count(*) from filtered),
      'results', coalesce((select jsonb_agg(j.doc order by p.ord)
                           from page p join app_hidden.delegations_json(array(select pg.id from page pg)) j on j.id = p.id),
                          '[]'::jsonb)));
end;
$$;
comment on function app_public.delegations_list(text, boolean, integer, integer, integer) is
'Issue 30, GET /api/delegations/: one page of the delegations the caller reads (given, received, authored;
RH and Admin: those of the deciders of their perimeter), newest first; filters role (given / received), active,
account (delegator or delegate).';

-- The back-office page of one delegation (sql text of src/backoffice/resources/delegations.ts):
-- one the caller reads, else 404.
create or replace function app_public.delegation_get(p_id int) returns jsonb
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_doc jsonb;
begin
  if p_id is not null and p_id in (select app_hidden.readable_delegation_ids()) then
    select j.doc into v_doc from app_hidden.delegations_json(array[p_id]) j;
  end if;
  if v_doc is null then
    perform app_hidden.not_found('Délégation introuvable.', 'WN801');
  end if;
  return v_doc;
end;
$$;
comment on function app_public.delegation_get(integer) is
'Issue 30, back-office: one delegation the caller reads (given, received, authored; RH and Admin: those of
the deciders of their perimeter), else 404.';
