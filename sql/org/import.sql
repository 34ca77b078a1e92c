-- Organisation file import (CONTRACT section 6). One call, one transaction: the first bad
-- path aborts everything with "path: message" (SQLSTATE WV020, DETAIL = path).
-- Passwords arrive already hashed (argon2id, by the CLI) under "password_hash".
-- Functions are "create or replace" so that a later migration re-includes this file to change them.

create or replace function app_private.import_fail(p_path text, p_message text) returns void
language plpgsql volatile as $$
begin
  raise exception using errcode = 'WV020', message = p_path || ': ' || p_message, detail = p_path;
end;
$$;

-- Refuses keys outside the allowed list (typos would otherwise be silently ignored).
create or replace function app_private.import_check_keys(p_obj jsonb, p_path text, p_allowed text[]) returns void
language plpgsql volatile as $$
declare
  v_key text;
begin
  if jsonb_typeof(p_obj) is distinct from 'object' then
    perform app_private.import_fail(p_path, 'expected an object');
  end if;
  for v_key in select jsonb_object_keys(p_obj) loop
    if not v_key = any (p_allowed) then
      perform app_private.import_fail(p_path || '.' || v_key, 'unknown field');
    end if;
  end loop;
end;
$$;

create or replace function app_private.import_text(p_obj jsonb, p_key text, p_path text, p_required boolean default true)
returns text
language plpgsql volatile as $$
declare
  v jsonb := p_obj -> p_key;
