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
  if v !~ app_hidden.time_pattern() then
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

-- A list of the document (p_path null) or of an item at p_path; null or absent gives an empty list.
drop function if exists app_private.import_section(jsonb, text);
create or replace function app_private.import_section(p_doc jsonb, p_section text, p_path text default null) returns jsonb
language plpgsql volatile as $$
declare
  v jsonb := p_doc -> p_section;
begin
  if v is null or jsonb_typeof(v) = 'null' then
    return '[]'::jsonb;
  end if;
  if jsonb_typeof(v) <> 'array' then
    perform app_private.import_fail(coalesce(p_path || '.', '') || p_section, 'expected an array');
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

comment on function app_private.import_check_keys(jsonb, text, text[]) is
'CONTRACT section 6, file shape: every item is an object and carries only the fields of its section (a typo fails).';
comment on function app_private.import_section(jsonb, text, text) is
'CONTRACT section 6, file shape: every section (and every list of an item, at p_path) is optional and, when
present, an array.';
comment on function app_private.import_register(jsonb, text, integer, text) is
'CONTRACT section 6, file shape: keys are unique per section.';
comment on function app_private.import_lookup(jsonb, text, text, text) is
'CONTRACT section 6, file shape: a key named by another section exists in its own section.';

-- The sections, in the order of the file: each validates and writes its items, failing at the
-- first bad path, and returns its key map (key -> id) for the sections that name its keys.

create or replace function app_private.import_establishments(p_doc jsonb) returns jsonb
language plpgsql volatile as $$
declare
  v_map jsonb := '{}';
  v_section jsonb := app_private.import_section(p_doc, 'establishments');
  v_item jsonb;
  v_path text;
  v_key text;
  v_count_base text;
  v_id int;
  i int;
begin
  for i in 0 .. jsonb_array_length(v_section) - 1 loop
    v_item := v_section -> i;
    v_path := format('establishments[%s]', i);
    perform app_private.import_check_keys(v_item, v_path, array['key', 'name', 'count_base']);
    v_key := app_private.import_text(v_item, 'key', v_path);
    v_count_base := coalesce(app_private.import_text(v_item, 'count_base', v_path, false), 'ouvrables');
    if app_hidden.count_base_known(v_count_base) is not true then
      perform app_private.import_fail(v_path || '.count_base', format('unknown count base "%s" (ouvrables or ouvres)', v_count_base));
    end if;
    if app_hidden.establishment_name_taken(app_private.import_text(v_item, 'name', v_path)) then
      perform app_private.import_fail(v_path || '.name', format('an establishment named "%s" already exists', v_item ->> 'name'));
    end if;
    insert into app_public.establishments (name, count_base)
    values (app_private.import_text(v_item, 'name', v_path), v_count_base)
    returning id into v_id;
    v_map := app_private.import_register(v_map, v_key, v_id, v_path);
  end loop;
  return v_map;
end;
$$;
comment on function app_private.import_establishments(jsonb) is
'CONTRACT section 6, establishments: each has a key, a name no establishment already bears
(establishment_name_taken) and a count_base, ouvrables (default) or ouvres (count_base_known).';

create or replace function app_private.import_teams(p_doc jsonb, p_establishments jsonb) returns jsonb
language plpgsql volatile as $$
declare
  v_map jsonb := '{}';
  v_section jsonb := app_private.import_section(p_doc, 'teams');
  v_item jsonb;
  v_path text;
  v_key text;
  v_keys text[];
  v_id int;
  i int;
  j int;
begin
  for i in 0 .. jsonb_array_length(v_section) - 1 loop
    v_item := v_section -> i;
    v_path := format('teams[%s]', i);
    perform app_private.import_check_keys(v_item, v_path, array['key', 'name', 'establishments']);
    v_key := app_private.import_text(v_item, 'key', v_path);
    insert into app_public.teams (name) values (app_private.import_text(v_item, 'name', v_path))
    returning id into v_id;
    v_map := app_private.import_register(v_map, v_key, v_id, v_path);
    v_keys := app_private.import_keys(v_item, 'establishments', v_path);
    for j in 1 .. coalesce(array_length(v_keys, 1), 0) loop
      insert into app_public.team_establishments (team_id, establishment_id)
      values (v_id, app_private.import_lookup(p_establishments, v_keys[j], format('%s.establishments[%s]', v_path, j - 1), 'establishment'))
      on conflict do nothing;
    end loop;
  end loop;
  return v_map;
