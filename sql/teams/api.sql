-- /api/teams/: read by every authenticated account; written (create, edit, delete, replace
-- members, add a member) with employee.change_team (encadrement). A team without any
-- establishment in the writer's perimeter answers 404; deleting a team that also spans
-- establishments outside the perimeter, or adding a member outside it, answers 403.

-- JSON of teams, set-based. Members (p_members): current and future assignments the caller
-- may read.
create or replace function app_hidden.teams_json(p_ids int[], p_members boolean) returns table (id int, doc jsonb)
language sql stable as $$
  with establishments as (
    select te.team_id, jsonb_agg(te.establishment_id order by te.establishment_id) as ids,
           jsonb_agg(e.name order by te.establishment_id) as names
    from app_public.team_establishments te
    join app_public.establishments e on e.id = te.establishment_id
    where te.team_id = any (p_ids)
    group by te.team_id
  ),
  members as (
    select ta.team_id,
           jsonb_agg(jsonb_build_object('id', ta.id, 'employee', ta.employee_id,
                                        'employee_name', emp.first_name || ' ' || emp.last_name,
                                        'start_date', ta.start_date, 'end_date', ta.end_date)
                     order by lower(emp.last_name), lower(emp.first_name), ta.start_date nulls first) as list
    from app_public.team_assignments ta
    join app_public.employees emp on emp.id = ta.employee_id
    where p_members and ta.team_id = any (p_ids)
      and (ta.end_date is null or ta.end_date >= app_hidden.today())
    group by ta.team_id
  )
  select t.id,
         jsonb_build_object('id', t.id, 'name', t.name,
                            'establishments', coalesce(est.ids, '[]'::jsonb),
                            'establishment_names', coalesce(est.names, '[]'::jsonb),
                            'created_at', t.created_at, 'updated_at', t.updated_at)
         || case when p_members then jsonb_build_object('members', coalesce(m.list, '[]'::jsonb)) else '{}'::jsonb end
  from app_public.teams t
  left join establishments est on est.team_id = t.id
  left join members m on m.team_id = t.id
  where t.id = any (p_ids);
$$;

-- GET /api/teams/
create or replace function app_public.teams_list(p_scope text default null, p_establishment int default null,
                                      p_search text default null, p_page int default 1, p_page_size int default 50)
returns jsonb
language sql stable as $$
  with scope as (
    select app_hidden.scope_establishment_ids() as ids where p_scope = 'perimeter'
  ),
  filtered as (
    select t.id, t.name from app_public.teams t
    where (p_scope is distinct from 'perimeter' or (select s.ids from scope s) is null
           or exists (select 1 from app_public.team_establishments te
                      where te.team_id = t.id and te.establishment_id = any (coalesce((select s.ids from scope s), '{}'))))
      and (p_establishment is null or exists (select 1 from app_public.team_establishments te
                                              where te.team_id = t.id and te.establishment_id = p_establishment))
      and (coalesce(btrim(p_search), '') = '' or t.name ilike app_hidden.like_pattern(p_search))
  ),
  page as (
    select f.id, row_number() over (order by lower(f.name), f.id) as ord
    from filtered f order by ord limit app_hidden.page_limit(p_page_size) offset app_hidden.page_offset(p_page, p_page_size)
  )
  select jsonb_build_object(
    'count', (select count(*) from filtered),
    'results', coalesce((select jsonb_agg(j.doc order by p.ord)
                         from page p join app_hidden.teams_json(array(select pg.id from page pg), false) j on j.id = p.id),
                        '[]'::jsonb));
$$;
comment on function app_public.teams_list(text, integer, text, integer, integer) is
'SPEC Permissions rule 7, GET /api/teams/: one page of the teams (without members), readable by every
authenticated account, searchable and filtered by establishment; scope=perimeter keeps those with an
establishment in the caller''s perimeter.';

-- GET /api/teams/<id>/
create or replace function app_public.team_get(p_id int) returns jsonb
language plpgsql stable as $$
declare
  v_doc jsonb;
begin
  select j.doc into v_doc from app_hidden.teams_json(array[p_id], true) j;
  if v_doc is null then
    perform app_hidden.not_found('Équipe introuvable.');
  end if;
  return v_doc;
end;
$$;
comment on function app_public.team_get(integer) is
'SPEC Permissions rule 7, GET /api/teams/<id>/: one team with its establishments and its current and
future members (404 when absent).';

-- A team the caller may write: the permission (403 without it) and at least one of the
-- team's establishments in the perimeter (404 otherwise). Locks the team row.
create or replace function app_hidden.team_for_write(p_id int) returns app_public.teams
language plpgsql volatile as $$
declare
  v_team app_public.teams;
