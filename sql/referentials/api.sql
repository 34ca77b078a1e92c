-- /api/divisions/, /api/establishments/, /api/contract-types/: readable by every
-- authenticated account; written by staff accounts only (others 403). scope=perimeter
-- restricts divisions and establishments to the caller's establishments
-- (app_hidden.scope_establishment_ids).

create or replace function app_hidden.require_staff() returns void
language plpgsql stable as $$
begin
  if not app_hidden.current_account_is_staff() then
    perform app_hidden.forbidden('Les référentiels s’écrivent par les comptes du personnel d’administration uniquement.', 'WF510');
  end if;
end;
$$;

-- Where an establishment is still used, whatever the caller may read.
create or replace function app_private.establishment_usage(p_id int) returns text[]
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select array_remove(array[
    case when exists (select 1 from app_public.employees e where e.main_establishment_id = p_id)
           or exists (select 1 from app_public.employee_secondary_establishments s where s.establishment_id = p_id)
         then 'salariés' end,
    case when exists (select 1 from app_public.posts p where p.establishment_id = p_id) then 'postes' end,
    case when exists (select 1 from app_public.team_establishments t where t.establishment_id = p_id) then 'équipes' end,
    case when exists (select 1 from app_public.role_attribution_establishments r where r.establishment_id = p_id)
         then 'attributions de rôle' end,
    case when exists (select 1 from app_public.on_call_period_establishments o where o.establishment_id = p_id)
         then 'astreintes' end,
    case when exists (select 1 from app_public.events ev where ev.establishment_id = p_id) then 'événements' end
  ], null);
$$;

create or replace function app_private.contract_type_usage(p_id int) returns text[]
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select array_remove(array[
    case when exists (select 1 from app_public.contracts c where c.contract_type_id = p_id) then 'contrats' end,
    case when exists (select 1 from app_public.absence_type_contract_types a where a.contract_type_id = p_id)
         then 'motifs d’absence' end
  ], null);
$$;

-- Divisions --------------------------------------------------------------------------------

create or replace function app_hidden.divisions_json(p_ids int[]) returns table (id int, doc jsonb)
language sql stable as $$
  select d.id,
         jsonb_build_object('id', d.id, 'name', d.name,
                            'establishments', coalesce(est.list, '[]'::jsonb),
                            'created_at', d.created_at, 'updated_at', d.updated_at)
  from app_public.divisions d
  left join (select e.division_id, jsonb_agg(e.id order by e.id) as list
             from app_public.establishments e where e.division_id = any (p_ids)
             group by e.division_id) est on est.division_id = d.id
  where d.id = any (p_ids);
$$;

create or replace function app_public.divisions_list(p_scope text default null, p_page int default 1, p_page_size int default 50)
returns jsonb
language sql stable as $$
  with scope as (
    select app_hidden.scope_establishment_ids() as ids where p_scope = 'perimeter'
  ),
  filtered as (
    select d.id, d.name from app_public.divisions d
    where p_scope is distinct from 'perimeter' or (select s.ids from scope s) is null
       or exists (select 1 from app_public.establishments e
                  where e.division_id = d.id and e.id = any (coalesce((select s.ids from scope s), '{}')))
  ),
  page as (
    select f.id, row_number() over (order by lower(f.name), f.id) as ord
    from filtered f order by ord limit app_hidden.page_limit(p_page_size) offset app_hidden.page_offset(p_page, p_page_size)
  )
  select jsonb_build_object(
    'count', (select count(*) from filtered),
    'results', coalesce((select jsonb_agg(j.doc order by p.ord)
                         from page p join app_hidden.divisions_json(array(select pg.id from page pg)) j on j.id = p.id),
                        '[]'::jsonb));
$$;
comment on function app_public.divisions_list(text, integer, integer) is
'SPEC Permissions rule 6 and Documents and other routes, GET /api/divisions/: one page of the divisions
by name, each with its establishments, for every authenticated account; scope=perimeter keeps those with
an establishment in the caller''s perimeter (opt-in).';

create or replace function app_public.division_get(p_id int) returns jsonb
language plpgsql stable as $$
declare
  v_doc jsonb;
begin
  select j.doc into v_doc from app_hidden.divisions_json(array[p_id]) j;
  if v_doc is null then
    perform app_hidden.not_found('Division introuvable.');
  end if;
  return v_doc;