end;
$$;
comment on function app_private.import_teams(jsonb, jsonb) is
'CONTRACT section 6, teams: each has a key and a name, and spans establishments named by their keys.';

create or replace function app_private.import_posts(p_doc jsonb, p_establishments jsonb) returns jsonb
language plpgsql volatile as $$
declare
  v_map jsonb := '{}';
  v_section jsonb := app_private.import_section(p_doc, 'posts');
  v_item jsonb;
  v_path text;
  v_key text;
  v_code text;
  v_establishment int;
  v_id int;
  v_start time;
  v_end time;
  v_break_start time;
  v_break_end time;
  i int;
begin
  for i in 0 .. jsonb_array_length(v_section) - 1 loop
    v_item := v_section -> i;
    v_path := format('posts[%s]', i);
    perform app_private.import_check_keys(v_item, v_path,
      array['key', 'code', 'label', 'establishment', 'start_time', 'end_time', 'break_start_time', 'break_end_time', 'break_paid']);
    v_key := app_private.import_text(v_item, 'key', v_path);
    v_code := app_private.import_text(v_item, 'code', v_path);
    if app_hidden.code_well_formed(v_code) is false then
      perform app_private.import_fail(v_path || '.code', format('invalid post code "%s"', v_code));
    end if;
    if app_hidden.code_namespace_clash('posts', v_code) is not null then
      perform app_private.import_fail(v_path || '.code', format('post code "%s" is already an absence type code', v_code));
    end if;
    v_start := app_private.import_time(v_item, 'start_time', v_path, true);
    v_end := app_private.import_time(v_item, 'end_time', v_path, true);
    if v_start = v_end then
      perform app_private.import_fail(v_path || '.end_time', 'end_time must differ from start_time');
    end if;
    v_break_start := app_private.import_time(v_item, 'break_start_time', v_path);
    v_break_end := app_private.import_time(v_item, 'break_end_time', v_path);
    if (v_break_start is null) <> (v_break_end is null) then
      perform app_private.import_fail(v_path || '.break_end_time', 'break_start_time and break_end_time go together');
    end if;
    v_establishment := app_private.import_lookup(p_establishments, app_private.import_text(v_item, 'establishment', v_path),
                                                 v_path || '.establishment', 'establishment');
    if app_hidden.post_code_used_in_establishment(v_establishment, v_code) then
      perform app_private.import_fail(v_path || '.code', format('post code "%s" is already used in this establishment', v_code));
    end if;
    insert into app_public.posts (code, label, establishment_id, start_time, end_time, break_start_time, break_end_time, break_paid)
    values (v_code, app_private.import_text(v_item, 'label', v_path), v_establishment, v_start, v_end,
            v_break_start, v_break_end, app_private.import_bool(v_item, 'break_paid', v_path, false))
    returning id into v_id;
    v_map := app_private.import_register(v_map, v_key, v_id, v_path);
  end loop;
  return v_map;
end;
$$;
comment on function app_private.import_posts(jsonb, jsonb) is
'CONTRACT section 6, posts: a well-formed code, outside the absence type codes (code_namespace_clash) and
unique in its establishment; start and end times that differ; break start and end given together.';

