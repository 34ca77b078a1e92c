-- What people read (issue 29 point 5): « de » elided before a vowel, quantities as the screens
-- write them (« 1 jour », « 1,5 jour », « 2 jours », no « 1.00 »).
begin;
select plan(23);
select is(app_hidden.de_name('Inès Boyer'), 'd’Inès Boyer', 'd’ before a vowel (accented too)');
select is(app_hidden.de_name('Alice Martin'), 'd’Alice Martin', 'd’Alice');
select is(app_hidden.de_name('Yves Martin'), 'd’Yves Martin', 'd’ before a Y sounding as a vowel');
select is(app_hidden.de_name('Yann Le Goff'), 'de Yann Le Goff', 'de before a Y sounding as a consonant');
select is(app_hidden.de_name('Bruno Petit'), 'de Bruno Petit', 'de before a consonant');
select is(app_hidden.quantity_fr(1.00, 'day'), '1 jour', '« 1 jour », not « 1.00 jour »');
select is(app_hidden.quantity_fr(1.50, 'day'), '1,5 jour', 'a decimal comma, the singular below 2');
select is(app_hidden.quantity_fr(11.00, 'day'), '11 jours', 'the plural from 2, trailing zeros only dropped after the comma');
select is(app_hidden.quantity_fr(0.50, 'hour'), '0,5 heure', 'hours alike');

-- One apostrophe style: the reference data writes ’, in a new database as in one migrated from
-- before (sql/wording.sql). A French elision with a straight apostrophe is « d' », « l' »…
create function pg_temp.straight(p_sql text) returns setof text language plpgsql as $f$
begin
  return query execute format('select t from (%s) x(t) where t ~* %L', p_sql,
    '(^|[^[:alpha:]])([cdjlmnst]|qu|jusqu|lorsqu|puisqu|quelqu|aujourd)''[[:alpha:]]');
end;
$f$;
select is_empty($$select * from pg_temp.straight('select name from app_public.absence_types')$$, 'absence types: ’');
select is((select name from app_public.absence_types where code = 'PAT'), 'Congé de paternité et d’accueil de l’enfant',
          'a reason named with two elisions');
select is_empty($$select * from pg_temp.straight('select name from app_public.absence_categories')$$, 'categories: ’');
select is_empty($$select * from pg_temp.straight('select name from app_public.contract_types')$$, 'contract types: ’');
select is_empty($$select * from pg_temp.straight('select name from app_public.counter_kinds')$$, 'counter kinds: ’');
select is_empty($$select * from pg_temp.straight('select description from app_public.permissions')$$, 'permissions: ’');
select is_empty($$select * from pg_temp.straight('select label from app_private.audit_models')$$, 'audit models: ’');
select is_empty($$select * from pg_temp.straight('select description from app_private.settings')$$, 'settings: ’');
select is_empty($$select * from pg_temp.straight('select description from app_private.job_schedules')$$, 'scheduled jobs: ’');
select is((select name from app_public.public_holidays(2027) where day = '2027-01-01'), 'Jour de l’an', 'Jour de l’an');

-- A database migrated from before: its rows still hold what the seed wrote then. The data
-- migration (sql/wording.sql) changes those, leaves a name staff changed since, and a second run
-- changes nothing.
select tests.as_owner();
update app_public.absence_types set name = 'Congé de paternité et d''accueil de l''enfant' where code = 'PAT';
update app_public.absence_types set name = 'Congé d''adoption (accord d''entreprise)' where code = 'ADO';
update app_public.contract_types set name = 'Mission d''intérim' where code = 'Intérim';
update app_private.settings set description = 'Durée de conservation du journal d''audit, en jours' where key = 'audit_retention_days';
select is(app_private.wording_typographic(), 3, 'a database migrated from before: the rows as the seed wrote them change');
select is(array[(select name from app_public.absence_types where code = 'PAT'), (select name from app_public.contract_types where code = 'Intérim'),
                (select description from app_private.settings where key = 'audit_retention_days')],
          array['Congé de paternité et d’accueil de l’enfant', 'Mission d’intérim', 'Durée de conservation du journal d’audit, en jours'],
          '... to the typographic apostrophe');
select is((select name from app_public.absence_types where code = 'ADO'), 'Congé d''adoption (accord d''entreprise)',
          'a name staff wrote is theirs: left alone');
select is(app_private.wording_typographic(), 0, 'a second run changes nothing');
select * from finish();
rollback;
