-- Written by `npm run db:current` from sql/ORDER: edit sql/, never this file, and run it again.
-- The sql/ files changed since the last committed migration (migrations/sql-state.json), in list order.

-- Objects that sql/ no longer defines.
drop function if exists app_hidden.tg_perimeter_changed() cascade;
drop function if exists app_hidden.tg_timestamps() cascade;
drop function if exists app_private.tg_absence_categories_depth() cascade;
drop function if exists app_private.tg_absence_types_orphan() cascade;
drop function if exists app_private.tg_absences_guard_delete() cascade;
drop function if exists app_private.tg_absences_guard() cascade;
drop function if exists app_private.tg_accounts_grant_salarie() cascade;
drop function if exists app_private.tg_audit_absence_document() cascade;
drop function if exists app_private.tg_audit_child() cascade;
drop function if exists app_private.tg_audit_log_append_only() cascade;
drop function if exists app_private.tg_audit_log_no_truncate() cascade;
drop function if exists app_private.tg_audit_ssn() cascade;
drop function if exists app_private.tg_audit() cascade;
drop function if exists app_private.tg_code_namespace() cascade;
drop function if exists app_private.tg_counter_associations_orphan() cascade;
drop function if exists app_private.tg_counter_movements_append_only() cascade;
drop function if exists app_private.tg_counters_need_reason() cascade;
drop function if exists app_private.tg_email_outbox_enqueue() cascade;
drop function if exists app_private.tg_employee_attachments_garbage() cascade;
drop function if exists app_private.tg_file_uploaded_by_request() cascade;
drop function if exists app_private.tg_shift_change_requests_guard() cascade;
drop function if exists app_private.tg_storage_garbage() cascade;

--!include core/errors.sql
--!include core/triggers.sql
--!include org/tables.sql
--!include org/accounts.sql
--!include perimeter.sql
--!include reference/tables.sql
--!include counters/tables.sql
--!include planning/tables.sql
--!include absences/tables.sql
--!include events/tables.sql
--!include audit/tables.sql
--!include auth/functions.sql
--!include auth/rate_limits.sql
--!include audit/functions.sql
--!include audit/triggers.sql
--!include notifications/functions.sql
--!include planning/planning.sql
--!include shift_change/triggers.sql
--!include shift_change/functions.sql
--!include org/import.sql
--!include api/reference.sql
--!include absences/rules.sql
--!include counters/functions.sql
--!include absences/json.sql
--!include documents/functions.sql
--!include absences/api.sql
--!include absences/export.sql
--!include absences/triggers.sql
--!include absences/status_counts.sql
--!include counters/triggers.sql
--!include employees/helpers.sql
--!include employees/tables.sql
--!include employees/api.sql
--!include employees/annexes.sql
--!include referentials/policies.sql
--!include referentials/api.sql
--!include teams/policies.sql
--!include teams/api.sql
--!include events/access.sql
--!include events/api.sql
--!include on_call/access.sql
--!include on_call/api.sql
--!include payroll/api.sql
--!include calendar/tables.sql
--!include calendar/api.sql
--!include counters/establishment.sql
--!include documents/uploads.sql
--!include graphql.sql
--!include backoffice/sessions.sql
--!include backoffice/audit.sql
--!include backoffice/shift_change.sql
--!include backoffice/reference.sql
--!include backoffice/counters.sql
--!include backoffice/role_attributions.sql
--!include backoffice/contracts.sql
--!include backoffice/team_members.sql
--!include backoffice/absences.sql
--!include guards.sql
--!include finalize.sql