-- The employee row itself (the record's fields; its key is registered by the caller).
create or replace function app_private.import_employee_record(p_item jsonb, p_path text, p_establishments jsonb) returns int
language plpgsql volatile as $$
declare
  v_email text := app_private.import_text(p_item, 'professional_email', p_path, false);
  v_id int;
begin
  if app_hidden.email_well_formed(v_email) is false then
    perform app_private.import_fail(p_path || '.professional_email', format('invalid e-mail "%s"', v_email));
  end if;
  insert into app_public.employees (first_name, last_name, professional_email, main_establishment_id, birth_date, is_polyvalent)
  values (app_private.import_text(p_item, 'first_name', p_path), app_private.import_text(p_item, 'last_name', p_path),
          v_email,
          app_private.import_lookup(p_establishments, app_private.import_text(p_item, 'main_establishment', p_path, false),
                                    p_path || '.main_establishment', 'establishment'),
          app_private.import_date(p_item, 'birth_date', p_path),
          app_private.import_bool(p_item, 'is_polyvalent', p_path, false))
  returning id into v_id;
  return v_id;
end;
$$;
comment on function app_private.import_employee_record(jsonb, text, jsonb) is
'CONTRACT section 6, an employee: first and last names, a well-formed professional e-mail or null
(email_well_formed), the main workplace by establishment key (or none), birth date, polyvalence.';

create or replace function app_private.import_employee_ssn(p_item jsonb, p_path text, p_employee int) returns void
language plpgsql volatile as $$
declare
  v_number text := app_private.import_text(p_item, 'social_security_number', p_path, false);
begin
  if v_number is not null then
    if app_hidden.social_security_number_well_formed(v_number) is false then
      perform app_private.import_fail(p_path || '.social_security_number', 'invalid social security number (13 or 15 characters)');
    end if;
    insert into app_public.employee_social_security_numbers (employee_id, social_security_number) values (p_employee, v_number);
  end if;
end;
$$;
comment on function app_private.import_employee_ssn(jsonb, text, integer) is
'CONTRACT section 6, an employee''s social_security_number: null or well formed
(social_security_number_well_formed, 13 or 15 characters).';

create or replace function app_private.import_employee_workplaces_and_teams(p_item jsonb, p_path text, p_employee int,
                                                                            p_establishments jsonb, p_teams jsonb) returns void
language plpgsql volatile as $$
declare
  v_keys text[];
  j int;
begin
  v_keys := app_private.import_keys(p_item, 'secondary_establishments', p_path);
  for j in 1 .. coalesce(array_length(v_keys, 1), 0) loop
    insert into app_public.employee_secondary_establishments (employee_id, establishment_id)
    values (p_employee, app_private.import_lookup(p_establishments, v_keys[j],
                                                  format('%s.secondary_establishments[%s]', p_path, j - 1), 'establishment'))
    on conflict do nothing;
  end loop;
  v_keys := app_private.import_keys(p_item, 'teams', p_path);
  for j in 1 .. coalesce(array_length(v_keys, 1), 0) loop
    insert into app_public.team_assignments (employee_id, team_id)
    values (p_employee, app_private.import_lookup(p_teams, v_keys[j], format('%s.teams[%s]', p_path, j - 1), 'team'));
  end loop;
end;
$$;
comment on function app_private.import_employee_workplaces_and_teams(jsonb, text, integer, jsonb, jsonb) is
'CONTRACT section 6, an employee''s secondary_establishments and teams, by keys of their sections (open-ended
assignments).';

-- Returns the earliest contract start (null without contracts): the planning template starts there.
create or replace function app_private.import_employee_contracts(p_item jsonb, p_path text, p_employee int) returns date
language plpgsql volatile as $$
declare
  v_contracts jsonb := app_private.import_section(p_item, 'contracts', p_path);
  v_contract jsonb;
  v_path text;
  v_type_code text;
  v_type_id int;
  v_start date;
  v_end date;
  v_first_start date;
  j int;
