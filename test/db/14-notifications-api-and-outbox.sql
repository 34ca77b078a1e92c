-- The notification API functions (own notifications only, newest first, idempotent read),
-- and the e-mail outbox: the drain job enqueued in the same transaction when
-- graphile-worker's schema exists (skipped silently otherwise), delivery bookkeeping and
-- the staff listing.
begin;
select plan(34);

select tests.freeze('2026-11-16 10:00+01');

-- Sets a setting for the rest of the transaction, printing nothing.
create function pg_temp.remember(p_name text, p_value text) returns void language sql as $$
  select null::void from (select set_config(p_name, p_value, true)) x;
$$;

-- ---------------------------------------------------------------- notifications
select pg_temp.remember('test.first', app_private.notify(tests.id('accounts', 'alice'), 'Première', 'corps 1')::text);
select tests.freeze('2026-11-16 10:05+01');
select pg_temp.remember('test.second', app_private.notify(tests.id('accounts', 'alice'), 'Deuxième', 'corps 2', 'error')::text);
select pg_temp.remember('test.bruno', app_private.notify(tests.id('accounts', 'bruno'), 'Pour Bruno', 'corps')::text);

select tests.authenticate_as('alice');
select is((app_public.notifications_list(null, 1, 50) ->> 'count')::int, 2, 'alice lists her own notifications only');
select is((select array_agg(r ->> 'title') from jsonb_array_elements(app_public.notifications_list(null, 1, 50) -> 'results') r),
          array['Deuxième', 'Première'], 'newest first');
select is((select array_agg(k order by k) from jsonb_object_keys(app_public.notifications_list(null, 1, 50) -> 'results' -> 0) k),
          array['body', 'created_at', 'id', 'kind', 'level', 'path', 'read_at', 'title'], 'the fields of a notification');
select is((select count(*)::int from app_public.notifications), 2, 'RLS: the visitor role reads its own rows only');
select is(app_public.notifications_list(null, 2, 1) -> 'results' -> 0 ->> 'title', 'Première', 'pagination');

