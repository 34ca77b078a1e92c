-- Reference data every database holds after migration (CONTRACT section 5): categories
-- (two levels at most), 52 reasons with their properties, 15 counter associations,
-- contract types, the code namespace shared with posts, French public holidays.
begin;
select plan(52);

select tests.freeze('2026-11-16 10:00+01');

create function pg_temp.category(p_code text) returns int language sql stable as $$
  select id from app_public.absence_categories where code = p_code;
$$;

------------------------------------------------------------------------------------------
-- Categories
select is((select count(*)::int from app_public.absence_categories where parent_id is null), 6, 'six root categories');
select is_empty($$select c.code from app_public.absence_categories c where c.parent_id is null
                  and not exists (select 1 from app_public.absence_categories s where s.parent_id = c.id)$$,
  'every root category has sub-categories');
select is_empty($$select c.code from app_public.absence_categories c
                  join app_public.absence_categories p on p.id = c.parent_id where p.parent_id is not null$$,
  'no category deeper than two levels');
select is_empty($$select t.code from app_public.absence_types t
                  join app_public.absence_categories c on c.id = t.category_id where c.parent_id is null$$,
  'every reason is filed under a sub-category');
select throws_ok($$insert into app_public.absence_categories (code, name, parent_id)
                   values ('TROISIEME', 'Troisième niveau', pg_temp.category('ARRETS'))$$,
  'WV001', 'Une catégorie d’absence a au plus deux niveaux (catégorie, sous-catégorie).',
  'a third level is refused on insert');
select throws_ok($$update app_public.absence_categories set parent_id = pg_temp.category('ARRETS')
                   where code = 'ENFANT_MALADE'$$,
  'WV001', null, 'moving a sub-category under a sub-category is refused');
select throws_ok($$update app_public.absence_categories set parent_id = pg_temp.category('CONGES')
                   where code = 'MALADIE'$$,
  'WV001', null, 'moving a root that has sub-categories under another root is refused');
insert into app_public.absence_categories (code, name) values ('RACINE_VIDE', 'Racine sans enfant');
select throws_ok($$update app_public.absence_categories set parent_id = id where code = 'RACINE_VIDE'$$,
  'WV001', null, 'a category cannot be its own parent');
select lives_ok($$insert into app_public.absence_categories (code, name, parent_id)
                  values ('NOUVELLE_SOUS', 'Nouvelle sous-catégorie', pg_temp.category('AUTRES'))$$,
  'a new sub-category under a root is accepted');

------------------------------------------------------------------------------------------
-- Reasons and counters
select is((select count(*)::int from app_public.absence_types), 52, '52 reasons');
select is((select count(distinct lower(code))::int from app_public.absence_types), 52, 'reason codes are unique case-insensitively');
select is((select count(*)::int from app_public.counter_associations where is_active), 15, '15 active counter associations');

select results_eq(
  $$select t.code::text, t.unit, t.half_day_allowed,
           coalesce(array_agg(ca.counter_code::text order by ca.counter_code) filter (where ca.id is not null), '{}')
    from app_public.absence_types t
    left join app_public.counter_associations ca on ca.absence_type_id = t.id and ca.is_active
    where t.code in ('CP', 'CT', 'ANC', 'JRS', 'CET', 'R+', 'MAL', 'ENF', 'DON', 'PRA', 'SYN_PAR', 'SYN_CON',
                     'SYN_ELU', 'DLG_CSE', 'DLG_SEC', 'DLG_TRE', 'DLG_DS', 'CNS_SAL', 'CSS', 'SAB', 'PAR',
                     'CPF', 'PTP', 'FOR')
    group by t.id order by t.code collate "C"$$,
  $$select * from (values
      ('CP', 'day', false, array['CP']), ('CT', 'day', false, array['CT']), ('ANC', 'day', false, array['ANC']),
      ('JRS', 'day', false, array['JRS']), ('CET', 'day', false, array['CET']), ('R+', 'day', false, '{}'),
      ('MAL', 'day', true, '{}'), ('ENF', 'day', true, '{}'), ('DON', 'hour', false, '{}'),
      ('PRA', 'hour', false, '{}'), ('SYN_PAR', 'day', true, '{}'), ('SYN_CON', 'day', true, '{}'),
      ('SYN_ELU', 'day', true, '{}'), ('DLG_CSE', 'hour', false, array['DLG_CSE']),
      ('DLG_SEC', 'hour', false, array['DLG_CSE']), ('DLG_TRE', 'hour', false, array['DLG_CSE']),
      ('DLG_DS', 'hour', false, array['DLG_DS']), ('CNS_SAL', 'hour', false, array['DLG_CS']),
      ('CSS', 'day', true, '{}'), ('SAB', 'day', false, '{}'), ('PAR', 'day', false, '{}'),
      ('CPF', 'day', true, '{}'), ('PTP', 'day', true, '{}'), ('FOR', 'day', true, '{}')
    ) as v(code, unit, half_day, counters) order by code collate "C"$$,
  'CONTRACT section 5: unit, half-day and counter codes of the listed reasons');

