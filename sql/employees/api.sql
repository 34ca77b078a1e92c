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
  v_body := format('L''adresse e-mail de votre compte a été modifiée par %s le %s : %s. '
                   'Si vous n''êtes pas à l''origine de ce changement, prévenez immédiatement votre service RH.',
                   v_by, app_hidden.fr_date(app_hidden.today()), coalesce(p_new, 'aucune adresse'));
  perform app_private.notify(v_account, 'Adresse e-mail modifiée', v_body, 'warning', 'employee', p_employee);
  if p_old is not null then
    insert into app_private.email_outbox (kind, to_address, subject, body_text, account_id)
    values ('email_changed', p_old, 'Adresse e-mail de votre compte modifiée',
            E'Bonjour,\n\n' || v_body || E'\n\nCe message est envoyé à votre ancienne adresse.', v_account);
  end if;
end;
$$;

-- Is a username free (case-insensitive), whatever accounts the caller may read?
create or replace function app_private.username_taken(p_username text) returns boolean
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select exists (select 1 from app_public.accounts a where lower(a.username) = lower(p_username));
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
                                      || app_hidden.ascii_slug(v_employee.last_name)), 140);
    if length(v_base) < 2 then
      v_base := 'salarie' || p_employee_id;
    end if;
    perform pg_advisory_xact_lock(hashtext('username:' || v_base));
    v_username := v_base;
    while exists (select 1 from app_public.accounts a where lower(a.username) = lower(v_username)) loop
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

-- Validation and write of the record, shared by creation (p_id null) and update. Runs as
-- the API function's role (wfm_api): every write goes through the policies.
create or replace function app_hidden.employee_save(p_id int, p_body jsonb, p_partial boolean) returns int
language plpgsql volatile as $$
declare
  v_creating boolean := p_id is null;
  v_me int := app_hidden.current_account_id();
  v_scope int[] := app_hidden.perimeter_establishment_ids('employee.change_employee_record');
  v_old app_public.employees;
  v_errors jsonb := '{}';
  v_id int := p_id;
  v_first_name text;
  v_last_name text;
  v_email text;
  v_birth_date date;
  v_polyvalent boolean;
  v_main int;
  v_secondaries int[];
  v_old_secondaries int[];
  v_ssn text;
  v_username text;
  v_contracts jsonb;
  v_teams jsonb;
  v_item jsonb;
  v_label text;
  v_type int;
  v_start date;
  v_end date;
  v_trial date;
  v_job text;
  v_hours numeric;
  v_item_id int;
  v_team int;
  v_kept int[] := '{}';
  i int;
  j int;
  v_ranges daterange[];
  v_starts date[];
  v_team_ids int[];
  v_existing app_public.team_assignments;
