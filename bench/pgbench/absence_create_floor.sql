-- The floor of POST /api/absences/: one transaction writing the rows a one-day CP request
-- writes (the absence, its reservation in the counter journal, its audit line, a notification
-- to each of its four deciders), without any rule: no perimeter, no validation, no counting,
-- no balance, no routing, no answer built. The tables' own triggers run (timestamps, the
-- audit line, the state counts of the queues), as do constraints, foreign keys and indexes.
-- Same distinct employees and dates as absence_create.sql; as the owner (no row-level
-- security), pipelined (one round trip). Creation / floor says what the rules cost.
--   -D base= -D clients= -D employees= -D acc_base= -D emp_base= -D type= -D days={...} -D n=0
\set n :n + 1
\set slot :base + (:n - 1) * :clients + :client_id
\set e :slot % :employees
\set acc :acc_base + :e
\set emp :emp_base + :e
\set d :slot / :employees + 1
\startpipeline
begin;
select set_config('app.account_id', :acc::text, true), set_config('app.employee_id', :emp::text, true);
with a as (
  insert into app_public.absences (employee_id, type_id, date_start, date_end, status, counted_quantity, counted_unit,
                                   author_account_id, submitted_at)
  values (:emp, :type, ((:days)::date[])[:d::int], ((:days)::date[])[:d::int], 'pending', 1, 'day', :acc, now())
  returning id, employee_id, date_start
), journal as (
  insert into app_private.counter_movements (counter_id, bucket, quantity, kind, absence_id, transition, actor_account_id)
  select c.id, 'planned', 1, 'reservation', a.id, 'create', :acc
  from a join app_public.counters c on c.employee_id = a.employee_id and c.code = 'CP'
                                   and c.year = extract(year from a.date_start)::int
)
insert into app_public.notifications (account_id, title, body, level, model, target_id)
select r.account_id, 'Nouvelle demande d''absence', 'Demande d''absence (1 jour).', 'info', 'absence', a.id
from a cross join bench.actors r
where r.role in ('Manager n1', 'Manager n2', 'RH n2')
  and (select b.establishment_idx from bench.employees b where b.id = :emp) = any (r.establishment_idxs);
commit;
\endpipeline
