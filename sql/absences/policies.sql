-- Absences: the employee reads their own; queue readers read their perimeter; payroll
-- readers read the absences of the people they pay (the payroll routes show no comment,
-- decision reason or document). /api/absences/ narrows this to own + queue perimeter
-- (app_hidden.absence_api_reader_ids, SPEC Permissions rule 3).
create or replace function app_hidden.absence_reader_employee_ids() returns setof int
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp rows 200 as $$
begin
  return query
    select app_hidden.current_employee_id() where app_hidden.current_employee_id() is not null
    union
    select app_hidden.perimeter_employee_ids('absences.view_absence_queue')
    union
    select app_hidden.perimeter_employee_ids('employee.view_payroll');
end;
$$;

-- Who may write an absence row at all (the API functions apply the finer rules): the
-- employee on their own record, the manager workspace on its queue perimeter.
create or replace function app_hidden.absence_writer_employee_ids() returns setof int
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp rows 200 as $$
begin
  return query
    select app_hidden.current_employee_id() where app_hidden.current_employee_id() is not null
    union
    select app_hidden.perimeter_employee_ids('absences.view_absence_queue');
end;
$$;

-- The employees whose absences the acting account reads, as one array kept for the
-- transaction (null: every employee, a reader of the whole association). The select policy
-- asks it in every statement that reads absences (three in a creation), so a repeated ask is one
-- lookup in a transaction-local setting, keyed like the memo of sql/perimeter.sql (account,
-- employee record, instant, generation of the perimeter tables); plain plpgsql, neither
-- security definer nor SET, so that a repeated ask costs no context switch (docs/architecture.md,
-- Performance notes). An account holding neither permission (most employees) reads its own
-- record only: one existence test instead of two perimeter scopes.
create or replace function app_hidden.absence_readers() returns int[]
language plpgsql stable as $$
declare
  v_account int := app_hidden.current_account_id();
  v_key text := pg_catalog.concat(v_account, '|', pg_catalog.current_setting('app.employee_id', true), '|',
                                  app_hidden.now(), '|', app_hidden.perimeter_generation(), '|');
  v_memo text := app_hidden.memo_read('app.memo_absence_readers', v_key);
  v_readers int[];
begin
  if v_memo is not null then
    return case when v_memo = 'W' then null else v_memo::int[] end;
  end if;
  if not (app_hidden.current_account_has('absences.view_absence_queue')
          or app_hidden.current_account_has('employee.view_payroll')) then
    v_readers := array(select x from (select app_hidden.current_employee_id()) e(x) where x is not null);
  elsif app_hidden.perimeter_is_whole('absences.view_absence_queue')
        or app_hidden.perimeter_is_whole('employee.view_payroll') then
    v_readers := null;
  else
    v_readers := array(select app_hidden.absence_reader_employee_ids());
  end if;
  perform pg_catalog.set_config('app.memo_absence_readers', v_key || coalesce(v_readers::text, 'W'), true);
  return v_readers;
end;
$$;

alter table app_public.absences enable row level security;
-- (A reader of the whole association needs no list: the init plan answers for every row.)
drop policy if exists select_own_or_perimeter on app_public.absences;
create policy select_own_or_perimeter on app_public.absences for select to wfm_visitor, wfm_api
  using ((select app_hidden.absence_readers() is null)
         or employee_id in (select unnest(app_hidden.absence_readers())));
-- Filing: for oneself, or a declaration inside the decision perimeter.
drop policy if exists insert_own_or_decider on app_public.absences;
create policy insert_own_or_decider on app_public.absences for insert to wfm_api
  with check (employee_id = (select app_hidden.current_employee_id())
              or employee_id in (select app_hidden.perimeter_employee_ids('absences.decide_absence')));
drop policy if exists update_own_or_perimeter on app_public.absences;
create policy update_own_or_perimeter on app_public.absences for update to wfm_api
  using (employee_id in (select app_hidden.absence_writer_employee_ids()))
  with check (employee_id in (select app_hidden.absence_writer_employee_ids()));
-- Only the owner withdraws (a pending request; the guard trigger refuses any other state).
drop policy if exists delete_own on app_public.absences;
create policy delete_own on app_public.absences for delete to wfm_api
  using (employee_id = (select app_hidden.current_employee_id()));

-- Correlated: each document looks up its absence (primary key, the absence's own policy
-- applies), where "absence_id in (select a.id from absences)" hashed every readable absence
-- (100 000 for a whole-association reader) for each statement that touched documents.
alter table app_public.absence_documents enable row level security;
drop policy if exists select_visible_absence on app_public.absence_documents;
create policy select_visible_absence on app_public.absence_documents for select to wfm_visitor, wfm_api
  using (exists (select 1 from app_public.absences a where a.id = absence_documents.absence_id));
-- Depositing is open to the owner and to the manager perimeter without the read right.
drop policy if exists insert_writer on app_public.absence_documents;
create policy insert_writer on app_public.absence_documents for insert to wfm_api
  with check (exists (select 1 from app_public.absences a
                      where a.id = absence_documents.absence_id
                        and a.employee_id in (select app_hidden.absence_writer_employee_ids())));
-- Removing needs the right to correct the absence (issue 11): the decision perimeter. (A
-- withdrawal by the owner erases the absence; its documents go by the foreign key's cascade.)
drop policy if exists delete_writer on app_public.absence_documents;
create policy delete_writer on app_public.absence_documents for delete to wfm_api
  using (exists (select 1 from app_public.absences a
                 where a.id = absence_documents.absence_id
                   and a.employee_id in (select app_hidden.perimeter_employee_ids('absences.decide_absence'))));

alter table app_public.honorability_certificates enable row level security;
drop policy if exists select_own_or_directory on app_public.honorability_certificates;
create policy select_own_or_directory on app_public.honorability_certificates for select to wfm_visitor, wfm_api
  using ((select app_hidden.current_account_has('employee.view_employee_directory'))
         or employee_id in (select app_hidden.readable_employee_ids()));
create or replace function app_hidden.honorability_writer_employee_ids() returns setof int
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select app_hidden.current_employee_id() where app_hidden.current_employee_id() is not null
  union
  select app_hidden.perimeter_employee_ids('absences.view_absence_queue')
  union
  select app_hidden.perimeter_employee_ids('employee.change_employee_record');
$$;
drop policy if exists insert_writer on app_public.honorability_certificates;
create policy insert_writer on app_public.honorability_certificates for insert to wfm_api
  with check (employee_id in (select app_hidden.honorability_writer_employee_ids()));
drop policy if exists update_writer on app_public.honorability_certificates;
create policy update_writer on app_public.honorability_certificates for update to wfm_api
  using (employee_id in (select app_hidden.honorability_writer_employee_ids()))
  with check (employee_id in (select app_hidden.honorability_writer_employee_ids()));
drop policy if exists delete_writer on app_public.honorability_certificates;
create policy delete_writer on app_public.honorability_certificates for delete to wfm_api
  using (employee_id in (select app_hidden.honorability_writer_employee_ids()));

alter table app_private.storage_garbage enable row level security;