begin
  for j in 0 .. jsonb_array_length(v_contracts) - 1 loop
    v_contract := v_contracts -> j;
    v_path := format('%s.contracts[%s]', p_path, j);
    perform app_private.import_check_keys(v_contract, v_path, array['type', 'start', 'end', 'trial_end', 'job_title', 'weekly_hours']);
    v_type_code := app_private.import_text(v_contract, 'type', v_path);
    select ct.id into v_type_id from app_public.contract_types ct where ct.code = v_type_code;
    if not found then
      perform app_private.import_fail(v_path || '.type', format('unknown contract type "%s"', v_type_code));
    end if;
    v_start := app_private.import_date(v_contract, 'start', v_path, true);
    v_end := app_private.import_date(v_contract, 'end', v_path);
    if v_end < v_start then
      perform app_private.import_fail(v_path || '.end', 'end is before start');
    end if;
    if app_private.import_date(v_contract, 'trial_end', v_path) < v_start then
      perform app_private.import_fail(v_path || '.trial_end', 'trial_end is before start');
    end if;
    if jsonb_typeof(v_contract -> 'weekly_hours') not in ('number', 'null') then
      perform app_private.import_fail(v_path || '.weekly_hours', 'expected a number');
    end if;
    if app_hidden.weekly_hours_in_range((v_contract ->> 'weekly_hours')::numeric) is false then
      perform app_private.import_fail(v_path || '.weekly_hours',
        format('expected a number of hours between 0 and %s', app_hidden.weekly_hours_max()));
    end if;
    insert into app_public.contracts (employee_id, contract_type_id, start_date, end_date, trial_end_date, job_title, weekly_hours)
    values (p_employee, v_type_id, v_start, v_end,
            app_private.import_date(v_contract, 'trial_end', v_path),
            app_private.import_text(v_contract, 'job_title', v_path, false),
            (v_contract ->> 'weekly_hours')::numeric);
    v_first_start := least(v_first_start, v_start);  -- least() skips the null of the first contract
  end loop;
  return v_first_start;
end;
$$;
comment on function app_private.import_employee_contracts(jsonb, text, integer) is
'CONTRACT section 5 (contract types) and 6, an employee''s contracts: a known type, a start, an end and a
trial end not before it, weekly hours in range (weekly_hours_in_range).';

create or replace function app_private.import_employee_week(p_item jsonb, p_path text, p_employee int,
                                                            p_valid_from date, p_posts jsonb) returns void
language plpgsql volatile as $$
declare
  v_days text[] := array['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'];
  v_template int;
  v_post_key text;
  j int;
begin
  if p_item ? 'week' and jsonb_typeof(p_item -> 'week') <> 'null' then
    perform app_private.import_check_keys(p_item -> 'week', p_path || '.week', v_days);
    insert into app_public.planning_templates (employee_id, valid_from)
    values (p_employee, coalesce(p_valid_from, app_hidden.today()))
    returning id into v_template;
    for j in 1 .. 7 loop
      v_post_key := app_private.import_text(p_item -> 'week', v_days[j], p_path || '.week', false);
      if v_post_key is not null then
        insert into app_public.planning_template_slots (template_id, weekday, post_id)
        values (v_template, j, app_private.import_lookup(p_posts, v_post_key, p_path || '.week.' || v_days[j], 'post code'));
      end if;
    end loop;
  end if;
end;
$$;
comment on function app_private.import_employee_week(jsonb, text, integer, date, jsonb) is
'CONTRACT section 6, an employee''s week: a post key or null per weekday (mon to sun), the planning template
from the first contract start on (today without contracts).';

create or replace function app_private.import_employee_counters(p_item jsonb, p_path text, p_employee int) returns void
language plpgsql volatile as $$
declare
  v_counters jsonb := app_private.import_section(p_item, 'counters', p_path);
  v_counter jsonb;
  v_path text;
  v_code text;
  v_year int;
  v_amount numeric;
  v_counter_id int;
  j int;