begin
  if not app_hidden.current_account_has('employee.change_team') then
    perform app_hidden.forbidden('Vous n’avez pas le droit de modifier les équipes.', 'WF520');
  end if;
  if not p_id in (select app_hidden.team_ids_in_perimeter('employee.change_team')) then
    perform app_hidden.not_found('Équipe introuvable dans votre périmètre.');
  end if;
  select * into v_team from app_public.teams t where t.id = p_id for update;
  if not found then
    perform app_hidden.not_found('Équipe introuvable dans votre périmètre.');
  end if;
  return v_team;
end;
$$;

-- Name and establishments of a creation or an update (PUT/creation: both required; PATCH: the
-- keys sent, p_sent). A null list of establishments leaves them as they are.
drop function if exists app_hidden.team_save(int, jsonb, boolean);
create or replace function app_hidden.team_save(p_id int, p_partial boolean, p_sent text[], p_name text, p_establishments int[])
returns int
language plpgsql volatile as $$
declare
  v_team app_public.teams;
  v_scope int[] := app_hidden.perimeter_establishment_ids('employee.change_team');
  v_errors jsonb := '{}';
  v_name text := app_hidden.trimmed(p_name);
  v_establishments int[] := p_establishments;
  v_old_establishments int[] := '{}';
  v_outside text;
  v_id int := p_id;
begin
  if p_id is null then
    if not app_hidden.current_account_has('employee.change_team') then
      perform app_hidden.forbidden('Vous n’avez pas le droit de créer une équipe.', 'WF520');
    end if;
  else
    v_team := app_hidden.team_for_write(p_id);
    v_old_establishments := array(select te.establishment_id from app_public.team_establishments te where te.team_id = p_id);
  end if;

  if (p_id is null or not p_partial or app_hidden.sent(p_sent, 'name', p_name is not null)) and v_name is null then
    v_errors := app_hidden.add_error(v_errors, 'name', 'Le nom de l’équipe est obligatoire.');
  else
    v_name := coalesce(v_name, v_team.name);
    if char_length(v_name) > app_hidden.name_max_length() then
      v_errors := app_hidden.add_error(v_errors, 'name', app_hidden.max_length_message(app_hidden.name_max_length()));
    end if;
  end if;

  if app_hidden.id_list_refusal(v_establishments) is not null then
    perform app_hidden.invalid('establishments', app_hidden.id_list_refusal(v_establishments));
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
      from ((select unnest(v_establishments) except select unnest(v_old_establishments))
            union
            (select unnest(v_old_establishments) except select unnest(v_establishments))) d(id)
      join app_public.establishments e on e.id = d.id
      where not d.id = any (v_scope);
      if v_outside is not null then
        v_errors := app_hidden.add_error(v_errors, 'establishments',
          format('Hors de votre périmètre : %s. Vous ne pouvez ni ajouter ni retirer cet établissement.', v_outside));
      end if;
    end if;
  end if;
  perform app_hidden.invalid_fields(v_errors, 'WV520') where v_errors <> '{}'::jsonb;

  if p_id is null then
    insert into app_public.teams (name) values (v_name) returning id into v_id;
  else
    update app_public.teams t set name = v_name where t.id = p_id and t.name is distinct from v_name;
  end if;
  if v_establishments is not null then
    delete from app_public.team_establishments te
    where te.team_id = v_id and not te.establishment_id = any (v_establishments);
    insert into app_public.team_establishments (team_id, establishment_id)
    select v_id, x.id from unnest(v_establishments) x(id)
    on conflict do nothing;
  end if;
  return v_id;
end;
$$;

-- POST /api/teams/
drop function if exists app_public.team_create(jsonb);
create or replace function app_public.team_create(p_name text, p_establishments int[]) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_id int;
begin
  -- Two statements: the read sees the write (a stable function keeps its caller's snapshot).
  v_id := app_hidden.team_save(null, false, null, p_name, p_establishments);
  return app_public.team_get(v_id);
end;
$$;
comment on function app_public.team_create(text, integer[]) is
'SPEC Permissions rule 7, POST /api/teams/: a holder of employee.change_team creates a team (name and
establishments required; an establishment outside its perimeter is refused under establishments).';

-- PATCH /api/teams/<id>/: only the keys sent.
drop function if exists app_public.team_update(int, jsonb);
create or replace function app_public.team_update(p_id int, p_name text default null, p_establishments int[] default null,
                                                  p_sent text[] default null) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_id int;
