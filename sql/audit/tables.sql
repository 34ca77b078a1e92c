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
  ('team_establishment', 'Établissement d’une équipe'),
  ('event', 'Événement'),
  ('event_participant', 'Participant à un événement'),
  ('on_call_period', 'Période d’astreinte'),
  ('on_call_period_establishment', 'Établissement d’une astreinte'),
  ('account_security', 'Sécurité du compte')
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
  verb text not null constraint audit_log_verb_check
    check (verb in ('Creation', 'Modification', 'Suppression', 'Validation', 'Refus',
                    'Correction', 'Demande d''annulation', 'Annulation', 'Impersonation', 'Securite')),
  model text not null references app_private.audit_models on update cascade on delete restrict,
  target_id bigint,
  before jsonb,
  after jsonb,
  transaction_id bigint not null default txid_current(),
  constraint audit_log_values check (
    (verb in ('Creation', 'Impersonation', 'Securite') and before is null and after is not null)
    or (verb = 'Suppression' and before is not null and after is null)
    or (verb not in ('Creation', 'Impersonation', 'Securite', 'Suppression') and before is not null and after is not null)),
  -- The client address of the request that wrote the line (app.client_address), when known.
  client_address text
);
-- Issue 25: the security events of accounts (verb Securite, sql/auth/security_events.sql) and
-- the client address of every line, on a database created before.
alter table app_private.audit_log add column if not exists client_address text;
do $$
begin
  if not exists (select 1 from pg_constraint c where c.conrelid = 'app_private.audit_log'::regclass
                 and c.conname = 'audit_log_verb_check' and pg_get_constraintdef(c.oid) like '%Securite%') then
    alter table app_private.audit_log drop constraint if exists audit_log_verb_check;
    alter table app_private.audit_log add constraint audit_log_verb_check
      check (verb in ('Creation', 'Modification', 'Suppression', 'Validation', 'Refus',
                      'Correction', 'Demande d''annulation', 'Annulation', 'Impersonation', 'Securite'));
  end if;
  if not exists (select 1 from pg_constraint c where c.conrelid = 'app_private.audit_log'::regclass
                 and c.conname = 'audit_log_values' and pg_get_constraintdef(c.oid) like '%Securite%') then
    alter table app_private.audit_log drop constraint if exists audit_log_values;
    alter table app_private.audit_log add constraint audit_log_values check (
      (verb in ('Creation', 'Impersonation', 'Securite') and before is null and after is not null)
      or (verb = 'Suppression' and before is not null and after is null)
      or (verb not in ('Creation', 'Impersonation', 'Securite', 'Suppression') and before is not null and after is not null));
  end if;
end;
$$;
-- GET /api/audit-log/?model=&target_id= (newest first), and the weekly purge by age.
create index if not exists audit_log_target_idx on app_private.audit_log (model, target_id, at desc, id desc);
create index if not exists audit_log_at_idx on app_private.audit_log (at);
create index if not exists audit_log_actor_idx on app_private.audit_log (actor_account_id, at);

comment on table app_private.audit_log is
  'Audit lines written by triggers (app_private.tg__audit), append-only; purged after audit_retention_days by the purge_audit_log job.';