select results_eq(
  $$select code::text, annualisation_effect from app_public.absence_types
    where code in ('R+', 'CP') order by code collate "C"$$,
  $$values ('CP', 'none'), ('R+', 'impute')$$, 'R+ is imputed on the annualisation, without counter');
select results_eq(
  $$select code::text, notice_period from app_public.absence_types where code = 'CP'$$,
  $$values ('CP', '1 month'::interval)$$, 'CP: notice of one month');
select results_eq(
  $$select code::text, documents_expected, document_deadline_hours from app_public.absence_types
    where code in ('MAL', 'ENF', 'DON') order by code$$,
  $$values ('DON', true, 48), ('ENF', true, 48), ('MAL', true, 48)$$,
  'MAL, ENF, DON: a certificate expected within 48 hours');
select results_eq(
  $$select warn_max_hours_per_absence, warn_max_per_quarter, notice_working_days from app_public.absence_types
    where code = 'DON'$$,
  $$values (1.5::numeric(6,2), 1, 10)$$, 'DON: warn above 1 h 30 and on a second one per quarter, notice 10 working days');
select results_eq(
  $$select warn_max_hours_per_year, notice_period, document_deadline_working_days_after_end, paid
    from app_public.absence_types where code = 'PRA'$$,
  $$values (21::numeric(7,2), '72 hours'::interval, 2, false)$$,
  'PRA: warn above 21 h a year, notice 72 h, documents within 2 working days after');
select results_eq(
  $$select code::text, paid, annual_cap, cap_overrun from app_public.absence_types
    where code in ('SYN_PAR', 'SYN_CON', 'SYN_ELU') order by code$$,
  $$values ('SYN_CON', true, null::numeric(8,2), 'refuse'), ('SYN_ELU', true, 10::numeric(8,2), 'refuse'),
           ('SYN_PAR', true, null::numeric(8,2), 'refuse')$$,
  'SYN_PAR and SYN_CON paid without cap; SYN_ELU paid, capped at 10 with refuse');
select results_eq(
  $$select code::text, paid, warn_min_duration, warn_max_duration from app_public.absence_types
    where code in ('CSS', 'SAB') order by code$$,
  $$values ('CSS', false, null::interval, '3 months'::interval), ('SAB', false, '6 months'::interval, '11 months'::interval)$$,
  'CSS warns above 3 months; SAB warns outside 6 to 11 months');
select results_eq(
  $$select warn_max_duration, notice_period, notice_period_long, warn_min_seniority from app_public.absence_types
    where code = 'PAR'$$,
  $$values ('1 year'::interval, '1 month'::interval, '2 months'::interval, '1 year'::interval)$$,
  'PAR: warn above 1 year or under 1 year of seniority, notice 1 or 2 months');
select results_eq(
  $$select code::text, notice_period from app_public.absence_types where code in ('CPF', 'PTP') order by code$$,
  $$values ('CPF', '60 days'::interval), ('PTP', '120 days'::interval)$$, 'CPF and PTP: notice 60 and 120 days');