end;
$$;
comment on function app_public.division_get(integer) is
'SPEC Permissions rule 6, GET /api/divisions/<id>/: one division with its establishments, readable by
every authenticated account (404 when absent).';

-- The name of a division written (creation, PUT, or a PATCH that sends it): required, at most
-- name_max_length(), borne once whatever the case. Returns it trimmed.
drop function if exists app_hidden.division_name(jsonb, int);
create or replace function app_hidden.division_name(p_name text, p_id int) returns text
language plpgsql stable as $$
declare
  v_name text := app_hidden.trimmed(p_name);
begin
  if v_name is null then
    perform app_hidden.invalid('name', 'Le nom est obligatoire.', 'WV510');
  elsif char_length(v_name) > app_hidden.name_max_length() then
    perform app_hidden.invalid('name', app_hidden.max_length_message(app_hidden.name_max_length()), 'WV510');
  elsif exists (select 1 from app_public.divisions d where lower(d.name) = lower(v_name) and d.id is distinct from p_id) then
    perform app_hidden.invalid('name', format('Une division s’appelle déjà « %s ».', v_name), 'WV510');
  end if;
  return v_name;
end;
$$;

-- PUT and PATCH of a division (p_partial: only the keys sent).
create or replace function app_hidden.division_save(p_id int, p_partial boolean, p_sent text[], p_name text) returns void
language plpgsql volatile as $$
declare
  v_name text;
begin
  perform app_hidden.require_staff();
  perform 1 from app_public.divisions d where d.id = p_id for update;
  if not found then
    perform app_hidden.not_found('Division introuvable.');
  end if;
  if not p_partial or app_hidden.sent(p_sent, 'name', p_name is not null) then
    v_name := app_hidden.division_name(p_name, p_id);
    update app_public.divisions d set name = v_name where d.id = p_id and d.name is distinct from v_name;
  end if;
end;
$$;

drop function if exists app_public.division_create(jsonb);
create or replace function app_public.division_create(p_name text) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_id int;
begin
  perform app_hidden.require_staff();
  insert into app_public.divisions (name) values (app_hidden.division_name(p_name, null)) returning id into v_id;
  return app_public.division_get(v_id);
end;
$$;
comment on function app_public.division_create(text) is
'SPEC Permissions rule 6, POST /api/divisions/: a staff account creates a division (name required, at
most 150 characters, unique whatever the case); others get 403.';

-- PATCH /api/divisions/<id>/
drop function if exists app_public.division_update(int, jsonb);
create or replace function app_public.division_update(p_id int, p_name text default null, p_sent text[] default null) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  perform app_hidden.division_save(p_id, true, p_sent, p_name);
  return app_public.division_get(p_id);
end;
$$;
comment on function app_public.division_update(integer, text, text[]) is
'SPEC Permissions rule 6, PATCH /api/divisions/<id>/: a staff account renames a division (only the keys
sent, p_sent; same name rules as the creation); others get 403.';

-- PUT /api/divisions/<id>/ (name required)
drop function if exists app_public.division_replace(int, jsonb);
create or replace function app_public.division_replace(p_id int, p_name text default null, p_sent text[] default null) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  perform app_hidden.division_save(p_id, false, p_sent, p_name);
  return app_public.division_get(p_id);
end;
$$;
comment on function app_public.division_replace(integer, text, text[]) is
'SPEC Permissions rule 6, PUT /api/divisions/<id>/: a staff account rewrites a division (name required);
others get 403.';

-- Deleting a division detaches its establishments (they stay, without division).
create or replace function app_public.division_delete(p_id int) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  perform app_hidden.require_staff();
  delete from app_public.divisions d where d.id = p_id;
  if not found then
    perform app_hidden.not_found('Division introuvable.');
  end if;
  return null;
end;
$$;
comment on function app_public.division_delete(integer) is
'SPEC Permissions rule 6, DELETE /api/divisions/<id>/: a staff account deletes a division; its
establishments stay, without division. Others get 403.';

-- Establishments ---------------------------------------------------------------------------

