-- The typed event creation as a GraphQL caller reaches it (no route schema in front): what the
-- route's body would have refused is refused by the function, with the body's messages.
begin;
select plan(5);
select tests.freeze('2026-11-16 10:00+01');
select tests.authenticate_as('admin');

select throws_ok($$select app_public.event_create(null, '2026-11-24 09:00+01', '2026-11-24 10:00+01')$$,
  'WV530', 'Le titre est obligatoire.', 'a null title: 400 under title');
select throws_ok($$select app_public.event_create('Réunion', '2026-11-24 09:00+01', null)$$,
  'WV530', 'La fin est obligatoire.', 'a null end: 400 under end_at');
select throws_ok(format($$select app_public.event_create('Réunion', '2026-11-24 09:00+01', '2026-11-24 10:00+01',
                          p_participants => array[%s, %s])$$, tests.id('employees', 'alice'), tests.id('employees', 'alice')),
  'WV001', 'La liste contient des doublons.', 'a participant twice: 400 under participants, as the JSON body');
select throws_ok(format($$select app_public.event_create('Réunion', '2026-11-24 09:00+01', '2026-11-24 10:00+01',
                          p_participants => array[%s, null])$$, tests.id('employees', 'alice')),
  'WV001', 'Une liste d’identifiants (nombres entiers) est attendue.', 'a null participant: 400 under participants');
select is(app_public.event_create('  Réunion  ', '2026-11-24 09:00+01', '2026-11-24 10:00+01',
                                  p_participants => array[tests.id('employees', 'alice')]) ->> 'title',
          'Réunion', 'a creation with typed arguments; the title is trimmed');

select * from finish();
rollback;
