-- Ablation: the record a creation answers (app_hidden.absence_json: the absence re-read with its
-- type, employee, documents and effects) replaced by its id alone.
create or replace function app_hidden.absence_json(p_id int, p_public_url text) returns jsonb
language sql stable as $$
  select jsonb_build_object('id', p_id);
$$;
