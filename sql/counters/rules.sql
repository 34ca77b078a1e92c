-- Counter rules (issue 27 point 1): per establishment and counter code, how much a year's
-- counter acquires, how (all at the opening, or month by month over the acquisition period),
-- prorated or not for a contract starting or ending during the period, and what carries over
-- to the next year (none, all, or up to a ceiling, until a date of the next year after which
-- what is left expires).
--
-- A rule without establishment is the association's default; a rule of an establishment
-- replaces it for the employees whose main workplace it is. No rule for a code (CET, JRS...):
-- its counters are opened, acquired and closed by hand, as before. Written by staff accounts
-- (the back-office), read by staff and by HR (employee.change_employee_record) of their
-- perimeter; every write is audited (model counter_rule).
--
-- Acquisition periods (docs/architecture.md, "The leave year"):
--   * opening: the annual amount is acquired when the counter of year Y opens, prorated on
--     the days of year Y covered by a contract;
--   * monthly: the counter of year Y is what was acquired during the twelve months of Y - 1
--     (paid leave: acquired one year, taken the next), one journal movement per month once
--     the month has ended, the month's part prorated on the days of the month covered by a
--     contract. The parts are the differences of the rounded cumulative amounts (25 a year:
--     2.08, 2.09, 2.08, ...), so twelve full months make exactly the annual amount.

insert into app_private.audit_models (model, label) values
  ('counter_rule', 'Règle de compteur'),
  ('counter_opening', 'Ouverture des compteurs d’une année')
on conflict do nothing;

insert into app_private.settings (key, value, description) values
  ('counters_opening_date', '"01/10"', 'Date (JJ/MM) à partir de laquelle les compteurs de l’année suivante s’ouvrent chaque jour (tâche open_next_year_counters)')
on conflict do nothing;

create table if not exists app_public.counter_rules (
  id int generated always as identity primary key,
  -- Null: the association's default for the code.
  establishment_id int references app_public.establishments on delete cascade,
  counter_code text not null references app_public.counter_kinds on delete restrict,
  -- The amount of a year (days or hours, the unit of the counter); null: no counter is opened.
  annual_amount numeric(6,2) check (annual_amount is null or (annual_amount >= 0 and annual_amount < 1000)),
  -- Day counters of an establishment counting in jours ouvrables (Monday to Saturday); null:
  -- annual_amount whatever the count base.
  annual_amount_ouvrables numeric(6,2) check (annual_amount_ouvrables is null or (annual_amount_ouvrables >= 0 and annual_amount_ouvrables < 1000)),
  acquisition text not null default 'opening' check (acquisition in ('opening', 'monthly')),
  -- Rounding of the cumulative amounts (monthly) and of a prorated amount.
  rounding text not null default 'hundredth' check (rounding in ('hundredth', 'half_up', 'whole_up')),
  prorate boolean not null default true,
  carry_over text not null default 'none' check (carry_over in ('none', 'all', 'ceiling')),
  carry_over_ceiling numeric(6,2) check (carry_over_ceiling is null or (carry_over_ceiling >= 0 and carry_over_ceiling < 1000)),
  -- DD/MM of the next year after which what was carried over and is left expires; null: it
  -- stays for the whole next year.
  carry_over_until text check (carry_over_until is null or carry_over_until ~ '^(0[1-9]|[12][0-9]|3[01])/(0[1-9]|1[0-2])$'),
  created_at timestamptz not null default app_hidden.now(),
  updated_at timestamptz not null default app_hidden.now(),
  constraint counter_rules_ceiling check ((carry_over = 'ceiling') = (carry_over_ceiling is not null))
);
create unique index if not exists counter_rules_key on app_public.counter_rules (coalesce(establishment_id, 0), counter_code);
create index if not exists counter_rules_establishment_idx on app_public.counter_rules (establishment_id);
create index if not exists counter_rules_code_idx on app_public.counter_rules (counter_code);

create or replace trigger _100_timestamps before insert or update on app_public.counter_rules
  for each row execute function app_hidden.tg__timestamps();
create or replace trigger _500_audit after insert or update on app_public.counter_rules
  for each row execute function app_private.tg__audit('counter_rule');
