-- E-mail notifications (issue 28): every notification is routed (its kind and its address for
-- the recipient) and goes by e-mail at once, in the daily digest or never, per account and
-- kind; what an e-mail may say (never the type of an absence, a comment, a reason or a
-- document); callers without employee record, employees without address or main workplace,
-- closed accounts; the digest's selection; « Tout marquer comme lu »; the unsubscribe address.
begin;
select plan(74);
select tests.freeze('2026-11-16 10:00+01');
select null::void from set_config('app.public_url', 'https://planning.example', true);

create function pg_temp.body(p_employee text, p_type text, p_start date, p_end date default null,
                             p_extra jsonb default '{}') returns jsonb
language sql stable as $$
  select jsonb_build_object('employee', tests.id('employees', p_employee),
                            'type', (select t.id from app_public.absence_types t where t.code = p_type),
                            'date_start', p_start, 'date_end', coalesce(p_end, p_start)) || p_extra;
$$;
create function pg_temp.remember(p_name text, p_value text) returns void language sql as $$
  select null::void from (select set_config(p_name, p_value, true)) x;
$$;
-- The worker's first step (drain_email_outbox): the e-mails of the notifications sent at once
-- go into the outbox. Every helper below runs it first, as the worker would have by then.
create function pg_temp.flush() returns int language sql volatile security definer as $$
  select app_private.queue_notification_emails(500);
$$;
-- The last notification of an account: kind, path, email, e-mailed.
create function pg_temp.last_note(p_account text) returns text language plpgsql volatile security definer as $$
begin
  perform pg_temp.flush();
  return (select concat_ws(' ', n.kind, coalesce(n.path, '-'), n.email, (n.emailed_at is not null)::text)
          from app_public.notifications n where n.account_id = tests.id('accounts', p_account) order by n.id desc limit 1);
end;
$$;
-- The mails of an address: kind | subject.
create function pg_temp.mails(p_address text) returns text[] language plpgsql volatile security definer as $$
begin
  perform pg_temp.flush();
  return (select coalesce(array_agg(o.kind || ' | ' || o.subject order by o.id), '{}') from app_private.email_outbox o
          where o.to_address = p_address);
end;
$$;
create function pg_temp.last_mail(p_address text) returns app_private.email_outbox language plpgsql volatile security definer as $$
declare
  o app_private.email_outbox;
begin
  perform pg_temp.flush();
  select x.* into o from app_private.email_outbox x where x.to_address = p_address order by x.id desc limit 1;
  return o;
end;
$$;
create function pg_temp.outbox_count() returns int language plpgsql volatile security definer as $$
begin
  perform pg_temp.flush();
  return (select count(*)::int from app_private.email_outbox);
end;
$$;
grant execute on all functions in schema pg_temp to public;

-- ---------------------------------------------------------------- at once, what it says
select tests.authenticate_as('alice');
select pg_temp.remember('test.sick', (tests.absence_create(pg_temp.body('alice', 'MAL', '2026-11-23', '2026-11-24',
  '{"comment": "Fièvre et angine"}')) ->> 'id'));
select tests.as_owner();
select is((select concat_ws(' ', n.kind, n.path, n.email, (n.emailed_at is not null)::text) from app_public.notifications n
           where n.account_id = tests.id('accounts', 'mgr1') order by n.id desc limit 1),
  format('decide /file/absences/%s immediate false', current_setting('test.sick')),
  'a filing: the decider''s notification is "to decide", links to the decision panel, and waits for the worker');
select is((select count(*)::int from app_private.email_outbox), 0, 'the filing''s transaction wrote no e-mail');
select is(pg_temp.flush(), 1, 'the worker''s first step writes the e-mail waiting (mgr1, the attached decider)');
select is(pg_temp.last_note('mgr1'), format('decide /file/absences/%s immediate true', current_setting('test.sick')),
  '... and marks their notifications e-mailed');
select is(pg_temp.mails('julien.petit@tilleuls.example'), array['notification | Nouvelle demande d''absence'],
  'the decider''s e-mail is in the outbox, titled as the notification');
select ok((pg_temp.last_mail('julien.petit@tilleuls.example')).body_text like
            '%Alice Martin — absence du 23/11/2026 au 24/11/2026%',
  'the e-mail names the employee and the dates');
