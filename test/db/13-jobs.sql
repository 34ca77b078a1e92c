-- Scheduled jobs: the scheduling decision in Europe/Paris for winter, summer and the two
-- DST Sundays (graphile-worker's cron runs in UTC), one run per job and local date, and the
-- missing-document reminders (deadlines, recipients, nothing sent twice).
begin;
select plan(30);

-- ---------------------------------------------------------------- job_is_due
-- send_missing_document_reminders: 05:37 Paris = 04:37 UTC in winter, 03:37 UTC in summer.
select ok(app_private.job_is_due('send_missing_document_reminders', '2026-01-15 04:37:00Z'), 'winter: 04:37 UTC is 05:37 in Paris');
select ok(not app_private.job_is_due('send_missing_document_reminders', '2026-01-15 03:37:00Z'), 'winter: 03:37 UTC is 04:37 in Paris');
select ok(app_private.job_is_due('send_missing_document_reminders', '2026-07-15 03:37:00Z'), 'summer: 03:37 UTC is 05:37 in Paris');
select ok(not app_private.job_is_due('send_missing_document_reminders', '2026-07-15 04:37:00Z'), 'summer: 04:37 UTC is 06:37 in Paris');
select ok(app_private.job_is_due('send_missing_document_reminders', '2026-03-29 03:37:00Z'), 'spring DST day: 03:37 UTC (05:37 CEST)');
select ok(not app_private.job_is_due('send_missing_document_reminders', '2026-03-29 04:37:00Z'), 'spring DST day: not 04:37 UTC');
select ok(app_private.job_is_due('send_missing_document_reminders', '2026-10-25 04:37:00Z'), 'autumn DST day: 04:37 UTC (05:37 CET)');
select ok(not app_private.job_is_due('send_missing_document_reminders', '2026-10-25 03:37:00Z'), 'autumn DST day: not 03:37 UTC');
select ok(app_private.job_is_due('send_missing_document_reminders', '2026-01-15 04:37:42Z'), 'seconds do not matter');
-- purge_audit_log: Sunday 03:47 Paris = 02:47 UTC in winter, 01:47 UTC in summer.
select ok(app_private.job_is_due('purge_audit_log', '2026-01-11 02:47:00Z'), 'winter Sunday: 02:47 UTC is 03:47 in Paris');
select ok(not app_private.job_is_due('purge_audit_log', '2026-01-11 01:47:00Z'), 'winter Sunday: 01:47 UTC is 02:47 in Paris');
select ok(app_private.job_is_due('purge_audit_log', '2026-07-12 01:47:00Z'), 'summer Sunday: 01:47 UTC is 03:47 in Paris');
select ok(not app_private.job_is_due('purge_audit_log', '2026-07-12 02:47:00Z'), 'summer Sunday: 02:47 UTC is 04:47 in Paris');
select ok(app_private.job_is_due('purge_audit_log', '2026-03-29 01:47:00Z'), 'spring DST Sunday: 01:47 UTC (03:47 CEST)');
select ok(not app_private.job_is_due('purge_audit_log', '2026-03-29 02:47:00Z'), 'spring DST Sunday: not 02:47 UTC');
select ok(app_private.job_is_due('purge_audit_log', '2026-10-25 02:47:00Z'), 'autumn DST Sunday: 02:47 UTC (03:47 CET)');
select ok(not app_private.job_is_due('purge_audit_log', '2026-10-25 01:47:00Z'), 'autumn DST Sunday: not 01:47 UTC (02:47 CET)');
select ok(not app_private.job_is_due('purge_audit_log', '2026-07-11 01:47:00Z'), 'a Saturday is not the weekly purge');
select ok(not app_private.job_is_due('no_such_job', '2026-07-11 01:47:00Z'), 'an unknown job is never due');

-- ---------------------------------------------------------------- job_claim: once per job and local date
select is(app_private.job_claim('send_missing_document_reminders', '2026-01-15 03:37:00Z'), null, 'not due: no claim');
select isnt(app_private.job_claim('send_missing_document_reminders', '2026-01-15 04:37:00Z'), null, 'due: claimed');
select is(app_private.job_claim('send_missing_document_reminders', '2026-01-15 04:37:00Z'), null,
          'the same cron instant again (retry, second worker): no second run');
select isnt(app_private.job_claim('send_missing_document_reminders', '2026-01-16 04:37:00Z'), null, 'the next day runs');
select is((select array_agg(period order by period) from app_private.job_runs where job = 'send_missing_document_reminders'),
          array['2026-01-15', '2026-01-16'], 'one run per local date');
select isnt(app_private.job_claim('purge_audit_log'), null, 'a run by hand is always claimed');
select isnt(app_private.job_claim('purge_audit_log'), null, '... each time');
select is((select count(*)::int from app_private.job_runs where job = 'purge_audit_log' and trigger = 'manual'), 2, 'runs by hand are recorded');
select is(current_setting('app.job_run_id')::bigint, (select max(id) from app_private.job_runs), 'the claim leaves its run id for the job');
select app_private.job_finish((select max(id) from app_private.job_runs), '{"count": 3}');
select is((select result from app_private.job_runs order by id desc limit 1), '{"count": 3}'::jsonb, 'job_finish records the result');
select throws_ok($$select app_private.job_claim('no_such_job')$$, 'P0001', null, 'an unknown job cannot be claimed');

-- The reminder rules themselves (deadlines, documents, HR lists) are proven in
-- 47-absence-reminders.sql, next to the absences they read.

select * from finish();
rollback;