create or replace function app_hidden.establishments_json(p_ids int[]) returns table (id int, doc jsonb)
language sql stable as $$
  select e.id,
         jsonb_build_object('id', e.id, 'name', e.name, 'count_base', e.count_base,
                            'division', e.division_id, 'division_name', d.name,
                            'created_at', e.created_at, 'updated_at', e.updated_at)
  from app_public.establishments e
  left join app_public.divisions d on d.id = e.division_id
  where e.id = any (p_ids);
$$;

create or replace function app_public.establishments_list(p_scope text default null, p_division int default null,
                                               p_page int default 1, p_page_size int default 50)
returns jsonb
language sql stable as $$
  with scope as (
    select app_hidden.scope_establishment_ids() as ids where p_scope = 'perimeter'
  ),
  filtered as (
    select e.id, e.name from app_public.establishments e
    where (p_scope is distinct from 'perimeter' or (select s.ids from scope s) is null
           or e.id = any (coalesce((select s.ids from scope s), '{}')))
      and (p_division is null or e.division_id = p_division)
  ),
  page as (
    select f.id, row_number() over (order by lower(f.name), f.id) as ord
    from filtered f order by ord limit app_hidden.page_limit(p_page_size) offset app_hidden.page_offset(p_page, p_page_size)
  )
  select jsonb_build_object(
    'count', (select count(*) from filtered),
    'results', coalesce((select jsonb_agg(j.doc order by p.ord)
                         from page p join app_hidden.establishments_json(array(select pg.id from page pg)) j on j.id = p.id),
                        '[]'::jsonb));
$$;
comment on function app_public.establishments_list(text, integer, integer, integer) is
'SPEC Permissions rule 6 and Documents and other routes, GET /api/establishments/: one page of the
establishments by name (optionally of one division) for every authenticated account; scope=perimeter
keeps those of the caller''s perimeter (opt-in).';

create or replace function app_public.establishment_get(p_id int) returns jsonb
language plpgsql stable as $$
declare
  v_doc jsonb;
begin
  select j.doc into v_doc from app_hidden.establishments_json(array[p_id]) j;
  if v_doc is null then
    perform app_hidden.not_found('Établissement introuvable.');
  end if;
  return v_doc;
end;
$$;
comment on function app_public.establishment_get(integer) is
'SPEC Permissions rule 6, GET /api/establishments/<id>/: one establishment with its count base (ouvrables
or ouvres, declaration rule 1) and division, readable by every authenticated account.';

-- Establishment rules shared by this API and the organisation import (sql/org/import.sql).
create or replace function app_hidden.establishment_name_taken(p_name text, p_except int default null) returns boolean
language sql stable as $$
  select exists (select 1 from app_public.establishments e where lower(e.name) = lower(p_name) and e.id is distinct from p_except);
$$;
comment on function app_hidden.establishment_name_taken(text, integer) is
'Establishments: a name is borne by one establishment only, case-insensitively (p_except: the one being renamed).';

create or replace function app_hidden.count_base_known(p_base text) returns boolean
language sql immutable as $$ select p_base in ('ouvrables', 'ouvres') $$;
comment on function app_hidden.count_base_known(text) is
'SPEC Absences, declaration rule 1 and CONTRACT section 6: an establishment counts leave in jours ouvrables
(Monday to Saturday) or ouvrés (Monday to Friday).';

-- Creation and update (PUT: name required; PATCH: only the keys sent, p_sent).
drop function if exists app_hidden.establishment_save(int, jsonb, boolean);
create or replace function app_hidden.establishment_save(p_id int, p_partial boolean, p_sent text[],
                                                         p_name text, p_count_base text, p_division int) returns int
language plpgsql volatile as $$
declare
  v_old app_public.establishments;
  v_errors jsonb := '{}';
  v_name text := app_hidden.trimmed(p_name);
  v_base text;
  v_division int;
  v_division_sent boolean := app_hidden.sent(p_sent, 'division', p_division is not null);
  v_id int := p_id;
