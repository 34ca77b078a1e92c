-- /api/employees/: the directory (list, detail) and the employee record (create, update).
--
-- Reading (RLS of sql/org/policies.sql): holders of employee.view_employee_directory read the
-- whole directory; Service Paie reads the people of its payroll perimeter; every account
-- reads its own record. scope=perimeter restricts a list to the employees attached (main,
-- secondary workplace, team of the day) to the caller's establishments
-- (app_hidden.scope_establishment_ids: its absences.view_absence_queue or employee.view_payroll
-- perimeter, on-call extensions included; else its own workplaces).
--
-- The key social_security_number is present only for readers holding
-- employee.view_social_security_number on that employee; any write carrying the key by
-- another caller is refused (403) before anything is written.

-- JSON of employees, set-based (one statement whatever the number of ids), with the
-- caller's rights.
create or replace function app_hidden.employees_json(p_ids int[]) returns table (id int, doc jsonb)
language sql stable as $$
  with emp as (
    select e.* from app_public.employees e where e.id = any (p_ids)
  ),
  ssn_readable as (
    select x.id from app_hidden.perimeter_employee_ids('employee.view_social_security_number') x(id)
    where x.id = any (p_ids)
  ),
  secondaries as (
    select ses.employee_id, jsonb_agg(ses.establishment_id order by ses.establishment_id) as list
    from app_public.employee_secondary_establishments ses
    where ses.employee_id = any (p_ids)
    group by ses.employee_id
  ),
  assignments as (
    select ta.employee_id,
           jsonb_agg(jsonb_build_object('id', ta.id, 'team', ta.team_id, 'team_name', t.name,
                                        'start_date', ta.start_date, 'end_date', ta.end_date)
                     order by ta.start_date nulls first, ta.id) as list
    from app_public.team_assignments ta
    join app_public.teams t on t.id = ta.team_id
    where ta.employee_id = any (p_ids)
    group by ta.employee_id
  ),
  contracts as (
    select c.employee_id,
           jsonb_agg(jsonb_build_object('id', c.id, 'type', c.contract_type_id, 'type_code', ct.code,
                                        'type_name', ct.name, 'start_date', c.start_date, 'end_date', c.end_date,
                                        'trial_end_date', c.trial_end_date, 'job_title', c.job_title,
                                        'weekly_hours', app_hidden.fmt_quantity(c.weekly_hours))
                     order by c.start_date, c.id) as list
    from app_public.contracts c
    join app_public.contract_types ct on ct.id = c.contract_type_id
    where c.employee_id = any (p_ids)
    group by c.employee_id
  )
  select emp.id,
         jsonb_build_object(
           'id', emp.id,
           'first_name', emp.first_name,
           'last_name', emp.last_name,
           'name', emp.first_name || ' ' || emp.last_name,
           'professional_email', emp.professional_email,
           'birth_date', emp.birth_date,
           'is_polyvalent', emp.is_polyvalent,
           'main_establishment', emp.main_establishment_id,
           'main_establishment_name', est.name,
           'secondary_establishments', coalesce(sec.list, '[]'::jsonb),
           'teams', coalesce(asg.list, '[]'::jsonb),
           'contracts', coalesce(con.list, '[]'::jsonb),
           'account', case when acc.id is not null
                           then jsonb_build_object('id', acc.id, 'username', acc.username, 'is_active', acc.is_active) end,
           'created_at', emp.created_at,
           'updated_at', emp.updated_at)
         || case when emp.id in (select r.id from ssn_readable r)
                 then jsonb_build_object('social_security_number', ssn.social_security_number)
                 else '{}'::jsonb end
  from emp
  left join app_public.establishments est on est.id = emp.main_establishment_id
  left join app_public.employee_social_security_numbers ssn on ssn.employee_id = emp.id
  left join secondaries sec on sec.employee_id = emp.id
  left join assignments asg on asg.employee_id = emp.id
  left join contracts con on con.employee_id = emp.id
  left join app_public.accounts acc on acc.employee_id = emp.id;