select is(app_public.notification_mark_read(current_setting('test.first')::bigint) ->> 'read_at',
          to_jsonb('2026-11-16 10:05+01'::timestamptz) #>> '{}', 'marking read sets read_at');
select is((app_public.notifications_list(true, 1, 50) ->> 'count')::int, 1, 'unread=true keeps the unread ones');
select is((app_public.notifications_list(false, 1, 50) ->> 'count')::int, 1, 'unread=false keeps the read ones');
select tests.freeze('2026-11-16 11:00+01');
select is(app_public.notification_mark_read(current_setting('test.first')::bigint) ->> 'read_at',
          to_jsonb('2026-11-16 10:05+01'::timestamptz) #>> '{}', 'marking read again keeps the first reading time');
select throws_ok(format('select app_public.notification_mark_read(%s)', current_setting('test.bruno')), 'WN601', null,
                 'another account''s notification is not found');
select throws_ok('select app_public.notification_mark_read(2147483000)', 'WN601', null, 'an unknown notification is not found');
select throws_ok(format('update app_public.notifications set read_at = now() where id = %s', current_setting('test.first')),
                 '42501', null, 'the visitor role cannot write notifications directly');
select tests.as_owner();
select is((select read_at from app_public.notifications where id = current_setting('test.bruno')::bigint), null,
          'bruno''s notification is still unread');

-- The notifications above went by e-mail too (issue 28: test/db/83-notification-emails.sql);
-- the outbox is emptied so that the mails below are alone in it.
select is(app_private.queue_notification_emails(), 3,
          'the worker''s first step writes the e-mail of each notification above');
delete from app_private.email_outbox;

-- ---------------------------------------------------------------- outbox: enqueue guard
select ok(to_regnamespace('graphile_worker') is null, 'graphile-worker''s schema is not installed here');
select lives_ok($$select app_private.password_reset_request('alice')$$,
                'without graphile-worker''s schema, a mail is still queued (the enqueue is skipped silently)');
select is((select count(*)::int from app_private.email_outbox where to_address = 'alice.martin@tilleuls.example'), 1,
          'the mail waits in the outbox');

-- A stand-in for graphile-worker's add_job records the enqueued jobs.
create schema graphile_worker;
create table graphile_worker.added (identifier text, job_key text, txid bigint);
create function graphile_worker.add_job(identifier text, payload json default null, queue_name text default null,
                                        run_at timestamptz default null, max_attempts int default null,
                                        job_key text default null, priority int default null, flags text[] default null,
                                        job_key_mode text default 'replace')
returns void language sql as $$
  insert into graphile_worker.added values (identifier, job_key, txid_current());
$$;
insert into app_private.email_outbox (kind, to_address, subject, body_text)
values ('invitation', 'a@example.org', 'Sujet', 'Corps'), ('invitation', 'b@example.org', 'Sujet', 'Corps');
select is((select array_agg(row(identifier, job_key)::text) from graphile_worker.added),
          array[row('drain_email_outbox', 'drain_email_outbox')::text], 'one drain job per inserting statement, with its job key');
select is((select txid from graphile_worker.added), txid_current(), 'enqueued in the same transaction as the mail');
select lives_ok($$select app_private.password_reset_request('bruno')$$, 'a password reset request');
select is((select count(*)::int from graphile_worker.added), 2, '... enqueues the drain job too');

-- ---------------------------------------------------------------- delivery bookkeeping
create function pg_temp.next_mail(p_after bigint default 0) returns text language sql as $$
  select to_address from app_private.email_outbox_next(p_after);
$$;
select is(pg_temp.next_mail(), 'alice.martin@tilleuls.example', 'the oldest unsent mail comes first');
select app_private.email_outbox_sent((select id from app_private.email_outbox where to_address = 'alice.martin@tilleuls.example'));
select is(pg_temp.next_mail(), 'a@example.org', 'a sent mail is not sent again');
select is((select row(attempts, sent_at is not null)::text from app_private.email_outbox
           where to_address = 'alice.martin@tilleuls.example'), row(1, true)::text, 'sent: sent_at and one attempt');
select app_private.email_outbox_failed((select id from app_private.email_outbox where to_address = 'a@example.org'), '550 mailbox unavailable');
select is((select row(attempts, sent_at, last_error)::text from app_private.email_outbox where to_address = 'a@example.org'),
          row(1, null::timestamptz, '550 mailbox unavailable')::text, 'failed: an attempt and the last error, still unsent');
select is(pg_temp.next_mail((select id from app_private.email_outbox where to_address = 'a@example.org')), 'b@example.org',
          'a drain pass moves on after a failed mail');
update app_private.email_outbox set attempts = 10 where to_address = 'a@example.org';
select is(pg_temp.next_mail(), 'b@example.org', 'a mail that exhausted email_max_attempts is no longer retried');

-- ---------------------------------------------------------------- staff listing
select tests.authenticate_as('staff');
select is((app_public.email_outbox_list(null, 1, 50) ->> 'count')::int, 4, 'staff list the outbox');
select is((app_public.email_outbox_list('pending', 1, 50) ->> 'count')::int, 3, 'status=pending: the unsent mails');
select is((app_public.email_outbox_list('failed', 1, 50) ->> 'count')::int, 1, 'status=failed: unsent after a failure');
select ok(not (app_public.email_outbox_list(null, 1, 50) -> 'results' -> 0 ? 'body_text'),
          'staff do not see the bodies (single-use links)');
select tests.authenticate_as('root');
select ok(app_public.email_outbox_list(null, 1, 50) -> 'results' -> 0 ? 'body_text', 'superusers see the bodies');
select throws_ok($$select app_public.email_outbox_list('lost', 1, 50)$$, 'WV602', null, 'an unknown status is refused');
select tests.authenticate_as('rh1');
select throws_ok($$select app_public.email_outbox_list(null, 1, 50)$$, 'WF602', null, 'a non-staff account is refused');

select * from finish();
rollback;
