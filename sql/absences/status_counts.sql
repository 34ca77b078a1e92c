-- Number of absences per employee and state, kept by the triggers below in the transaction
-- that writes the absences: the queue's total (GET /api/absences/?status=) becomes a sum over
-- the readable employees instead of a count of every matching row (95 000 pending requests
-- for a whole-association reader at 1 M absences). Exact: same transaction, same snapshot.

create table if not exists app_private.absence_status_counts (
  status text not null,
  employee_id int not null,
  n int not null check (n > 0),
  primary key (status, employee_id)
);
create index if not exists absence_status_counts_employee_idx on app_private.absence_status_counts (employee_id);
-- The whole association's total of a state is a sum over every employee's count of it (10 000 rows
-- at scale): this index answers it alone (index-only scan), without visiting the table's pages.
create index if not exists absence_status_counts_covering_idx on app_private.absence_status_counts (status, employee_id) include (n);

-- The perimeter of the absences themselves: a reader sums only the employees whose absences
-- it reads (app_public.absences, select_own_or_perimeter).
alter table app_private.absence_status_counts enable row level security;
drop policy if exists select_own_or_perimeter on app_private.absence_status_counts;
create policy select_own_or_perimeter on app_private.absence_status_counts for select to wfm_api
  using ((select app_hidden.absence_readers() is null)
         or employee_id in (select unnest(app_hidden.absence_readers())));
grant select on app_private.absence_status_counts to wfm_api;

-- One absence more (p_delta 1) or less (-1) in a state; a count that reaches zero goes.
create or replace function app_private.absence_status_count_add(p_status text, p_employee int, p_delta int) returns void
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  if p_delta > 0 then
    insert into app_private.absence_status_counts as c (status, employee_id, n)
    values (p_status, p_employee, p_delta)
    on conflict (status, employee_id) do update set n = c.n + excluded.n;
  else
    delete from app_private.absence_status_counts c
    where c.status = p_status and c.employee_id = p_employee and c.n <= -p_delta;
    if not found then
      update app_private.absence_status_counts c set n = c.n + p_delta
      where c.status = p_status and c.employee_id = p_employee;
    end if;
  end if;
end;
$$;

create or replace function app_private.tg_absences__status_counts() returns trigger
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  -- A change of state touches two counts: always in the order of their keys, so that two
  -- transitions of one employee's absences in opposite directions never deadlock.
  if tg_op = 'UPDATE' and (new.status, new.employee_id) < (old.status, old.employee_id) then
    perform app_private.absence_status_count_add(new.status, new.employee_id, 1);
    perform app_private.absence_status_count_add(old.status, old.employee_id, -1);
    return null;
  end if;
  if tg_op in ('UPDATE', 'DELETE') then
    perform app_private.absence_status_count_add(old.status, old.employee_id, -1);
  end if;
  if tg_op in ('INSERT', 'UPDATE') then
    perform app_private.absence_status_count_add(new.status, new.employee_id, 1);
  end if;
  return null;
end;
$$;
drop trigger if exists _600_status_counts on app_public.absences;
create or replace trigger _600_status_counts after insert or delete on app_public.absences
  for each row execute function app_private.tg_absences__status_counts();
drop trigger if exists _600_status_counts_update on app_public.absences;
create or replace trigger _600_status_counts_update after update of status, employee_id on app_public.absences
  for each row when (old.status is distinct from new.status or old.employee_id is distinct from new.employee_id)
  execute function app_private.tg_absences__status_counts();

create or replace function app_private.tg_absences__status_counts_truncate() returns trigger
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  truncate app_private.absence_status_counts;
  return null;
end;
$$;
drop trigger if exists _600_status_counts_truncate on app_public.absences;
create or replace trigger _600_status_counts_truncate after truncate on app_public.absences
  for each statement execute function app_private.tg_absences__status_counts_truncate();

-- Recounted in one scan whenever this file is applied (a migration, or a bulk load written with
-- the triggers off): the counts then hold for the absences as they are.
create or replace function app_private.absence_status_counts_rebuild() returns void
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  -- No absence is written meanwhile: the recount and the triggers never both count one.
  lock table app_public.absences in share mode;
  delete from app_private.absence_status_counts;
  insert into app_private.absence_status_counts (status, employee_id, n)
  select a.status, a.employee_id, count(*)::int from app_public.absences a group by a.status, a.employee_id;
end;
$$;
select app_private.absence_status_counts_rebuild();