$$;

-- GET /api/employees/
create or replace function app_public.employees_list(p_scope text default null, p_search text default null,
                                          p_establishment int default null, p_team int default null,
                                          p_page int default 1, p_page_size int default 50)
returns jsonb
language sql stable as $$
  with scope as (
    select app_hidden.scope_establishment_ids() as ids where p_scope = 'perimeter'
  ),
  scope_employees as (
    select x.id from scope, lateral app_hidden.employees_of_establishments(scope.ids, app_hidden.today()) x(id)
    where scope.ids is not null
  ),
  establishment_employees as (
    select x.id from app_hidden.employees_of_establishments(array[p_establishment], app_hidden.today()) x(id)
    where p_establishment is not null
  ),
  filtered as (
    select e.id, e.first_name, e.last_name
    from app_public.employees e
    where (p_scope is distinct from 'perimeter' or (select s.ids from scope s) is null
           or e.id in (select se.id from scope_employees se))
      and (p_establishment is null or e.id in (select ee.id from establishment_employees ee))
      and (p_team is null or exists (select 1 from app_public.team_assignments ta
                                     where ta.employee_id = e.id and ta.team_id = p_team
                                       and app_hidden.date_in(app_hidden.today(), ta.start_date, ta.end_date)))
      and (coalesce(btrim(p_search), '') = ''
           or e.first_name || ' ' || e.last_name ilike app_hidden.like_pattern(p_search)
           or e.last_name || ' ' || e.first_name ilike app_hidden.like_pattern(p_search)
           or e.professional_email ilike app_hidden.like_pattern(p_search))
  ),
  page as (
    select f.id, row_number() over (order by lower(f.last_name), lower(f.first_name), f.id) as ord
    from filtered f
    order by ord
    limit app_hidden.page_limit(p_page_size) offset app_hidden.page_offset(p_page, p_page_size)
  )
  select jsonb_build_object(
    'count', (select count(*) from filtered),
    'results', coalesce((select jsonb_agg(j.doc order by p.ord)
                         from page p
                         join app_hidden.employees_json(array(select pg.id from page pg)) j on j.id = p.id),
                        '[]'::jsonb));
$$;
comment on function app_public.employees_list(text, text, integer, integer, integer, integer) is
'SPEC Documents and other routes, GET /api/employees/: one page of the employee records the caller reads
(directory holders all, Service Paie its payroll perimeter, everyone their own), by name, searchable,
filtered by establishment or team of today; scope=perimeter keeps those attached to the caller''s
establishments. The social security number only for its readers.';

-- GET /api/employees/<id>/
create or replace function app_public.employee_get(p_id int) returns jsonb
language plpgsql stable as $$
declare
  v_doc jsonb;
begin
  select j.doc into v_doc from app_hidden.employees_json(array[p_id]) j;
  if v_doc is null then
    perform app_hidden.not_found('Salarié introuvable.');
  end if;
  return v_doc;
end;
$$;
comment on function app_public.employee_get(integer) is
'SPEC Permissions (employee.view_employee_directory, employee.view_social_security_number), GET
/api/employees/<id>/: one employee record the caller reads (else 404) with workplaces, teams, contracts
and account; the social security number only for its readers.';

-- The contact address of an employee's account changed: the old address is told by e-mail
-- (outbox) and the account in the application, so a takeover does not go unnoticed. (The
-- employee audit line carries the addresses before and after.)
create or replace function app_private.tell_email_changed(p_employee int, p_old text, p_new text) returns void
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_account int := app_private.employee_account_id(p_employee);
  v_by text := coalesce(app_hidden.account_display_name(app_hidden.current_account_id()), 'Inconnu');
  v_body text;
