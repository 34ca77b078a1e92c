create or replace function app_hidden.absence_type_json(p_type_id int) returns jsonb
language sql stable as $$
  select jsonb_build_object(
    'id', t.id,
    'code', t.code,
    'name', t.name,
    'category', coalesce(p.name, c.name),
    'subcategory', case when c.parent_id is not null then c.name end,
    'unit', t.unit,
    'paid', t.paid,
    'splittable', t.splittable,
    'annual_cap', app_hidden.fmt_quantity(t.annual_cap),
    'cap_overrun', t.cap_overrun,
    'contract_types', coalesce((select jsonb_agg(ct.code order by ct.code)
                                from app_public.absence_type_contract_types atc
                                join app_public.contract_types ct on ct.id = atc.contract_type_id
                                where atc.absence_type_id = t.id), '[]'::jsonb),
    'half_day_allowed', t.half_day_allowed,
    'documents_expected', t.documents_expected,
    'validation_required', t.validation_required,
    'annualisation_effect', t.annualisation_effect,
    'counter_codes', coalesce((select jsonb_agg(ca.counter_code order by ca.counter_code)
                               from app_public.counter_associations ca
                               join app_public.counter_kinds k on k.code = ca.counter_code
                               where ca.absence_type_id = t.id and ca.is_active and k.is_consumable), '[]'::jsonb))
  from app_public.absence_types t
  join app_public.absence_categories c on c.id = t.category_id
  left join app_public.absence_categories p on p.id = c.parent_id
  where t.id = p_type_id;
$$;

-- GET /api/absence-types/: active types only, with their counters and contract types.
create or replace function app_public.absence_types_list(p_page int default 1, p_page_size int default 50) returns jsonb
language sql stable as $$
  with types as (
    select t.*, c.parent_id, c.name as category_name, p.name as parent_name
    from app_public.absence_types t
    join app_public.absence_categories c on c.id = t.category_id
    left join app_public.absence_categories p on p.id = c.parent_id
    where t.is_active
  )
  select jsonb_build_object(
    'count', (select count(*) from types),
    'results', coalesce((
      select jsonb_agg(app_hidden.absence_type_json(t.id) order by t.position, t.code)
      from (select * from types order by position, code
            limit app_hidden.page_limit(p_page_size) offset app_hidden.page_offset(p_page, p_page_size)) t), '[]'::jsonb));
$$;
comment on function app_public.absence_types_list(integer, integer) is
'SPEC Absence types, GET /api/absence-types/: one page of the active absence types, each with its
counter_codes and contract types; the API keeps the reference read-only.';