create or replace trigger _500_audit_delete before delete on app_public.counter_rules
  for each row execute function app_private.tg__audit('counter_rule');

alter table app_public.counter_rules enable row level security;
drop policy if exists select_staff_or_hr on app_public.counter_rules;
create policy select_staff_or_hr on app_public.counter_rules for select to wfm_visitor, wfm_api
  using ((select app_hidden.current_account_is_staff())
         or ((select app_hidden.current_account_has('employee.change_employee_record'))
             and (establishment_id is null
                  or app_hidden.in_scope(establishment_id, (select app_hidden.perimeter_establishment_ids('employee.change_employee_record'))))));
drop policy if exists insert_staff on app_public.counter_rules;
create policy insert_staff on app_public.counter_rules for insert to wfm_api
  with check ((select app_hidden.current_account_is_staff()));
drop policy if exists update_staff on app_public.counter_rules;
create policy update_staff on app_public.counter_rules for update to wfm_api
  using ((select app_hidden.current_account_is_staff())) with check ((select app_hidden.current_account_is_staff()));
drop policy if exists delete_staff on app_public.counter_rules;
create policy delete_staff on app_public.counter_rules for delete to wfm_api
  using ((select app_hidden.current_account_is_staff()));

-- Defaults, loaded with the reference data: paid leave 25 jours ouvrés (30 ouvrables) a
-- year acquired month by month, carried over whole until 31 May of the next year; quarterly
-- leave 9 days a year at the opening, not carried over; the others (seniority, RTT,
-- delegation hours) depend on the person: no amount (no counter opened), not carried over.
insert into app_public.counter_rules (establishment_id, counter_code, annual_amount, annual_amount_ouvrables, acquisition,
                                      rounding, prorate, carry_over, carry_over_ceiling, carry_over_until)
select null, x.code, x.amount, x.amount_ouvrables, x.acquisition, 'hundredth', true, x.carry_over, null, x.until
from (values
  ('CP', 25.00, 30.00, 'monthly', 'all', '31/05'),
  ('CT', 9.00, null, 'opening', 'none', null),
  ('ANC', null, null, 'opening', 'none', null),
  ('RTT', null, null, 'opening', 'none', null),
  ('DLG_CSE', null, null, 'opening', 'none', null),
  ('DLG_DS', null, null, 'opening', 'none', null),
  ('DLG_CS', null, null, 'opening', 'none', null)
) as x(code, amount, amount_ouvrables, acquisition, carry_over, until)
where exists (select 1 from app_public.counter_kinds k where k.code = x.code)
  and not exists (select 1 from app_public.counter_rules r where r.establishment_id is null and r.counter_code = x.code);

-- Rounding of an amount as a rule says: to the hundredth (half up), up to the half day, up
-- to the whole unit.
create or replace function app_hidden.counter_rule_round(p_value numeric, p_rounding text) returns numeric
language sql immutable as $$
  select case p_rounding
           when 'half_up' then ceil(p_value * 2) / 2
           when 'whole_up' then ceil(p_value)
           else round(p_value, 2)
         end::numeric(8,2);
$$;

-- The annual amount of a rule for an establishment's count base.
create or replace function app_hidden.counter_rule_amount(p_rule app_public.counter_rules, p_count_base text) returns numeric
language sql immutable as $$
  select case when p_count_base = 'ouvrables' and p_rule.annual_amount_ouvrables is not null
              then p_rule.annual_amount_ouvrables else p_rule.annual_amount end;
$$;

-- The date after which what was carried over from p_year expires (null: no date).
create or replace function app_hidden.counter_carry_over_deadline(p_until text, p_year int) returns date
language sql immutable as $$
  select case when p_until is null then null
              else make_date(p_year + 1, split_part(p_until, '/', 2)::int, split_part(p_until, '/', 1)::int) end;
$$;

-- The rule that applies to an establishment's employees for a code: the establishment's own,
-- else the association's default; none when neither exists. Owner (the jobs and the opening
-- read every rule, whoever asks).
create or replace function app_private.counter_rule_for(p_establishment int, p_code text) returns app_public.counter_rules
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select r.* from app_public.counter_rules r
  where r.counter_code = p_code and (r.establishment_id is null or r.establishment_id = p_establishment)
  order by r.establishment_id nulls last
  limit 1;