begin
  if v_account is null then
    return;
  end if;
  v_body := format('L’adresse e-mail de votre compte a été modifiée par %s le %s : %s. '
                   'Si vous n’êtes pas à l’origine de ce changement, prévenez immédiatement votre service RH.',
                   v_by, app_hidden.fr_date(app_hidden.today()), coalesce(p_new, 'aucune adresse'));
  perform app_private.notify(v_account, 'Adresse e-mail modifiée', v_body, 'warning', 'employee', p_employee);
  if p_old is not null then
    insert into app_private.email_outbox (kind, to_address, subject, body_text, account_id)
    values ('email_changed', p_old, 'Adresse e-mail de votre compte modifiée',
            E'Bonjour,\n\n' || v_body || E'\n\nCe message est envoyé à votre ancienne adresse.', v_account);
  end if;
end;
$$;

-- Opens the account of a new employee record: no usable password (null hash), the username
-- given or derived from the name (first.last, then first.last2, ...), Salarié granted by the
-- accounts trigger, and the set-password invitation queued when a professional e-mail exists.
create or replace function app_private.open_employee_account(p_employee_id int, p_username text) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_employee app_public.employees;
  v_base text;
  v_username text := p_username;
  v_suffix int := 1;
  v_account_id int;
  v_invited boolean;
begin
  select * into v_employee from app_public.employees e where e.id = p_employee_id;
  if v_username is null then
    v_base := left(trim(both '.-' from app_hidden.ascii_slug(v_employee.first_name) || '.'
                                      || app_hidden.ascii_slug(v_employee.last_name)),
                  app_hidden.username_max_length() - 10);  -- room for the suffix of a homonym
    if length(v_base) < app_hidden.username_min_length() then
      v_base := 'salarie' || p_employee_id;
    end if;
    perform pg_advisory_xact_lock(hashtext('username:' || v_base));
    v_username := v_base;
    while app_private.username_taken(v_username) loop
      v_suffix := v_suffix + 1;
      v_username := v_base || v_suffix;
    end loop;
  end if;
  insert into app_public.accounts (username, employee_id) values (v_username, p_employee_id)
  returning id into v_account_id;
  insert into app_private.account_secrets (account_id, password_hash) values (v_account_id, null);
  v_invited := app_private.queue_invitation(v_account_id);
  return jsonb_build_object('id', v_account_id, 'username', v_username, 'invitation_queued', v_invited);
end;
$$;

-- The writes of the record's lists and number, once its rules have accepted the body.

-- The number sent (null removes it).
create or replace function app_hidden.employee_ssn_write(p_id int, p_number text) returns void
language plpgsql volatile as $$
begin
  if p_number is null then
    delete from app_public.employee_social_security_numbers s where s.employee_id = p_id;
  else
    insert into app_public.employee_social_security_numbers (employee_id, social_security_number)
    values (p_id, p_number)
    on conflict (employee_id) do update set social_security_number = excluded.social_security_number
    where app_public.employee_social_security_numbers.social_security_number is distinct from excluded.social_security_number;
  end if;
end;
$$;

-- The secondary workplaces become the list sent.
create or replace function app_hidden.employee_secondary_workplaces_write(p_id int, p_secondaries int[]) returns void
language plpgsql volatile as $$
begin
  delete from app_public.employee_secondary_establishments ses
  where ses.employee_id = p_id and not ses.establishment_id = any (p_secondaries);
  insert into app_public.employee_secondary_establishments (employee_id, establishment_id)
  select p_id, s.id from unnest(p_secondaries) s(id)
  on conflict do nothing;
end;
$$;

-- The contracts become the list sent: an item with id updates that contract, an item without
-- id creates one, a contract left out is deleted.
create or replace function app_hidden.employee_contracts_write(p_id int, p_contracts jsonb) returns void
language plpgsql volatile as $$
declare
  v_item jsonb;
  v_item_id int;