begin
  perform app_hidden.require_staff();
  if p_id is not null then
    select * into v_old from app_public.establishments e where e.id = p_id for update;
    if not found then
      perform app_hidden.not_found('Établissement introuvable.');
    end if;
  end if;
  if (p_id is null or not p_partial or app_hidden.sent(p_sent, 'name', p_name is not null)) and v_name is null then
    v_errors := app_hidden.add_error(v_errors, 'name', 'Le nom est obligatoire.');
  else
    v_name := coalesce(v_name, v_old.name);
    if char_length(v_name) > app_hidden.name_max_length() then
      v_errors := app_hidden.add_error(v_errors, 'name', app_hidden.max_length_message(app_hidden.name_max_length()));
    elsif app_hidden.establishment_name_taken(v_name, p_id) then
      v_errors := app_hidden.add_error(v_errors, 'name', format('Un établissement s’appelle déjà « %s ».', v_name));
    end if;
  end if;
  v_base := coalesce(p_count_base, v_old.count_base, 'ouvrables');
  if app_hidden.count_base_known(v_base) is not true then
    v_errors := app_hidden.add_error(v_errors, 'count_base',
      'Base de décompte invalide : « ouvrables » (lundi au samedi) ou « ouvres » (lundi au vendredi).');
  end if;
  v_division := case when v_division_sent then p_division else v_old.division_id end;
  if v_division_sent and v_division is not null
     and not exists (select 1 from app_public.divisions d where d.id = v_division) then
    v_errors := app_hidden.add_error(v_errors, 'division', format('Division n° %s introuvable.', v_division));
  end if;
  perform app_hidden.invalid_fields(v_errors, 'WV510') where v_errors <> '{}'::jsonb;
  if p_id is null then
    insert into app_public.establishments (name, count_base, division_id) values (v_name, v_base, v_division)
    returning id into v_id;
  else
    update app_public.establishments e set name = v_name, count_base = v_base, division_id = v_division
    where e.id = p_id and (e.name, e.count_base, e.division_id) is distinct from (v_name, v_base, v_division);
  end if;
  return v_id;
end;
$$;

drop function if exists app_public.establishment_create(jsonb);
create or replace function app_public.establishment_create(p_name text, p_count_base text default null, p_division int default null)
returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_id int;
begin
  -- Two statements: the read sees the write (a stable function keeps its caller's snapshot).
  v_id := app_hidden.establishment_save(null, false, null, p_name, p_count_base, p_division);
  return app_public.establishment_get(v_id);
end;
$$;
comment on function app_public.establishment_create(text, text, integer) is
'SPEC Permissions rule 6, POST /api/establishments/: a staff account creates an establishment (name
required and unique, count base ouvrables or ouvres for declaration rule 1, optional division); all
field errors at once; others get 403.';

-- PATCH /api/establishments/<id>/
drop function if exists app_public.establishment_update(int, jsonb);
create or replace function app_public.establishment_update(p_id int, p_name text default null, p_count_base text default null,
                                                           p_division int default null, p_sent text[] default null)
returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_id int;
begin
  -- Two statements: the read sees the write (a stable function keeps its caller's snapshot).
  v_id := app_hidden.establishment_save(p_id, true, p_sent, p_name, p_count_base, p_division);
  return app_public.establishment_get(v_id);
end;
$$;
comment on function app_public.establishment_update(integer, text, text, integer, text[]) is
'SPEC Permissions rule 6, PATCH /api/establishments/<id>/: a staff account changes the keys sent (p_sent)
of an establishment (name, count base, division), under the creation rules; others get 403.';

-- PUT /api/establishments/<id>/ (name required)
drop function if exists app_public.establishment_replace(int, jsonb);
create or replace function app_public.establishment_replace(p_id int, p_name text default null, p_count_base text default null,
                                                            p_division int default null, p_sent text[] default null)
returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_id int;
begin
  -- Two statements: the read sees the write (a stable function keeps its caller's snapshot).
  v_id := app_hidden.establishment_save(p_id, false, p_sent, p_name, p_count_base, p_division);
  return app_public.establishment_get(v_id);
end;
$$;
comment on function app_public.establishment_replace(integer, text, text, integer, text[]) is
'SPEC Permissions rule 6, PUT /api/establishments/<id>/: a staff account rewrites an establishment (name
required; a division not sent stays), under the creation rules; others get 403.';

create or replace function app_public.establishment_delete(p_id int) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_usage text[];
begin
  perform app_hidden.require_staff();
  perform 1 from app_public.establishments e where e.id = p_id for update;
  if not found then
    perform app_hidden.not_found('Établissement introuvable.');
  end if;
  v_usage := app_private.establishment_usage(p_id);
  if cardinality(v_usage) > 0 then
    perform app_hidden.invalid(null, format('Cet établissement est encore utilisé (%s) : il ne peut pas être supprimé.',
                                            array_to_string(v_usage, ', ')), 'WV511');
  end if;
  delete from app_public.establishments e where e.id = p_id;
  return null;
end;
$$;
comment on function app_public.establishment_delete(integer) is
'SPEC Permissions rule 6, DELETE /api/establishments/<id>/: a staff account deletes an establishment that
nothing uses any more (employees, posts, teams, role attributions, on-call periods, events; else 400
naming the uses); others get 403.';

-- Contract types ---------------------------------------------------------------------------

create or replace function app_hidden.contract_type_json(t app_public.contract_types) returns jsonb
language sql immutable as $$
  select jsonb_build_object('id', t.id, 'code', t.code, 'name', t.name, 'is_temporary_work', t.is_temporary_work);
$$;

create or replace function app_public.contract_types_list(p_page int default 1, p_page_size int default 50) returns jsonb
language sql stable as $$
  select jsonb_build_object(
    'count', (select count(*) from app_public.contract_types),
    'results', coalesce((select jsonb_agg(app_hidden.contract_type_json(t) order by t.id)
                         from (select * from app_public.contract_types t order by t.id
                               limit app_hidden.page_limit(p_page_size) offset app_hidden.page_offset(p_page, p_page_size)) t), '[]'::jsonb));
$$;
comment on function app_public.contract_types_list(integer, integer) is
'SPEC Permissions rule 6, GET /api/contract-types/: one page of the contract types (code, name, temporary
work), readable by every authenticated account.';

create or replace function app_public.contract_type_get(p_id int) returns jsonb
language plpgsql stable as $$
declare
  v_row app_public.contract_types;
begin
  select * into v_row from app_public.contract_types t where t.id = p_id;
  if not found then
    perform app_hidden.not_found('Type de contrat introuvable.');
  end if;
  return app_hidden.contract_type_json(v_row);
end;
$$;
comment on function app_public.contract_type_get(integer) is
'SPEC Permissions rule 6, GET /api/contract-types/<id>/: one contract type, readable by every
authenticated account (404 when absent).';

-- Creation and update of a contract type (PUT: code and name required; PATCH: only the keys
-- sent, p_sent).
drop function if exists app_hidden.contract_type_save(int, jsonb, boolean);
create or replace function app_hidden.contract_type_save(p_id int, p_partial boolean, p_sent text[],
                                                         p_code text, p_name text, p_is_temporary_work boolean) returns int
language plpgsql volatile as $$
declare
  v_old app_public.contract_types;
  v_errors jsonb := '{}';
  v_writes_code boolean := p_id is null or not p_partial or app_hidden.sent(p_sent, 'code', p_code is not null);
  v_writes_name boolean := p_id is null or not p_partial or app_hidden.sent(p_sent, 'name', p_name is not null);
  v_code text := app_hidden.trimmed(p_code);
  v_name text := app_hidden.trimmed(p_name);
  v_temporary boolean;
  v_id int := p_id;
begin
  perform app_hidden.require_staff();
  if p_id is not null then
    select * into v_old from app_public.contract_types t where t.id = p_id for update;
    if not found then
      perform app_hidden.not_found('Type de contrat introuvable.');
    end if;
  end if;
  if v_writes_code and v_code is null then
    v_errors := app_hidden.add_error(v_errors, 'code', 'Le code est obligatoire.');
  elsif not v_writes_code then
    v_code := v_old.code;  -- the code is not being written
  elsif v_code !~ '^[A-Za-z0-9À-ÖØ-öø-ÿ][A-Za-z0-9À-ÖØ-öø-ÿ _+''\-]{0,29}$' then
    v_errors := app_hidden.add_error(v_errors, 'code', 'Code invalide : 1 à 30 caractères, lettres, chiffres, espaces et _ + '' -.');
  elsif exists (select 1 from app_public.contract_types t where lower(t.code) = lower(v_code) and t.id is distinct from p_id) then
    v_errors := app_hidden.add_error(v_errors, 'code', format('Le code « %s » est déjà utilisé.', v_code));
  end if;
  if v_writes_name and v_name is null then
    v_errors := app_hidden.add_error(v_errors, 'name', 'Le libellé est obligatoire.');
  else
    v_name := coalesce(v_name, v_old.name);
    if char_length(v_name) > app_hidden.name_max_length() then
      v_errors := app_hidden.add_error(v_errors, 'name', app_hidden.max_length_message(app_hidden.name_max_length()));
    end if;
  end if;
  v_temporary := coalesce(p_is_temporary_work, v_old.is_temporary_work, false);
  perform app_hidden.invalid_fields(v_errors, 'WV510') where v_errors <> '{}'::jsonb;
  if p_id is null then
    insert into app_public.contract_types (code, name, is_temporary_work) values (v_code, v_name, v_temporary)
    returning id into v_id;
  else
    update app_public.contract_types t set code = v_code, name = v_name, is_temporary_work = v_temporary
    where t.id = p_id and (t.code, t.name, t.is_temporary_work) is distinct from (v_code, v_name, v_temporary);
  end if;
  return v_id;
