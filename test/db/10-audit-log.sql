-- Audit log: lines written by triggers for insert, update and delete (before/after values,
-- frozen identity, verbs), the deletion line written before the row is erased, append-only
-- log, retention purge, the audited account activation, and who may read the log.
begin;
select plan(64);

select tests.freeze('2026-11-16 10:00+01');

-- A scratch table audited like the business tables (model registered for the test only).
insert into app_private.audit_models (model, label) values ('audit_scratch', 'Table de test');
create table app_public.audit_scratch (
  id int generated always as identity primary key,
  label text not null,
  slots app_public.slot[] not null default '{}',
  updated_at timestamptz not null default app_hidden.now()
);
create trigger _100_timestamps before insert or update on app_public.audit_scratch
  for each row execute function app_hidden.tg__timestamps();
create trigger _500_audit after insert or update on app_public.audit_scratch
  for each row execute function app_private.tg__audit('audit_scratch');
create trigger _500_audit_delete before delete on app_public.audit_scratch
  for each row execute function app_private.tg__audit('audit_scratch');
-- Runs after _500_audit_delete (trigger order is by name), still before the row is erased:
-- the deletion fails unless its audit line already exists.
create function pg_temp.tg_require_deletion_line() returns trigger language plpgsql as $$
begin
  if not exists (select 1 from app_private.audit_log l
                 where l.model = 'audit_scratch' and l.target_id = old.id and l.verb = 'Suppression'
                   and l.transaction_id = txid_current()) then
    raise exception 'no deletion line before the erase';
  end if;
  return old;
end;
$$;
create trigger _600_require_line before delete on app_public.audit_scratch
  for each row execute function pg_temp.tg_require_deletion_line();

-- Sets (or clears) a setting for the rest of the transaction, printing nothing.
create function pg_temp.setting(p_name text, p_value text) returns void language sql as $$
  select null::void from (select set_config(p_name, coalesce(p_value, ''), true)) x;
$$;
create function pg_temp.last_line() returns app_private.audit_log language sql as $$
  select * from app_private.audit_log where model = 'audit_scratch' order by id desc limit 1;
$$;
create function pg_temp.scratch_lines() returns int language sql as $$
  select count(*)::int from app_private.audit_log where model = 'audit_scratch';
$$;

-- ---------------------------------------------------------------- insert
select pg_temp.setting('app.account_id', tests.id('accounts', 'mgr1')::text);
insert into app_public.audit_scratch (label, slots)
values ('premier', array[row('09:00', '17:00', '12:00', '12:30', false, null, null, false)::app_public.slot]);

select is(pg_temp.scratch_lines(), 1, 'an insert writes one line');
select is((pg_temp.last_line()).verb, 'Creation', 'insert: verb Creation');
select is((pg_temp.last_line()).target_id, (select id::bigint from app_public.audit_scratch), 'insert: target id is the row id');
select is((pg_temp.last_line()).before, null, 'insert: no before value');
select is((pg_temp.last_line()).after ->> 'label', 'premier', 'insert: after value holds the row');
select is((pg_temp.last_line()).after -> 'slots' -> 0 ->> 'start_time', '09:00:00', 'insert: the slots are in the after value');
select is((pg_temp.last_line()).actor_account_id, tests.id('accounts', 'mgr1'), 'actor: the acting account');
select is((pg_temp.last_line()).actor_username, 'mgr1', 'actor: username frozen in the line');
select is((pg_temp.last_line()).actor_display_name, 'Julien Petit', 'actor: display name frozen in the line');
select is((pg_temp.last_line()).at, '2026-11-16 10:00+01'::timestamptz, 'at: the business clock');
select is((pg_temp.last_line()).transaction_id, txid_current(), 'the line belongs to the writing transaction');
select is((pg_temp.last_line()).db_user, session_user::text, 'db_user: the database login');
select is((pg_temp.last_line()).impersonator_account_id, null, 'no impersonator');

-- ---------------------------------------------------------------- update
update app_public.audit_scratch set label = 'second';
select is(pg_temp.scratch_lines(), 2, 'an update writes one line');
select is((pg_temp.last_line()).verb, 'Modification', 'update: verb Modification');
select is((pg_temp.last_line()).before ->> 'label', 'premier', 'update: before value');
select is((pg_temp.last_line()).after ->> 'label', 'second', 'update: after value');
select is((select changed_fields from app_private.audit_log_readable where id = (pg_temp.last_line()).id),
          array['label'], 'audit_log_readable names the changed fields for a DBA');
select is((select actor from app_private.audit_log_readable where id = (pg_temp.last_line()).id),
          'Julien Petit (mgr1)', 'audit_log_readable: who, without a join');

