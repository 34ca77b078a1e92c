-- Ablation: app_private.decider_candidates replaced by its answer for an employee of the first
-- establishment (route_deciders and notify_filing kept): the candidates' own cost, without the plumbing
-- of the functions that call them.
do $do$
declare
  v_ids int[];
  v_att boolean[];
begin
  select array_agg(c.account_id order by c.account_id), array_agg(c.attached order by c.account_id) into v_ids, v_att
  from app_private.decider_candidates((select id from bench.employees where establishment_idx = 0 order by idx offset 10 limit 1),
                                      current_date, 'absences.decide_absence', null) c;
  execute format($f$
    create or replace function app_private.decider_candidates(p_employee_id int, p_on date, p_decide_permission text,
                                                              p_author_account_id int)
    returns table (account_id int, attached boolean)
    language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp
    set plan_cache_mode = force_generic_plan as $b$
    begin
      return query select u.i, u.a from unnest(%L::int[], %L::boolean[]) u(i, a) where u.i is distinct from p_author_account_id;
    end;
    $b$$f$, v_ids, v_att);
end;
$do$;