end;
$$;

drop function if exists app_public.contract_type_create(jsonb);
create or replace function app_public.contract_type_create(p_code text, p_name text, p_is_temporary_work boolean default null)
returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_id int;
begin
  -- Two statements: the read sees the write (a stable function keeps its caller's snapshot).
  v_id := app_hidden.contract_type_save(null, false, null, p_code, p_name, p_is_temporary_work);
  return app_public.contract_type_get(v_id);
end;
$$;
comment on function app_public.contract_type_create(text, text, boolean) is
'SPEC Permissions rule 6, POST /api/contract-types/: a staff account creates a contract type (code unique
whatever the case, name required, is_temporary_work); all field errors at once; others get 403.';

-- PATCH /api/contract-types/<id>/
drop function if exists app_public.contract_type_update(int, jsonb);
create or replace function app_public.contract_type_update(p_id int, p_code text default null, p_name text default null,
                                                           p_is_temporary_work boolean default null, p_sent text[] default null)
returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_id int;
begin
  -- Two statements: the read sees the write (a stable function keeps its caller's snapshot).
  v_id := app_hidden.contract_type_save(p_id, true, p_sent, p_code, p_name, p_is_temporary_work);
  return app_public.contract_type_get(v_id);
end;
$$;
comment on function app_public.contract_type_update(integer, text, text, boolean, text[]) is
'SPEC Permissions rule 6, PATCH /api/contract-types/<id>/: a staff account changes the keys sent (p_sent)
of a contract type, under the creation rules; others get 403.';

-- PUT /api/contract-types/<id>/ (code and name required)
drop function if exists app_public.contract_type_replace(int, jsonb);
create or replace function app_public.contract_type_replace(p_id int, p_code text default null, p_name text default null,
                                                            p_is_temporary_work boolean default null, p_sent text[] default null)
returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_id int;
begin
  -- Two statements: the read sees the write (a stable function keeps its caller's snapshot).
  v_id := app_hidden.contract_type_save(p_id, false, p_sent, p_code, p_name, p_is_temporary_work);
  return app_public.contract_type_get(v_id);
end;
$$;
comment on function app_public.contract_type_replace(integer, text, text, boolean, text[]) is
'SPEC Permissions rule 6, PUT /api/contract-types/<id>/: a staff account rewrites a contract type (code
and name required); others get 403.';

create or replace function app_public.contract_type_delete(p_id int) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_usage text[];
begin
  perform app_hidden.require_staff();
  perform 1 from app_public.contract_types t where t.id = p_id for update;
  if not found then
    perform app_hidden.not_found('Type de contrat introuvable.');
  end if;
  v_usage := app_private.contract_type_usage(p_id);
  if cardinality(v_usage) > 0 then
    perform app_hidden.invalid(null, format('Ce type de contrat est encore utilisé (%s) : il ne peut pas être supprimé.',
                                            array_to_string(v_usage, ', ')), 'WV511');
  end if;
  delete from app_public.contract_types t where t.id = p_id;
  return null;
end;
$$;
comment on function app_public.contract_type_delete(integer) is
'SPEC Permissions rule 6, DELETE /api/contract-types/<id>/: a staff account deletes a contract type no
contract and no absence type uses (else 400 naming the uses); others get 403.';
