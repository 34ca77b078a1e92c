-- The notification service: in-app notifications created inside the caller's transaction
-- (a failure aborts the business write), and the routing of filings to their deciders.

create function app_private.notify(p_account_id int, p_title text, p_body text, p_level text default 'info',
                                   p_model text default null, p_target_id bigint default null)
returns bigint
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_id bigint;
begin
  insert into app_public.notifications (account_id, title, body, level, model, target_id)
  values (p_account_id, p_title, p_body, p_level, p_model, p_target_id)
  returning id into v_id;
  return v_id;
end;
$$;

-- Deciders of a filing about an employee on a date: active accounts that may decide it
-- (p_decide_permission, through a role: a superuser without a role never counts) and whose
-- queue shows the employee (absences.view_absence_queue), never the author.
-- attached = the decider's establishments meet the employee's establishments of that day
-- (main, secondary, team of the day); unattached = a decider of the whole association.
create function app_private.decider_candidates(p_employee_id int, p_on date, p_decide_permission text,
                                               p_author_account_id int)
returns table (account_id int, attached boolean)
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_at timestamptz := app_hidden.now();
  v_employee_establishments int[] := array(select app_hidden.employee_establishments(p_employee_id, p_on));
begin
  return query
  select a.id,
         not decide.whole and decide.establishment_ids && v_employee_establishments
  from app_public.accounts a
  cross join lateral app_hidden.permission_scope(a.id, p_decide_permission, v_at) decide
  where a.is_active
    and a.id is distinct from p_author_account_id
    and exists (select 1 from app_public.role_attributions ra
                join app_public.role_permissions rp on rp.role_id = ra.role_id
                where ra.account_id = a.id and rp.permission_code = p_decide_permission
                  and app_hidden.date_in(app_hidden.business_date(v_at), ra.start_date, ra.end_date))
    and app_hidden.may(a.id, p_decide_permission, p_employee_id, v_at)
    and app_hidden.may(a.id, 'absences.view_absence_queue', p_employee_id, v_at);
end;
$$;

-- The accounts to notify of a filing: the attached deciders, else the unattached ones.
create function app_private.route_deciders(p_employee_id int, p_on date, p_decide_permission text,
                                           p_author_account_id int)
returns setof int
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  with candidates as (
    select * from app_private.decider_candidates(p_employee_id, p_on, p_decide_permission, p_author_account_id)
  )
  select c.account_id from candidates c
  where c.attached = exists (select 1 from candidates x where x.attached)
  order by c.account_id;
$$;

-- Who hears of a filing nobody can decide: every Admin, else RH n1 and RH n2, else the
-- superusers (the author is added by the caller).
create function app_private.orphan_filing_recipients() returns setof int
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_today date := app_hidden.today();
begin
  return query
  select distinct ra.account_id from app_public.role_attributions ra
  join app_public.accounts a on a.id = ra.account_id
  where a.is_active and ra.role_id = 1 and app_hidden.date_in(v_today, ra.start_date, ra.end_date);
  if found then return; end if;
  return query
  select distinct ra.account_id from app_public.role_attributions ra
  join app_public.accounts a on a.id = ra.account_id
  where a.is_active and ra.role_id in (2, 3) and app_hidden.date_in(v_today, ra.start_date, ra.end_date);
  if found then return; end if;
  return query select a.id from app_public.accounts a where a.is_active and a.is_superuser;
end;
$$;

-- Notifies a filing and returns has_recipient. With deciders: each receives
-- (p_title, p_body). Without: the author and the fallback recipients receive
-- (p_orphan_title, p_orphan_body) and the caller learns false.
create function app_private.notify_filing(p_employee_id int, p_on date, p_decide_permission text,
                                          p_author_account_id int, p_title text, p_body text,
                                          p_orphan_title text, p_orphan_body text,
                                          p_model text, p_target_id bigint)
returns boolean
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_recipient int;
  v_found boolean := false;
begin
  for v_recipient in select app_private.route_deciders(p_employee_id, p_on, p_decide_permission, p_author_account_id) loop
    perform app_private.notify(v_recipient, p_title, p_body, 'info', p_model, p_target_id);
    v_found := true;
  end loop;
  if v_found then
    return true;
  end if;
  for v_recipient in
    select r from (select p_author_account_id as r union select app_private.orphan_filing_recipients()) x
    where r is not null
  loop
    perform app_private.notify(v_recipient, p_orphan_title, p_orphan_body, 'warning', p_model, p_target_id);
  end loop;
  return false;
end;
$$;

-- Notifies every decider whose queue shows the employee (same routing), e.g. a cancellation
-- request. Returns the number of recipients.
create function app_private.notify_deciders(p_employee_id int, p_on date, p_decide_permission text,
                                            p_author_account_id int, p_title text, p_body text,
                                            p_model text, p_target_id bigint)
returns int
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_recipient int;
  v_count int := 0;
begin
  for v_recipient in select app_private.route_deciders(p_employee_id, p_on, p_decide_permission, p_author_account_id) loop
    perform app_private.notify(v_recipient, p_title, p_body, 'info', p_model, p_target_id);
    v_count := v_count + 1;
  end loop;
  return v_count;
end;
$$;

-- The account of an employee record (recipient of "validée"/"refusée" notifications).
create function app_private.employee_account_id(p_employee_id int) returns int
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select a.id from app_public.accounts a where a.employee_id = p_employee_id;
$$;

-- Display name of an employee, for notification bodies.
create function app_hidden.employee_name(p_employee_id int) returns text
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select e.first_name || ' ' || e.last_name from app_public.employees e where e.id = p_employee_id;
$$;