update app_public.audit_scratch set label = label;
select is(pg_temp.scratch_lines(), 2, 'an update that changes nothing (but updated_at) writes no line');

-- Decision verbs, scoped to their model.
select app_private.set_audit_verb('Validation', 'audit_scratch');
update app_public.audit_scratch set label = 'validé';
select is((pg_temp.last_line()).verb, 'Validation', 'a transition names its verb');
select app_private.set_audit_verb('Refus', 'shift_change_request');
update app_public.audit_scratch set label = 'autre table';
select is((pg_temp.last_line()).verb, 'Modification', 'a verb named for another model does not leak');
select app_private.set_audit_verb('Correction');
update app_public.audit_scratch set label = 'corrigé';
select is((pg_temp.last_line()).verb, 'Correction', 'a verb named without model applies to any model');
select app_private.set_audit_verb(null);
update app_public.audit_scratch set label = 'après';
select is((pg_temp.last_line()).verb, 'Modification', 'set_audit_verb(null) resets to Modification');
select throws_ok($$select app_private.set_audit_verb('Bidule')$$, 'P0001', null, 'an unknown verb is refused');
select throws_ok($$select app_private.set_audit_verb('Creation')$$, 'P0001', null, 'Creation is not an update verb');

-- Impersonation fills the impersonator columns.
select pg_temp.setting('app.impersonator_id', tests.id('accounts', 'root')::text);
update app_public.audit_scratch set label = 'par procuration';
select is((pg_temp.last_line()).impersonator_account_id, tests.id('accounts', 'root'), 'impersonation: impersonator id');
select is((pg_temp.last_line()).impersonator_username, 'root', 'impersonation: impersonator username');
select is((pg_temp.last_line()).actor_username, 'mgr1', 'impersonation: the actor stays the impersonated account');
select pg_temp.setting('app.impersonator_id', null);

-- The identity is frozen: renaming the account later does not change past lines.
update app_public.accounts set username = 'julien.petit' where id = tests.id('accounts', 'mgr1');
select is((select count(*)::int from app_private.audit_log where model = 'audit_scratch' and actor_username = 'mgr1'),
          pg_temp.scratch_lines(), 'past lines keep the username of their time');
update app_public.audit_scratch set label = 'renommé';
select is((pg_temp.last_line()).actor_username, 'julien.petit', 'new lines carry the new username');
update app_public.accounts set username = 'mgr1' where id = tests.id('accounts', 'mgr1');

-- ---------------------------------------------------------------- delete
select lives_ok($$delete from app_public.audit_scratch$$,
                'the deletion line exists before the row is erased (checked by a later BEFORE DELETE trigger)');
select is((pg_temp.last_line()).verb, 'Suppression', 'delete: verb Suppression');
select is((pg_temp.last_line()).before ->> 'label', 'renommé', 'delete: before value holds the erased row');
select is((pg_temp.last_line()).after, null, 'delete: no after value');
select is((select count(*)::int from app_public.audit_scratch), 0, 'the row is erased');

-- A deletion whose transaction fails leaves no line.
insert into app_public.audit_scratch (label) values ('gardé');
select throws_ok($$delete from app_public.audit_scratch where label = 'gardé';
                  select 1 / 0$$, '22012', null, 'a failing deleting transaction');
select is((select count(*)::int from app_private.audit_log where model = 'audit_scratch' and verb = 'Suppression'
             and before ->> 'label' = 'gardé'), 0, '... leaves no deletion line (same transaction)');

-- No acting account (a DBA in psql): actor null, db_user says who.
select pg_temp.setting('app.account_id', null);
update app_public.audit_scratch set label = 'psql';
select is((pg_temp.last_line()).actor_account_id, null, 'no account: actor is null');
select is((select actor from app_private.audit_log_readable where id = (pg_temp.last_line()).id),
          '(sans compte : ' || session_user || ')', 'no account: the readable view names the database login');

-- Misuse of the trigger.
select throws_ok($$create trigger _500_audit_bad after insert on app_public.audit_scratch
                   for each row execute function app_private.tg__audit();
                   insert into app_public.audit_scratch (label) values ('x')$$,
                 'P0001', null, 'a trigger without model is refused');
select throws_ok($$create trigger _500_audit_typo after insert on app_public.audit_scratch
                   for each row execute function app_private.tg__audit('absense');
                   insert into app_public.audit_scratch (label) values ('x')$$,
                 '23503', null, 'an unregistered model is refused at the first write');

