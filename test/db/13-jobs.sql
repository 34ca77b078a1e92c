-- Scheduled jobs: the scheduling decision in Europe/Paris for winter, summer and the two
-- DST Sundays (graphile-worker's cron runs in UTC), one run per job and local date, and the
-- missing-document reminders (deadlines, recipients, nothing sent twice).
begin;
select plan(42);

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

-- ---------------------------------------------------------------- deadlines
select is(app_private.working_day_after('2026-11-13', 2), '2026-11-17'::date, 'two working days after a Friday: Tuesday');
select is(app_private.working_day_after('2026-11-10', 1), '2026-11-12'::date, 'public holidays are not working days (11 November)');
select is(app_private.missing_document_deadline((select id from app_public.absence_types where code = 'MAL'), '2026-11-10', '2026-11-12'),
          '2026-11-12 00:00+01'::timestamptz, 'work stoppage: 48 hours from the first day');
select is(app_private.missing_document_deadline((select id from app_public.absence_types where code = 'PRA'), '2026-11-13', '2026-11-13'),
          '2026-11-18 00:00+01'::timestamptz, 'caregiver: within 2 working days after the absence');
select is(app_private.missing_document_deadline((select id from app_public.absence_types where code = 'CP'), '2026-11-10', '2026-11-12'),
          null, 'paid leave expects no document');

-- ---------------------------------------------------------------- send_missing_document_reminders
select tests.freeze('2026-11-16 10:00+01');
create function pg_temp.absence(p_employee text, p_type text, p_start date, p_end date, p_status text default 'pending')
returns int language sql as $$
  insert into app_public.absences (employee_id, type_id, date_start, date_end, status, start_time, end_time)
  select tests.id('employees', p_employee), t.id, p_start, p_end, p_status,
         case when t.unit = 'hour' then time '09:00' end, case when t.unit = 'hour' then time '12:00' end
  from app_public.absence_types t where t.code = p_type
  returning id;
$$;
-- Reminded: deadlines between 2026-11-09 10:00 and 2026-11-16 10:00.
select pg_temp.absence('alice', 'MAL', '2026-11-10', '2026-11-12') is not null as arranged;                 -- due 12/11 00:00
select pg_temp.absence('alice', 'PRA', '2026-11-06', '2026-11-06', 'validated') is not null as arranged;    -- due 11/11 00:00
select pg_temp.absence('chloe', 'ENF', '2026-11-12', '2026-11-13') is not null as arranged;                 -- due 14/11 00:00
-- Not reminded.
insert into app_public.absence_documents (absence_id, filename, content_type, size_bytes, storage_key, sha256, uploaded_by_name)
values (pg_temp.absence('bruno', 'MAL', '2026-11-10', '2026-11-12', 'validated'), 'arret.pdf', 'application/pdf', 10,
        repeat('a', 32), repeat('b', 64), 'Bruno Lambert');                                                 -- document received
select pg_temp.absence('gaelle', 'MAL', '2026-11-10', '2026-11-12', 'refused') is not null as arranged;      -- refused
select pg_temp.absence('david', 'MAL', '2026-10-01', '2026-10-02') is not null as arranged;                  -- deadline too old
select pg_temp.absence('david', 'MAL', '2026-11-15', '2026-11-20') is not null as arranged;                  -- deadline to come
select pg_temp.absence('emma', 'CP', '2026-11-10', '2026-11-12', 'validated') is not null as arranged;       -- no document expected

select is(app_private.send_missing_document_reminders('2026-11-16 10:00+01'), 5,
          'alice x2, chloe, one summary for rh1 and one for rh2');
select is((select array_agg(a.username || ':' || n.title order by a.username, n.id) from app_public.notifications n
           join app_public.accounts a on a.id = n.account_id),
          array['alice:Justificatif à transmettre', 'alice:Justificatif à transmettre', 'chloe:Justificatif à transmettre',
                'rh1:Justificatifs manquants', 'rh2:Justificatifs manquants'],
          'the employees and the HR accounts covering them');
select is((select body from app_public.notifications n where n.account_id = tests.id('accounts', 'rh1')),
          E'Justificatifs non reçus à l''échéance :\n'
          '- Alice Martin : Congé de proche aidant du 06/11/2026 au 06/11/2026 (attendu avant le 11/11/2026 à 00:00)' || E'\n'
          '- Alice Martin : Maladie du 10/11/2026 au 12/11/2026 (attendu avant le 12/11/2026 à 00:00)' || E'\n'
          '- Chloé Bernard : Enfant malade du 12/11/2026 au 13/11/2026 (attendu avant le 14/11/2026 à 00:00)',
          'HR of the whole association receives one notification listing every missing document');
select is((select body from app_public.notifications n where n.account_id = tests.id('accounts', 'rh2')),
          E'Justificatifs non reçus à l''échéance :\n'
          '- Chloé Bernard : Enfant malade du 12/11/2026 au 13/11/2026 (attendu avant le 14/11/2026 à 00:00)',
          'HR of E2 receives only its perimeter');
select is((select count(*)::int from app_private.reminders_sent), 3, 'each reminded absence is recorded');
select is(app_private.send_missing_document_reminders('2026-11-16 10:00+01'), 0, 'a second run sends nothing');
select is(app_private.send_missing_document_reminders('2026-11-17 10:00+01'), 2,
          'the next day, only the newly due deadline (david, due 17/11): david and rh1 (whole association)');

select * from finish();
rollback;
