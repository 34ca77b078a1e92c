-- GET /api/settings/: the limits a client shows and checks before sending (document size and
-- formats, retroactivity, planning window, text lengths), read from their one home so that the
-- web application copies none of them (issue 26). Every value of app_hidden.input_contract(),
-- its camelCase names written snake_case like the rest of the API, and the limit functions it
-- does not carry.
create or replace function app_public.client_settings() returns jsonb
language sql stable as $$
  select (select jsonb_object_agg(lower(regexp_replace(key, '([A-Z])', '_\1', 'g')), value)
          from jsonb_each(app_hidden.input_contract()))
         || jsonb_build_object(
              'absence_max_days', app_hidden.absence_max_days(),
              'document_content_types', to_jsonb(app_hidden.document_content_types()))
$$;
comment on function app_public.client_settings() is
'SPEC Limits and CONTRACT section 7, GET /api/settings/: the limits of the input contract
(app_hidden.input_contract(): text lengths, retroactivity days, planning window, document size) and the
document formats and longest absence, for clients to show and check before sending. The same for every account.';
