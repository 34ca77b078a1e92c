-- app_private.operations_metrics (GET /metrics, src/http/metrics.ts): jobs queued and failed for
-- good (0 without graphile-worker's schema), e-mails pending and abandoned as email_max_attempts
-- says; never a request's (wfm_visitor, wfm_authenticator: figures of the whole installation).
begin;
select plan(8);

select tests.as_owner();
select is((select row(jobs_queued, jobs_failed)::text from app_private.operations_metrics()), '(0,0)',
          'no graphile-worker schema (no worker ran yet): no job queued or failed');
delete from app_private.email_outbox;
select is((select row(emails_pending, emails_abandoned)::text from app_private.operations_metrics()), '(0,0)', 'an empty outbox');

insert into app_private.email_outbox (kind, to_address, subject, body_text, attempts, sent_at) values
  ('test', 'a@example.org', 'Objet', 'Texte', 0, null),
  ('test', 'b@example.org', 'Objet', 'Texte', 9, null),
  ('test', 'c@example.org', 'Objet', 'Texte', 10, null),
  ('test', 'd@example.org', 'Objet', 'Texte', 12, null),
  ('test', 'e@example.org', 'Objet', 'Texte', 1, now());
select is((select row(emails_pending, emails_abandoned)::text from app_private.operations_metrics()), '(2,2)',
          'pending: unsent under email_max_attempts (10); abandoned: unsent at or past it; a sent mail is neither');
update app_private.settings set value = '20' where key = 'email_max_attempts';
select is((select row(emails_pending, emails_abandoned)::text from app_private.operations_metrics()), '(4,0)',
          'email_max_attempts is read at each call');

select ok(not has_function_privilege('wfm_visitor', 'app_private.operations_metrics()', 'execute'), 'wfm_visitor may not call it');
select ok(not has_function_privilege('wfm_authenticator', 'app_private.operations_metrics()', 'execute'), 'wfm_authenticator may not call it');
select tests.authenticate_as('root');
select throws_ok($$select * from app_private.operations_metrics()$$, '42501', null, 'a superuser account in a request is refused too');
select tests.authenticate_as('rh1_noemp');
select throws_ok($$select * from app_private.operations_metrics()$$, '42501', null, 'an account without employee record is refused');

select * from finish();
rollback;
