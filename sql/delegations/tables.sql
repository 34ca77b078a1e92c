-- Dated delegations of decisions (issue 30): a decider (the delegator) names another account
-- (the delegate, « délégataire ») who reads the queue and decides in their place over a date
-- interval (start and end inclusive, business dates), over all of the delegator's perimeter
-- (all_establishments) or some establishments of it (delegation_establishments), for absences,
-- day changes or both (kinds). Ended early: ended_at (the delegation stops at that instant).
-- The effective perimeter is computed in sql/perimeter.sql (app_hidden.permission_scopes and
-- app_hidden.account_permission_codes); the rules, the routes and the routing in
-- sql/delegations/api.sql and sql/delegations/routing.sql.
create table if not exists app_public.delegations (
  id int generated always as identity primary key,
  delegator_account_id int not null references app_public.accounts on delete cascade,
  delegate_account_id int not null references app_public.accounts on delete cascade,
  start_date date not null,
  end_date date not null,
  all_establishments boolean not null default true,
  kinds text not null check (kinds in ('absences', 'shift_changes', 'both')),
  comment text,
  created_by int references app_public.accounts on delete set null,
  created_at timestamptz not null default app_hidden.now(),
  ended_at timestamptz,
  ended_by int references app_public.accounts on delete set null,
  updated_at timestamptz not null default app_hidden.now(),
  constraint delegations_interval check (end_date >= start_date),
  constraint delegations_not_self check (delegator_account_id <> delegate_account_id)
);
create index if not exists delegations_delegate_idx on app_public.delegations (delegate_account_id, start_date, end_date);
create index if not exists delegations_delegator_idx on app_public.delegations (delegator_account_id, start_date, end_date);

create table if not exists app_public.delegation_establishments (
  delegation_id int not null references app_public.delegations on delete cascade,
  establishment_id int not null references app_public.establishments on delete cascade,
  primary key (delegation_id, establishment_id)
);
create index if not exists delegation_establishments_establishment_idx
  on app_public.delegation_establishments (establishment_id);

-- Which permissions a delegation of these kinds hands over: the queue and the decisions
-- of its kinds, nothing else (never documents, records, payroll...). Never NULL.
create or replace function app_hidden.delegation_grants(p_kinds text, p_permission text) returns boolean
language sql immutable parallel safe as $$
  select coalesce(case p_permission
                    when 'absences.view_absence_queue' then p_kinds in ('absences', 'shift_changes', 'both')
                    when 'absences.decide_absence' then p_kinds in ('absences', 'both')
                    when 'planning.decide_shift_change' then p_kinds in ('shift_changes', 'both')
                    else false end, false);
$$;