-- ---------------------------------------------------------------- append-only
select throws_ok($$update app_private.audit_log set verb = 'Refus'$$, 'WF901', null, 'audit lines cannot be changed');
select throws_ok($$delete from app_private.audit_log$$, 'WF901', null, 'audit lines cannot be deleted');
select throws_ok($$truncate app_private.audit_log$$, 'WF901', null, 'the audit log cannot be truncated');

-- ---------------------------------------------------------------- retention purge
insert into app_private.audit_log (at, verb, model, target_id, before, after) values
  ('2026-11-16 10:00+01'::timestamptz - interval '1095 days' - interval '1 minute', 'Creation', 'absence', 900001, null, '{}'),
  ('2026-11-16 10:00+01'::timestamptz - interval '2000 days', 'Creation', 'absence', 900002, null, '{}'),
  ('2026-11-16 10:00+01'::timestamptz - interval '1095 days' + interval '1 minute', 'Creation', 'absence', 900003, null, '{}'),
  ('2026-11-16 10:00+01'::timestamptz - interval '10 days', 'Creation', 'absence', 900004, null, '{}');
select is(app_private.purge_audit_log('2026-11-16 10:00+01'), 2, 'the purge deletes the lines older than 1095 days');
select is(array(select target_id from app_private.audit_log where target_id > 900000 order by target_id),
          array[900003, 900004]::bigint[], 'the lines within the retention stay');
select is(app_private.purge_audit_log('2026-11-16 10:00+01'), 0, 'a second purge deletes nothing');
select ok((select count(*) from app_private.audit_log where model = 'audit_scratch') > 0, 'recent lines are untouched');
select throws_ok($$delete from app_private.audit_log where target_id = 900003$$, 'WF901', null,
                 'outside the purge, deleting stays refused');
update app_private.settings set value = '5' where key = 'audit_retention_days';
select is(app_private.purge_audit_log('2026-11-16 10:00+01'), 2, 'the retention comes from the setting audit_retention_days');
update app_private.settings set value = '1095' where key = 'audit_retention_days';

-- ---------------------------------------------------------------- account activation
select tests.authenticate_as('rh1');
select lives_ok(format('select app_public.account_activation_set(%s, false)', tests.id('employees', 'emma')),
                'rh1 closes emma''s account');
select tests.as_owner();
select is((select count(*)::int from app_private.audit_log
           where model = 'account' and target_id = tests.id('accounts', 'emma')), 1, 'closing an account is audited');
select is((select row(verb, actor_username, before ->> 'is_active', after ->> 'is_active')::text
           from app_private.audit_log where model = 'account' and target_id = tests.id('accounts', 'emma')),
          row('Modification', 'rh1', 'true', 'false')::text, 'the line names who closed it, before and after');
select app_private.record_login(tests.id('accounts', 'alice'));
select is((select count(*)::int from app_private.audit_log where model = 'account'), 1,
          'a login (last_login_at) writes no audit line');

-- ---------------------------------------------------------------- reading the log
select tests.authenticate_as('rh1');
select is((app_public.audit_log_search(p_model => 'account', p_target_id => tests.id('accounts', 'emma')) ->> 'count')::int, 1,
          'rh1 (permission + RH n1) reads the log, filtered by model and target');
select is(app_public.audit_log_search(p_model => 'account', p_target_id => tests.id('accounts', 'emma')) -> 'results' -> 0 -> 'actor_identity',
          jsonb_build_object('username', 'rh1', 'display_name', 'Claire Dubois'), 'lines carry the frozen identity');
select ok((app_public.audit_log_search() ->> 'count')::int >= 5,
          'without filter the reader reads the whole association');
select throws_ok($$select app_public.audit_log_search(p_model => 'absense')$$, 'WV601', null, 'an unknown model is refused');
select tests.authenticate_as('admin');
select throws_ok($$select app_public.audit_log_search()$$, 'WF601', null,
                 'admin (staff, whole perimeter) without the permission is refused');
select tests.authenticate_as('mgr1');
select throws_ok($$select app_public.audit_log_search()$$, 'WF601', null, 'a manager is refused');
select throws_ok($$select count(*) from app_private.audit_log$$, '42501', null,
                 'the visitor role cannot read the table directly');
select tests.as_owner();
insert into app_public.account_permissions (account_id, permission_code) values (tests.id('accounts', 'alice'), 'audit.view_actionlog');
select tests.authenticate_as('alice');
select throws_ok($$select app_public.audit_log_search()$$, 'WF601', null,
                 'the permission without back-office access is refused');
select tests.authenticate_as('root');
select ok((app_public.audit_log_search() ->> 'count')::int >= 5, 'a superuser reads the log');

select * from finish();
rollback;