begin
  if v is null or jsonb_typeof(v) = 'null' then
    if p_required then
      perform app_private.import_fail(p_path || '.' || p_key, 'required');
    end if;
    return null;
  end if;
  if jsonb_typeof(v) <> 'string' then
    perform app_private.import_fail(p_path || '.' || p_key, 'expected a string');
  end if;
  if p_required and btrim(v #>> '{}') = '' then
    perform app_private.import_fail(p_path || '.' || p_key, 'must not be empty');
  end if;
  return v #>> '{}';
end;
$$;

create or replace function app_private.import_bool(p_obj jsonb, p_key text, p_path text, p_default boolean)
returns boolean
language plpgsql volatile as $$
declare
  v jsonb := p_obj -> p_key;
begin
  if v is null or jsonb_typeof(v) = 'null' then
    return p_default;
  end if;
  if jsonb_typeof(v) <> 'boolean' then
    perform app_private.import_fail(p_path || '.' || p_key, 'expected true or false');
  end if;
  return v::boolean;
end;
$$;

create or replace function app_private.import_date(p_obj jsonb, p_key text, p_path text, p_required boolean default false)
returns date
language plpgsql volatile as $$
declare
  v text := app_private.import_text(p_obj, p_key, p_path, p_required);
begin
  if v is null then
    return null;
  end if;
  if v !~ '^\d{4}-\d{2}-\d{2}$' then
    perform app_private.import_fail(p_path || '.' || p_key, format('invalid date "%s" (expected YYYY-MM-DD)', v));
  end if;
  begin
    return v::date;
  exception when others then
    perform app_private.import_fail(p_path || '.' || p_key, format('invalid date "%s"', v));
  end;
end;
$$;

create or replace function app_private.import_time(p_obj jsonb, p_key text, p_path text, p_required boolean default false)
returns time
language plpgsql volatile as $$
declare
  v text := app_private.import_text(p_obj, p_key, p_path, p_required);
begin
  if v is null then
    return null;
  end if;
  if v !~ '^([01]\d|2[0-3]):[0-5]\d$' then
    perform app_private.import_fail(p_path || '.' || p_key, format('invalid time "%s" (expected HH:MM)', v));
  end if;
  return v::time;
end;
$$;

create or replace function app_private.import_timestamptz(p_obj jsonb, p_key text, p_path text)
returns timestamptz
language plpgsql volatile as $$
declare
  v text := app_private.import_text(p_obj, p_key, p_path, true);
begin
  if v !~ '^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?(Z|[+-]\d{2}:\d{2})$' then
    perform app_private.import_fail(p_path || '.' || p_key, format('invalid timestamp "%s" (expected ISO 8601 with offset)', v));
  end if;
  begin
    return v::timestamptz;
  exception when others then
    perform app_private.import_fail(p_path || '.' || p_key, format('invalid timestamp "%s"', v));
  end;
end;
$$;

-- An array of strings (keys); null or absent gives an empty array.
create or replace function app_private.import_keys(p_obj jsonb, p_key text, p_path text) returns text[]
language plpgsql volatile as $$
declare
  v jsonb := p_obj -> p_key;
  v_result text[] := '{}';
  i int;
begin
  if v is null or jsonb_typeof(v) = 'null' then
    return v_result;
  end if;
  if jsonb_typeof(v) <> 'array' then
    perform app_private.import_fail(p_path || '.' || p_key, 'expected an array');
  end if;
  for i in 0 .. jsonb_array_length(v) - 1 loop
    if jsonb_typeof(v -> i) <> 'string' then
      perform app_private.import_fail(format('%s.%s[%s]', p_path, p_key, i), 'expected a string');
    end if;
    v_result := v_result || (v ->> i);
  end loop;
  return v_result;
end;
$$;

create or replace function app_private.import_section(p_doc jsonb, p_section text) returns jsonb
language plpgsql volatile as $$
declare
  v jsonb := p_doc -> p_section;
begin
  if v is null or jsonb_typeof(v) = 'null' then
    return '[]'::jsonb;
  end if;
  if jsonb_typeof(v) <> 'array' then
    perform app_private.import_fail(p_section, 'expected an array');
  end if;
  return v;
end;
$$;

-- Registers a key of a section, refusing duplicates; returns the updated key map.
create or replace function app_private.import_register(p_map jsonb, p_key text, p_id int, p_path text) returns jsonb
language plpgsql volatile as $$
begin
  if p_map ? p_key then
    perform app_private.import_fail(p_path || '.key', format('duplicate key "%s"', p_key));
  end if;
  return p_map || jsonb_build_object(p_key, p_id);
end;
$$;

create or replace function app_private.import_lookup(p_map jsonb, p_key text, p_path text, p_what text) returns int
language plpgsql volatile as $$
begin
  if p_key is null then
    return null;
  end if;
  if not p_map ? p_key then
    perform app_private.import_fail(p_path, format('unknown %s "%s"', p_what, p_key));
  end if;
  return (p_map ->> p_key)::int;
end;
$$;

create or replace function app_private.import_organisation(p_doc jsonb) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_est jsonb := '{}';
  v_teams jsonb := '{}';
  v_posts jsonb := '{}';
  v_emps jsonb := '{}';
  v_accounts jsonb := '{}';
  v_on_call jsonb := '{}';
  v_item jsonb;
  v_sub jsonb;
  v_path text;
  v_sub_path text;
  v_key text;
  v_id int;
  v_emp_id int;
  v_tpl_id int;
  i int;
  j int;
  k int;
  v_text text;
  v_keys text[];
  v_day text;
  v_days text[] := array['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'];
  v_first_start date;
  v_start date;
  v_end date;
  v_type_id int;
  v_role_id smallint;
  v_year int;
  v_amount numeric;
  v_counter_id int;
  v_start_at timestamptz;
  v_end_at timestamptz;
  v_time_start time;
  v_time_end time;
  v_break_start time;
  v_break_end time;
begin
  perform app_private.import_check_keys(p_doc, '$',
    array['establishments', 'teams', 'posts', 'employees', 'accounts', 'on_call']);

  -- establishments
  v_sub := app_private.import_section(p_doc, 'establishments');
  for i in 0 .. jsonb_array_length(v_sub) - 1 loop
    v_item := v_sub -> i;
    v_path := format('establishments[%s]', i);
    perform app_private.import_check_keys(v_item, v_path, array['key', 'name', 'count_base']);
    v_key := app_private.import_text(v_item, 'key', v_path);
    v_text := coalesce(app_private.import_text(v_item, 'count_base', v_path, false), 'ouvrables');
    if v_text not in ('ouvrables', 'ouvres') then
      perform app_private.import_fail(v_path || '.count_base', format('unknown count base "%s" (ouvrables or ouvres)', v_text));
    end if;
    if exists (select 1 from app_public.establishments e
               where lower(e.name) = lower(app_private.import_text(v_item, 'name', v_path))) then
      perform app_private.import_fail(v_path || '.name', format('an establishment named "%s" already exists', v_item ->> 'name'));
    end if;
    insert into app_public.establishments (name, count_base)
    values (app_private.import_text(v_item, 'name', v_path), v_text)
    returning id into v_id;
    v_est := app_private.import_register(v_est, v_key, v_id, v_path);
  end loop;

  -- teams
  v_sub := app_private.import_section(p_doc, 'teams');
  for i in 0 .. jsonb_array_length(v_sub) - 1 loop
    v_item := v_sub -> i;
    v_path := format('teams[%s]', i);
    perform app_private.import_check_keys(v_item, v_path, array['key', 'name', 'establishments']);
    v_key := app_private.import_text(v_item, 'key', v_path);
    insert into app_public.teams (name) values (app_private.import_text(v_item, 'name', v_path))
    returning id into v_id;
    v_teams := app_private.import_register(v_teams, v_key, v_id, v_path);
    v_keys := app_private.import_keys(v_item, 'establishments', v_path);
    for j in 1 .. coalesce(array_length(v_keys, 1), 0) loop
      insert into app_public.team_establishments (team_id, establishment_id)
      values (v_id, app_private.import_lookup(v_est, v_keys[j], format('%s.establishments[%s]', v_path, j - 1), 'establishment'))
      on conflict do nothing;
    end loop;
  end loop;

  -- posts
  v_sub := app_private.import_section(p_doc, 'posts');
  for i in 0 .. jsonb_array_length(v_sub) - 1 loop
    v_item := v_sub -> i;
    v_path := format('posts[%s]', i);
    perform app_private.import_check_keys(v_item, v_path,
      array['key', 'code', 'label', 'establishment', 'start_time', 'end_time', 'break_start_time', 'break_end_time', 'break_paid']);
    v_key := app_private.import_text(v_item, 'key', v_path);
    v_text := app_private.import_text(v_item, 'code', v_path);
    if v_text !~ '^[A-Za-z0-9][A-Za-z0-9_+\-]{0,15}$' then
      perform app_private.import_fail(v_path || '.code', format('invalid post code "%s"', v_text));
    end if;
    if exists (select 1 from app_public.absence_types t where lower(t.code) = lower(v_text)) then
      perform app_private.import_fail(v_path || '.code', format('post code "%s" is already an absence type code', v_text));
    end if;
    v_time_start := app_private.import_time(v_item, 'start_time', v_path, true);
    v_time_end := app_private.import_time(v_item, 'end_time', v_path, true);
    if v_time_start = v_time_end then
      perform app_private.import_fail(v_path || '.end_time', 'end_time must differ from start_time');
    end if;
    v_break_start := app_private.import_time(v_item, 'break_start_time', v_path);
    v_break_end := app_private.import_time(v_item, 'break_end_time', v_path);
    if (v_break_start is null) <> (v_break_end is null) then
      perform app_private.import_fail(v_path || '.break_end_time', 'break_start_time and break_end_time go together');
    end if;
    v_id := app_private.import_lookup(v_est, app_private.import_text(v_item, 'establishment', v_path),
                                      v_path || '.establishment', 'establishment');
    if exists (select 1 from app_public.posts p where p.establishment_id = v_id and lower(p.code) = lower(v_text)) then
      perform app_private.import_fail(v_path || '.code', format('post code "%s" is already used in this establishment', v_text));
    end if;
    insert into app_public.posts (code, label, establishment_id, start_time, end_time, break_start_time, break_end_time, break_paid)
    values (v_text, app_private.import_text(v_item, 'label', v_path), v_id, v_time_start, v_time_end,
            v_break_start, v_break_end, app_private.import_bool(v_item, 'break_paid', v_path, false))
    returning id into v_id;
    v_posts := app_private.import_register(v_posts, v_key, v_id, v_path);
  end loop;

  -- employees
  v_sub := app_private.import_section(p_doc, 'employees');
  for i in 0 .. jsonb_array_length(v_sub) - 1 loop
    v_item := v_sub -> i;
    v_path := format('employees[%s]', i);
    perform app_private.import_check_keys(v_item, v_path,
      array['key', 'first_name', 'last_name', 'professional_email', 'main_establishment', 'secondary_establishments',
            'teams', 'social_security_number', 'contracts', 'week', 'counters', 'birth_date', 'is_polyvalent']);
    v_key := app_private.import_text(v_item, 'key', v_path);
    v_text := app_private.import_text(v_item, 'professional_email', v_path, false);
    if v_text is not null and v_text !~ app_hidden.email_pattern() then
      perform app_private.import_fail(v_path || '.professional_email', format('invalid e-mail "%s"', v_text));
    end if;
    insert into app_public.employees (first_name, last_name, professional_email, main_establishment_id, birth_date, is_polyvalent)
    values (app_private.import_text(v_item, 'first_name', v_path), app_private.import_text(v_item, 'last_name', v_path),
            v_text,
            app_private.import_lookup(v_est, app_private.import_text(v_item, 'main_establishment', v_path, false),
                                      v_path || '.main_establishment', 'establishment'),
            app_private.import_date(v_item, 'birth_date', v_path),
            app_private.import_bool(v_item, 'is_polyvalent', v_path, false))
    returning id into v_emp_id;
    v_emps := app_private.import_register(v_emps, v_key, v_emp_id, v_path);

    v_text := app_private.import_text(v_item, 'social_security_number', v_path, false);
    if v_text is not null then
      if v_text !~ app_hidden.social_security_number_pattern() then
        perform app_private.import_fail(v_path || '.social_security_number', 'invalid social security number (13 or 15 characters)');
      end if;
      insert into app_public.employee_social_security_numbers (employee_id, social_security_number) values (v_emp_id, v_text);
    end if;

    v_keys := app_private.import_keys(v_item, 'secondary_establishments', v_path);
    for j in 1 .. coalesce(array_length(v_keys, 1), 0) loop
      insert into app_public.employee_secondary_establishments (employee_id, establishment_id)
      values (v_emp_id, app_private.import_lookup(v_est, v_keys[j], format('%s.secondary_establishments[%s]', v_path, j - 1), 'establishment'))
      on conflict do nothing;
    end loop;

    v_keys := app_private.import_keys(v_item, 'teams', v_path);
    for j in 1 .. coalesce(array_length(v_keys, 1), 0) loop
      insert into app_public.team_assignments (employee_id, team_id)
      values (v_emp_id, app_private.import_lookup(v_teams, v_keys[j], format('%s.teams[%s]', v_path, j - 1), 'team'));
    end loop;

    -- contracts
    v_first_start := null;
    if v_item ? 'contracts' and jsonb_typeof(v_item -> 'contracts') <> 'null' then
      if jsonb_typeof(v_item -> 'contracts') <> 'array' then
        perform app_private.import_fail(v_path || '.contracts', 'expected an array');
      end if;
      for j in 0 .. jsonb_array_length(v_item -> 'contracts') - 1 loop
        v_sub_path := format('%s.contracts[%s]', v_path, j);
        perform app_private.import_check_keys(v_item -> 'contracts' -> j, v_sub_path, array['type', 'start', 'end', 'trial_end', 'job_title', 'weekly_hours']);
        v_text := app_private.import_text(v_item -> 'contracts' -> j, 'type', v_sub_path);
        select ct.id into v_type_id from app_public.contract_types ct where ct.code = v_text;
        if not found then
          perform app_private.import_fail(v_sub_path || '.type', format('unknown contract type "%s"', v_text));
        end if;
        v_start := app_private.import_date(v_item -> 'contracts' -> j, 'start', v_sub_path, true);
        v_end := app_private.import_date(v_item -> 'contracts' -> j, 'end', v_sub_path);
        if v_end < v_start then
          perform app_private.import_fail(v_sub_path || '.end', 'end is before start');
        end if;
        if app_private.import_date(v_item -> 'contracts' -> j, 'trial_end', v_sub_path) < v_start then
          perform app_private.import_fail(v_sub_path || '.trial_end', 'trial_end is before start');
        end if;
        if jsonb_typeof(v_item -> 'contracts' -> j -> 'weekly_hours') not in ('number', 'null') then
          perform app_private.import_fail(v_sub_path || '.weekly_hours', 'expected a number');
        end if;
        if (v_item -> 'contracts' -> j ->> 'weekly_hours')::numeric not between 0.01 and 48 then
          perform app_private.import_fail(v_sub_path || '.weekly_hours', 'expected a number of hours between 0 and 48');
        end if;
        insert into app_public.contracts (employee_id, contract_type_id, start_date, end_date, trial_end_date, job_title, weekly_hours)
        values (v_emp_id, v_type_id, v_start, v_end,
                app_private.import_date(v_item -> 'contracts' -> j, 'trial_end', v_sub_path),
                app_private.import_text(v_item -> 'contracts' -> j, 'job_title', v_sub_path, false),
                (v_item -> 'contracts' -> j ->> 'weekly_hours')::numeric);
        v_first_start := least(v_first_start, v_start);
        if v_first_start is null then v_first_start := v_start; end if;
      end loop;
    end if;

    -- weekly template, valid from the first contract start on
    if v_item ? 'week' and jsonb_typeof(v_item -> 'week') <> 'null' then
      perform app_private.import_check_keys(v_item -> 'week', v_path || '.week', v_days);
      insert into app_public.planning_templates (employee_id, valid_from)
      values (v_emp_id, coalesce(v_first_start, app_hidden.today()))
      returning id into v_tpl_id;
      for j in 1 .. 7 loop
        v_day := v_days[j];
        v_text := app_private.import_text(v_item -> 'week', v_day, v_path || '.week', false);
        if v_text is not null then
          insert into app_public.planning_template_slots (template_id, weekday, post_id)
          values (v_tpl_id, j, app_private.import_lookup(v_posts, v_text, v_path || '.week.' || v_day, 'post code'));
        end if;
      end loop;
    end if;

    -- counters: each opens a counter for the year and writes its Acquis in the journal
    if v_item ? 'counters' and jsonb_typeof(v_item -> 'counters') <> 'null' then
      if jsonb_typeof(v_item -> 'counters') <> 'array' then
        perform app_private.import_fail(v_path || '.counters', 'expected an array');
      end if;
      for j in 0 .. jsonb_array_length(v_item -> 'counters') - 1 loop
        v_sub_path := format('%s.counters[%s]', v_path, j);
        perform app_private.import_check_keys(v_item -> 'counters' -> j, v_sub_path, array['code', 'year', 'acquired']);
        v_text := app_private.import_text(v_item -> 'counters' -> j, 'code', v_sub_path);
        if not exists (select 1 from app_public.counter_kinds k where k.code = v_text) then
          perform app_private.import_fail(v_sub_path || '.code', format('unknown counter code "%s"', v_text));
        end if;
        if jsonb_typeof(v_item -> 'counters' -> j -> 'year') <> 'number'
           or (v_item -> 'counters' -> j ->> 'year') !~ '^\d{4}$' then
          perform app_private.import_fail(v_sub_path || '.year', 'expected a year such as 2026');
        end if;
        v_year := (v_item -> 'counters' -> j ->> 'year')::int;
        v_amount := null;
        if (v_item -> 'counters' -> j ->> 'acquired') is not null then
          if (v_item -> 'counters' -> j ->> 'acquired') !~ '^-?\d{1,6}(\.\d{1,2})?$' then
            perform app_private.import_fail(v_sub_path || '.acquired', 'expected a decimal string such as "25.00"');
          end if;
          v_amount := (v_item -> 'counters' -> j ->> 'acquired')::numeric;
        end if;
        if exists (select 1 from app_public.counters c where c.employee_id = v_emp_id and c.code = v_text and c.year = v_year) then
          perform app_private.import_fail(v_sub_path, format('counter %s %s is listed twice', v_text, v_year));
        end if;
        insert into app_public.counters (employee_id, code, year) values (v_emp_id, v_text, v_year)
        returning id into v_counter_id;
        if coalesce(v_amount, 0) <> 0 then
          insert into app_private.counter_movements (counter_id, bucket, quantity, kind, comment)
          values (v_counter_id, 'acquired', v_amount, 'grant', 'Import de l''organisation');
        end if;
      end loop;
    end if;
  end loop;

  -- accounts
  v_sub := app_private.import_section(p_doc, 'accounts');
  for i in 0 .. jsonb_array_length(v_sub) - 1 loop
    v_item := v_sub -> i;
    v_path := format('accounts[%s]', i);
    perform app_private.import_check_keys(v_item, v_path,
      array['key', 'username', 'password_hash', 'employee', 'is_staff', 'is_superuser', 'is_active', 'permissions', 'roles']);
    v_key := app_private.import_text(v_item, 'key', v_path);
    v_text := app_private.import_text(v_item, 'username', v_path);
    if v_text !~ app_hidden.username_pattern() then
      perform app_private.import_fail(v_path || '.username', format('invalid username "%s" (letters, digits and . _ @ + -)', v_text));
    end if;
    if exists (select 1 from app_public.accounts a where lower(a.username) = lower(v_text)) then
      perform app_private.import_fail(v_path || '.username', format('username "%s" is already taken', v_text));
    end if;
    v_emp_id := app_private.import_lookup(v_emps, app_private.import_text(v_item, 'employee', v_path, false),
                                          v_path || '.employee', 'employee');
    if v_emp_id is not null and exists (select 1 from app_public.accounts a where a.employee_id = v_emp_id) then
      perform app_private.import_fail(v_path || '.employee', format('employee "%s" already has an account', v_item ->> 'employee'));
    end if;
    insert into app_public.accounts (username, employee_id, is_active, is_staff, is_superuser)
    values (v_text, v_emp_id,
            app_private.import_bool(v_item, 'is_active', v_path, true),
            app_private.import_bool(v_item, 'is_staff', v_path, false),
            app_private.import_bool(v_item, 'is_superuser', v_path, false))
    returning id into v_id;
    v_accounts := app_private.import_register(v_accounts, v_key, v_id, v_path);
    insert into app_private.account_secrets (account_id, password_hash, password_changed_at)
    values (v_id, app_private.import_text(v_item, 'password_hash', v_path, false),
            case when v_item ? 'password_hash' then app_hidden.now() end);

    v_keys := app_private.import_keys(v_item, 'permissions', v_path);
    for j in 1 .. coalesce(array_length(v_keys, 1), 0) loop
      if not exists (select 1 from app_public.permissions p where p.code = v_keys[j]) then
        perform app_private.import_fail(format('%s.permissions[%s]', v_path, j - 1), format('unknown permission "%s"', v_keys[j]));
      end if;
      insert into app_public.account_permissions (account_id, permission_code) values (v_id, v_keys[j])
      on conflict do nothing;
    end loop;

    if v_item ? 'roles' and jsonb_typeof(v_item -> 'roles') <> 'null' then
      if jsonb_typeof(v_item -> 'roles') <> 'array' then
        perform app_private.import_fail(v_path || '.roles', 'expected an array');
      end if;
      for j in 0 .. jsonb_array_length(v_item -> 'roles') - 1 loop
        v_sub_path := format('%s.roles[%s]', v_path, j);
        perform app_private.import_check_keys(v_item -> 'roles' -> j, v_sub_path, array['role', 'establishments', 'start', 'end']);
        v_text := app_private.import_text(v_item -> 'roles' -> j, 'role', v_sub_path);
        select r.id into v_role_id from app_public.roles r where r.name = v_text;
        if not found then
          perform app_private.import_fail(v_sub_path || '.role', format('unknown role "%s"', v_text));
        end if;
        v_start := app_private.import_date(v_item -> 'roles' -> j, 'start', v_sub_path);
        v_end := app_private.import_date(v_item -> 'roles' -> j, 'end', v_sub_path);
        if v_end < v_start then
          perform app_private.import_fail(v_sub_path || '.end', 'end is before start');
        end if;
        v_keys := app_private.import_keys(v_item -> 'roles' -> j, 'establishments', v_sub_path);
        -- Listing Salarié again for an employee's account changes nothing.
        if v_role_id = 7 and v_emp_id is not null and v_start is null and v_end is null
           and coalesce(array_length(v_keys, 1), 0) = 0 then
          continue;
        end if;
        insert into app_public.role_attributions (account_id, role_id, start_date, end_date)
        values (v_id, v_role_id, v_start, v_end)
        returning id into v_type_id;
        for k in 1 .. coalesce(array_length(v_keys, 1), 0) loop
          insert into app_public.role_attribution_establishments (attribution_id, establishment_id)
          values (v_type_id, app_private.import_lookup(v_est, v_keys[k], format('%s.establishments[%s]', v_sub_path, k - 1), 'establishment'))
          on conflict do nothing;
        end loop;
      end loop;
    end if;

    -- An account without a usable password is invited when a professional e-mail exists.
    if not v_item ? 'password_hash' then
      perform app_private.queue_invitation(v_id);
    end if;
  end loop;

  -- on-call periods
  v_sub := app_private.import_section(p_doc, 'on_call');
  for i in 0 .. jsonb_array_length(v_sub) - 1 loop
    v_item := v_sub -> i;
    v_path := format('on_call[%s]', i);
    perform app_private.import_check_keys(v_item, v_path, array['account', 'establishments', 'start', 'end', 'comment']);
    v_start_at := app_private.import_timestamptz(v_item, 'start', v_path);
    v_end_at := app_private.import_timestamptz(v_item, 'end', v_path);
    if v_end_at <= v_start_at then
      perform app_private.import_fail(v_path || '.end', 'end must be after start');
    end if;
    insert into app_public.on_call_periods (account_id, start_at, end_at, comment)
    values (app_private.import_lookup(v_accounts, app_private.import_text(v_item, 'account', v_path), v_path || '.account', 'account'),
            v_start_at, v_end_at, app_private.import_text(v_item, 'comment', v_path, false))
    returning id into v_id;
    v_on_call := v_on_call || jsonb_build_object(i::text, v_id);
    v_keys := app_private.import_keys(v_item, 'establishments', v_path);
    if coalesce(array_length(v_keys, 1), 0) = 0 then
      perform app_private.import_fail(v_path || '.establishments', 'at least one establishment');
    end if;
    for j in 1 .. array_length(v_keys, 1) loop
      insert into app_public.on_call_period_establishments (period_id, establishment_id)
      values (v_id, app_private.import_lookup(v_est, v_keys[j], format('%s.establishments[%s]', v_path, j - 1), 'establishment'))
      on conflict do nothing;
    end loop;
  end loop;

  return jsonb_build_object('establishments', v_est, 'teams', v_teams, 'posts', v_posts,
                            'employees', v_emps, 'accounts', v_accounts, 'on_call', v_on_call);
end;
$$;