begin
  delete from app_public.contracts c
  where c.employee_id = p_id
    and not c.id in (select (x ->> 'id')::int from jsonb_array_elements(p_contracts) x where x ? 'id' and x ->> 'id' is not null);
  for v_item in select x from jsonb_array_elements(p_contracts) x loop
    v_item_id := app_hidden.in_int(v_item, 'id', 'contracts');
    if v_item_id is null then
      insert into app_public.contracts (employee_id, contract_type_id, start_date, end_date, trial_end_date, job_title, weekly_hours)
      values (p_id, app_hidden.in_int(v_item, 'type'), app_hidden.in_date(v_item, 'start_date'),
              app_hidden.in_date(v_item, 'end_date'), app_hidden.in_date(v_item, 'trial_end_date'),
              app_hidden.in_trimmed(v_item, 'job_title'), app_hidden.in_numeric(v_item, 'weekly_hours'));
    else
      update app_public.contracts c
      set contract_type_id = app_hidden.in_int(v_item, 'type'), start_date = app_hidden.in_date(v_item, 'start_date'),
          end_date = app_hidden.in_date(v_item, 'end_date'), trial_end_date = app_hidden.in_date(v_item, 'trial_end_date'),
          job_title = app_hidden.in_trimmed(v_item, 'job_title'), weekly_hours = app_hidden.in_numeric(v_item, 'weekly_hours')
      where c.id = v_item_id
        and (c.contract_type_id, c.start_date, c.end_date, c.trial_end_date, c.job_title, c.weekly_hours)
            is distinct from (app_hidden.in_int(v_item, 'type'), app_hidden.in_date(v_item, 'start_date'),
                              app_hidden.in_date(v_item, 'end_date'), app_hidden.in_date(v_item, 'trial_end_date'),
                              app_hidden.in_trimmed(v_item, 'job_title'), app_hidden.in_numeric(v_item, 'weekly_hours'));
    end if;
  end loop;
end;
$$;

-- The team assignments become the list sent (same replacement as the contracts).
create or replace function app_hidden.employee_team_assignments_write(p_id int, p_teams jsonb) returns void
language plpgsql volatile as $$
declare
  v_item jsonb;
  v_item_id int;
begin
  delete from app_public.team_assignments ta
  where ta.employee_id = p_id
    and not ta.id in (select (x ->> 'id')::int from jsonb_array_elements(p_teams) x where x ? 'id' and x ->> 'id' is not null);
  for v_item in select x from jsonb_array_elements(p_teams) x loop
    v_item_id := app_hidden.in_int(v_item, 'id', 'teams');
    if v_item_id is null then
      insert into app_public.team_assignments (employee_id, team_id, start_date, end_date)
      values (p_id, app_hidden.in_int(v_item, 'team'), app_hidden.in_date(v_item, 'start_date'), app_hidden.in_date(v_item, 'end_date'));
    else
      update app_public.team_assignments ta
      set team_id = app_hidden.in_int(v_item, 'team'), start_date = app_hidden.in_date(v_item, 'start_date'),
          end_date = app_hidden.in_date(v_item, 'end_date')
      where ta.id = v_item_id
        and (ta.team_id, ta.start_date, ta.end_date)
            is distinct from (app_hidden.in_int(v_item, 'team'), app_hidden.in_date(v_item, 'start_date'),
                              app_hidden.in_date(v_item, 'end_date'));
    end if;
  end loop;
end;
$$;

-- Validation and write of the record, shared by creation (p_id null), PUT and PATCH: the
-- typed values of the body (p_sent: the keys it sent; a key left out keeps the record's value,
-- the lists contracts and teams are JSON lists read item by item), each rule of
-- sql/employees/rules.sql asked, every refusal answered together (400 WV501), then the writes.
-- Runs as the API function's role (wfm_api): every write goes through the policies.
drop function if exists app_hidden.employee_save(int, jsonb, boolean);
create or replace function app_hidden.employee_save(
  p_id int, p_partial boolean, p_sent text[], p_first_name text, p_last_name text, p_professional_email text,
  p_birth_date date, p_is_polyvalent boolean, p_main_establishment int, p_secondary_establishments int[],
  p_social_security_number text, p_contracts jsonb, p_teams jsonb, p_username text) returns int
