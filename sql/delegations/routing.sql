-- Routing of a filing with delegations and presence (issue 30, point 3). Hooked in
-- app_private.route_deciders (sql/notifications/functions.sql), which returns this function's
-- accounts: every notification of a filing or a cancellation request goes through it.
--
-- From the deciders of app_private.decider_candidates (SPEC Events, Notifications: the
-- attached ones first, the unattached when nobody attached qualifies):
--   * a decider is "away" when its own granted absence (validated, or its cancellation
--     requested) covers the day of the filing (today);
--   * the delegates of a decider are those of its delegations in force today that hand over
--     the decision and cover the employee (all establishments, or one of the employee's), the
--     author and the employee themself excluded, active accounts only;
--   * a group (the attached, else the unattached) is kept when some of its deciders is present
--     or has a delegate: its present deciders, its away deciders with a delegate, and those
--     delegates; an away decider without a delegate is skipped;
--   * when every decider of both groups is away without a delegate, the plain SPEC routing
--     stands (they are told; somebody reads it on return).
create or replace function app_private.route_filing_with_delegations(p_employee_id int, p_on date,
                                                                     p_decide_permission text,
                                                                     p_author_account_id int)
returns setof int
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_at timestamptz := app_hidden.now();
  v_today date := app_hidden.business_date(v_at);
  v_attached boolean;
  v_result int[];
begin
  for v_attached in select x from unnest(array[true, false]) x loop
    with c as (
      select dc.account_id,
             exists (select 1 from app_public.accounts a
                     join app_public.absences ab on ab.employee_id = a.employee_id
                     where a.id = dc.account_id
                       and ab.status in ('validated', 'cancellation_requested')
                       and ab.date_start <= v_today and ab.date_end >= v_today) as away
      from app_private.decider_candidates(p_employee_id, p_on, p_decide_permission, p_author_account_id) dc
      where dc.attached = v_attached
    ),
    delegates as (
      select c.account_id as delegator, d.delegate_account_id as delegate
      from c
      join app_public.delegations d on d.delegator_account_id = c.account_id
      join app_public.accounts da on da.id = d.delegate_account_id and da.is_active
      where app_hidden.delegation_active(d.start_date, d.end_date, d.ended_at, v_at)
        and app_hidden.delegation_grants(d.kinds, p_decide_permission)
        and d.delegate_account_id is distinct from p_author_account_id
        and da.employee_id is distinct from p_employee_id
        and (d.all_establishments
             or exists (select 1 from app_public.delegation_establishments de
                        where de.delegation_id = d.id
                          and de.establishment_id in (select app_hidden.employee_establishments(p_employee_id, v_today))))
    )
    select array(select c.account_id from c
                 where not c.away or exists (select 1 from delegates x where x.delegator = c.account_id)
                 union
                 select x.delegate from delegates x
                 order by 1)
      into v_result;
    if cardinality(v_result) > 0 then
      return query select unnest(v_result);
      return;
    end if;
  end loop;
  -- Everybody away without a delegate: the plain routing (attached, else unattached).
  return query
    with candidates as (
      select * from app_private.decider_candidates(p_employee_id, p_on, p_decide_permission, p_author_account_id)
    )
    select c.account_id from candidates c
    where c.attached = exists (select 1 from candidates x where x.attached)
    order by c.account_id;
end;
$$;
