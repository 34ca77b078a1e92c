-- Referentials (divisions, establishments, contract types): readable by every authenticated
-- account (sql/org/policies.sql), written by staff accounts only (SPEC, Permissions rule 6).
select app_private.staff_write_policies(array['divisions', 'establishments', 'contract_types']);
select app_private.audit_writes(t, left(t, -1)) from unnest(array['divisions', 'establishments', 'contract_types']) t;

