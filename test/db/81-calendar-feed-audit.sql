-- Managing a calendar feed is audited (model calendar_feed): creation, rotation (Modification)
-- and revocation (Suppression), by the acting account, without the hash of the secret; a refused
-- creation or a revocation of nothing writes no line.
begin;
select plan(10);
select tests.freeze('2026-11-16 10:00+01');

create function pg_temp.lines() returns table (verb text, actor text, target bigint, before jsonb, after jsonb)
language sql as $$
  select l.verb, l.actor_username, l.target_id, l.before, l.after
  from app_private.audit_log l where l.model = 'calendar_feed' order by l.id;
$$;
grant execute on all functions in schema pg_temp to public;

select tests.authenticate_as('alice');
select app_public.calendar_feed_create(p_kind => 'planning');
select tests.as_owner();
select is((select count(*)::int from pg_temp.lines()), 1, 'a creation writes one line');
select is((select row(verb, actor, target)::text from pg_temp.lines()),
          (select row('Creation', 'alice', f.id)::text from app_private.calendar_feeds f
           where f.account_id = tests.id('accounts', 'alice')),
          'Creation of the feed, by its owner');
select is((select after ? 'token_hash' from pg_temp.lines()), false, 'the line holds no hash of the secret');
select is((select after->>'kind' from pg_temp.lines()), 'planning', 'it names the kind');

select tests.authenticate_as('alice');
select throws_ok($$select app_public.calendar_feed_create(p_kind => 'planning')$$, 'WV701', null, 'a second feed of the kind is refused');
select tests.authenticate_as('bruno');
select throws_ok($$select app_public.calendar_feed_revoke('planning')$$, 'WN701', null, 'revoking a feed one does not hold is refused');
select tests.as_owner();
select is((select count(*)::int from pg_temp.lines()), 1, 'refusals write nothing');

select tests.freeze('2026-11-17 09:00+01');
select tests.authenticate_as('alice');
select app_public.calendar_feed_rotate('planning', null);
select app_public.calendar_feed_revoke('planning');
select tests.as_owner();
select is(array(select verb from pg_temp.lines()), array['Creation', 'Modification', 'Suppression'],
          'rotation and revocation are audited in order');
select is((select count(*)::int from pg_temp.lines() l
           where (l.before is not null and l.before ? 'token_hash') or (l.after is not null and l.after ? 'token_hash')), 0,
          'no line holds the hash of a secret');
select isnt((select before->>'created_at' from pg_temp.lines() where verb = 'Modification'),
            (select after->>'created_at' from pg_temp.lines() where verb = 'Modification'),
            'a rotation shows the new date of the address');

select * from finish();
rollback;
