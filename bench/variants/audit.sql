-- Ablation: the audit line of an absence's creation and transitions (trigger _500_audit) removed.
drop trigger if exists _500_audit on app_public.absences;