select ok((pg_temp.last_mail('julien.petit@tilleuls.example')).body_text like
            format('%%Ouvrir : https://planning.example/file/absences/%s%%', current_setting('test.sick')),
  'with the link of the decision panel (PUBLIC_URL and the application''s address)');
select ok((pg_temp.last_mail('julien.petit@tilleuls.example')).body_html like
            format('%%<a href="https://planning.example/file/absences/%s">%%', current_setting('test.sick')),
  'the HTML part carries the same link');
select ok((select n.body from app_public.notifications n where n.account_id = tests.id('accounts', 'mgr1')
           order by n.id desc limit 1) like '%Maladie%',
  'the in-app notification names the type (its reader may read it in the application)');
select ok((pg_temp.last_mail('julien.petit@tilleuls.example')).body_text not ilike '%maladie%'
          and (pg_temp.last_mail('julien.petit@tilleuls.example')).body_html not ilike '%maladie%'
          and (pg_temp.last_mail('julien.petit@tilleuls.example')).subject not ilike '%maladie%',
  'the e-mail never names the type of the absence (a health reason)');
select ok((pg_temp.last_mail('julien.petit@tilleuls.example')).body_text not ilike '%angine%'
          and (pg_temp.last_mail('julien.petit@tilleuls.example')).body_html not ilike '%angine%',
  'nor the comment');
select ok((pg_temp.last_mail('julien.petit@tilleuls.example')).body_text like 'Bonjour Julien Petit,%',
  'French, addressed to its reader');
select matches((pg_temp.last_mail('julien.petit@tilleuls.example')).headers ->> 'List-Unsubscribe',
  '^<https://planning\.example/api/notifications/unsubscribe/\?token=[0-9a-f]{48}&kinds=decide>$',
  'List-Unsubscribe: the one-click address for this kind');
select is((pg_temp.last_mail('julien.petit@tilleuls.example')).headers ->> 'List-Unsubscribe-Post', 'List-Unsubscribe=One-Click',
  'List-Unsubscribe-Post (RFC 8058)');
select is((pg_temp.last_mail('julien.petit@tilleuls.example')).account_id, tests.id('accounts', 'mgr1'),
  'the mail names its account');

-- The decision: the employee's notification is "my requests", links to her request.
select tests.authenticate_as('mgr1');
select lives_ok(format($$select app_public.absence_refuse(%s, 1, 'Certificat médical illisible, merci de le redéposer')$$,
                       current_setting('test.sick')), 'the manager refuses');
select tests.as_owner();
select is(pg_temp.last_note('alice'), format('own /demandes/absences/%s immediate true', current_setting('test.sick')),
  'the author''s notification is "my requests" and links to her request');
select is((pg_temp.mails('alice.martin@tilleuls.example'))[1], 'notification | Demande d''absence refusée',
  'her e-mail says the decision in its subject');
select ok((pg_temp.last_mail('alice.martin@tilleuls.example')).body_text not ilike '%illisible%'
          and (pg_temp.last_mail('alice.martin@tilleuls.example')).body_text not ilike '%certificat%'
          and (pg_temp.last_mail('alice.martin@tilleuls.example')).body_text not ilike '%maladie%',
  'never the reason of the refusal nor a document');
select ok((pg_temp.last_mail('alice.martin@tilleuls.example')).body_text like
            format('%%https://planning.example/demandes/absences/%s%%', current_setting('test.sick')),
  'her link opens her own request');

-- An e-mail that cannot be written never rolls back the write that notified.
alter table app_private.email_outbox add constraint test_refuses_julien check (to_address <> 'julien.petit@tilleuls.example') not valid;
select pg_temp.remember('test.julien_mails', cardinality(pg_temp.mails('julien.petit@tilleuls.example'))::text);
select tests.authenticate_as('alice');
set local client_min_messages = error;
select lives_ok($$select tests.absence_create(pg_temp.body('alice', 'FOR', '2026-12-03'))$$,
  'a filing whose decider''s e-mail the outbox will refuse is written');
select tests.as_owner();
select is(pg_temp.last_note('mgr1'), format('decide /file/absences/%s none false',
                                            (select max(a.id) from app_public.absences a where a.date_start = '2026-12-03')),
  '... the worker gives that e-mail up (a warning), and the notification says no e-mail went');
reset client_min_messages;
select is(cardinality(pg_temp.mails('julien.petit@tilleuls.example')), current_setting('test.julien_mails')::int,
  '... and no e-mail');
