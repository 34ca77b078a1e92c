-- Guards are true or false, never NULL.
--
-- `if not app_hidden.x(...) then refuse` lets the caller through when x answers NULL (NOT NULL
-- is NULL, and `if NULL` does not run its branch). A helper that a guard or a policy negates
-- is therefore declared here, and a declared helper is under proof:
--   * test/db/61-guards-never-null.sql calls every declared helper as every kind of caller (no
--     account, accounts of each role without an employee record, an employee without a main
--     workplace, closed accounts) with every mix of NULL and ordinary arguments, and fails on a
--     NULL answer;
--   * the same file reads the catalogue (sources of the plpgsql and sql functions of app_public,
--     app_hidden and app_private, and the expressions of pg_policies) and fails when
--     `not <schema>.<helper>(` names a helper that is not declared here.
-- Declaring is one row: the signature as `regprocedure` prints it, and why the helper cannot
-- answer NULL. See docs/architecture.md, "Guards are never NULL".
create table if not exists app_private.never_null_guards (
  helper text primary key check (helper ~ '^app_(public|hidden|private)\.[a-z_]+\(.*\)$'),
  why text not null check (btrim(why) <> '')
);
alter table app_private.never_null_guards enable row level security;

insert into app_private.never_null_guards (helper, why) values
  ('app_hidden.permission_in(text[],text)', 'coalesce(..., false)'),
  ('app_hidden.account_has_permission(integer,text,timestamp with time zone)', 'permission_in'),
  ('app_hidden.current_account_has(text)', 'permission_in'),
  ('app_hidden.may(integer,text,integer,timestamp with time zone)', 'false for a NULL employee; exists otherwise'),
  ('app_hidden.perimeter_is_whole(text)', 'coalesce(..., false)'),
  ('app_hidden.is_current_employee(integer)', 'coalesce(p_employee = current_employee_id(), false)'),
  ('app_hidden.date_in(date,date,date)', 'coalesce(..., false)'),
  ('app_hidden.current_account_is_staff()', 'exists'),
  ('app_hidden.current_account_is_superuser()', 'coalesce(..., false)'),
  ('app_hidden.account_has_backoffice_access(integer,timestamp with time zone)', 'exists'),
  ('app_hidden.current_account_reads_audit_log()', 'conjunction of never-NULL terms'),
  ('app_hidden.account_rights_covered(integer)', 'true, false, or not exists (...)'),
  ('app_hidden.account_in_role_reach(integer)', 'false for a NULL or unknown account; else true or a never-NULL helper'),
  ('app_hidden.can_read_document_file(integer)', 'disjunction of never-NULL helpers'),
  ('app_hidden.can_deposit_honorability(integer)', 'disjunction of never-NULL helpers'),
  ('app_hidden.in_scope(integer,integer[])', 'coalesce(... = any (scope), false)'),
  ('app_hidden.event_establishment_allowed(integer)', 'in_scope'),
  ('app_hidden.json_bool_ok(jsonb)', 'is null or jsonb_typeof in (...)'),
  ('app_hidden.json_id_ok(jsonb)', 'is null or ... and ...: every term is known'),
  ('app_hidden.json_time_ok(jsonb)', 'is null or ... and ...: every term is known'),
  ('app_hidden.same_slots(app_public.slot[],app_public.slot[])', 'array equality of two arrays built by array(...)'),
  ('app_private.counter_code_has_reason(text,integer,integer)', 'exists'),
  ('app_private.job_is_due(text,timestamp with time zone)', 'coalesce(..., false)'),
  ('app_private.holds_hr_permission(integer)', 'coalesce(exists ... or exists ..., false)'),
  ('app_hidden.current_account_is_verified_superuser()', 'coalesce(is_superuser, false) and coalesce(setting, '''') = ''on'''),
  ('app_hidden.may_write_counter(integer)', 'current_account_is_staff() or coalesce(may(...), false)'),
  ('app_hidden.may_decide_absence_of(integer)', 'coalesce(may(...) and is_current_employee(...) is false, false)'),
  ('app_hidden.calendar_feed_allowed(text)', 'coalesce(case ... end, false)'),
  ('app_hidden.sent(text[],text,boolean)', 'case of two coalesce(..., false)'),
  ('app_hidden.account_is_hr(integer)', 'coalesce(exists ..., false)'),
  ('app_hidden.may_own(integer,text,integer,timestamp with time zone)', 'false for a NULL account or employee; exists otherwise'),
  ('app_hidden.delegation_grants(text,text)', 'coalesce(case ... end, false)'),
  ('app_hidden.delegation_active(date,date,timestamp with time zone,timestamp with time zone)', 'coalesce(..., false)')
on conflict (helper) do update set why = excluded.why;
