-- The audit log, written by triggers only (app_private.tg__audit). Each line freezes the
-- actor's identity (username and display name at that time) so that a DBA reads who did
-- what without any join; app_private.audit_log_readable adds the changed fields.

-- Models that may be audited. A table's trigger names its model (tg__audit('<model>')); the
-- foreign key refuses a misspelt model at the first write, and GET /api/audit-log/?model=
-- accepts only these names. A concern that audits a new table adds its model here.
create table if not exists app_private.audit_models (
  model text primary key check (model ~ '^[a-z][a-z0-9_]{1,62}$'),
  label text not null check (btrim(label) <> '')
);
insert into app_private.audit_models (model, label) values
  ('absence', 'Absence'),
  ('shift_change_request', 'Demande de modification de journée'),
  ('day_modification', 'Modification de journée'),
  ('account', 'Compte (ouverture et fermeture, substitution)'),
  ('employee', 'Fiche salarié'),
  ('employee_social_security_number', 'Numéro de sécurité sociale (valeur masquée)'),
  ('employee_secondary_establishment', 'Lieu de travail secondaire'),
  ('contract', 'Contrat'),
  ('team_assignment', 'Affectation à une équipe'),
  ('emergency_contact', 'Personne à prévenir'),
  ('employee_attachment', 'Pièce du dossier salarié'),
  ('division', 'Pôle'),
  ('establishment', 'Établissement'),
  ('contract_type', 'Type de contrat'),
  ('team', 'Équipe'),
  ('team_establishment', 'Établissement d''une équipe'),
  ('event', 'Événement'),
  ('event_participant', 'Participant à un événement'),
  ('on_call_period', 'Période d''astreinte'),
  ('on_call_period_establishment', 'Établissement d''une astreinte')
on conflict do nothing;

create table if not exists app_private.audit_log (
  id bigint generated always as identity primary key,
  at timestamptz not null default app_hidden.now(),
  -- The acting account (app.account_id) and its identity frozen at that time. Null when
  -- the write came from no account (a DBA in psql, a migration, a job): db_user says who.
  actor_account_id int,
  actor_username text,
  actor_display_name text,
  -- Set when an impersonating account acted for actor_account_id (app.impersonator_id).
  impersonator_account_id int,
  impersonator_username text,
  impersonator_display_name text,
  -- The database login of the session (wfm_authenticator for the API, the worker's or a DBA's login).
  db_user text not null default session_user,
  verb text not null check (verb in ('Creation', 'Modification', 'Suppression', 'Validation', 'Refus',
                                     'Correction', 'Demande d''annulation', 'Annulation', 'Impersonation')),
  model text not null references app_private.audit_models on update cascade on delete restrict,
  target_id bigint,
  before jsonb,
  after jsonb,
  transaction_id bigint not null default txid_current(),
  constraint audit_log_values check (
    (verb in ('Creation', 'Impersonation') and before is null and after is not null)
    or (verb = 'Suppression' and before is not null and after is null)
    or (verb not in ('Creation', 'Impersonation', 'Suppression') and before is not null and after is not null))
);
-- GET /api/audit-log/?model=&target_id= (newest first), and the weekly purge by age.
create index if not exists audit_log_target_idx on app_private.audit_log (model, target_id, at desc, id desc);
create index if not exists audit_log_at_idx on app_private.audit_log (at);
create index if not exists audit_log_actor_idx on app_private.audit_log (actor_account_id, at);

comment on table app_private.audit_log is
  'Audit lines written by triggers (app_private.tg__audit), append-only; purged after audit_retention_days by the purge_audit_log job.';
