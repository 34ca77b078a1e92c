-- Consumable counters and their reasons (SPEC rule 17): a counter of a consumable kind is
-- active only while an active association ties it to an active reason; an association or
-- a reason whose deactivation or deletion would orphan an active counter is refused.

-- Does an active association to an active reason keep this counter code alive, leaving
-- aside one association or one reason (the one being deactivated or deleted)?
create or replace function app_private.counter_code_has_reason(p_code text, p_except_association int default null,
                                                    p_except_type int default null)
returns boolean
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select exists (
    select 1 from app_public.counter_associations ca
    join app_public.absence_types t on t.id = ca.absence_type_id
    where ca.counter_code = p_code and ca.is_active and t.is_active
      and ca.id is distinct from p_except_association
      and t.id is distinct from p_except_type);
$$;

create or replace function app_private.tg_counters__need_reason() returns trigger
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  if new.is_active
     and (tg_op = 'INSERT' or not old.is_active or old.code <> new.code)
     and exists (select 1 from app_public.counter_kinds k where k.code = new.code and k.is_consumable)
     and not app_private.counter_code_has_reason(new.code) then
    perform app_hidden.invalid('is_active', format(
      'Le compteur %s ne peut pas être activé : aucun motif actif ne lui est associé par une association active.',
      new.code), 'WV310');
  end if;
  return new;
end;
$$;
create or replace trigger _200_guard before insert or update of is_active, code on app_public.counters
  for each row execute function app_private.tg_counters__need_reason();

-- Refuses when no other active association keeps an active counter of the code alive.
create or replace function app_private.counter_orphan_check(p_code text, p_except_association int, p_except_type int,
                                                 p_what text)
returns void
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_count int;
begin
  if not exists (select 1 from app_public.counter_kinds k where k.code = p_code and k.is_consumable)
     or app_private.counter_code_has_reason(p_code, p_except_association, p_except_type) then
    return;
  end if;
  select count(*) into v_count from app_public.counters c where c.code = p_code and c.is_active;
  if v_count > 0 then
    perform app_hidden.invalid('is_active', format(
      'Impossible de désactiver ou de supprimer %s : %s compteur(s) %s actif(s) n’aurai(en)t plus aucun motif associé. Fermez d’abord ces compteurs.',
      p_what, v_count, p_code), 'WV311');
  end if;
end;
$$;

create or replace function app_private.tg_counter_associations__no_orphan_counter() returns trigger
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  if old.is_active
     and (tg_op = 'DELETE' or not new.is_active or new.counter_code <> old.counter_code
          or new.absence_type_id <> old.absence_type_id)
     and exists (select 1 from app_public.absence_types t where t.id = old.absence_type_id and t.is_active) then
    perform app_private.counter_orphan_check(old.counter_code, old.id, null,
                                             format('l’association au compteur %s', old.counter_code));
  end if;
  return case when tg_op = 'DELETE' then old else new end;
end;
$$;
create or replace trigger _200_guard before update or delete on app_public.counter_associations
  for each row execute function app_private.tg_counter_associations__no_orphan_counter();

create or replace function app_private.tg_absence_types__no_orphan_counter() returns trigger
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_code text;
begin
  if old.is_active and (tg_op = 'DELETE' or not new.is_active) then
    for v_code in
      select ca.counter_code from app_public.counter_associations ca
      where ca.absence_type_id = old.id and ca.is_active
    loop
      perform app_private.counter_orphan_check(v_code, null, old.id, format('le motif %s', old.code));
    end loop;
  end if;
  return case when tg_op = 'DELETE' then old else new end;
end;
$$;
create or replace trigger _210_counter_guard before update of is_active or delete on app_public.absence_types
  for each row execute function app_private.tg_absence_types__no_orphan_counter();