begin
  for j in 0 .. jsonb_array_length(v_counters) - 1 loop
    v_counter := v_counters -> j;
    v_path := format('%s.counters[%s]', p_path, j);
    perform app_private.import_check_keys(v_counter, v_path, array['code', 'year', 'acquired']);
    v_code := app_private.import_text(v_counter, 'code', v_path);
    if not exists (select 1 from app_public.counter_kinds k where k.code = v_code) then
      perform app_private.import_fail(v_path || '.code', format('unknown counter code "%s"', v_code));
    end if;
    if jsonb_typeof(v_counter -> 'year') <> 'number' or (v_counter ->> 'year') !~ '^\d{4}$' then
      perform app_private.import_fail(v_path || '.year', 'expected a year such as 2026');
    end if;
    v_year := (v_counter ->> 'year')::int;
    v_amount := null;
    if (v_counter ->> 'acquired') is not null then
      if (v_counter ->> 'acquired') !~ '^-?\d{1,6}(\.\d{1,2})?$' then
        perform app_private.import_fail(v_path || '.acquired', 'expected a decimal string such as "25.00"');
      end if;
      v_amount := (v_counter ->> 'acquired')::numeric;
    end if;
    if exists (select 1 from app_public.counters c where c.employee_id = p_employee and c.code = v_code and c.year = v_year) then
      perform app_private.import_fail(v_path, format('counter %s %s is listed twice', v_code, v_year));
    end if;
    insert into app_public.counters (employee_id, code, year) values (p_employee, v_code, v_year)
    returning id into v_counter_id;
    if coalesce(v_amount, 0) <> 0 then
      insert into app_private.counter_movements (counter_id, bucket, quantity, kind, comment)
      values (v_counter_id, 'acquired', v_amount, 'grant', 'Import de l’organisation');
    end if;
  end loop;
end;
$$;
comment on function app_private.import_employee_counters(jsonb, text, integer) is
'CONTRACT section 6, an employee''s counters: a known counter code, a four-digit year, each code and year
once; the acquired decimal string is written as an Acquis movement of the journal.';

create or replace function app_private.import_employees(p_doc jsonb, p_establishments jsonb, p_teams jsonb, p_posts jsonb)
returns jsonb
language plpgsql volatile as $$
declare
  v_map jsonb := '{}';
  v_section jsonb := app_private.import_section(p_doc, 'employees');
  v_item jsonb;
  v_path text;
  v_key text;
  v_id int;
  i int;
begin
  for i in 0 .. jsonb_array_length(v_section) - 1 loop
    v_item := v_section -> i;
    v_path := format('employees[%s]', i);
    perform app_private.import_check_keys(v_item, v_path,
      array['key', 'first_name', 'last_name', 'professional_email', 'main_establishment', 'secondary_establishments',
            'teams', 'social_security_number', 'contracts', 'week', 'counters', 'birth_date', 'is_polyvalent']);
    v_key := app_private.import_text(v_item, 'key', v_path);
    v_id := app_private.import_employee_record(v_item, v_path, p_establishments);
    v_map := app_private.import_register(v_map, v_key, v_id, v_path);
    perform app_private.import_employee_ssn(v_item, v_path, v_id);
    perform app_private.import_employee_workplaces_and_teams(v_item, v_path, v_id, p_establishments, p_teams);
    perform app_private.import_employee_week(v_item, v_path, v_id,
                                             app_private.import_employee_contracts(v_item, v_path, v_id), p_posts);
    perform app_private.import_employee_counters(v_item, v_path, v_id);
  end loop;
  return v_map;
end;
$$;
comment on function app_private.import_employees(jsonb, jsonb, jsonb, jsonb) is
'CONTRACT section 6, employees: each with a unique key, its record, number, workplaces, teams, contracts,
week and counters, in that order.';

-- The role attributions of one account; Salarié listed again on an employee's account changes nothing.
create or replace function app_private.import_account_roles(p_item jsonb, p_path text, p_account int, p_employee int,
                                                            p_establishments jsonb) returns void
language plpgsql volatile as $$
declare
  v_roles jsonb := app_private.import_section(p_item, 'roles', p_path);
  v_role jsonb;
  v_path text;
  v_role_name text;
  v_role_id smallint;
  v_start date;
  v_end date;
  v_keys text[];
  v_attribution int;
  j int;
  k int;