alter table app_private.email_outbox drop constraint test_refuses_julien;

-- ---------------------------------------------------------------- who gets no e-mail
select null::void from app_private.notify(tests.id('accounts', 'root'), 'Pour root', 'corps');
select is(pg_temp.last_note('root'), 'own - none false', 'an account without employee record has no address: no e-mail');
select null::void from app_private.notify(tests.id('accounts', 'emma'), 'Pour Emma', 'corps');
select is(pg_temp.last_note('emma'), 'own - none false', 'an employee without professional e-mail: no e-mail');
update app_public.accounts set is_active = false where id = tests.id('accounts', 'bruno');
select null::void from app_private.notify(tests.id('accounts', 'bruno'), 'Pour Bruno', 'corps');
select is(pg_temp.last_note('bruno'), 'own - none false', 'a closed account: no e-mail');
select is(pg_temp.mails('bruno.lambert@tilleuls.example'), '{}'::text[], '... nothing in the outbox');
update app_public.accounts set is_active = true where id = tests.id('accounts', 'bruno');

-- An employee without main workplace files: the deciders of the whole association hear of it;
-- the decision comes back to her, linked to her request.
select tests.authenticate_as('farid');
select pg_temp.remember('test.farid', (tests.absence_create(pg_temp.body('farid', 'FOR', '2026-12-07')) ->> 'id'));
select tests.as_owner();
select is(pg_temp.last_note('admin'), format('decide /file/absences/%s immediate true', current_setting('test.farid')),
  'an employee without main workplace files: the administrator hears of it as a request to decide');
select tests.authenticate_as('admin');
select null::void from app_public.absence_refuse(current_setting('test.farid')::int, 1, 'Formation complète');
select tests.as_owner();
select is(pg_temp.last_note('farid'), format('own /demandes/absences/%s immediate true', current_setting('test.farid')),
  '... and she hears of the decision, linked to her request');
select is(pg_temp.mails('farid.benali@association.example'), array['notification | Demande d''absence refusée'],
  'her e-mail');

-- Kinds and addresses of the other notifications.
select null::void from app_private.notify(tests.id('accounts', 'alice'), 'Conflit entre une absence et un événement', 'corps', 'warning',
                          'absence', current_setting('test.sick')::bigint);
select is(pg_temp.last_note('alice'), format('planning /demandes/absences/%s immediate true', current_setting('test.sick')),
  'a conflict alert is "planning", linked to the absence');
select null::void from app_private.notify(tests.id('accounts', 'mgr1'), 'Conflit entre un événement et une absence', 'corps', 'warning', 'event', 1);
select is(pg_temp.last_note('mgr1'), 'planning /equipe immediate true', 'an event conflict links to the team planning');
select null::void from app_private.notify(tests.id('accounts', 'rh1'), 'Justificatifs manquants', 'liste', 'warning', null, null);
select is(pg_temp.last_note('rh1'), 'decide - immediate true', 'HR''s list of missing documents is "to decide", without address');
select ok((pg_temp.last_mail('claire.dubois@tilleuls.example')).body_text like '%Ouvrir : https://planning.example/notifications%'
          and (pg_temp.last_mail('claire.dubois@tilleuls.example')).body_text not like '%liste%',
  'its e-mail links to the notifications, without the list (types of absences)');
select null::void from app_private.notify(tests.id('accounts', 'alice'), 'Adresse e-mail modifiée', 'corps', 'warning', 'employee',
                          tests.id('employees', 'alice'));
select is(pg_temp.last_note('alice'), 'own /compte immediate true', 'an account notice links to « Mon compte »');

-- ---------------------------------------------------------------- preferences
select tests.authenticate_as('mgr1');
select is(app_public.notification_preferences_get(),
  '{"email": "julien.petit@tilleuls.example", "own": "immediate", "decide": "immediate", "planning": "immediate", "digest_hour": 7}'::jsonb,
  'without a choice: everything at once, digest hour 7, and the address the e-mails go to');
select throws_ok($$select app_public.notification_preferences_set('soon', 'digest', 'never', 8)$$, 'WV603', null,
  'an unknown mode is refused');
select throws_ok($$select app_public.notification_preferences_set('immediate', 'digest', 'never', 24)$$, 'WV603', null,
  'an hour outside 0-23 is refused');
