-- One input contract: the limits of the texts a request may carry, stated once. The table
-- CHECKs and the rules of sql/ call these functions; the route schemas (ajv and OpenAPI) take
-- the same values from src/http/input-contract.ts, which the server compares with
-- app_hidden.input_contract() at start-up (a difference stops it, naming both sides).
-- docs/architecture.md, "One input contract". A CHECK reads its function at each write only:
-- lowering a limit leaves longer rows in place (a migration that lowers one updates them first).

-- A free comment or a decision reason (absences, day-change requests, day modifications).
create or replace function app_hidden.comment_max_length() returns int
language sql immutable parallel safe as $$ select 2000 $$;

-- The comment of an on-call period.
create or replace function app_hidden.on_call_comment_max_length() returns int
language sql immutable parallel safe as $$ select 500 $$;

-- The title and the description of an event.
create or replace function app_hidden.event_title_max_length() returns int
language sql immutable parallel safe as $$ select 200 $$;

create or replace function app_hidden.event_description_max_length() returns int
language sql immutable parallel safe as $$ select 5000 $$;

-- The name of a team, a division, an establishment, a contract type, an absence type or
-- category, an emergency contact; the label of a post.
create or replace function app_hidden.name_max_length() returns int
language sql immutable parallel safe as $$ select 150 $$;

-- An employee's first or last name; an emergency contact's relationship to the employee.
create or replace function app_hidden.person_name_max_length() returns int
language sql immutable parallel safe as $$ select 100 $$;

create or replace function app_hidden.relationship_max_length() returns int
language sql immutable parallel safe as $$ select 100 $$;

-- The job title of a contract; the title of an employee's attachment.
create or replace function app_hidden.job_title_max_length() returns int
language sql immutable parallel safe as $$ select 200 $$;

create or replace function app_hidden.attachment_title_max_length() returns int
language sql immutable parallel safe as $$ select 200 $$;

-- The reason of a manual counter adjustment (back-office).
create or replace function app_hidden.adjustment_reason_max_length() returns int
language sql immutable parallel safe as $$ select 500 $$;

-- An e-mail address: its shape and its length (an employee's professional address, an
-- emergency contact's).
create or replace function app_hidden.email_pattern() returns text
language sql immutable parallel safe as $$ select '^[^@\s]+@[^@\s]+\.[^@\s]+$' $$;

create or replace function app_hidden.email_max_length() returns int
language sql immutable parallel safe as $$ select 254 $$;

-- A phone number of an emergency contact (06 12 34 56 78, +33 6 12 34 56 78...).
create or replace function app_hidden.phone_pattern() returns text
language sql immutable parallel safe as $$ select '^\+?[0-9][0-9 .\-]{4,22}[0-9]$' $$;

-- A French social security number, 13 digits or 15 with the key (spaces removed first).
create or replace function app_hidden.social_security_number_pattern() returns text
language sql immutable parallel safe as $$
  select '^[12][0-9]{2}(0[1-9]|1[0-2]|[2-9][0-9])(2[AB]|[0-9]{2})[0-9]{6}([0-9]{2})?$'
$$;

-- A username: username_min_length() to username_max_length() characters among letters, digits and . _ @ + -.
create or replace function app_hidden.username_min_length() returns int
language sql immutable parallel safe as $$ select 2 $$;

create or replace function app_hidden.username_max_length() returns int
language sql immutable parallel safe as $$ select 150 $$;

create or replace function app_hidden.username_pattern() returns text
language sql immutable parallel safe as $$
  select '^[A-Za-z0-9._@+\-]{' || app_hidden.username_min_length() || ',' || app_hidden.username_max_length() || '}$'
$$;

-- A time of day written HH:MM, 00:00 to 23:59 (the hours of an absence, the slots of a day,
-- a post's times, the organisation file's); the route schemas' format time-hm.
create or replace function app_hidden.time_pattern() returns text
language sql immutable parallel safe as $$ select '^([01][0-9]|2[0-3]):[0-5][0-9]$' $$;

-- The answer to a time that does not match it, under the field to correct (the route schemas'
-- ajv message for format time-hm says the same, src/http/validation.ts).
create or replace function app_hidden.time_format_message() returns text
language sql immutable parallel safe as $$ select 'Heure invalide : format attendu HH:MM.' $$;

-- The answer to a text over its limit, under the field to correct.
create or replace function app_hidden.max_length_message(p_max int) returns text
language sql immutable parallel safe as $$ select format('Au plus %s caractères.', p_max) $$;

-- Every limit above by the name src/http/input-contract.ts gives it (the start-up comparison).
create or replace function app_hidden.input_contract() returns jsonb
language sql immutable parallel safe as $$
  select jsonb_build_object(
    'commentMaxLength', app_hidden.comment_max_length(),
    'onCallCommentMaxLength', app_hidden.on_call_comment_max_length(),
    'eventTitleMaxLength', app_hidden.event_title_max_length(),
    'eventDescriptionMaxLength', app_hidden.event_description_max_length(),
    'nameMaxLength', app_hidden.name_max_length(),
    'adjustmentReasonMaxLength', app_hidden.adjustment_reason_max_length(),
    'personNameMaxLength', app_hidden.person_name_max_length(),
    'relationshipMaxLength', app_hidden.relationship_max_length(),
    'jobTitleMaxLength', app_hidden.job_title_max_length(),
    'attachmentTitleMaxLength', app_hidden.attachment_title_max_length(),
    'emailMaxLength', app_hidden.email_max_length(),
    'usernameMaxLength', app_hidden.username_max_length(),
    'usernamePattern', app_hidden.username_pattern(),
    'timePattern', app_hidden.time_pattern(),
    -- Thresholds of sql/core/limits.sql that route descriptions and multipart limits quote.
    'retroactivityDays', app_hidden.retroactivity_days(),
    'planningMaxDays', app_hidden.planning_max_days(),
    'documentMaxBytes', app_hidden.document_max_bytes())
$$;

-- A CHECK constraint of a table created before its limit came from here: replaced when its
-- definition differs (a database built from sql/ alone already has the new one, inline).
create or replace function app_private.ensure_check(p_table regclass, p_name text, p_check text) returns void
language plpgsql volatile as $$
declare
  v_current text;
begin
  select pg_get_constraintdef(c.oid) into v_current
  from pg_constraint c where c.conrelid = p_table and c.conname = p_name;
  if v_current is distinct from 'CHECK ' || p_check then
    execute format('alter table %s drop constraint if exists %I', p_table, p_name);
    execute format('alter table %s add constraint %I check %s', p_table, p_name, p_check);
  end if;
end;
$$;
