-- Impersonation: superusers only, audited, and carried by every audit line.
begin;
select plan(15);
select tests.freeze('2026-11-16 10:00+01');

select tests.authenticate_as('admin');
select set_config('app.allow_impersonation', 'on', true);
select throws_ok($$select app_public.impersonation_start(tests.id('accounts', 'alice'))$$, 'WF570', null, 'an Admin is not a superuser');
select set_config('app.allow_impersonation', '', true);
select tests.authenticate_as('root');
-- Off unless the server declares it on for this transaction (ALLOW_IMPERSONATION): whatever
-- surface calls the function (GraphQL, a future route), it refuses and writes nothing.
select throws_ok($$select app_public.impersonation_start(tests.id('accounts', 'alice'))$$, 'WN570', null,
                 'impersonation is off unless the server turns it on');
select set_config('app.allow_impersonation', 'off', true);
select throws_ok($$select app_public.impersonation_start(tests.id('accounts', 'alice'))$$, 'WN570', null,
                 'only the value on turns it on');
select tests.as_owner();
select is((select count(*)::int from app_private.audit_log where verb = 'Impersonation'), 0, 'a refused impersonation writes nothing');
select tests.authenticate_as('root');
select set_config('app.allow_impersonation', 'on', true);
select throws_ok($$select app_public.impersonation_start(tests.id('accounts', 'root'))$$, 'WV570', null, 'nobody impersonates themselves');
select lives_ok($$select app_public.impersonation_start(tests.id('accounts', 'alice'))$$, 'a superuser impersonates an account');
select tests.as_owner();
select is((select count(*)::int from app_private.audit_log where verb = 'Impersonation' and target_id = tests.id('accounts', 'alice')
           and actor_account_id = tests.id('accounts', 'root')), 1, 'the impersonation is audited');
select is(app_private.begin_request(tests.id('accounts', 'alice'), tests.id('accounts', 'admin')), null,
          'a request impersonating through a non-superuser is refused');
select is((app_private.begin_request(tests.id('accounts', 'alice'), tests.id('accounts', 'root')) ->> 'id')::int, tests.id('accounts', 'alice'),
          'a request impersonating through the superuser acts as the account');

-- The hint of GET /api/auth/me/: the button shows only when the server turned impersonation on,
-- for a superuser not already impersonating.
select set_config('app.allow_impersonation', '', true);
select set_config('app.impersonator_id', '', true);  -- set by the begin_request above
select tests.authenticate_as('root');
select is((app_public.me() ->> 'can_impersonate')::boolean, false, 'me: off, a superuser sees no impersonation button');
select set_config('app.allow_impersonation', 'on', true);
select is((app_public.me() ->> 'can_impersonate')::boolean, true, 'me: on, a superuser sees it');
select tests.authenticate_as('staff');
select is((app_public.me() ->> 'can_impersonate')::boolean, false, 'me: on, a staff account without superuser status does not');
select tests.authenticate_as('admin');
select is((app_public.me() ->> 'can_impersonate')::boolean, false, 'me: on, an Admin does not');
select tests.authenticate_as('alice');
select is((app_public.me() ->> 'can_impersonate')::boolean, false, 'me: on, an employee does not');
select set_config('app.impersonator_id', tests.id('accounts', 'root')::text, true);
select is((app_public.me() ->> 'can_impersonate')::boolean, false, 'me: on, an account impersonated by the superuser does not');
select set_config('app.impersonator_id', '', true);

select * from finish();
rollback;