select throws_ok($$select app_public.notification_preferences_set('immediate', null, 'never', 8)$$, 'WV603', null,
  'a missing mode is refused');
select is(app_public.notification_preferences_get() ->> 'decide', 'immediate', 'a refused choice wrote nothing');
select is(app_public.notification_preferences_set('immediate', 'digest', 'never', 8),
  '{"email": "julien.petit@tilleuls.example", "own": "immediate", "decide": "digest", "planning": "never", "digest_hour": 8}'::jsonb,
  'the choice is saved and answered');
create function pg_temp.errors_of_bad_choice() returns jsonb language plpgsql as $$
declare
  e text;
begin
  perform app_public.notification_preferences_set('x', 'digest', 'y', -1);
  return null;
exception when sqlstate 'WV603' then
  get stacked diagnostics e = pg_exception_detail;
  return e::jsonb;
end;
$$;
select pg_temp.remember('test.errors', pg_temp.errors_of_bad_choice()::text);
select is((select array_agg(k order by k) from jsonb_object_keys(current_setting('test.errors')::jsonb) k),
  array['digest_hour', 'own', 'planning'], 'each bad value under its own field');

select tests.authenticate_as('root');
select is(app_public.notification_preferences_get() ->> 'email', null, 'an account without employee record: no address');
select is(app_public.notification_preferences_set('never', 'digest', 'immediate', 6) ->> 'own', 'never',
  '... may still choose');
select tests.authenticate_as('salarie_noemp');
select is(app_public.notification_preferences_get() ->> 'email', null, 'a Salarié account without record: no address either');
select tests.as_owner();
set local role wfm_visitor;
select throws_ok($$select app_public.notification_preferences_get()$$, 'WF603', null, 'without an account: refused');
select throws_ok($$select count(*) from app_private.notification_preferences$$, '42501', null,
  'the request roles cannot read the preferences table');
reset role;
select tests.as_owner();

-- The choice applies to the next notifications.
select pg_temp.remember('test.outbox', pg_temp.outbox_count()::text);
select null::void from app_private.notify(tests.id('accounts', 'mgr1'), 'Nouvelle demande d''absence', 'b', 'info', 'absence',
                          current_setting('test.farid')::bigint);
select is(pg_temp.last_note('mgr1'), format('decide /file/absences/%s digest false', current_setting('test.farid')),
  '"to decide" in digest: it waits');
select null::void from app_private.notify(tests.id('accounts', 'mgr1'), 'Conflit entre un événement et une absence', 'b', 'warning', 'event', 1);
select is(pg_temp.last_note('mgr1'), 'planning /equipe none false', '"planning" set to never: no e-mail');
select is(pg_temp.outbox_count(), current_setting('test.outbox')::int, 'nothing went to the outbox');
select null::void from app_private.notify(tests.id('accounts', 'mgr1'), 'Demande d''annulation d''absence', 'b', 'info', 'absence',
                          current_setting('test.sick')::bigint);
select tests.freeze('2026-11-16 15:00+01');
select null::void from app_private.notify(tests.id('accounts', 'mgr1'), 'Justificatifs manquants', 'liste', 'warning', null, null);
select is((select count(*)::int from app_public.notifications n where n.account_id = tests.id('accounts', 'mgr1')
           and n.email = 'digest' and n.emailed_at is null), 3, 'three notifications wait for mgr1''s digest');

-- ---------------------------------------------------------------- the digest
select is(app_hidden.last_digest_instant('2026-11-16 10:00+01', 8), '2026-11-16 08:00+01'::timestamptz,
  'the last digest instant: today''s hour when it is past');
select is(app_hidden.last_digest_instant('2026-11-16 07:59+01', 8), '2026-11-15 08:00+01'::timestamptz,
  '... else yesterday''s');
select is(app_hidden.last_digest_instant('2026-07-01 09:00+02', 8), '2026-07-01 08:00+02'::timestamptz,
  '... in summer time too');
select is(app_private.send_notification_digests('2026-11-16 16:03+01'), 0,
  'the same day, no digest: the first one comes at the next digest hour after the choice');