begin
  -- Two statements: the read sees the write (a stable function keeps its caller's snapshot).
  v_id := app_hidden.team_save(p_id, true, p_sent, p_name, p_establishments);
  return app_public.team_get(v_id);
end;
$$;
comment on function app_public.team_update(integer, text, integer[], text[]) is
'SPEC Permissions rule 7, PATCH /api/teams/<id>/: the keys sent (p_sent) of a team with an establishment
in the writer''s perimeter (else 404; 403 without employee.change_team).';

-- PUT /api/teams/<id>/: name and establishments required.
drop function if exists app_public.team_replace(int, jsonb);
create or replace function app_public.team_replace(p_id int, p_name text default null, p_establishments int[] default null,
                                                   p_sent text[] default null) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_id int;
begin
  -- Two statements: the read sees the write (a stable function keeps its caller's snapshot).
  v_id := app_hidden.team_save(p_id, false, p_sent, p_name, p_establishments);
  return app_public.team_get(v_id);
end;
$$;
comment on function app_public.team_replace(integer, text, integer[], text[]) is
'SPEC Permissions rule 7, PUT /api/teams/<id>/: as PATCH, with name and establishments required.';

-- DELETE /api/teams/<id>/: refused (403) when the team also spans establishments outside the
-- perimeter. Its assignments go with it (each deletion is audited).
create or replace function app_public.team_delete(p_id int) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_outside text;
  v_scope int[] := app_hidden.perimeter_establishment_ids('employee.change_team');
begin
  perform app_hidden.team_for_write(p_id);
  if v_scope is not null then
    select string_agg(e.name, ', ' order by e.name) into v_outside
    from app_public.team_establishments te join app_public.establishments e on e.id = te.establishment_id
    where te.team_id = p_id and not te.establishment_id = any (v_scope);
    if v_outside is not null then
      perform app_hidden.forbidden(format('Cette équipe s’étend aussi hors de votre périmètre (%s) : '
                                          'seul un responsable de tous ses établissements peut la supprimer.', v_outside), 'WF521');
    end if;
  end if;
  delete from app_public.teams t where t.id = p_id;
  return null;
end;
$$;
comment on function app_public.team_delete(integer) is
'SPEC Permissions rule 7, DELETE /api/teams/<id>/: deletes a team of the writer''s perimeter and its
assignments (each audited); 403 when the team also spans establishments outside the perimeter, 404 when
none is inside.';

-- One member (employee required, start_date default today, end_date): the employee exists
-- and the dates are in order; else 400 under p_field, the message prefixed by p_label.
create or replace function app_hidden.team_member_check(p_employee int, p_start_date date, p_end_date date,
                                                        p_field text, p_label text) returns void
language plpgsql stable as $$
begin
  if p_employee is null then
    perform app_hidden.invalid(p_field, p_label || 'le salarié est obligatoire.', 'WV520');
  end if;
  if not exists (select 1 from app_hidden.employee_names(array[p_employee])) then
    perform app_hidden.invalid(p_field, p_label || format('salarié n° %s introuvable.', p_employee), 'WV520');
  end if;
  if p_end_date < coalesce(p_start_date, app_hidden.today()) then
    perform app_hidden.invalid(p_field, p_label || 'la date de fin précède la date de début.', 'WV520');
  end if;
end;
$$;

-- One item of the members list of PUT /api/teams/<id>/members/ (a JSON object, checked as the
-- route schema checks it: a GraphQL caller gives the list as JSON), read and checked;
-- has_start tells a start_date sent as null (no start) from one left out (kept).
drop function if exists app_hidden.team_member_input(jsonb, text, text);
create or replace function app_hidden.team_member_input(p_item jsonb, p_field text, p_label text)
returns table (employee_id int, start_date date, end_date date, has_start boolean)
language plpgsql stable as $$
begin
  if jsonb_typeof(p_item) is distinct from 'object' then
    perform app_hidden.invalid(p_field, p_label || 'un objet est attendu.', 'WV520');
  end if;
  employee_id := app_hidden.in_int(p_item, 'employee', p_field);
  start_date := app_hidden.in_date(p_item, 'start_date', p_field);
  end_date := app_hidden.in_date(p_item, 'end_date', p_field);
  has_start := p_item ? 'start_date';
  perform app_hidden.team_member_check(employee_id, start_date, end_date, p_field, p_label);
  return next;
end;
$$;

create or replace function app_hidden.require_member_in_perimeter(p_employee int) returns void
language plpgsql stable as $$
begin
  if not app_hidden.may(app_hidden.current_account_id(), 'employee.change_team', p_employee) then
    perform app_hidden.forbidden(format('%s n’est pas dans votre périmètre : vous ne pouvez pas l’ajouter à cette équipe.',
                                        (select n.name from app_hidden.employee_names(array[p_employee]) n)), 'WF522');
  end if;
end;
$$;

-- POST /api/teams/<id>/members/ {"employee", "start_date"?, "end_date"?}
drop function if exists app_public.team_member_add(int, jsonb);
create or replace function app_public.team_member_add(p_id int, p_employee int, p_start_date date default null,
                                                      p_end_date date default null) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  perform app_hidden.team_for_write(p_id);
  perform app_hidden.team_member_check(p_employee, p_start_date, p_end_date, 'employee', '');
  perform app_hidden.require_member_in_perimeter(p_employee);
  if exists (select 1 from app_public.team_assignments ta
             where ta.team_id = p_id and ta.employee_id = p_employee
               and daterange(ta.start_date, ta.end_date, '[]')
                   && daterange(coalesce(p_start_date, app_hidden.today()), p_end_date, '[]')) then
    perform app_hidden.invalid('employee', 'Ce salarié fait déjà partie de cette équipe sur cette période.', 'WV520');
  end if;
  insert into app_public.team_assignments (employee_id, team_id, start_date, end_date)
  values (p_employee, p_id, coalesce(p_start_date, app_hidden.today()), p_end_date);
  return app_public.team_get(p_id);
end;
$$;
comment on function app_public.team_member_add(integer, integer, date, date) is
'SPEC Permissions rule 7, POST /api/teams/<id>/members/: adds an employee of the writer''s perimeter to a
team of its perimeter (403 outside), from today unless a start is given.';

-- PUT /api/teams/<id>/members/ {"members": [{"employee", "start_date"?, "end_date"?}, ...]}:
-- the list becomes the team's current and future members. A member kept keeps its
-- assignment (dates updated when sent); a new member starts today unless a start is given;
-- a member left out leaves the team yesterday (an assignment not yet started is deleted).
-- The members are a JSON list (each item's start_date may be left out, which keeps it: a
-- typed list could not say so).
drop function if exists app_public.team_members_replace(int, jsonb);
create or replace function app_public.team_members_replace(p_id int, p_members jsonb) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_items jsonb := nullif(p_members, 'null'::jsonb);
  v_member record;
  v_today date := app_hidden.today();
  v_current app_public.team_assignments;
  v_employees int[] := '{}';
  i int;
begin
  perform app_hidden.team_for_write(p_id);
  if v_items is null then
    perform app_hidden.invalid('members', 'La liste des membres est obligatoire (une liste vide retire tous les membres).', 'WV520');
  end if;
  if jsonb_typeof(v_items) <> 'array' then
    perform app_hidden.invalid('members', 'Une liste est attendue.');
  end if;
  for i in 0 .. jsonb_array_length(v_items) - 1 loop
    select * into v_member from app_hidden.team_member_input(v_items -> i, 'members', format('Membre n° %s : ', i + 1));
    if v_member.employee_id = any (v_employees) then
      perform app_hidden.invalid('members', format('Membre n° %s : ce salarié figure déjà dans la liste.', i + 1), 'WV520');
    end if;
    v_employees := v_employees || v_member.employee_id;
  end loop;

  -- Members who leave.
  for v_current in
    select * from app_public.team_assignments ta
    where ta.team_id = p_id and (ta.end_date is null or ta.end_date >= v_today)
      and not ta.employee_id = any (v_employees)
  loop
    if v_current.start_date is not null and v_current.start_date >= v_today then
      delete from app_public.team_assignments ta where ta.id = v_current.id;
    else
      update app_public.team_assignments ta set end_date = v_today - 1 where ta.id = v_current.id;
    end if;
  end loop;

  -- Members who stay or arrive.
  v_current := null;
  for i in 0 .. jsonb_array_length(v_items) - 1 loop
    select * into v_member from app_hidden.team_member_input(v_items -> i, 'members', format('Membre n° %s : ', i + 1));
    select * into v_current from app_public.team_assignments ta
    where ta.team_id = p_id and ta.employee_id = v_member.employee_id
      and (ta.end_date is null or ta.end_date >= v_today)
    order by ta.start_date nulls first
    limit 1
    for update;
    if v_current.id is null then
      perform app_hidden.require_member_in_perimeter(v_member.employee_id);
      insert into app_public.team_assignments (employee_id, team_id, start_date, end_date)
      values (v_member.employee_id, p_id, coalesce(v_member.start_date, v_today), v_member.end_date);
    elsif (v_member.has_start and v_current.start_date is distinct from v_member.start_date)
          or v_current.end_date is distinct from v_member.end_date then
      if v_member.end_date < coalesce(case when v_member.has_start then v_member.start_date else v_current.start_date end, v_member.end_date) then
        perform app_hidden.invalid('members', format('Membre n° %s : la date de fin précède la date de début.', i + 1), 'WV520');
      end if;
      update app_public.team_assignments ta
      set start_date = case when v_member.has_start then v_member.start_date else ta.start_date end,
          end_date = v_member.end_date
      where ta.id = v_current.id;
    end if;
    v_current := null;
  end loop;
  return app_public.team_get(p_id);
end;
$$;
comment on function app_public.team_members_replace(integer, jsonb) is
'SPEC Permissions rule 7, PUT /api/teams/<id>/members/: the list becomes the team''s current and future
members; a member kept keeps its assignment, a new one starts today unless a start is given, one left
out leaves yesterday (an assignment not yet started is deleted).';
