-- The paging of the back-office's lists (counters, counter rules, role attributions, absence
-- categories and types, posts, counter associations): one shape instead of a « filtered / page /
-- count » query written again in each. A list function selects the ids it lists, filtered and in order, as one
-- array; app_hidden.list_page answers its total and the ids of the asked page; the function builds
-- the JSON of those ids (set-based, in page order) and app_hidden.list_answer wraps it as the list
-- envelope { count, results } the router and the back-office read. The paging rules are
-- app_hidden.page_offset and app_hidden.page_limit (sql/core/errors.sql): the page is checked
-- first, then its size, as LIMIT ... OFFSET evaluated them.

create or replace function app_hidden.list_page(p_ids int[], p_page int, p_page_size int)
returns table (total int, ids int[])
language plpgsql immutable rows 1 as $$
declare
  v_offset int := app_hidden.page_offset(p_page, p_page_size);
  v_limit int := app_hidden.page_limit(p_page_size);
begin
  return query select coalesce(cardinality(p_ids), 0), coalesce(p_ids[v_offset + 1 : v_offset + v_limit], '{}');
end;
$$;

-- The list envelope: the total and the page's records (none: an empty list, never null).
create or replace function app_hidden.list_answer(p_total int, p_results jsonb) returns jsonb
language sql immutable as $$
  select jsonb_build_object('count', p_total, 'results', coalesce(p_results, '[]'::jsonb));
$$;