$$;

-- The part of a monthly rule for the k-th month (1 to 12) of the acquisition period: the
-- difference of the rounded cumulative amounts, times the share of the month covered by a
-- contract when the rule prorates (rounded to the hundredth).
create or replace function app_hidden.counter_month_part(p_amount numeric, p_rounding text, p_month int,
                                                         p_covered int, p_days int, p_prorate boolean)
returns numeric
language sql immutable as $$
  select case when p_covered <= 0 then 0
              else round((app_hidden.counter_rule_round(p_amount * p_month / 12, p_rounding)
                          - app_hidden.counter_rule_round(p_amount * (p_month - 1) / 12, p_rounding))
                         * case when p_prorate then p_covered::numeric / p_days else 1 end, 2)
         end::numeric(8,2);
$$;

-- The amount a rule acquiring at the opening gives for a year p_covered days of which (out
-- of p_days) are covered by a contract.
create or replace function app_hidden.counter_opening_part(p_amount numeric, p_rounding text, p_covered int, p_days int,
                                                           p_prorate boolean)
returns numeric
language sql immutable as $$
  select case when p_covered <= 0 then 0
              when not p_prorate or p_covered >= p_days then p_amount
              else app_hidden.counter_rule_round(p_amount * p_covered / p_days, p_rounding)
         end::numeric(8,2);
$$;

-- Days of [p_from, p_to] covered by a contract of the employee that is not temporary work
-- (an interim worker's leave is the agency's).
create or replace function app_private.contract_days(p_employee int, p_from date, p_to date) returns int
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select coalesce(sum(upper(r) - lower(r)), 0)::int
  from unnest((select range_agg(daterange(c.start_date, c.end_date, '[]'))
               from app_public.contracts c
               join app_public.contract_types t on t.id = c.contract_type_id
               where c.employee_id = p_employee and not t.is_temporary_work
                 and c.start_date <= p_to and (c.end_date is null or c.end_date >= p_from))
              * datemultirange(daterange(p_from, p_to, '[]'))) r;
$$;

-- The field rules of a counter rule, in the order of the form; '{}' when it passes.
create or replace function app_hidden.counter_rule_errors(p_id int, p_establishment int, p_counter_code text,
                                                          p_annual_amount numeric, p_annual_amount_ouvrables numeric,
                                                          p_acquisition text, p_rounding text, p_prorate boolean,
                                                          p_carry_over text, p_carry_over_ceiling numeric,
                                                          p_carry_over_until text)
returns jsonb
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_errors jsonb := '{}';
  v_kind app_public.counter_kinds;
  v_amount_message text := 'Une quantité entre 0 et 999,99, deux décimales au plus ; vide : aucun compteur ouvert.';