begin
  for j in 0 .. jsonb_array_length(v_roles) - 1 loop
    v_role := v_roles -> j;
    v_path := format('%s.roles[%s]', p_path, j);
    perform app_private.import_check_keys(v_role, v_path, array['role', 'establishments', 'start', 'end']);
    v_role_name := app_private.import_text(v_role, 'role', v_path);
    select r.id into v_role_id from app_public.roles r where r.name = v_role_name;
    if not found then
      perform app_private.import_fail(v_path || '.role', format('unknown role "%s"', v_role_name));
    end if;
    v_start := app_private.import_date(v_role, 'start', v_path);
    v_end := app_private.import_date(v_role, 'end', v_path);
    if v_end < v_start then
      perform app_private.import_fail(v_path || '.end', 'end is before start');
    end if;
    v_keys := app_private.import_keys(v_role, 'establishments', v_path);
    -- Listing Salarié again for an employee's account changes nothing.
    if v_role_id = 7 and p_employee is not null and v_start is null and v_end is null
       and coalesce(array_length(v_keys, 1), 0) = 0 then
      continue;
    end if;
    insert into app_public.role_attributions (account_id, role_id, start_date, end_date)
    values (p_account, v_role_id, v_start, v_end)
    returning id into v_attribution;
    for k in 1 .. coalesce(array_length(v_keys, 1), 0) loop
      insert into app_public.role_attribution_establishments (attribution_id, establishment_id)
      values (v_attribution, app_private.import_lookup(p_establishments, v_keys[k],
                                                       format('%s.establishments[%s]', v_path, k - 1), 'establishment'))
      on conflict do nothing;
    end loop;
  end loop;
end;
$$;
comment on function app_private.import_account_roles(jsonb, text, integer, integer, jsonb) is
'CONTRACT section 6 and SPEC Roles, an account''s roles: a known role, dates in order, establishments by key
(none: the whole association); Salarié listed again on an employee''s account changes nothing.';

create or replace function app_private.import_accounts(p_doc jsonb, p_establishments jsonb, p_employees jsonb) returns jsonb
language plpgsql volatile as $$
declare
  v_map jsonb := '{}';
  v_section jsonb := app_private.import_section(p_doc, 'accounts');
  v_item jsonb;
  v_path text;
  v_key text;
  v_username text;
  v_employee int;
  v_keys text[];
  v_id int;
  i int;
  j int;
begin
  for i in 0 .. jsonb_array_length(v_section) - 1 loop
    v_item := v_section -> i;
    v_path := format('accounts[%s]', i);
    perform app_private.import_check_keys(v_item, v_path,
      array['key', 'username', 'password_hash', 'employee', 'is_staff', 'is_superuser', 'is_active', 'permissions', 'roles']);
    v_key := app_private.import_text(v_item, 'key', v_path);
    v_username := app_private.import_text(v_item, 'username', v_path);
    if app_hidden.username_well_formed(v_username) is false then
      perform app_private.import_fail(v_path || '.username', format('invalid username "%s" (letters, digits and . _ @ + -)', v_username));
    end if;
    if app_private.username_taken(v_username) then
      perform app_private.import_fail(v_path || '.username', format('username "%s" is already taken', v_username));
    end if;
    v_employee := app_private.import_lookup(p_employees, app_private.import_text(v_item, 'employee', v_path, false),
                                            v_path || '.employee', 'employee');
    if v_employee is not null and exists (select 1 from app_public.accounts a where a.employee_id = v_employee) then
      perform app_private.import_fail(v_path || '.employee', format('employee "%s" already has an account', v_item ->> 'employee'));
    end if;
    insert into app_public.accounts (username, employee_id, is_active, is_staff, is_superuser)
    values (v_username, v_employee,
            app_private.import_bool(v_item, 'is_active', v_path, true),
            app_private.import_bool(v_item, 'is_staff', v_path, false),
            app_private.import_bool(v_item, 'is_superuser', v_path, false))
    returning id into v_id;
    v_map := app_private.import_register(v_map, v_key, v_id, v_path);
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

    perform app_private.import_account_roles(v_item, v_path, v_id, v_employee, p_establishments);

    -- An account without a usable password is invited when a professional e-mail exists.
    if not v_item ? 'password_hash' then
      perform app_private.queue_invitation(v_id);
    end if;
  end loop;
  return v_map;
