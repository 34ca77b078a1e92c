-- The leave year (issue 27 points 2 to 4): opening the next year's counters from the counter
-- rules (sql/counters/rules.sql), the monthly acquisition, the carry-over and the expiry at
-- the year's end, and the notice of a balance about to expire.
--
-- Every amount is a movement of the journal (app_private.counter_movements) with its reason
-- in `comment` and its key (counter, kind, period): a job that runs late, twice or after a
-- crash writes each acquisition, carry-over and expiry once (the unique index
-- counter_movements_period_key; inserts say `on conflict do nothing`).
--
-- Locks: the opening and the monthly acquisition only add rows (new counters, credits) and
-- lock nothing that filing a request waits for (a request locks the counters it debits and
-- its employee's advisory key; a credit cannot overdraw, so it needs no lock). The year's end
-- and the expiry debit a counter: they lock that counter (for update, as every debit does)
-- for the rest of their transaction.

insert into app_private.job_schedules (job, local_time, isodow, description) values
  ('open_next_year_counters', '01:17', null, 'Ouverture des compteurs de l’année suivante à partir de la date réglée (1er octobre par défaut), chaque jour à 1 h 17'),
  ('acquire_monthly_counters', '01:27', null, 'Acquisition mensuelle des compteurs (mois terminés, une fois chacun), chaque jour à 1 h 27'),
  ('close_counter_years', '01:37', null, 'Report et expiration des soldes en fin d’année et à la date limite du report, avis un mois avant, chaque jour à 1 h 37')
on conflict do nothing;

-- Notices already sent of a balance about to expire: one per counter and expiry date.
create table if not exists app_private.counter_expiry_notices (
  counter_id int not null references app_public.counters on delete cascade,
  expires_on date not null,
  notification_id bigint,
  sent_at timestamptz not null default app_hidden.now(),
  primary key (counter_id, expires_on)
);
alter table app_private.counter_expiry_notices enable row level security;

create or replace function app_hidden.month_name_fr(p_month int) returns text
language sql immutable as $$
  select (array['janvier', 'février', 'mars', 'avril', 'mai', 'juin', 'juillet', 'août', 'septembre', 'octobre',
                'novembre', 'décembre'])[p_month];
$$;

-- The acquisitions of a counter of year p_year under a rule, due on p_today, for an employee
-- of an establishment counting in p_count_base: at the opening, one movement for the year
-- (prorated on the days of the year covered by a contract); month by month, one per month of
-- p_year - 1 that ended before p_today (prorated on the days of the month covered by a
-- contract). Rows of quantity 0 (no contract that month) are returned, not written.
create or replace function app_private.counter_acquisitions_due(p_employee int, p_year int, p_rule app_public.counter_rules,
                                                                p_count_base text, p_today date)
returns table (period date, quantity numeric, comment text)
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_amount numeric := app_hidden.counter_rule_amount(p_rule, p_count_base);
  v_unit text := (select k.unit from app_public.counter_kinds k where k.code = p_rule.counter_code);
  v_from date;
  v_to date;
  v_covered int;
  v_days int;
begin
  if v_amount is null or p_rule.id is null then
    return;
  end if;
  if p_rule.acquisition = 'opening' then
    v_from := make_date(p_year, 1, 1);
    v_to := make_date(p_year, 12, 31);
    v_days := v_to - v_from + 1;
    v_covered := app_private.contract_days(p_employee, v_from, v_to);
    period := v_from;
    quantity := app_hidden.counter_opening_part(v_amount, p_rule.rounding, v_covered, v_days, p_rule.prorate);
    comment := format('Acquisition %s à l’ouverture : %s%s', p_year, app_hidden.quantity_fr(quantity, v_unit),
                      case when p_rule.prorate and v_covered < v_days
                           then format(' (prorata : %s jours de contrat sur %s)', v_covered, v_days) else '' end);
    return next;
    return;
  end if;
  for k in 1..12 loop
    v_from := make_date(p_year - 1, k, 1);
    v_to := (v_from + interval '1 month')::date - 1;
    exit when v_to >= p_today;
    v_days := v_to - v_from + 1;
    v_covered := app_private.contract_days(p_employee, v_from, v_to);
    period := v_from;
    quantity := app_hidden.counter_month_part(v_amount, p_rule.rounding, k, v_covered, v_days, p_rule.prorate);
    comment := format('Acquisition de %s %s pour %s : %s%s', app_hidden.month_name_fr(k), p_year - 1, p_year,
                      app_hidden.quantity_fr(quantity, v_unit),
                      case when p_rule.prorate and v_covered < v_days
                           then format(' (prorata : %s jours de contrat sur %s)', v_covered, v_days) else '' end);
    return next;
  end loop;
end;
$$;

-- The plan of an opening of year p_year for the employees whose main workplace is
-- p_establishment (null: every employee): one row per counter to open (already_open false) or
-- already open, and one row per employee skipped, with the reason (code null). The amount
-- acquired at the opening is computed only for a counter to open, and only with p_amounts (the
-- writing reads its acquisitions again, movement by movement).
drop function if exists app_private.counter_opening_plan(int, int, date) cascade;
create or replace function app_private.counter_opening_plan(p_year int, p_establishment int, p_today date,
                                                            p_amounts boolean default true)
returns table (employee_id int, employee_name text, establishment_id int, code text, acquisition text,
               amount numeric, already_open boolean, skip_reason text)
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  with people as (
    select e.id, e.last_name || ' ' || e.first_name as name, e.main_establishment_id, est.count_base,
           exists (select 1 from app_public.contracts c
                   where c.employee_id = e.id and c.start_date <= make_date(p_year, 12, 31)
                     and (c.end_date is null or c.end_date >= make_date(p_year, 1, 1))) as any_contract,
           exists (select 1 from app_public.contracts c join app_public.contract_types t on t.id = c.contract_type_id
                   where c.employee_id = e.id and not t.is_temporary_work and c.start_date <= make_date(p_year, 12, 31)
                     and (c.end_date is null or c.end_date >= make_date(p_year, 1, 1))) as own_contract
    from app_public.employees e
    left join app_public.establishments est on est.id = e.main_establishment_id
    where p_establishment is null or e.main_establishment_id = p_establishment
  ),
  codes as (
    -- Consumable codes that an active reason consumes (a counter of another code could not be active).
    select k.code, k.position from app_public.counter_kinds k
    where k.is_consumable and app_private.counter_code_has_reason(k.code)
  ),
  eligible as (
    select p.* from people p where p.main_establishment_id is not null and p.own_contract
  ),
  lines as (
    select o.id, o.name, o.main_establishment_id, o.code, o.position, (o.rule).acquisition,
           case when p_amounts and not o.already_open
                then (select coalesce(sum(d.quantity), 0)
                      from app_private.counter_acquisitions_due(o.id, p_year, o.rule, o.count_base, p_today) d) end as amount,
           o.already_open
    from (select p.id, p.name, p.main_establishment_id, p.count_base, c.code, c.position, rr.rule,
                 exists (select 1 from app_public.counters x where x.employee_id = p.id and x.code = c.code and x.year = p_year)
                   as already_open
          from eligible p
          cross join codes c
          cross join lateral (select app_private.counter_rule_for(p.main_establishment_id, c.code) as rule) rr
          where app_hidden.counter_rule_amount(rr.rule, p.count_base) is not null
          offset 0) o
  )
  select l.id, l.name, l.main_establishment_id, l.code, l.acquisition, l.amount, l.already_open, null::text
  from lines l
  union all
  select p.id, p.name, p.main_establishment_id, null, null, null, false,
         case when p.main_establishment_id is null
                then 'Sans établissement principal : aucune règle d’établissement ne s’applique.'
              when not p.any_contract then format('Aucun contrat en cours en %s.', p_year)
              when not p.own_contract then 'Contrat d’intérim seulement : ses congés relèvent de l’entreprise de travail temporaire.'
              else 'Aucune règle de son établissement n’ouvre de compteur.' end
  from people p
  where not exists (select 1 from lines l where l.id = p.id)
$$;

-- The answer of a preview and of an opening: how many counters (by code), how many already
-- open, the employees skipped and why.
create or replace function app_private.counter_opening_summary(p_year int, p_establishment int, p_today date)
returns jsonb
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  with plan as materialized (select * from app_private.counter_opening_plan(p_year, p_establishment, p_today))
  select jsonb_build_object(
    'year', p_year,
    'establishment', p_establishment,
    'establishment_name', (select e.name from app_public.establishments e where e.id = p_establishment),
    'employees', (select count(distinct p.employee_id) from plan p where p.skip_reason is null and not p.already_open),
    'counters', (select count(*) from plan p where p.skip_reason is null and not p.already_open),
    'already_open', (select count(*) from plan p where p.skip_reason is null and p.already_open),
    'by_code', coalesce((select jsonb_object_agg(x.code, jsonb_build_object('counters', x.n, 'acquired', app_hidden.fmt_quantity(x.total)))
                         from (select p.code, count(*) as n, sum(p.amount) as total from plan p
                               where p.skip_reason is null and not p.already_open group by p.code) x), '{}'::jsonb),
    'skipped', coalesce((select jsonb_agg(jsonb_build_object('employee', p.employee_id, 'employee_name', p.employee_name,
                                                             'reason', p.skip_reason) order by p.employee_name, p.employee_id)
                         from plan p where p.skip_reason is not null), '[]'::jsonb));
$$;

/*
 * Opens the counters of p_year from the rules for the employees of p_establishment (null:
 * the whole association) with a contract running into the year: each counter with its
 * acquisitions due (one journal movement each, with its reason). Idempotent: an open
 * counter is left alone, a second run writes nothing. Returns the summary of what it did
 * (counters: how many it opened). Adds rows only (no lock a filing waits for).
 */
create or replace function app_private.counters_open_year(p_year int, p_establishment int, p_today date)
returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_summary jsonb := app_private.counter_opening_summary(p_year, p_establishment, p_today);
  v_opened int;
  v_movements int;
begin
  with plan as (
    select * from app_private.counter_opening_plan(p_year, p_establishment, p_today, false) p
    where p.skip_reason is null and not p.already_open
  ), ins as (
    insert into app_public.counters (employee_id, code, year, acquisition)
    select p.employee_id, p.code, p_year, p.acquisition from plan p
    order by p.employee_id, p.code
    on conflict (employee_id, code, year) do nothing
    returning id, employee_id, code
  ), mov as (
    insert into app_private.counter_movements (counter_id, bucket, quantity, kind, actor_account_id, comment, period)
    select ins.id, 'acquired', d.quantity, 'acquisition', app_hidden.current_account_id(), d.comment, d.period
    from ins
    join app_public.employees e on e.id = ins.employee_id
    join app_public.establishments est on est.id = e.main_establishment_id
    cross join lateral app_private.counter_acquisitions_due(ins.employee_id, p_year,
                                                            app_private.counter_rule_for(est.id, ins.code), est.count_base, p_today) d
    where d.quantity <> 0
    order by ins.id, d.period
    on conflict do nothing
    returning 1
  )
  select (select count(*) from ins), (select count(*) from mov) into v_opened, v_movements;

  v_summary := v_summary || jsonb_build_object('opened', v_opened, 'movements', v_movements);
  perform app_private.write_audit('Creation', 'counter_opening', p_year, null,
    jsonb_build_object('year', p_year, 'establishment', p_establishment, 'opened', v_opened, 'movements', v_movements,
                       'skipped', jsonb_array_length(v_summary -> 'skipped')))
  where v_opened > 0;
  return v_summary;
end;
$$;

-- The checks of a back-office opening: a staff account, a year this one or the next, an
-- establishment that exists (null: the whole association).
create or replace function app_hidden.counter_opening_check(p_year int, p_establishment int) returns void
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_errors jsonb := '{}';
  v_this int := extract(year from app_hidden.today())::int;
begin
  if not app_hidden.current_account_is_staff() then
    perform app_hidden.forbidden('Les compteurs s’ouvrent par les comptes du personnel d’administration uniquement.', 'WF302');
  end if;
  if p_year is null then
    v_errors := app_hidden.add_error(v_errors, 'year', 'L’année est obligatoire.');
  elsif p_year not between v_this and v_this + 1
        or p_year not between app_hidden.first_accepted_year() and app_hidden.last_accepted_year() then
    v_errors := app_hidden.add_error(v_errors, 'year', format('Seuls les compteurs de %s ou de %s s’ouvrent.', v_this, v_this + 1));
  end if;
  if p_establishment is not null and not exists (select 1 from app_public.establishments e where e.id = p_establishment) then
    v_errors := app_hidden.add_error(v_errors, 'establishment', 'Établissement inconnu.');
  end if;
  perform app_hidden.invalid_fields(v_errors, 'WV315') where v_errors <> '{}'::jsonb;
end;
$$;

create or replace function app_public.counter_opening_preview(p_year int, p_establishment int default null) returns jsonb
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  perform app_hidden.counter_opening_check(p_year, p_establishment);
  return app_private.counter_opening_summary(p_year, p_establishment, app_hidden.today());
end;
$$;
comment on function app_public.counter_opening_preview(integer, integer) is
'Issue 27 point 2, back-office: what opening the counters of a year (this one or the next) would write for an establishment or the whole association (null), without writing: counters by code, already open, employees skipped and why; staff only.';

create or replace function app_public.counter_opening_run(p_year int, p_establishment int default null) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  perform app_hidden.counter_opening_check(p_year, p_establishment);
  return app_private.counters_open_year(p_year, p_establishment, app_hidden.today());
end;
$$;
comment on function app_public.counter_opening_run(integer, integer) is
'Issue 27 point 2, back-office: opens the counters of a year (this one or the next) from the counter rules for an establishment or the whole association (null), each acquisition a journal movement; idempotent; audited; staff only.';

-- Scheduled job open_next_year_counters: from the date of the setting counters_opening_date
-- (DD/MM, default 01/10) to the end of the year, opens next year's counters of the whole
-- association (each day: the employees hired since are opened too). Returns the number of
-- counters opened.
create or replace function app_private.open_next_year_counters(p_today date) returns int
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_setting text := app_hidden.setting('counters_opening_date') #>> '{}';
  v_year int := extract(year from p_today)::int;
  v_from date;
begin
  if v_setting is null or v_setting !~ '^(0[1-9]|[12][0-9]|3[01])/(0[1-9]|1[0-2])$' then
    raise exception 'open_next_year_counters: the setting counters_opening_date must be DD/MM (got %)', v_setting;
  end if;
  v_from := make_date(v_year, split_part(v_setting, '/', 2)::int, split_part(v_setting, '/', 1)::int);
  if p_today < v_from or v_year + 1 > app_hidden.last_accepted_year() then
    return 0;
  end if;
  return (app_private.counters_open_year(v_year + 1, null, p_today) ->> 'opened')::int;
end;
$$;

-- Scheduled job acquire_monthly_counters: each counter acquiring month by month receives the
-- part of every month of its acquisition period that has ended, once (key: counter, kind
-- acquisition, month), whenever the job runs. Returns the number of movements written.
create or replace function app_private.acquire_monthly_counters(p_today date) returns int
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_year int := extract(year from p_today)::int;
  v_count int;
begin
  insert into app_private.counter_movements (counter_id, bucket, quantity, kind, actor_account_id, comment, period)
  select c.id, 'acquired', d.quantity, 'acquisition', null, d.comment, d.period
  from app_public.counters c
  join app_public.employees e on e.id = c.employee_id
  join app_public.establishments est on est.id = e.main_establishment_id
  cross join lateral (select app_private.counter_rule_for(est.id, c.code) as rule) rr
  cross join lateral app_private.counter_acquisitions_due(c.employee_id, c.year, rr.rule, est.count_base, p_today) d
  where c.acquisition = 'monthly' and c.is_active and c.year in (v_year, v_year + 1) and (rr.rule).acquisition = 'monthly'
    and d.quantity <> 0
    and not exists (select 1 from app_private.counter_movements m
                    where m.counter_id = c.id and m.kind = 'acquisition' and m.period = d.period)
  order by c.id, d.period
  on conflict do nothing;
  get diagnostics v_count = row_count;
  return v_count;
end;
$$;

-- What a rule carries over of a remaining balance.
create or replace function app_hidden.counter_carried(p_remaining numeric, p_carry_over text, p_ceiling numeric) returns numeric
language sql immutable as $$
  select case when p_remaining <= 0 then 0
              when p_carry_over = 'all' then p_remaining
              when p_carry_over = 'ceiling' then least(p_remaining, p_ceiling)
              else 0 end::numeric(8,2);
$$;

-- The year's end of p_year (from 1 January of p_year + 1): for each counter of p_year whose
-- code has a rule, the remaining balance moves to p_year + 1 within the rule (a compensating
-- carry_over movement in the old year, a carry_over acquisition in the new one) and what
-- exceeds it expires (an expiry movement in the old year). A counter whose employee has no
-- counter of the next year keeps its balance (reported, tried again the next day). Once per
-- counter. Returns the number of counters closed.
create or replace function app_private.counters_close_year(p_year int, p_today date) returns int
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_new_year date := make_date(p_year + 1, 1, 1);
  v_count int := 0;
  r record;
  v_remaining numeric;
  v_carried numeric;
  v_next int;
  v_unit text;
  v_deadline date;
begin
  if p_today < v_new_year then
    return 0;
  end if;
  for r in
    select c.id, c.employee_id, c.code, k.unit, k.name, rule.carry_over, rule.carry_over_ceiling, rule.carry_over_until
    from app_public.counters c
    join app_public.counter_kinds k on k.code = c.code
    join app_public.employees e on e.id = c.employee_id
    cross join lateral (select (app_private.counter_rule_for(e.main_establishment_id, c.code)).*) rule
    where c.year = p_year and rule.id is not null
      and not exists (select 1 from app_private.counter_movements m
                      where m.counter_id = c.id and m.kind in ('carry_over', 'expiry') and m.period = v_new_year)
    order by c.id
  loop
    perform 1 from app_public.counters c where c.id = r.id for update;
    v_remaining := app_private.counter_remaining(r.id);
    continue when v_remaining <= 0;
    v_carried := app_hidden.counter_carried(v_remaining, r.carry_over, r.carry_over_ceiling);
    select c.id into v_next from app_public.counters c
    where c.employee_id = r.employee_id and c.code = r.code and c.year = p_year + 1 and c.is_active;
    if v_carried > 0 and v_next is null then
      raise notice 'counters_close_year: counter % keeps its balance: no open % counter in %', r.id, r.code, p_year + 1;
      continue;
    end if;
    v_deadline := app_hidden.counter_carry_over_deadline(r.carry_over_until, p_year);
    insert into app_private.counter_movements (counter_id, bucket, quantity, kind, comment, period)
    select x.counter_id, 'acquired', x.quantity, x.kind, x.comment, v_new_year
    from (values
      (1, r.id, -v_carried, 'carry_over', format('Report vers %s : %s', p_year + 1, app_hidden.quantity_fr(v_carried, r.unit))),
      (2, r.id, v_carried - v_remaining, 'expiry',
       format('Expiration en fin d’année %s : %s %s', p_year, app_hidden.quantity_fr(v_remaining - v_carried, r.unit),
              case r.carry_over when 'none' then '(sans report)' else format('(au-delà du plafond de report de %s)',
                app_hidden.quantity_fr(r.carry_over_ceiling, r.unit)) end)),
      (3, v_next, v_carried, 'carry_over',
       format('Report du solde %s : %s%s', p_year, app_hidden.quantity_fr(v_carried, r.unit),
              case when v_deadline is null then '' else format(', à prendre au plus tard le %s', app_hidden.fr_date(v_deadline)) end))
    ) as x(n, counter_id, quantity, kind, comment)
    where x.quantity <> 0
    order by x.n
    on conflict do nothing;
    v_count := v_count + 1;
  end loop;
  return v_count;
end;
$$;

-- After the carry-over date (from the day after it): what was carried over into a counter and
-- is neither taken nor reserved expires, as one expiry movement (taken first draws on what was
-- carried over). Once per counter and date. Returns the number of counters expired.
create or replace function app_private.counters_expire_carry_over(p_today date) returns int
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_count int := 0;
  r record;
  v_expired numeric;
begin
  for r in
    select c.id, c.year, k.unit, cm.quantity as carried, d.deadline
    from app_public.counters c
    join app_public.counter_kinds k on k.code = c.code
    join app_public.employees e on e.id = c.employee_id
    join app_private.counter_movements cm
      on cm.counter_id = c.id and cm.kind = 'carry_over' and cm.period = make_date(c.year, 1, 1) and cm.quantity > 0
    cross join lateral (select (app_private.counter_rule_for(e.main_establishment_id, c.code)).*) rule
    cross join lateral (select app_hidden.counter_carry_over_deadline(rule.carry_over_until, c.year - 1) as deadline) d
    where c.year in (extract(year from p_today)::int, extract(year from p_today)::int - 1)
      and d.deadline < p_today
      and not exists (select 1 from app_private.counter_movements m
                      where m.counter_id = c.id and m.kind = 'expiry' and m.period = d.deadline)
    order by c.id
  loop
    perform 1 from app_public.counters c where c.id = r.id for update;
    v_expired := least(greatest(r.carried - (select coalesce(sum(m.quantity), 0) from app_private.counter_movements m
                                            where m.counter_id = r.id and m.bucket = 'taken'), 0),
                       app_private.counter_remaining(r.id));
    continue when v_expired <= 0;
    insert into app_private.counter_movements (counter_id, bucket, quantity, kind, comment, period)
    values (r.id, 'acquired', -v_expired, 'expiry',
            format('Expiration du report de %s non pris au %s : %s', r.year - 1, app_hidden.fr_date(r.deadline),
                   app_hidden.quantity_fr(v_expired, r.unit)), r.deadline)
    on conflict do nothing;
    v_count := v_count + 1;
  end loop;
  return v_count;
end;
$$;

-- One month before a balance expires (the year's end beyond what carries over, or the
-- carry-over date), the employee is notified once per counter and date. Returns the number of
-- notifications.
create or replace function app_private.counter_expiry_notify(p_today date) returns int
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_year int := extract(year from p_today)::int;
  v_count int := 0;
  r record;
  v_account int;
  v_notification bigint;
begin
  for r in
    with year_end as (
      -- This year's counters: what exceeds the carry-over expires on 31 December.
      select c.id, c.employee_id, c.code, k.name, k.unit, c.year, make_date(c.year, 12, 31) as expires_on,
             b.remaining - app_hidden.counter_carried(b.remaining, rule.carry_over, rule.carry_over_ceiling) as amount
      from app_public.counters c
      join app_public.counter_kinds k on k.code = c.code
      join app_public.employees e on e.id = c.employee_id
      cross join lateral (select (app_private.counter_rule_for(e.main_establishment_id, c.code)).*) rule
      cross join lateral (select app_private.counter_remaining(c.id) as remaining) b
      where c.year = v_year and c.is_active and rule.id is not null
        and p_today >= (make_date(v_year, 12, 31) - interval '1 month')::date
    ), carried as (
      -- Counters holding a carry-over: what is neither taken nor reserved expires after its date.
      select c.id, c.employee_id, c.code, k.name, k.unit, c.year - 1 as year, d.deadline as expires_on,
             least(cm.quantity - (select coalesce(sum(m.quantity), 0) from app_private.counter_movements m
                                  where m.counter_id = c.id and m.bucket in ('taken', 'planned')),
                   app_private.counter_remaining(c.id)) as amount
      from app_public.counters c
      join app_public.counter_kinds k on k.code = c.code
      join app_public.employees e on e.id = c.employee_id
      join app_private.counter_movements cm
        on cm.counter_id = c.id and cm.kind = 'carry_over' and cm.period = make_date(c.year, 1, 1) and cm.quantity > 0
      cross join lateral (select (app_private.counter_rule_for(e.main_establishment_id, c.code)).*) rule
      cross join lateral (select app_hidden.counter_carry_over_deadline(rule.carry_over_until, c.year - 1) as deadline) d
      where c.year = v_year and c.is_active and d.deadline is not null
        and p_today between (d.deadline - interval '1 month')::date and d.deadline
    )
    select x.* from (select * from year_end union all select * from carried) x
    where x.amount > 0
      and not exists (select 1 from app_private.counter_expiry_notices n where n.counter_id = x.id and n.expires_on = x.expires_on)
    order by x.id
  loop
    v_account := app_private.employee_account_id(r.employee_id);
    v_notification := null;
    if v_account is not null then
      v_notification := app_private.notify(v_account, 'Congés bientôt perdus',
        format('%s de %s (%s) de %s expire(nt) le %s : posez-les avant cette date.',
               app_hidden.quantity_fr(r.amount, r.unit), r.code, r.name, r.year, app_hidden.fr_date(r.expires_on)),
        'warning', 'counter', r.id);
      v_count := v_count + 1;
    end if;
    insert into app_private.counter_expiry_notices (counter_id, expires_on, notification_id)
    values (r.id, r.expires_on, v_notification)
    on conflict do nothing;
  end loop;
  return v_count;
end;
$$;

-- Scheduled job close_counter_years: last year's end (once), the expiry of carry-overs past
-- their date, the notices of balances about to expire. Returns the number of counters closed
-- or expired plus the notifications sent.
create or replace function app_private.close_counter_years(p_today date) returns int
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  return app_private.counters_close_year(extract(year from p_today)::int - 1, p_today)
       + app_private.counters_expire_carry_over(p_today)
       + app_private.counter_expiry_notify(p_today);
end;
$$;

-- What « Mes compteurs » shows of a counter's year (issue 27 point 5), added to each counter of
-- GET /api/counters/: how it acquires; what a monthly counter will still acquire over the rest of
-- its acquisition period (the months not ended yet, under the contracts known today); what was
-- carried over into it, until when, and how much of it would expire then if not taken; and,
-- while its year is not closed, what of the remaining balance the rule carries over on
-- 31 December and what expires then.
create or replace function app_private.counter_year_facts(p_counter_id int, p_today date) returns jsonb
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_counter app_public.counters;
  v_rule app_public.counter_rules;
  v_base text;
  v_amount numeric;
  v_to_come numeric;
  v_carried numeric;
  v_deadline date;
  v_remaining numeric := app_private.counter_remaining(p_counter_id);
  v_used numeric;
  v_from date;
  v_to date;
  v_year_end jsonb;
begin
  select * into v_counter from app_public.counters c where c.id = p_counter_id;
  select est.count_base into v_base
  from app_public.employees e join app_public.establishments est on est.id = e.main_establishment_id
  where e.id = v_counter.employee_id;
  v_rule := app_private.counter_rule_for((select e.main_establishment_id from app_public.employees e
                                          where e.id = v_counter.employee_id), v_counter.code);
  v_base := coalesce(v_base, 'ouvrables');

  if v_counter.acquisition = 'monthly' and v_rule.acquisition = 'monthly' then
    v_amount := app_hidden.counter_rule_amount(v_rule, v_base);
    v_to_come := 0;
    for k in 1..12 loop
      v_from := make_date(v_counter.year - 1, k, 1);
      v_to := (v_from + interval '1 month')::date - 1;
      continue when v_to < p_today
        or exists (select 1 from app_private.counter_movements m
                   where m.counter_id = p_counter_id and m.kind = 'acquisition' and m.period = v_from);
      v_to_come := v_to_come + app_hidden.counter_month_part(v_amount, v_rule.rounding, k,
        app_private.contract_days(v_counter.employee_id, v_from, v_to), v_to - v_from + 1, v_rule.prorate);
    end loop;
  end if;

  select sum(m.quantity) into v_carried from app_private.counter_movements m
  where m.counter_id = p_counter_id and m.kind = 'carry_over' and m.quantity > 0;
  if v_carried > 0 then
    v_deadline := app_hidden.counter_carry_over_deadline(v_rule.carry_over_until, v_counter.year - 1);
    if exists (select 1 from app_private.counter_movements m
               where m.counter_id = p_counter_id and m.kind = 'expiry' and m.period = v_deadline) then
      v_deadline := null;
    end if;
    select coalesce(sum(m.quantity), 0) into v_used from app_private.counter_movements m
    where m.counter_id = p_counter_id and m.bucket in ('taken', 'planned');
  end if;

  if v_rule.id is not null
     and not exists (select 1 from app_private.counter_movements m
                     where m.counter_id = p_counter_id and m.kind in ('carry_over', 'expiry')
                       and m.period = make_date(v_counter.year + 1, 1, 1)) then
    v_year_end := jsonb_build_object(
      'carries_over', app_hidden.fmt_quantity(app_hidden.counter_carried(v_remaining, v_rule.carry_over, v_rule.carry_over_ceiling)),
      'expires', app_hidden.fmt_quantity(greatest(v_remaining, 0)
                   - app_hidden.counter_carried(v_remaining, v_rule.carry_over, v_rule.carry_over_ceiling)),
      'carry_over_until', case when v_rule.carry_over <> 'none'
                               then to_jsonb(app_hidden.counter_carry_over_deadline(v_rule.carry_over_until, v_counter.year)) end);
  end if;

  return jsonb_build_object(
    'acquisition', v_counter.acquisition,
    'to_come', app_hidden.fmt_quantity(coalesce(v_to_come, 0)),
    'carried_over', app_hidden.fmt_quantity(coalesce(v_carried, 0)),
    'carry_over_expires_on', to_jsonb(v_deadline),
    'carry_over_expiring', case when v_deadline is not null
      then app_hidden.fmt_quantity(least(greatest(v_carried - v_used, 0), greatest(v_remaining, 0))) end,
    'year_end', v_year_end);
end;
$$;