begin
  if p_establishment is not null and not exists (select 1 from app_public.establishments e where e.id = p_establishment) then
    v_errors := app_hidden.add_error(v_errors, 'establishment', 'Établissement inconnu.');
  end if;
  select * into v_kind from app_public.counter_kinds k where k.code = p_counter_code;
  if p_counter_code is null then
    v_errors := app_hidden.add_error(v_errors, 'counter_code', 'Le compteur est obligatoire.');
  elsif v_kind.code is null then
    v_errors := app_hidden.add_error(v_errors, 'counter_code', 'Compteur inconnu.');
  elsif not v_kind.is_consumable then
    v_errors := app_hidden.add_error(v_errors, 'counter_code', format('Le compteur %s n’est pas un compteur de congés ou d’heures consommable : il n’a pas de règle d’acquisition.', p_counter_code));
  elsif exists (select 1 from app_public.counter_rules r
                where coalesce(r.establishment_id, 0) = coalesce(p_establishment, 0) and r.counter_code = p_counter_code
                  and r.id is distinct from p_id) then
    v_errors := app_hidden.add_error(v_errors, 'counter_code', case when p_establishment is null
      then format('Le compteur %s a déjà une règle par défaut de l’association.', p_counter_code)
      else format('Le compteur %s a déjà une règle pour cet établissement.', p_counter_code) end);
  end if;
  if p_annual_amount is not null and (p_annual_amount < 0 or p_annual_amount >= 1000 or p_annual_amount <> round(p_annual_amount, 2)) then
    v_errors := app_hidden.add_error(v_errors, 'annual_amount', v_amount_message);
  end if;
  if p_annual_amount_ouvrables is not null then
    if p_annual_amount_ouvrables < 0 or p_annual_amount_ouvrables >= 1000 or p_annual_amount_ouvrables <> round(p_annual_amount_ouvrables, 2) then
      v_errors := app_hidden.add_error(v_errors, 'annual_amount_ouvrables', v_amount_message);
    elsif v_kind.unit = 'hour' then
      v_errors := app_hidden.add_error(v_errors, 'annual_amount_ouvrables', 'Un compteur en heures ne dépend pas de la base de décompte : laissez ce champ vide.');
    elsif p_annual_amount is null then
      v_errors := app_hidden.add_error(v_errors, 'annual_amount_ouvrables', 'Indiquez d’abord la quantité annuelle (en jours ouvrés).');
    end if;
  end if;
  if p_acquisition is null or p_acquisition not in ('opening', 'monthly') then
    v_errors := app_hidden.add_error(v_errors, 'acquisition', 'Acquisition à l’ouverture (opening) ou mois par mois (monthly).');
  elsif p_acquisition = 'monthly' and p_annual_amount is null then
    v_errors := app_hidden.add_error(v_errors, 'acquisition', 'Une acquisition mois par mois demande une quantité annuelle.');
  end if;
  if p_rounding is null or p_rounding not in ('hundredth', 'half_up', 'whole_up') then
    v_errors := app_hidden.add_error(v_errors, 'rounding', 'Arrondi au centième (hundredth), au demi supérieur (half_up) ou à l’unité supérieure (whole_up).');
  end if;
  if p_prorate is null then
    v_errors := app_hidden.add_error(v_errors, 'prorate', 'Ce champ est obligatoire.');
  end if;
  if p_carry_over is null or p_carry_over not in ('none', 'all', 'ceiling') then
    v_errors := app_hidden.add_error(v_errors, 'carry_over', 'Report : aucun (none), tout (all) ou jusqu’à un plafond (ceiling).');
  elsif p_carry_over = 'ceiling' and p_carry_over_ceiling is null then
    v_errors := app_hidden.add_error(v_errors, 'carry_over_ceiling', 'Le plafond du report est obligatoire pour un report plafonné.');
  elsif p_carry_over <> 'ceiling' and p_carry_over_ceiling is not null then
    v_errors := app_hidden.add_error(v_errors, 'carry_over_ceiling', 'Un plafond ne s’indique que pour un report plafonné : laissez ce champ vide.');
  end if;
  if p_carry_over_ceiling is not null and (p_carry_over_ceiling < 0 or p_carry_over_ceiling >= 1000 or p_carry_over_ceiling <> round(p_carry_over_ceiling, 2)) then
    v_errors := app_hidden.add_error(v_errors, 'carry_over_ceiling', 'Une quantité entre 0 et 999,99, deux décimales au plus.');
  end if;
  if p_carry_over_until is not null then
    if p_carry_over_until !~ '^(0[1-9]|[12][0-9]|3[01])/(0[1-9]|1[0-2])$'
       or split_part(p_carry_over_until, '/', 1)::int
          > extract(day from make_date(2001, split_part(p_carry_over_until, '/', 2)::int, 1) + interval '1 month - 1 day') then
      v_errors := app_hidden.add_error(v_errors, 'carry_over_until', 'Une date de l’année suivante au format JJ/MM, par exemple 31/05 (le 29/02 n’existe pas chaque année).');
    elsif p_carry_over is not distinct from 'none' then
      v_errors := app_hidden.add_error(v_errors, 'carry_over_until', 'Sans report, il n’y a pas de date limite : laissez ce champ vide.');
    end if;
  end if;
  return v_errors;
end;
$$;
comment on function app_hidden.counter_rule_errors(integer, integer, text, numeric, numeric, text, text, boolean, text, numeric, text) is
'Issue 27 point 1: the refusals of a counter rule by field (establishment, counter_code, annual_amount, annual_amount_ouvrables, acquisition, rounding, prorate, carry_over, carry_over_ceiling, carry_over_until), {} when it passes.';