end;
$$;
comment on function app_private.import_accounts(jsonb, jsonb, jsonb) is
'CONTRACT section 6 and SPEC Authentication rule 4, accounts: a well-formed free username
(username_well_formed, username_taken), at most one account per employee, known permissions, roles; an
account without password_hash is invited.';

create or replace function app_private.import_on_call(p_doc jsonb, p_establishments jsonb, p_accounts jsonb) returns jsonb
language plpgsql volatile as $$
declare
  v_map jsonb := '{}';
  v_section jsonb := app_private.import_section(p_doc, 'on_call');
  v_item jsonb;
  v_path text;
  v_start timestamptz;
  v_end timestamptz;
  v_keys text[];
  v_id int;
  i int;
  j int;
begin
  for i in 0 .. jsonb_array_length(v_section) - 1 loop
    v_item := v_section -> i;
    v_path := format('on_call[%s]', i);
    perform app_private.import_check_keys(v_item, v_path, array['account', 'establishments', 'start', 'end', 'comment']);
    v_start := app_private.import_timestamptz(v_item, 'start', v_path);
    v_end := app_private.import_timestamptz(v_item, 'end', v_path);
    if v_end <= v_start then
      perform app_private.import_fail(v_path || '.end', 'end must be after start');
    end if;
    insert into app_public.on_call_periods (account_id, start_at, end_at, comment)
    values (app_private.import_lookup(p_accounts, app_private.import_text(v_item, 'account', v_path), v_path || '.account', 'account'),
            v_start, v_end, app_private.import_text(v_item, 'comment', v_path, false))
    returning id into v_id;
    v_map := v_map || jsonb_build_object(i::text, v_id);
    v_keys := app_private.import_keys(v_item, 'establishments', v_path);
    if coalesce(array_length(v_keys, 1), 0) = 0 then
      perform app_private.import_fail(v_path || '.establishments', 'at least one establishment');
    end if;
    for j in 1 .. array_length(v_keys, 1) loop
      insert into app_public.on_call_period_establishments (period_id, establishment_id)
      values (v_id, app_private.import_lookup(p_establishments, v_keys[j], format('%s.establishments[%s]', v_path, j - 1), 'establishment'))
      on conflict do nothing;
    end loop;
  end loop;
  return v_map;
end;
$$;
comment on function app_private.import_on_call(jsonb, jsonb, jsonb) is
'CONTRACT section 6 and SPEC Permissions rule 9, on_call: an account by key, an interval with offsets whose
end is after its start, at least one establishment by key; the map is keyed by position.';

-- The whole file in one call, so one transaction: the first bad path aborts every section.
create or replace function app_private.import_organisation(p_doc jsonb) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_establishments jsonb;
  v_teams jsonb;
  v_posts jsonb;
  v_employees jsonb;
  v_accounts jsonb;
begin
  perform app_private.import_check_keys(p_doc, '$',
    array['establishments', 'teams', 'posts', 'employees', 'accounts', 'on_call']);
  v_establishments := app_private.import_establishments(p_doc);
  v_teams := app_private.import_teams(p_doc, v_establishments);
  v_posts := app_private.import_posts(p_doc, v_establishments);
  v_employees := app_private.import_employees(p_doc, v_establishments, v_teams, v_posts);
  v_accounts := app_private.import_accounts(p_doc, v_establishments, v_employees);
  return jsonb_build_object('establishments', v_establishments, 'teams', v_teams, 'posts', v_posts,
                            'employees', v_employees, 'accounts', v_accounts,
                            'on_call', app_private.import_on_call(p_doc, v_establishments, v_accounts));
end;
$$;
comment on function app_private.import_organisation(jsonb) is
'CONTRACT section 6 (npm run org:import): the organisation file, section after section (establishments,
teams, posts, employees, accounts, on_call), all or nothing; a bad path fails with "path: message" (WV020).';
