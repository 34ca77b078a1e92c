-- Prototype measured by `npm run bench:variants -- --variants routing,routing_cache_prototype`, NOT the
-- service's code: decider_candidates answered from a table of earlier answers keyed by everything it
-- reads except the tables (a generation that writes to those tables would advance, the permission, the
-- day, the employee's establishments, the on-call periods active now). It measures what a cache hit
-- costs; the invalidation (statement triggers advancing the generation) is not written, so it must
-- never be applied to a database in use. BENCHMARKS.md, "Fifth pass".
create unlogged table app_private.decider_cache_proto (key text primary key, ids int[] not null, attached boolean[] not null);
create table app_private.routing_generation_proto (n bigint not null);
insert into app_private.routing_generation_proto values (0);
alter function app_private.decider_candidates(int, date, text, int) rename to decider_candidates_computed;
create function app_private.decider_candidates(p_employee_id int, p_on date, p_decide_permission text, p_author_account_id int)
returns table (account_id int, attached boolean)
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_at timestamptz := app_hidden.now();
  v_today date := app_hidden.business_date(v_at);
  v_now_establishments int[];
  v_key text;
  v_ids int[];
  v_attached boolean[];
begin
  if p_employee_id is null then
    return;
  end if;
  -- The employee's inputs of decider_candidates: whether it exists, its establishments today and on
  -- either day (app_hidden.employee_establishments, the perimeter's definition of them).
  v_now_establishments := array(select x from app_hidden.employee_establishments(p_employee_id, v_today) x order by x);
  v_key := concat_ws('|', (select g.n from app_private.routing_generation_proto g), p_decide_permission, v_today,
                     exists (select 1 from app_public.employees e where e.id = p_employee_id), v_now_establishments,
                     array(select unnest(v_now_establishments)
                           union select x from app_hidden.employee_establishments(p_employee_id, coalesce(p_on, v_today)) x
                           order by 1),
                     array(select op.id from app_public.on_call_periods op where op.start_at <= v_at and v_at < op.end_at order by op.id));
  select c.ids, c.attached into v_ids, v_attached from app_private.decider_cache_proto c where c.key = v_key;
  if not found then
    select coalesce(array_agg(d.account_id order by d.account_id), '{}'), coalesce(array_agg(d.attached order by d.account_id), '{}')
      into v_ids, v_attached
    from app_private.decider_candidates_computed(p_employee_id, p_on, p_decide_permission, null) d;
    insert into app_private.decider_cache_proto values (v_key, v_ids, v_attached) on conflict do nothing;
  end if;
  return query select u.i, u.a from unnest(v_ids, v_attached) u(i, a) where u.i is distinct from p_author_account_id;
end;
$$;
