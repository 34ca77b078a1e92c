-- The contact address of an account (its employee record's professional_email: password
-- resets go there) is changed only by an editor who covers every right the account holds
-- (issue 11, finding 4). A change tells the old address (e-mail outbox) and the account
-- (in-app notification), and is audited.
begin;
select plan(12);
select tests.freeze('2026-11-16 10:00+01');

-- bruno (E1 + E2) is also made Manager n1 of E1; david (E3) Admin; chloe (E2) Manager n2 of E2.
insert into app_public.role_attributions (account_id, role_id) values
  (tests.id('accounts', 'bruno'), 5), (tests.id('accounts', 'david'), 1), (tests.id('accounts', 'chloe'), 6);
insert into app_public.role_attribution_establishments (attribution_id, establishment_id)
select ra.id, tests.id('establishments', x.est)
from (values ('bruno', 5, 'E1'), ('chloe', 6, 'E2')) x(acc, role_id, est)
join app_public.role_attributions ra on ra.account_id = tests.id('accounts', x.acc) and ra.role_id = x.role_id;
update app_public.employees set professional_email = 'chloe@e2.test' where id = tests.id('employees', 'chloe');
update app_public.employees set professional_email = 'bruno@e1.test' where id = tests.id('employees', 'bruno');

create function pg_temp.email(p_employee text) returns text language sql stable security definer as $$
  select professional_email from app_public.employees where id = tests.id('employees', p_employee);
$$;
create function pg_temp.outbox_to(p_address text) returns int language sql stable security definer as $$
  select count(*)::int from app_private.email_outbox where to_address = p_address and kind = 'email_changed';
$$;
create function pg_temp.notified(p_account text) returns int language sql stable security definer as $$
  select count(*)::int from app_public.notifications n
  where n.account_id = tests.id('accounts', p_account) and n.title = 'Adresse e-mail modifiée';
$$;
create function pg_temp.audited(p_employee text, p_address text) returns boolean language sql stable security definer as $$
  select exists (select 1 from app_private.audit_log l
                 where l.model = 'employee' and l.target_id = tests.id('employees', p_employee)
                   and l.after ->> 'professional_email' = p_address);
$$;
grant execute on all functions in schema pg_temp to public;

-- RH n2 of E2: bruno manages E1 (outside the RH's perimeter): refused under the field.
select tests.authenticate_as('rh2');
select throws_ok(format($$select tests.employee_update(%s, '{"professional_email": "pirate@evil.test"}'::jsonb)$$,
  tests.id('employees', 'bruno')), 'WV501', null,
  'RH n2 of E2 may not change the address of a manager holding rights on E1 (400 under professional_email)');
select is(pg_temp.email('bruno'), 'bruno@e1.test', 'the address is unchanged');
-- chloe manages E2 only: covered by the RH n2 of E2.
select lives_ok(format($$select tests.employee_update(%s, '{"professional_email": "chloe.new@e2.test"}'::jsonb)$$,
  tests.id('employees', 'chloe')), 'RH n2 of E2 changes the address of a manager of E2');
select is(pg_temp.email('chloe'), 'chloe.new@e2.test', 'the address changed');
select is(pg_temp.outbox_to('chloe@e2.test'), 1, 'the old address is told (e-mail outbox)');
select is(pg_temp.notified('chloe'), 1, 'the account is told (in-app notification)');
select ok(pg_temp.audited('chloe', 'chloe.new@e2.test'), 'the change is audited');

-- RH n1 (whole association) and an Admin account.
select tests.authenticate_as('rh1');
select throws_ok(format($$select tests.employee_update(%s, '{"professional_email": "pirate@evil.test"}'::jsonb)$$,
  tests.id('employees', 'david')), 'WV501', null, 'RH n1 may not change the address of an Admin');
select lives_ok(format($$select tests.employee_update(%s, '{"professional_email": "bruno.new@e1.test"}'::jsonb)$$,
  tests.id('employees', 'bruno')), 'RH n1 (whole association) changes the address of a manager of E1');
select tests.authenticate_as('admin');
select lives_ok(format($$select tests.employee_update(%s, '{"professional_email": "david@e3.test"}'::jsonb)$$,
  tests.id('employees', 'david')), 'an Admin of the whole association changes it');
select is(pg_temp.outbox_to('david@e3.test'), 0, 'no old address: nothing to tell by e-mail');
select is(pg_temp.notified('david'), 1, 'the account is still told in the application');

select * from finish();
rollback;