create or replace function app_hidden.counter_rule_json(p_id int) returns jsonb
language sql stable as $$
  select jsonb_build_object(
    'id', r.id, 'establishment', r.establishment_id, 'establishment_name', e.name,
    'counter_code', r.counter_code, 'counter_name', k.name, 'unit', k.unit,
    'annual_amount', app_hidden.fmt_quantity(r.annual_amount),
    'annual_amount_ouvrables', app_hidden.fmt_quantity(r.annual_amount_ouvrables),
    'acquisition', r.acquisition, 'rounding', r.rounding, 'prorate', r.prorate,
    'carry_over', r.carry_over, 'carry_over_ceiling', app_hidden.fmt_quantity(r.carry_over_ceiling),
    'carry_over_until', r.carry_over_until,
    'monthly_amount', case when r.acquisition = 'monthly' then app_hidden.fmt_quantity(app_hidden.counter_rule_round(r.annual_amount / 12, r.rounding)) end,
    'monthly_amount_ouvrables', case when r.acquisition = 'monthly' and r.annual_amount_ouvrables is not null
      then app_hidden.fmt_quantity(app_hidden.counter_rule_round(r.annual_amount_ouvrables / 12, r.rounding)) end,
    'updated_at', r.updated_at)
  from app_public.counter_rules r
  join app_public.counter_kinds k on k.code = r.counter_code
  left join app_public.establishments e on e.id = r.establishment_id
  where r.id = p_id;
$$;

create or replace function app_public.counter_rules_search(p_establishment int default null, p_counter_code text default null,
                                                           p_page int default 1, p_page_size int default 50)
returns jsonb
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select app_hidden.list_answer(l.total,
    (select jsonb_agg(app_hidden.counter_rule_json(u.id) order by u.n) from unnest(l.ids) with ordinality u(id, n)))
  from app_hidden.list_page(array(
    select r.id
    from app_public.counter_rules r
    join app_public.counter_kinds k on k.code = r.counter_code
    left join app_public.establishments e on e.id = r.establishment_id
    where (p_establishment is null or r.establishment_id = p_establishment)
      and (p_counter_code is null or r.counter_code = upper(p_counter_code))
    order by r.establishment_id is not null, lower(e.name), k.position, r.counter_code, r.id),
    p_page, p_page_size) l;
$$;
comment on function app_public.counter_rules_search(integer, text, integer, integer) is
'Issue 27 point 1, back-office: one page of the counter rules the caller reads (staff, or HR of the establishment; the association''s defaults first), filtered by establishment and counter code.';

create or replace function app_public.counter_rule_get(p_id int) returns jsonb
language plpgsql stable security definer set search_path = pg_catalog, public, pg_temp as $$
begin
  if not exists (select 1 from app_public.counter_rules r where r.id = p_id) then
    perform app_hidden.not_found('Règle de compteur introuvable.', 'WN303');
  end if;
  return app_hidden.counter_rule_json(p_id)
         || jsonb_build_object('may_write', app_hidden.current_account_is_staff());
end;
$$;
comment on function app_public.counter_rule_get(integer) is
'Issue 27 point 1, back-office: one counter rule the caller reads (404 otherwise), with may_write for a staff account.';

-- Creates (p_id null) or rewrites a rule: staff only, every field error at once, audited.
create or replace function app_public.counter_rule_save(p_id int, p_establishment int, p_counter_code text,
                                                        p_annual_amount numeric, p_annual_amount_ouvrables numeric,
                                                        p_acquisition text, p_rounding text, p_prorate boolean,
                                                        p_carry_over text, p_carry_over_ceiling numeric,
                                                        p_carry_over_until text)
returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_code text := upper(nullif(btrim(p_counter_code), ''));
  v_until text := nullif(btrim(p_carry_over_until), '');
  v_errors jsonb;
  v_id int := p_id;
