-- Manual counter adjustment (sql/counters/balances.sql): one journal movement with its
-- reason, the balance moved by it, an audit line; refused without reason, below zero, by an
-- account that does not write this employee's counters (403) or does not read it (404). The
-- journal is read-only and read through the counter's own visibility.
begin;
select plan(15);
select tests.freeze('2026-11-16 10:00+01');

create function pg_temp.errors_of(p_sql text) returns jsonb language plpgsql as $$
declare
  v_detail text;
  v_message text;
begin
  execute p_sql;
  return null;
exception when others then
  get stacked diagnostics v_detail = pg_exception_detail, v_message = message_text;
  return case when v_detail like '{%' then v_detail::jsonb else jsonb_build_object(v_detail, jsonb_build_array(v_message)) end;
end;
$$;
grant execute on function pg_temp.errors_of(text) to public;

select tests.as_owner();
select id as cp from app_public.counters where employee_id = tests.id('employees', 'alice') and code = 'CP' and year = 2026 \gset
create temp table journal_before as select count(*)::int as n from app_private.counter_movements where counter_id = :cp;
grant select on journal_before to public;
select is(app_private.counter_remaining(:cp), 25.00, 'alice has 25 CP days left (fixture)');

select tests.authenticate_as('rh1');   -- RH n1, the whole association, not staff
select is(app_public.counter_adjust(:cp, 'acquired', 2.5, '  Reliquat 2025 reporté  ') ->> 'remaining', '27.50',
  'an adjustment of +2.5 acquired moves the remaining to 27.50');
select tests.as_owner();
select is((select count(*)::int from app_private.counter_movements where counter_id = :cp) - (select n from journal_before), 1,
  'exactly one journal row is written');
select is((select row(bucket, quantity, kind, comment, actor_account_id = tests.id('accounts', 'rh1'))::text
           from app_private.counter_movements where counter_id = :cp order by id desc limit 1),
  '(acquired,2.50,adjustment,"Reliquat 2025 reporté",t)', 'it is an adjustment movement with its reason and its author');
select is((select after - 'counter' - 'employee' from app_private.audit_log where model = 'counter_adjustment' order by id desc limit 1),
  jsonb_build_object('code', 'CP', 'year', 2026, 'bucket', 'acquired', 'quantity', '2.50', 'reason', 'Reliquat 2025 reporté',
                     'remaining_before', '25.00', 'remaining_after', '27.50'),
  'the adjustment is audited with the balance before and after');
select is((select actor_account_id from app_private.audit_log where model = 'counter_adjustment' order by id desc limit 1),
  tests.id('accounts', 'rh1'), 'by its author');

select tests.authenticate_as('rh1');
select is(app_public.counter_adjust(:cp, 'taken', 1, 'Jour pris avant la mise en service') ->> 'taken', '1.00',
  'an adjustment of Pris moves taken');
select is((app_public.counter_journal(:cp) -> -1) ->> 'comment', 'Jour pris avant la mise en service', 'the journal shows the last movement with its reason');

-- Refusals: nothing written.
select is(pg_temp.errors_of(format($$select app_public.counter_adjust(%s, 'acquired', 1, '   ')$$, :cp)) -> 'reason',
  '["Le motif de l’ajustement est obligatoire."]', 'without a reason: 400 under reason');
select is(pg_temp.errors_of(format($$select app_public.counter_adjust(%s, 'acquired', 0, 'x')$$, :cp)) -> 'quantity',
  '["Une quantité non nulle, entre -999,99 et 999,99, deux décimales au plus."]', 'a zero quantity: 400 under quantity');
select is(pg_temp.errors_of(format($$select app_public.counter_adjust(%s, 'acquired', -40, 'Trop')$$, :cp)) -> 'quantity',
  '["Cet ajustement rendrait le solde restant négatif (restant actuel : 26.50)."]', 'below zero: 400 under quantity');
select tests.authenticate_as('mgr1');   -- reads E1 counters through the queue, does not write them
select throws_ok(format($$select app_public.counter_adjust(%s, 'acquired', 1, 'Par un manager')$$, :cp), 'WF301', null,
  'a manager who reads the counter may not adjust it (403)');
select tests.authenticate_as('rh2');    -- RH n2 of E2: alice (E1) is outside
select throws_ok(format($$select app_public.counter_adjust(%s, 'acquired', 1, 'Hors périmètre')$$, :cp), 'WN301', null,
  'an RH account outside the perimeter does not see the counter (404)');
select throws_ok(format('select app_public.counter_journal(%s)', :cp), 'WN301', null, 'nor its journal');
select tests.as_owner();
select is((select count(*)::int from app_private.counter_movements where counter_id = :cp) - (select n from journal_before), 2,
  'the refusals wrote nothing');

select * from finish();
rollback;