language plpgsql volatile as $$
declare
  v_creating boolean := p_id is null;
  v_scope int[] := app_hidden.perimeter_establishment_ids('employee.change_employee_record');
  v_ssn_sent boolean := app_hidden.sent(p_sent, 'social_security_number', p_social_security_number is not null);
  v_email_sent boolean := app_hidden.sent(p_sent, 'professional_email', p_professional_email is not null);
  v_birth_date_sent boolean := app_hidden.sent(p_sent, 'birth_date', p_birth_date is not null);
  v_main_sent boolean := app_hidden.sent(p_sent, 'main_establishment', p_main_establishment is not null);
  v_old app_public.employees;
  v_errors jsonb := '{}';
  v_id int := p_id;
  v_first_name text;
  v_last_name text;
  v_name_required boolean;
  v_email text;
  v_birth_date date;
  v_polyvalent boolean;
  v_main int;
  v_secondaries int[] := p_secondary_establishments;
  v_old_secondaries int[];
  v_ssn text;
  v_contracts jsonb := nullif(p_contracts, 'null'::jsonb);
  v_teams jsonb := nullif(p_teams, 'null'::jsonb);
begin
  if not v_creating then
    select * into v_old from app_public.employees e where e.id = p_id;
    if not found then
      perform app_hidden.not_found('Salarié introuvable.');
    end if;
  end if;
  -- The key itself is refused to whoever may not read the number (before anything else).
  if v_ssn_sent then
    perform app_hidden.employee_refuse_ssn_key(p_id);
  end if;
  perform app_hidden.employee_refuse_record_write(p_id);
  -- What the route schema refuses, for a caller that reaches the function without it (GraphQL).
  if app_hidden.id_list_refusal(v_secondaries) is not null then
    perform app_hidden.invalid('secondary_establishments', app_hidden.id_list_refusal(v_secondaries));
  end if;
  if jsonb_typeof(v_contracts) <> 'array' then
    perform app_hidden.invalid('contracts', 'Une liste est attendue.');
  end if;
  if jsonb_typeof(v_teams) <> 'array' then
    perform app_hidden.invalid('teams', 'Une liste est attendue.');
  end if;

  -- A name is required when creating, replacing (PUT) or sent; else the record's stays (and is
  -- checked as it is).
  v_first_name := app_hidden.trimmed(p_first_name);
  v_name_required := v_creating or not p_partial or app_hidden.sent(p_sent, 'first_name', p_first_name is not null);
  if not v_name_required then
    v_first_name := v_old.first_name;
  end if;
  v_errors := app_hidden.add_refusals(v_errors, 'first_name',
    app_hidden.employee_name_refusal(v_first_name, v_name_required, 'Le prénom est obligatoire.'));
  v_last_name := app_hidden.trimmed(p_last_name);
  v_name_required := v_creating or not p_partial or app_hidden.sent(p_sent, 'last_name', p_last_name is not null);
  if not v_name_required then
    v_last_name := v_old.last_name;
  end if;
  v_errors := app_hidden.add_refusals(v_errors, 'last_name',
    app_hidden.employee_name_refusal(v_last_name, v_name_required, 'Le nom est obligatoire.'));

  v_email := case when v_email_sent then app_hidden.trimmed(p_professional_email) else v_old.professional_email end;
  v_errors := app_hidden.add_refusals(v_errors, 'professional_email', coalesce(
    app_hidden.employee_email_refusal(case when v_email_sent then v_email end),
    app_hidden.employee_email_takeover_refusal(p_id, v_old.professional_email, v_email)));

  v_birth_date := case when v_birth_date_sent then p_birth_date else v_old.birth_date end;
  v_errors := app_hidden.add_refusals(v_errors, 'birth_date',
    app_hidden.employee_birth_date_refusal(case when v_birth_date_sent then v_birth_date end));

  v_polyvalent := coalesce(p_is_polyvalent, v_old.is_polyvalent, false);

  v_main := case when v_main_sent then p_main_establishment else v_old.main_establishment_id end;
  v_errors := app_hidden.add_refusals(v_errors, 'main_establishment', coalesce(
    app_hidden.establishment_unknown_refusal(case when v_main_sent then v_main end),
    app_hidden.employee_main_workplace_perimeter_refusal(
      v_main, v_creating or v_main is distinct from v_old.main_establishment_id, v_scope)));

  v_old_secondaries := case when v_creating then '{}'::int[]
                            else array(select ses.establishment_id from app_public.employee_secondary_establishments ses
                                       where ses.employee_id = p_id) end;
  if v_secondaries is not null then
    v_errors := app_hidden.add_refusals(v_errors, 'secondary_establishments', coalesce(
      app_hidden.employee_secondary_workplaces_unknown_refusal(v_secondaries),
      app_hidden.employee_main_not_secondary_refusal(v_main, v_secondaries),
      app_hidden.employee_secondary_workplaces_perimeter_refusal(v_secondaries, v_old_secondaries, v_scope)));
  end if;

  if v_ssn_sent then
    v_ssn := upper(replace(app_hidden.trimmed(p_social_security_number), ' ', ''));
    v_errors := app_hidden.add_refusals(v_errors, 'social_security_number', app_hidden.employee_ssn_refusal(v_ssn));
  end if;

  if app_hidden.sent(p_sent, 'username', p_username is not null) then
    v_errors := app_hidden.add_refusals(v_errors, 'username', app_hidden.employee_username_refusal(
      v_creating, case when v_creating then app_hidden.trimmed(p_username) end));
  end if;

  if v_contracts is not null then
    v_errors := app_hidden.add_error_list(v_errors, 'contracts', app_hidden.employee_contracts_refusals(p_id, v_contracts));
  end if;

  if v_teams is not null then
    v_errors := app_hidden.add_error_list(v_errors, 'teams', app_hidden.employee_team_assignments_refusals(p_id, v_teams, v_scope));
  end if;

  perform app_hidden.invalid_fields(v_errors, 'WV501') where v_errors <> '{}'::jsonb;

  -- Writes.
  if v_creating then
    insert into app_public.employees (first_name, last_name, professional_email, birth_date, is_polyvalent,
                                      main_establishment_id)
    values (v_first_name, v_last_name, v_email, v_birth_date, v_polyvalent, v_main);
    -- Not RETURNING: the new row is not yet in the snapshot the read policy consults.
    v_id := currval(pg_get_serial_sequence('app_public.employees', 'id'));
  else
    update app_public.employees e
    set first_name = v_first_name, last_name = v_last_name, professional_email = v_email,
        birth_date = v_birth_date, is_polyvalent = v_polyvalent, main_establishment_id = v_main
    where e.id = p_id
      and (e.first_name, e.last_name, e.professional_email, e.birth_date, e.is_polyvalent, e.main_establishment_id)
          is distinct from (v_first_name, v_last_name, v_email, v_birth_date, v_polyvalent, v_main);
    if v_email is distinct from v_old.professional_email then
      perform app_private.tell_email_changed(p_id, v_old.professional_email, v_email);
    end if;
  end if;
  if v_ssn_sent then
    if v_creating then
      perform app_hidden.employee_refuse_ssn_on_created_record(v_id);
    end if;
    perform app_hidden.employee_ssn_write(v_id, v_ssn);
  end if;
  if v_secondaries is not null then
    perform app_hidden.employee_secondary_workplaces_write(v_id, v_secondaries);
  end if;
  if v_contracts is not null then
    perform app_hidden.employee_contracts_write(v_id, v_contracts);
  end if;
  if v_teams is not null then
    perform app_hidden.employee_team_assignments_write(v_id, v_teams);
  end if;
  return v_id;