begin
  if not v_creating then
    select * into v_old from app_public.employees e where e.id = p_id;
    if not found then
      perform app_hidden.not_found('Salarié introuvable.');
    end if;
  end if;

  -- The key itself is refused to whoever may not read the number (before anything else).
  if p_body ? 'social_security_number' then
    if v_creating and not app_hidden.current_account_has('employee.view_social_security_number')
       or not v_creating and not app_hidden.may(v_me, 'employee.view_social_security_number', p_id) then
      perform app_hidden.forbidden('Vous n''avez pas le droit de lire ni d''écrire le numéro de sécurité sociale : '
                                   'retirez ce champ de la requête.', 'WF501');
    end if;
  end if;
  if not app_hidden.current_account_has('employee.change_employee_record') then
    if v_creating then
      perform app_hidden.forbidden('Vous n''avez pas le droit de créer ou de modifier une fiche salarié.', 'WF502');
    end if;
    -- A record outside every perimeter of the caller: not found before forbidden (SPEC Errors).
    perform app_hidden.refuse_outside_or_forbid(p_id,
      'Vous n''avez pas le droit de créer ou de modifier une fiche salarié.', 'WF502');
  end if;
  if not v_creating and not app_hidden.may(v_me, 'employee.change_employee_record', p_id) then
    -- Outside the perimeter: not found (SPEC Errors), as for every row outside it.
    perform app_hidden.not_found('Salarié introuvable dans votre périmètre.');
  end if;

  -- Scalar fields.
  v_first_name := coalesce(app_hidden.in_trimmed(p_body, 'first_name'), case when p_body ? 'first_name' then null else v_old.first_name end);
  if (v_creating or not p_partial or p_body ? 'first_name') and app_hidden.in_trimmed(p_body, 'first_name') is null then
    v_errors := app_hidden.add_error(v_errors, 'first_name', 'Le prénom est obligatoire.');
  elsif char_length(v_first_name) > app_hidden.person_name_max_length() then
    v_errors := app_hidden.add_error(v_errors, 'first_name', app_hidden.max_length_message(app_hidden.person_name_max_length()));
  end if;
  v_last_name := coalesce(app_hidden.in_trimmed(p_body, 'last_name'), case when p_body ? 'last_name' then null else v_old.last_name end);
  if (v_creating or not p_partial or p_body ? 'last_name') and app_hidden.in_trimmed(p_body, 'last_name') is null then
    v_errors := app_hidden.add_error(v_errors, 'last_name', 'Le nom est obligatoire.');
  elsif char_length(v_last_name) > app_hidden.person_name_max_length() then
    v_errors := app_hidden.add_error(v_errors, 'last_name', app_hidden.max_length_message(app_hidden.person_name_max_length()));
  end if;

  v_email := case when p_body ? 'professional_email' then app_hidden.in_trimmed(p_body, 'professional_email')
                  else v_old.professional_email end;
  if p_body ? 'professional_email' and v_email is not null
     and (v_email !~ app_hidden.email_pattern() or char_length(v_email) > app_hidden.email_max_length()) then
    v_errors := app_hidden.add_error(v_errors, 'professional_email', 'Adresse e-mail invalide (exemple : prenom.nom@etablissement.fr).');
  elsif not v_creating and v_email is distinct from v_old.professional_email
        and not app_hidden.account_rights_covered(app_private.employee_account_id(p_id)) then
    -- The address receives the password-reset links of the account: changing it hands the
    -- account over (issue 11).
    v_errors := app_hidden.add_error(v_errors, 'professional_email',
      'Ce compte détient des droits que vous ne couvrez pas : seul un responsable qui les couvre peut changer '
      'son adresse e-mail (elle reçoit les liens de réinitialisation du mot de passe).');
  end if;

  v_birth_date := case when p_body ? 'birth_date' then app_hidden.in_date(p_body, 'birth_date') else v_old.birth_date end;
  if p_body ? 'birth_date' and v_birth_date is not null
     and (v_birth_date >= app_hidden.today() or v_birth_date < date '1900-01-01') then
    v_errors := app_hidden.add_error(v_errors, 'birth_date', 'Date de naissance invalide : elle doit être passée et postérieure au 01/01/1900.');
  end if;

  v_polyvalent := coalesce(app_hidden.in_bool(p_body, 'is_polyvalent'), v_old.is_polyvalent, false);

  v_main := case when p_body ? 'main_establishment' then app_hidden.in_int(p_body, 'main_establishment')
                 else v_old.main_establishment_id end;
  if p_body ? 'main_establishment' and v_main is not null
     and not exists (select 1 from app_public.establishments e where e.id = v_main) then
    v_errors := app_hidden.add_error(v_errors, 'main_establishment', format('Établissement n° %s introuvable.', v_main));
  elsif v_scope is not null and (v_creating or v_main is distinct from v_old.main_establishment_id) then
    if v_main is null then
      v_errors := app_hidden.add_error(v_errors, 'main_establishment',
        'Choisissez un établissement principal de votre périmètre : sans lui, la fiche sortirait de votre périmètre.');
    elsif not v_main = any (v_scope) then
      v_errors := app_hidden.add_error(v_errors, 'main_establishment', 'Cet établissement n''est pas dans votre périmètre.');
    end if;
  end if;

  v_old_secondaries := case when v_creating then '{}'::int[]
                            else array(select ses.establishment_id from app_public.employee_secondary_establishments ses
                                       where ses.employee_id = p_id) end;
  v_secondaries := app_hidden.in_ids(p_body, 'secondary_establishments');
  if v_secondaries is not null then
    if exists (select 1 from unnest(v_secondaries) s(id)
               where not exists (select 1 from app_public.establishments e where e.id = s.id)) then
      v_errors := app_hidden.add_error(v_errors, 'secondary_establishments',
        format('Établissement introuvable : %s.', (select string_agg(s.id::text, ', ') from unnest(v_secondaries) s(id)
                                                   where not exists (select 1 from app_public.establishments e where e.id = s.id))));
    elsif v_main = any (v_secondaries) then
      v_errors := app_hidden.add_error(v_errors, 'secondary_establishments',
        'L''établissement principal ne peut pas être aussi un établissement secondaire.');
    elsif v_scope is not null and exists (
        select 1 from ((select unnest(v_secondaries) except select unnest(v_old_secondaries))
                       union
                       (select unnest(v_old_secondaries) except select unnest(v_secondaries))) d(id)
        where not d.id = any (v_scope)) then
      v_errors := app_hidden.add_error(v_errors, 'secondary_establishments',
        'Vous ne pouvez ajouter ou retirer que des établissements de votre périmètre.');
    end if;
  end if;

  if p_body ? 'social_security_number' then
    v_ssn := upper(replace(app_hidden.in_trimmed(p_body, 'social_security_number'), ' ', ''));
    if v_ssn is not null
       and v_ssn !~ app_hidden.social_security_number_pattern() then
      v_errors := app_hidden.add_error(v_errors, 'social_security_number',
        'Numéro de sécurité sociale invalide : 13 chiffres, ou 15 avec la clé (exemple : 2850175123456).');
    end if;
  end if;

  if p_body ? 'username' then
    if not v_creating then
      v_errors := app_hidden.add_error(v_errors, 'username', 'L''identifiant se choisit à la création de la fiche seulement.');
    else
      v_username := app_hidden.in_trimmed(p_body, 'username');
      if v_username is not null and v_username !~ app_hidden.username_pattern() then
        v_errors := app_hidden.add_error(v_errors, 'username', format(
          'Identifiant invalide : de 2 à %s caractères parmi lettres, chiffres et . _ @ + -.', app_hidden.username_max_length()));
      elsif v_username is not null and app_private.username_taken(v_username) then
        v_errors := app_hidden.add_error(v_errors, 'username', format('L''identifiant « %s » est déjà utilisé.', v_username));
      end if;
    end if;
  end if;

  -- Contracts: the list sent replaces the record's contracts (an item with id updates that
  -- contract, an item without id creates one, a contract left out is deleted).
  v_contracts := app_hidden.in_array(p_body, 'contracts');
  if v_contracts is not null then
    v_ranges := '{}';
    v_starts := '{}';
    for i in 0 .. jsonb_array_length(v_contracts) - 1 loop
      v_item := v_contracts -> i;
      v_label := format('Contrat n° %s : ', i + 1);
      if jsonb_typeof(v_item) <> 'object' then
        v_errors := app_hidden.add_error(v_errors, 'contracts', v_label || 'un objet est attendu.');
        continue;
      end if;
      v_item_id := app_hidden.in_int(v_item, 'id', 'contracts');
      if v_item_id is not null and (v_creating or not exists (select 1 from app_public.contracts c
                                                            where c.id = v_item_id and c.employee_id = p_id)) then
        v_errors := app_hidden.add_error(v_errors, 'contracts', v_label || 'ce contrat n''appartient pas à ce salarié.');
      end if;
      v_type := app_hidden.in_int(v_item, 'type', 'contracts');
      if v_type is null then
        v_errors := app_hidden.add_error(v_errors, 'contracts', v_label || 'le type de contrat est obligatoire.');
      elsif not exists (select 1 from app_public.contract_types ct where ct.id = v_type) then
        v_errors := app_hidden.add_error(v_errors, 'contracts', v_label || format('type de contrat n° %s introuvable.', v_type));
      end if;
      v_start := app_hidden.in_date(v_item, 'start_date', 'contracts');
      v_end := app_hidden.in_date(v_item, 'end_date', 'contracts');
      v_trial := app_hidden.in_date(v_item, 'trial_end_date', 'contracts');
      if v_start is null then
        v_errors := app_hidden.add_error(v_errors, 'contracts', v_label || 'la date de début est obligatoire.');
      else
        if v_end < v_start then
          v_errors := app_hidden.add_error(v_errors, 'contracts', v_label || 'la date de fin précède la date de début.');
        end if;
        if v_trial < v_start then
          v_errors := app_hidden.add_error(v_errors, 'contracts', v_label || 'la fin de période d''essai précède la date de début.');
        elsif v_trial > v_end then
          v_errors := app_hidden.add_error(v_errors, 'contracts', v_label || 'la fin de période d''essai dépasse la fin du contrat.');
        end if;
      end if;
      v_job := app_hidden.in_trimmed(v_item, 'job_title', 'contracts');
      if char_length(v_job) > app_hidden.job_title_max_length() then
        v_errors := app_hidden.add_error(v_errors, 'contracts',
          v_label || format('l''intitulé de poste fait au plus %s caractères.', app_hidden.job_title_max_length()));
      end if;
      v_hours := app_hidden.in_numeric(v_item, 'weekly_hours', 'contracts');
      if v_hours is not null and (v_hours <= 0 or v_hours > 48) then
        v_errors := app_hidden.add_error(v_errors, 'contracts', v_label || 'la durée hebdomadaire doit être comprise entre 0 et 48 heures.');
      end if;
      if v_start is not null and (v_end is null or v_end >= v_start) then
        for j in 1 .. coalesce(array_length(v_ranges, 1), 0) loop
          if v_ranges[j] && daterange(v_start, v_end, '[]') then
            v_errors := app_hidden.add_error(v_errors, 'contracts',
              format('Les contrats n° %s et n° %s se chevauchent : un salarié a un seul contrat à la fois.', j, i + 1));
          end if;
        end loop;
      end if;
      v_ranges := v_ranges || case when v_start is not null and (v_end is null or v_end >= v_start)
                                   then daterange(v_start, v_end, '[]') else 'empty'::daterange end;
    end loop;
  end if;

  -- Team assignments: same replacement rule; a restricted writer adds, changes or removes
  -- only assignments to teams having an establishment in their perimeter.
  v_teams := app_hidden.in_array(p_body, 'teams');
  if v_teams is not null then
    v_ranges := '{}';
    v_team_ids := '{}';
    for i in 0 .. jsonb_array_length(v_teams) - 1 loop
      v_item := v_teams -> i;
      v_label := format('Affectation n° %s : ', i + 1);
      if jsonb_typeof(v_item) <> 'object' then
        v_errors := app_hidden.add_error(v_errors, 'teams', v_label || 'un objet est attendu.');
        v_ranges := v_ranges || 'empty'::daterange;
        v_team_ids := v_team_ids || null::int;
        continue;
      end if;
      v_item_id := app_hidden.in_int(v_item, 'id', 'teams');
      v_existing := null;
      if v_item_id is not null then
        select * into v_existing from app_public.team_assignments ta where ta.id = v_item_id and ta.employee_id = p_id;
        if v_creating or v_existing.id is null then
          v_errors := app_hidden.add_error(v_errors, 'teams', v_label || 'cette affectation n''appartient pas à ce salarié.');
        end if;
      end if;
      v_team := app_hidden.in_int(v_item, 'team', 'teams');
      v_start := app_hidden.in_date(v_item, 'start_date', 'teams');
      v_end := app_hidden.in_date(v_item, 'end_date', 'teams');
      if v_team is null then
        v_errors := app_hidden.add_error(v_errors, 'teams', v_label || 'l''équipe est obligatoire.');
      elsif not exists (select 1 from app_public.teams t where t.id = v_team) then
        v_errors := app_hidden.add_error(v_errors, 'teams', v_label || format('équipe n° %s introuvable.', v_team));
      elsif v_scope is not null
            and (v_existing.id is null or v_existing.team_id <> v_team or v_existing.start_date is distinct from v_start
                 or v_existing.end_date is distinct from v_end)
            and not exists (select 1 from app_public.team_establishments te
                            where te.team_id = v_team and te.establishment_id = any (v_scope)) then
        v_errors := app_hidden.add_error(v_errors, 'teams', v_label || 'cette équipe n''a aucun établissement dans votre périmètre.');
      end if;
      if v_end < v_start then
        v_errors := app_hidden.add_error(v_errors, 'teams', v_label || 'la date de fin précède la date de début.');
      elsif v_team is not null then
        for j in 1 .. coalesce(array_length(v_ranges, 1), 0) loop
          if v_team_ids[j] = v_team and v_ranges[j] && daterange(v_start, v_end, '[]') then
            v_errors := app_hidden.add_error(v_errors, 'teams',
              format('Les affectations n° %s et n° %s à la même équipe se chevauchent.', j, i + 1));
          end if;
        end loop;
      end if;
      v_ranges := v_ranges || case when v_end is null or v_start is null or v_end >= v_start
                                   then daterange(v_start, v_end, '[]') else 'empty'::daterange end;
      v_team_ids := v_team_ids || v_team;
    end loop;
    if v_scope is not null and not v_creating and exists (
        select 1 from app_public.team_assignments ta
        where ta.employee_id = p_id
          and not ta.id in (select (x ->> 'id')::int from jsonb_array_elements(v_teams) x
                            where jsonb_typeof(x) = 'object' and jsonb_typeof(x -> 'id') = 'number')
          and not exists (select 1 from app_public.team_establishments te
                          where te.team_id = ta.team_id and te.establishment_id = any (v_scope))) then
      v_errors := app_hidden.add_error(v_errors, 'teams',
        'Vous ne pouvez pas retirer une affectation à une équipe hors de votre périmètre.');
    end if;
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

  if p_body ? 'social_security_number' then
    -- Created records: the number needs the right on the new record too.
    if v_creating and not app_hidden.may(v_me, 'employee.view_social_security_number', v_id) then
      perform app_hidden.forbidden('Vous n''avez pas le droit d''écrire le numéro de sécurité sociale de ce salarié : '
                                   'retirez ce champ de la requête.', 'WF501');
    end if;
    if v_ssn is null then
      delete from app_public.employee_social_security_numbers s where s.employee_id = v_id;
    else
      insert into app_public.employee_social_security_numbers (employee_id, social_security_number)
      values (v_id, v_ssn)
      on conflict (employee_id) do update set social_security_number = excluded.social_security_number
      where app_public.employee_social_security_numbers.social_security_number is distinct from excluded.social_security_number;
    end if;
  end if;

  if v_secondaries is not null then
    delete from app_public.employee_secondary_establishments ses
    where ses.employee_id = v_id and not ses.establishment_id = any (v_secondaries);
    insert into app_public.employee_secondary_establishments (employee_id, establishment_id)
    select v_id, s.id from unnest(v_secondaries) s(id)
    on conflict do nothing;
  end if;

  if v_contracts is not null then
    delete from app_public.contracts c
    where c.employee_id = v_id
      and not c.id in (select (x ->> 'id')::int from jsonb_array_elements(v_contracts) x where x ? 'id' and x ->> 'id' is not null);
    for v_item in select x from jsonb_array_elements(v_contracts) x loop
      v_item_id := app_hidden.in_int(v_item, 'id', 'contracts');
      if v_item_id is null then
        insert into app_public.contracts (employee_id, contract_type_id, start_date, end_date, trial_end_date, job_title, weekly_hours)
        values (v_id, app_hidden.in_int(v_item, 'type'), app_hidden.in_date(v_item, 'start_date'),
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
  end if;

  if v_teams is not null then
    delete from app_public.team_assignments ta
    where ta.employee_id = v_id
      and not ta.id in (select (x ->> 'id')::int from jsonb_array_elements(v_teams) x where x ? 'id' and x ->> 'id' is not null);
    for v_item in select x from jsonb_array_elements(v_teams) x loop
      v_item_id := app_hidden.in_int(v_item, 'id', 'teams');
      if v_item_id is null then
        insert into app_public.team_assignments (employee_id, team_id, start_date, end_date)
        values (v_id, app_hidden.in_int(v_item, 'team'), app_hidden.in_date(v_item, 'start_date'), app_hidden.in_date(v_item, 'end_date'));
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
  end if;

  return v_id;
end;
$$;

-- POST /api/employees/: the record, its contracts and assignments, and its account (no
-- usable password; invitation queued when a professional e-mail exists).
create or replace function app_public.employee_create(p_body jsonb) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_id int;
  v_account jsonb;
  v_doc jsonb;
begin
  v_id := app_hidden.employee_save(null, p_body, false);
  v_account := app_private.open_employee_account(v_id, app_hidden.in_trimmed(p_body, 'username'));
  select j.doc into v_doc from app_hidden.employees_json(array[v_id]) j;
  return v_doc || jsonb_build_object('account', (v_account - 'invitation_queued') || jsonb_build_object('is_active', true),
                                     'invitation_queued', (v_account ->> 'invitation_queued')::boolean);
end;
$$;
comment on function app_public.employee_create(jsonb) is
'SPEC Permissions (employee.change_employee_record) and Authentication rule 4, POST /api/employees/: HR
creates an employee record with its contracts and team assignments, and opens its account (Salarié, no
usable password; a set-password invitation queued when a professional e-mail is given). Returns the
record with invitation_queued.';

-- PATCH /api/employees/<id>/: only the keys sent.
create or replace function app_public.employee_update(p_id int, p_body jsonb) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_doc jsonb;
begin
  perform app_hidden.employee_save(p_id, p_body, true);
  select j.doc into v_doc from app_hidden.employees_json(array[p_id]) j;
  return v_doc;
end;
$$;
comment on function app_public.employee_update(integer, jsonb) is
'SPEC Permissions (employee.change_employee_record, employee.view_social_security_number), PATCH
/api/employees/<id>/: HR changes the keys sent of a record of its perimeter (a list sent replaces
contracts or team assignments; 404 outside the perimeter; the social security number key from a
non-reader gives 403).';

-- PUT /api/employees/<id>/: first_name and last_name required; other keys as PATCH (lists
-- absent stay as they are).
create or replace function app_public.employee_replace(p_id int, p_body jsonb) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_doc jsonb;
begin
  perform app_hidden.employee_save(p_id, p_body, false);
  select j.doc into v_doc from app_hidden.employees_json(array[p_id]) j;
  return v_doc;
end;
$$;
comment on function app_public.employee_replace(integer, jsonb) is
'SPEC Permissions (employee.change_employee_record), PUT /api/employees/<id>/: as PATCH, with first_name
and last_name required; lists not sent stay as they are.';
