-- The planning in parts (app_public.planning_read_chunks, what GET /api/planning/ sends):
-- the parts, joined in their order, are planning_read_text's bytes; none is over 64 KiB and
-- only the last is shorter by more than 3 bytes: a part ends on a whole character (the
-- service's driver reads each one as UTF-8 text); the same errors; hidden from GraphQL.
begin;
select plan(9);
select tests.freeze('2026-11-16 10:00+01');

create function pg_temp.joined(p_from date, p_to date, p_employee int default null, p_establishment int default null)
returns bytea language sql as $$
  select string_agg(part, ''::bytea) from app_public.planning_read_chunks(p_from, p_to, p_employee, p_establishment) as part;
$$;
create function pg_temp.sizes(p_from date, p_to date) returns int[] language sql as $$
  select array_agg(length(part)) from app_public.planning_read_chunks(p_from, p_to) as part;
$$;
grant execute on all functions in schema pg_temp to public;

select tests.authenticate_as('rh1');
select ok(pg_temp.joined('2026-11-01', '2026-12-31') = convert_to(app_public.planning_read_text('2026-11-01', '2026-12-31'), 'UTF8'),
  'RH n1, 61 days of the whole association: the parts joined are the text''s bytes');
select ok(cardinality(pg_temp.sizes('2026-11-01', '2026-12-31')) > 1, 'an answer over 64 KiB comes in several parts');
select ok((select bool_and(s between 65533 and 65536) from unnest(pg_temp.sizes('2026-11-01', '2026-12-31')) with ordinality x(s, n)
           where n < cardinality(pg_temp.sizes('2026-11-01', '2026-12-31')))
          and (pg_temp.sizes('2026-11-01', '2026-12-31'))[cardinality(pg_temp.sizes('2026-11-01', '2026-12-31'))] between 1 and 65536,
  'every part but the last is 64 KiB (less at most 3 bytes), the last at most');
-- 53 days: byte 196 608 of the text (0-based) is inside a character.
select ok((select get_byte(convert_to(app_public.planning_read_text('2026-11-30', '2027-01-21'), 'UTF8'), 196608) between 128 and 191),
  'RH n1, 53 days: a 64 KiB boundary of the text falls inside a character');
select ok(pg_temp.joined('2026-11-30', '2027-01-21') = convert_to(app_public.planning_read_text('2026-11-30', '2027-01-21'), 'UTF8')
          and (select bool_and(convert_from(part, 'UTF8') is not null and length(part) <= 65536)
               from app_public.planning_read_chunks('2026-11-30', '2027-01-21') as part),
  'there, each part is whole characters (the one before the boundary ends short of it), joined the same bytes');
select ok(pg_temp.joined('2026-11-01', '2026-11-30', null, tests.id('establishments', 'E2'))
          = convert_to(app_public.planning_read_text('2026-11-01', '2026-11-30', null, tests.id('establishments', 'E2')), 'UTF8'),
  'narrowed to one establishment: the same bytes (accented names included)');
select tests.authenticate_as('alice');
select ok(pg_temp.joined(null, null) = convert_to(app_public.planning_read_text(null, null), 'UTF8'),
  'an employee, the current week, in one part');

select throws_ok($$select app_public.planning_read_chunks('2026-11-01', '2027-01-02')$$, 'WV108', null,
  'the same errors: more than 62 days is 400');
select tests.as_owner();
select is(split_part(obj_description('app_public.planning_read_chunks(date, date, int, int, int)'::regprocedure, 'pg_proc'), E'\n', 1),
  '@behavior -*', 'hidden from GraphQL: the smart tag is its comment''s first line');

select * from finish();
rollback;