begin
  if not app_hidden.current_account_is_staff() then
    perform app_hidden.forbidden('Les règles des compteurs s’écrivent par les comptes du personnel d’administration uniquement.', 'WF302');
  end if;
  if p_id is not null then
    perform 1 from app_public.counter_rules r where r.id = p_id for update;
    if not found then
      perform app_hidden.not_found('Règle de compteur introuvable.', 'WN303');
    end if;
  end if;
  v_errors := app_hidden.counter_rule_errors(p_id, p_establishment, v_code, p_annual_amount, p_annual_amount_ouvrables,
                                             p_acquisition, p_rounding, p_prorate, p_carry_over, p_carry_over_ceiling, v_until);
  perform app_hidden.invalid_fields(v_errors, 'WV314') where v_errors <> '{}'::jsonb;
  if p_id is null then
    insert into app_public.counter_rules (establishment_id, counter_code, annual_amount, annual_amount_ouvrables, acquisition,
                                          rounding, prorate, carry_over, carry_over_ceiling, carry_over_until)
    values (p_establishment, v_code, p_annual_amount, p_annual_amount_ouvrables, p_acquisition,
            p_rounding, p_prorate, p_carry_over, p_carry_over_ceiling, v_until)
    returning id into v_id;
  else
    update app_public.counter_rules r
    set establishment_id = p_establishment, counter_code = v_code, annual_amount = p_annual_amount,
        annual_amount_ouvrables = p_annual_amount_ouvrables, acquisition = p_acquisition, rounding = p_rounding,
        prorate = p_prorate, carry_over = p_carry_over, carry_over_ceiling = p_carry_over_ceiling, carry_over_until = v_until
    where r.id = p_id
      and (r.establishment_id, r.counter_code, r.annual_amount, r.annual_amount_ouvrables, r.acquisition, r.rounding, r.prorate,
           r.carry_over, r.carry_over_ceiling, r.carry_over_until)
          is distinct from (p_establishment, v_code, p_annual_amount, p_annual_amount_ouvrables, p_acquisition, p_rounding, p_prorate,
                            p_carry_over, p_carry_over_ceiling, v_until);
  end if;
  return app_public.counter_rule_get(v_id);
end;
$$;
comment on function app_public.counter_rule_save(integer, integer, text, numeric, numeric, text, text, boolean, text, numeric, text) is
'Issue 27 point 1, back-office: a staff account creates (p_id null) or rewrites the rule of a counter code for an establishment (null: the association''s default); every field error at once; audited.';

-- Deletes an establishment's rule (its employees follow the association's default again).
-- The defaults are edited, not deleted: a code without a default is managed by hand.
create or replace function app_public.counter_rule_delete(p_id int) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_rule app_public.counter_rules;
begin
  if not app_hidden.current_account_is_staff() then
    perform app_hidden.forbidden('Les règles des compteurs s’écrivent par les comptes du personnel d’administration uniquement.', 'WF302');
  end if;
  select * into v_rule from app_public.counter_rules r where r.id = p_id for update;
  if not found then
    perform app_hidden.not_found('Règle de compteur introuvable.', 'WN303');
  end if;
  if v_rule.establishment_id is null then
    perform app_hidden.invalid('non_field_errors', 'Une règle par défaut de l’association ne se supprime pas : modifiez-la (une quantité vide n’ouvre aucun compteur).', 'WV314');
  end if;
  delete from app_public.counter_rules r where r.id = p_id;
  return null;
end;
$$;
comment on function app_public.counter_rule_delete(integer) is
'Issue 27 point 1, back-office: a staff account deletes an establishment''s counter rule (its employees follow the association''s default again); a default is refused.';

-- The choices of the back-office's counter rule forms, as the caller reads them: 'establishments'
-- (value: id) or 'counters' (consumable codes).
create or replace function app_public.counter_rule_choices(p_what text) returns table (value text, label text)
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select x.value, x.label from (
    select e.id::text as value, e.name as label, lower(e.name) as sort_key, 0 as position
    from app_public.establishments e where p_what = 'establishments'
    union all
    select k.code, k.code || ' — ' || k.name, k.code, k.position
    from app_public.counter_kinds k where p_what = 'counters' and k.is_consumable
  ) x
  order by x.position, x.sort_key;
$$;
comment on function app_public.counter_rule_choices(text) is
'Issue 27 points 1 and 2, back-office: the choices of the counter rule and opening forms, establishments (id and name) or consumable counter codes.';