end;
$$;

-- POST /api/employees/: the record, its contracts and assignments, and its account (no
-- usable password; invitation queued when a professional e-mail exists). p_sent: the keys
-- the body sent (the number's key, even null, is refused to whoever may not read it).
drop function if exists app_public.employee_create(jsonb);
create or replace function app_public.employee_create(
  p_first_name text, p_last_name text, p_professional_email text default null, p_birth_date date default null,
  p_is_polyvalent boolean default null, p_main_establishment int default null, p_secondary_establishments int[] default null,
  p_social_security_number text default null, p_contracts jsonb default null, p_teams jsonb default null,
  p_username text default null, p_sent text[] default null) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_id int;
  v_account jsonb;
  v_doc jsonb;
begin
  v_id := app_hidden.employee_save(null, false, p_sent, p_first_name, p_last_name, p_professional_email, p_birth_date,
                                   p_is_polyvalent, p_main_establishment, p_secondary_establishments,
                                   p_social_security_number, p_contracts, p_teams, p_username);
  v_account := app_private.open_employee_account(v_id, app_hidden.trimmed(p_username));
  select j.doc into v_doc from app_hidden.employees_json(array[v_id]) j;
  return v_doc || jsonb_build_object('account', (v_account - 'invitation_queued') || jsonb_build_object('is_active', true),
                                     'invitation_queued', (v_account ->> 'invitation_queued')::boolean);
end;
$$;
comment on function app_public.employee_create(text, text, text, date, boolean, integer, integer[], text, jsonb, jsonb, text, text[]) is
'SPEC Permissions (employee.change_employee_record) and Authentication rule 4, POST /api/employees/: HR
creates an employee record with its contracts and team assignments, and opens its account (Salarié, no
usable password; a set-password invitation queued when a professional e-mail is given). Returns the
record with invitation_queued.';

-- PATCH /api/employees/<id>/: only the keys sent (p_sent).
drop function if exists app_public.employee_update(int, jsonb);
create or replace function app_public.employee_update(
  p_id int, p_first_name text default null, p_last_name text default null, p_professional_email text default null,
  p_birth_date date default null, p_is_polyvalent boolean default null, p_main_establishment int default null,
  p_secondary_establishments int[] default null, p_social_security_number text default null,
  p_contracts jsonb default null, p_teams jsonb default null, p_sent text[] default null) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_doc jsonb;
begin
  perform app_hidden.employee_save(p_id, true, p_sent, p_first_name, p_last_name, p_professional_email, p_birth_date,
                                   p_is_polyvalent, p_main_establishment, p_secondary_establishments,
                                   p_social_security_number, p_contracts, p_teams, null);
  select j.doc into v_doc from app_hidden.employees_json(array[p_id]) j;
  return v_doc;
end;
$$;
comment on function app_public.employee_update(integer, text, text, text, date, boolean, integer, integer[], text, jsonb, jsonb, text[]) is
'SPEC Permissions (employee.change_employee_record, employee.view_social_security_number), PATCH
/api/employees/<id>/: HR changes the keys sent (p_sent) of a record of its perimeter (a list sent replaces
contracts or team assignments; 404 outside the perimeter; the social security number key from a
non-reader gives 403).';

-- PUT /api/employees/<id>/: first_name and last_name required; other keys as PATCH (lists
-- absent stay as they are).
drop function if exists app_public.employee_replace(int, jsonb);
create or replace function app_public.employee_replace(
  p_id int, p_first_name text default null, p_last_name text default null, p_professional_email text default null,
  p_birth_date date default null, p_is_polyvalent boolean default null, p_main_establishment int default null,
  p_secondary_establishments int[] default null, p_social_security_number text default null,
  p_contracts jsonb default null, p_teams jsonb default null, p_sent text[] default null) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_doc jsonb;
begin
  perform app_hidden.employee_save(p_id, false, p_sent, p_first_name, p_last_name, p_professional_email, p_birth_date,
                                   p_is_polyvalent, p_main_establishment, p_secondary_establishments,
                                   p_social_security_number, p_contracts, p_teams, null);
  select j.doc into v_doc from app_hidden.employees_json(array[p_id]) j;
  return v_doc;
end;
$$;
comment on function app_public.employee_replace(integer, text, text, text, date, boolean, integer, integer[], text, jsonb, jsonb, text[]) is
'SPEC Permissions (employee.change_employee_record), PUT /api/employees/<id>/: as PATCH, with first_name
and last_name required; lists not sent stay as they are.';