select set_eq(
  $$select code::text from app_public.absence_types where not half_day_allowed and unit = 'day'
    and code in ('CP', 'CT', 'ANC', 'JRS', 'CET', 'R+')$$,
  array['CP', 'CT', 'ANC', 'JRS', 'CET', 'R+'], 'half-day impossible for CP, CT, ANC, JRS, CET and R+');
select is_empty($$select code from app_public.absence_types where unit = 'hour' and half_day_allowed$$,
  'no hourly reason offers half-days');
select is_empty($$select code from app_public.absence_types where annual_cap is not null and annual_cap <= 0$$,
  'every annual cap is strictly positive');
select throws_ok($$update app_public.absence_types set annual_cap = 0 where code = 'SYN_ELU'$$, '23514', null,
  'an annual cap of 0 is refused');
select is_empty($$select c.code from app_public.counter_kinds c where c.is_consumable
                  and not exists (select 1 from app_public.counter_associations ca where ca.counter_code = c.code)$$,
  'every consumable counter kind is consumed by at least one reason');
select ok(exists (select 1 from app_public.counter_kinds where code = 'AN' and not is_consumable)
          and exists (select 1 from app_public.counter_kinds where code = 'HS' and not is_consumable),
  'AN and HS are non-consumable counters');

-- The API view of the reference.
select tests.authenticate_as('alice');
select is((app_public.absence_types_list(1, 200) ->> 'count')::int, 52, 'absence_types_list: 52 active reasons');
select is((select jsonb_build_object('annual_cap', x -> 'annual_cap', 'cap_overrun', x -> 'cap_overrun',
                                     'counter_codes', x -> 'counter_codes', 'half_day_allowed', x -> 'half_day_allowed')
           from jsonb_array_elements(app_public.absence_types_list(1, 200) -> 'results') x where x ->> 'code' = 'SYN_ELU'),
  '{"annual_cap": "10.00", "cap_overrun": "refuse", "counter_codes": [], "half_day_allowed": true}'::jsonb,
  'absence_types_list: SYN_ELU with its cap as a decimal string');
select is((select x -> 'counter_codes' from jsonb_array_elements(app_public.absence_types_list(1, 200) -> 'results') x
           where x ->> 'code' = 'CNS_SAL'), '["DLG_CS"]'::jsonb, 'absence_types_list: CNS_SAL consumes DLG_CS');
select is((select x -> 'contract_types' from jsonb_array_elements(app_public.absence_types_list(1, 200) -> 'results') x
           where x ->> 'code' = 'CET'), '["CDI"]'::jsonb, 'absence_types_list: the contract types concerned');
select tests.as_owner();
update app_public.absence_types set is_active = false where code = 'FOR';
select tests.authenticate_as('alice');
select ok((app_public.absence_types_list(1, 200) ->> 'count')::int = 51
          and not exists (select 1 from jsonb_array_elements(app_public.absence_types_list(1, 200) -> 'results') x
                          where x ->> 'code' = 'FOR'),
  'absence_types_list: an inactive reason is not returned');
select tests.as_owner();

------------------------------------------------------------------------------------------
-- Contract types
select set_eq('select code from app_public.contract_types', array['CDI', 'CDD', 'Intérim', 'Apprentissage', 'Stage'],
  'contract types: CDI, CDD, Intérim, Apprentissage, Stage');
select results_eq('select code from app_public.contract_types where is_temporary_work', array['Intérim'],
  'only Intérim is temporary work');

------------------------------------------------------------------------------------------
-- One code namespace for reasons and posts, case-insensitive
select throws_ok($$insert into app_public.absence_types (code, name, category_id, unit)
                   values ('cp', 'Doublon', pg_temp.category('AUTORISATIONS'), 'day')$$,
  '23505', null, 'a reason code differing only by case is refused');
select throws_ok($$insert into app_public.posts (code, label, establishment_id, start_time, end_time)
                   values ('mal', 'Poste', tests.id('establishments', 'E1'), '08:00', '12:00')$$,
  'WV010', 'Le code « mal » est déjà utilisé par un motif d’absence.', 'a post code equal to a reason code is refused');
