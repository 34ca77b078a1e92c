-- Ablation: the routing of a filing to its deciders (app_private.route_deciders, through
-- decider_candidates) replaced by a constant: the deciders it finds for an employee of the first
-- establishment, so that a creation still notifies as many accounts. Its gain is the most any
-- faster routing could give.
do $do$
declare
  v_deciders int[] := array(select app_private.route_deciders(
    (select id from bench.employees where establishment_idx = 0 order by idx offset 10 limit 1),
    current_date, 'absences.decide_absence', null));
begin
  execute format($f$
    create or replace function app_private.route_deciders(p_employee_id int, p_on date, p_decide_permission text,
                                                          p_author_account_id int)
    returns setof int
    language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $b$
    begin
      return query select unnest(%L::int[]);
    end;
    $b$$f$, v_deciders);
end;
$do$;
