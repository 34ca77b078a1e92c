-- Error helpers. Codes are registered in docs/error-codes.md; the HTTP layer maps the
-- SQLSTATE class to a status (WV 400, WA 401, WF 403, WN 404, WM 405, WC 409) and the
-- DETAIL to the field key of the CONTRACT envelope.

-- 400 under one field (null field: non_field_errors).
create or replace function app_hidden.invalid(p_field text, p_message text, p_code text default 'WV001')
returns void language plpgsql volatile as $$
begin
  raise exception using errcode = p_code, message = p_message, detail = coalesce(p_field, 'non_field_errors');
end;
$$;

-- 400 with several fields at once: p_errors is {"field": ["message", ...], ...}.
create or replace function app_hidden.invalid_fields(p_errors jsonb, p_code text default 'WV002')
returns void language plpgsql volatile as $$
begin
  raise exception using errcode = p_code,
    message = (select string_agg(m, ' ') from jsonb_each(p_errors) e, jsonb_array_elements_text(e.value) m),
    detail = p_errors::text;
end;
$$;

create or replace function app_hidden.forbidden(p_message text, p_code text default 'WF001')
returns void language plpgsql volatile as $$
begin
  raise exception using errcode = p_code, message = p_message;
end;
$$;

create or replace function app_hidden.not_found(p_message text default 'Ressource introuvable.', p_code text default 'WN001')
returns void language plpgsql volatile as $$
begin
  raise exception using errcode = p_code, message = p_message;
end;
$$;

create or replace function app_hidden.conflict(p_message text, p_code text default 'WC001')
returns void language plpgsql volatile as $$
begin
  raise exception using errcode = p_code, message = p_message;
end;
$$;

-- Collects field errors in a jsonb accumulator: errors := app_hidden.add_error(errors, 'date', 'msg').
create or replace function app_hidden.add_error(p_errors jsonb, p_field text, p_message text)
returns jsonb language sql immutable as $$
  select coalesce(p_errors, '{}'::jsonb)
      || jsonb_build_object(coalesce(p_field, 'non_field_errors'),
           coalesce(p_errors -> coalesce(p_field, 'non_field_errors'), '[]'::jsonb) || to_jsonb(p_message));
$$;

-- Raises the accumulated errors, if any.
create or replace function app_hidden.raise_errors(p_errors jsonb)
returns void language plpgsql volatile as $$
begin
  if p_errors is not null and p_errors <> '{}'::jsonb then
    perform app_hidden.invalid_fields(p_errors);
  end if;
end;
$$;

-- Formats used in messages and notification bodies.
-- stable, as to_char is: so they are inlined (an immutable wrapper of a stable body is called
-- through the SQL function machinery, parsed and planned at each call; docs/architecture.md,
-- Performance notes).
create or replace function app_hidden.fr_date(p_date date) returns text
language sql stable as $$ select to_char(p_date, 'DD/MM/YYYY') $$;

create or replace function app_hidden.fmt_quantity(p_value numeric) returns text
language sql stable as $$ select to_char(p_value, 'FM999999990.00') $$;

-- Paging of list functions (the HTTP layer validates its query string; GraphQL and other
-- SQL callers reach the functions directly): page from 1, page size from 1 to 200.
create or replace function app_hidden.page_limit(p_page_size int) returns int
language plpgsql immutable as $$
begin
  if p_page_size is null or p_page_size < 1 then
    perform app_hidden.invalid('page_size', 'La taille de page est un entier d’au moins 1.', 'WV003');
  end if;
  return least(p_page_size, 200);
end;
$$;

create or replace function app_hidden.page_offset(p_page int, p_page_size int) returns int
language plpgsql immutable as $$
begin
  if p_page is null or p_page < 1 then
    perform app_hidden.invalid('page', 'Le numéro de page est un entier d’au moins 1.', 'WV003');
  end if;
  return (p_page - 1) * app_hidden.page_limit(p_page_size);
end;
$$;