select throws_ok($$update app_public.posts set code = 'Cp' where id = tests.id('posts', 'E1-J')$$,
  'WV010', null, 'renaming a post to a reason code is refused');
select throws_ok($$insert into app_public.absence_types (code, name, category_id, unit)
                   values ('j', 'Motif J', pg_temp.category('AUTORISATIONS'), 'day')$$,
  'WV010', 'Le code « j » est déjà utilisé par un poste.', 'a reason code equal to a post code is refused');
select throws_ok($$update app_public.absence_types set code = 'n' where code = 'FOR'$$,
  'WV010', null, 'renaming a reason to a post code is refused');
select lives_ok($$insert into app_public.posts (code, label, establishment_id, start_time, end_time)
                  values ('JX', 'Poste JX', tests.id('establishments', 'E1'), '08:00', '12:00')$$,
  'a free post code is accepted');
select lives_ok($$insert into app_public.absence_types (code, name, category_id, unit)
                  values ('NOUV', 'Nouveau motif', pg_temp.category('AUTORISATIONS'), 'day')$$,
  'a free reason code is accepted');
select lives_ok($$update app_public.posts set label = 'Journée longue' where id = tests.id('posts', 'E1-J')$$,
  'updating a post without changing its code is accepted');

------------------------------------------------------------------------------------------
-- French public holidays
create function pg_temp.movable(p_year int) returns setof date language sql stable as $$
  select h.day from app_public.public_holidays(p_year) h
  where (extract(month from h.day), extract(day from h.day)) not in
        ((1, 1), (5, 1), (5, 8), (7, 14), (8, 15), (11, 1), (11, 11), (12, 25))
  order by h.day;
$$;
select results_eq('select * from pg_temp.movable(2024)', array['2024-04-01', '2024-05-09', '2024-05-20']::date[],
  '2024: Easter Monday 1 April, Ascension 9 May, Whit Monday 20 May');
select results_eq('select * from pg_temp.movable(2025)', array['2025-04-21', '2025-05-29', '2025-06-09']::date[],
  '2025: Easter Monday 21 April, Ascension 29 May, Whit Monday 9 June');
select results_eq('select * from pg_temp.movable(2026)', array['2026-04-06', '2026-05-14', '2026-05-25']::date[],
  '2026: Easter Monday 6 April, Ascension 14 May, Whit Monday 25 May');
select results_eq('select * from pg_temp.movable(2027)', array['2027-03-29', '2027-05-06', '2027-05-17']::date[],
  '2027: Easter Monday 29 March, Ascension 6 May, Whit Monday 17 May');
select results_eq('select * from pg_temp.movable(2038)', array['2038-04-26', '2038-06-03', '2038-06-14']::date[],
  '2038: Easter Monday 26 April, Ascension 3 June, Whit Monday 14 June');
select set_eq(
  $$select y, count(*)::int from unnest(array[2024, 2025, 2026, 2027, 2038]) y, app_public.public_holidays(y) group by y$$,
  $$values (2024, 11), (2025, 11), (2026, 11), (2027, 11), (2038, 11)$$, 'eleven public holidays a year');
select is_empty(
  $$select make_date(y, f.m, f.d) from unnest(array[2024, 2025, 2026, 2027, 2038]) y,
           (values (1, 1), (5, 1), (5, 8), (7, 14), (8, 15), (11, 1), (11, 11), (12, 25)) f(m, d)
    except
    select h.day from unnest(array[2024, 2025, 2026, 2027, 2038]) y, app_public.public_holidays(y) h$$,
  'the eight fixed days every year');
select ok(app_hidden.is_public_holiday('2026-05-25') and app_hidden.is_public_holiday('2026-11-11')
          and not app_hidden.is_public_holiday('2026-05-24') and not app_hidden.is_public_holiday('2026-04-05'),
  'is_public_holiday: Whit Monday and 11 November yes; Whit Sunday and Easter Sunday no');
select throws_ok('select * from app_public.public_holidays(1500)', 'WV001', null, 'a year out of range is refused');

select * from finish();
rollback;
