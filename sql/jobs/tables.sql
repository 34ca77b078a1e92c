-- Scheduled jobs (graphile-worker, worker/crontab): their local schedule, the record of
-- their runs (one per job and period, so that a job never runs twice for a period) and the
-- idempotence record of the missing-document reminders.

-- When a job is meant to run, in local time. graphile-worker's cron runs in UTC: the
-- crontab schedules both UTC instants that can be the local time (winter and summer), and
-- app_private.job_is_due keeps the one whose local time is the intended one.
create table if not exists app_private.job_schedules (
  job text primary key check (job ~ '^[a-z][a-z0-9_]{1,62}$'),
  local_time time not null check (local_time = date_trunc('minute', local_time)),
  -- ISO day of the week (7 = Sunday) for a weekly job; null for a daily job.
  isodow smallint check (isodow between 1 and 7),
  time_zone text not null default 'Europe/Paris',
  description text not null
);
insert into app_private.job_schedules (job, local_time, isodow, description) values
  ('send_missing_document_reminders', '05:37', null, 'Relances des justificatifs manquants, chaque jour à 5 h 37'),
  ('purge_audit_log', '03:47', 7, 'Purge du journal d’audit au-delà de la rétention, le dimanche à 3 h 47'),
  ('consume_started_absences', '00:07', null, 'Passage des absences commencées de Planifiés à Pris, chaque jour à 0 h 07')
on conflict do nothing;

create table if not exists app_private.job_runs (
  id bigint generated always as identity primary key,
  job text not null check (job ~ '^[a-z][a-z0-9_]{1,62}$'),
  -- A scheduled run: the local date of its scheduled instant (one run per job and date).
  -- A run by hand (npm run job -- NAME): 'manual:' and its start time.
  period text not null,
  trigger text not null check (trigger in ('cron', 'manual')),
  scheduled_at timestamptz,
  started_at timestamptz not null default clock_timestamp(),
  finished_at timestamptz,
  result jsonb,
  unique (job, period)
);
create index if not exists job_runs_started_idx on app_private.job_runs (job, started_at desc);

-- Reminders already sent: one row per absence and kind of reminder; a second run of the
-- job finds the row and sends nothing twice.
create table if not exists app_private.reminders_sent (
  absence_id int not null references app_public.absences on delete cascade,
  kind text not null check (kind ~ '^[a-z][a-z0-9_]{1,62}$'),
  deadline_at timestamptz,
  sent_at timestamptz not null default app_hidden.now(),
  job_run_id bigint references app_private.job_runs on delete set null,
  primary key (absence_id, kind)
);
create index if not exists reminders_sent_job_run_idx on app_private.reminders_sent (job_run_id);