select is(app_private.send_notification_digests('2026-11-17 07:03+01'), 0, 'not before the chosen hour');
select is(app_private.send_notification_digests('2026-11-17 08:03+01'), 1, 'at the chosen hour: one digest');
select is((pg_temp.mails('julien.petit@tilleuls.example'))[cardinality(pg_temp.mails('julien.petit@tilleuls.example'))],
  'notification_digest | Résumé de vos notifications : 3 nouvelles', 'one e-mail gathering the three');
select ok((pg_temp.last_mail('julien.petit@tilleuls.example')).body_text like
            format('%%Nouvelle demande d''absence%%https://planning.example/file/absences/%s%%Demande d''annulation d''absence%%Alice Martin — absence du 23/11/2026 au 24/11/2026%%https://planning.example/file/absences/%s%%Justificatifs manquants%%https://planning.example/notifications%%',
                   current_setting('test.farid'), current_setting('test.sick')),
  'in the order they came, each with its link, and the employee and dates where its reader reads them');
select ok((pg_temp.last_mail('julien.petit@tilleuls.example')).body_text not like '%Farid Benali%',
  'never the employee of a request its reader does not read now (Farid is outside mgr1''s perimeter)');
select matches((pg_temp.last_mail('julien.petit@tilleuls.example')).headers ->> 'List-Unsubscribe', '&kinds=decide>$',
  'its List-Unsubscribe names the kinds it carries');
select is((select count(*)::int from app_public.notifications n where n.account_id = tests.id('accounts', 'mgr1')
           and n.email = 'digest' and n.emailed_at is null), 0, 'the gathered notifications are marked e-mailed');
select is(app_private.send_notification_digests('2026-11-17 08:10+01'), 0, 'nothing twice');
select tests.freeze('2026-11-17 09:00+01');
select null::void from app_private.notify(tests.id('accounts', 'mgr1'), 'Demande d''annulation d''absence', 'b', 'info', 'absence',
                          current_setting('test.farid')::bigint);
select is(app_private.send_notification_digests('2026-11-17 23:03+01'), 0, 'the next one waits for the next day''s hour');
select is(app_private.send_notification_digests('2026-11-18 08:03+01'), 1, '... and comes then');
select tests.freeze('2026-11-18 09:00+01');
select null::void from app_private.notify(tests.id('accounts', 'mgr1'), 'Demande d''annulation d''absence', 'b', 'info', 'absence',
                          current_setting('test.farid')::bigint);
update app_private.notification_preferences set decide = 'never' where account_id = tests.id('accounts', 'mgr1');
select is(app_private.send_notification_digests('2026-11-19 08:03+01'), 0, 'a kind set to never since: dropped from the digest');
select is(pg_temp.last_note('mgr1'), format('decide /file/absences/%s none false', current_setting('test.farid')), '... marked so');

-- ---------------------------------------------------------------- read-all and unsubscribe
select tests.authenticate_as('mgr1');
select is((app_public.notifications_mark_all_read() ->> 'count')::int,
          (select count(*)::int from app_public.notifications n where n.account_id = tests.id('accounts', 'mgr1')),
  '« Tout marquer comme lu » marks every unread one');
select is((app_public.notifications_mark_all_read() ->> 'count')::int, 0, '... and then none is left');
select tests.as_owner();
select ok((select count(*) from app_public.notifications n where n.account_id = tests.id('accounts', 'alice') and n.read_at is null) > 0,
  'another account''s notifications stay unread');

select pg_temp.remember('test.token', (select unsubscribe_token from app_private.notification_preferences
                                       where account_id = tests.id('accounts', 'alice')));
set local role wfm_visitor;
select throws_ok($$select app_public.notification_unsubscribe('0123', 'own')$$, 'WN602', null, 'an unknown secret is not found');
select throws_ok(format($$select app_public.notification_unsubscribe(%L, 'own,boss')$$, current_setting('test.token')), 'WN602', null,
  'an unknown kind is not found');
select is(app_public.notification_unsubscribe(current_setting('test.token'), 'own,planning') ->> 'detail',
  'Vous ne recevrez plus d’e-mail pour : « Mes demandes », « Planning ». Vous pouvez changer d’avis dans « Mon compte ».',
  'without an account, the secret turns the kinds named off');
reset role;
select tests.authenticate_as('alice');
select is(app_public.notification_preferences_get() - 'email' - 'digest_hour',
  '{"own": "never", "decide": "immediate", "planning": "never"}'::jsonb, 'her preferences say so');

select * from finish();
rollback;
