-- The back-office's own reads: the choices of its selects (filters and form fields) and the rows
-- a page shows beside a record, each a named function that src/backoffice/resources/ declares
-- (src/backoffice/calls.ts) and the start-up check compares with pg_proc. They run as the signed-in
-- account (security invoker, wfm_visitor): row-level security decides what each one lists, as it
-- did when these statements were written in the resources. Choices answer (value, label).

-- Establishments and divisions, by name.
create or replace function app_hidden.establishment_choices() returns table (value text, label text)
language sql stable rows 50 as $$
  select e.id::text, e.name from app_public.establishments e order by e.name;
$$;

create or replace function app_hidden.division_choices() returns table (value text, label text)
language sql stable rows 20 as $$
  select d.id::text, d.name from app_public.divisions d order by d.name;
$$;

-- The establishments of a list of ids, by name (a division's, an employee's secondary ones).
create or replace function app_hidden.establishments_named(p_ids int[]) returns table (id int, name text)
language sql stable rows 20 as $$
  select e.id, e.name from app_public.establishments e where e.id = any (p_ids) order by e.name;
$$;

-- Contract types « CODE — name », in creation order (a contract's type) or by code (an absence
-- type's contract types).
create or replace function app_hidden.contract_type_choices(p_by_code boolean default false) returns table (value text, label text)
language sql stable rows 10 as $$
  select t.id::text, t.code || ' — ' || t.name from app_public.contract_types t
  order by case when p_by_code then t.code end, t.id;
$$;

-- Accounts « username — display name », by username.
create or replace function app_hidden.account_choices() returns table (value text, label text)
language sql stable rows 200 as $$
  select a.id::text, a.username || ' — ' || coalesce(app_hidden.account_display_name(a.id), a.username)
  from app_public.accounts a order by lower(a.username);
$$;

-- Employees « Last First » who have rows in one of the lists of the back-office: 'absences',
-- 'counters' or 'shift_change_requests' (the filters of those lists offer no one else).
create or replace function app_hidden.employee_choices(p_having text) returns table (value text, label text)
language sql stable rows 200 as $$
  select e.id::text, e.last_name || ' ' || e.first_name from app_public.employees e
  where case p_having
          when 'absences' then e.id in (select a.employee_id from app_public.absences a)
          when 'counters' then e.id in (select c.employee_id from app_public.counters c)
          when 'shift_change_requests' then e.id in (select r.employee_id from app_public.shift_change_requests r)
        end
  order by e.last_name, e.first_name;
$$;

-- Absence categories: the roots (a category's parent), or every category « Root › Sub » in tree order.
create or replace function app_hidden.absence_category_choices(p_roots_only boolean default false) returns table (value text, label text)
language sql stable rows 50 as $$
  select c.id::text, case when p_roots_only then c.name else coalesce(p.name || ' › ', '') || c.name end
  from app_public.absence_categories c left join app_public.absence_categories p on p.id = c.parent_id
  where not p_roots_only or c.parent_id is null
  order by coalesce(p.position, c.position), coalesce(p.name, c.name), c.parent_id nulls first, c.position, c.name;
$$;

-- The sub-categories and the absence types of a category (its page's related rows).
create or replace function app_hidden.absence_category_children(p_id int) returns table (id int, code text, name text)
language sql stable rows 10 as $$
  select c.id, c.code, c.name from app_public.absence_categories c where c.parent_id = p_id order by c.position, c.name;
$$;

create or replace function app_hidden.absence_category_types(p_id int) returns table (id int, code text, name text, is_active boolean)
language sql stable rows 10 as $$
  select t.id, t.code, t.name, t.is_active from app_public.absence_types t where t.category_id = p_id order by t.position, t.code;
$$;

-- Absence types « CODE — name » by code: 'all' of them (inactive ones marked), the 'active' ones
-- and those of an absence ('filed': the filter of the absences), or the active ones and p_kept
-- (the type of the absence being corrected).
create or replace function app_hidden.absence_type_choices(p_which text, p_kept int default null) returns table (value text, label text)
language sql stable rows 50 as $$
  select t.id::text, t.code || ' — ' || t.name || case when p_which = 'all' and not t.is_active then ' (inactif)' else '' end
  from app_public.absence_types t
  where case p_which
          when 'all' then true
          when 'filed' then t.is_active or t.id in (select a.type_id from app_public.absences a)
          when 'kept' then t.is_active or t.id = p_kept
        end
  order by t.code;
$$;

-- Counter kinds « CODE — name », in their order.
create or replace function app_hidden.counter_kind_choices() returns table (value text, label text)
language sql stable rows 10 as $$
  select k.code, k.code || ' — ' || k.name from app_public.counter_kinds k order by k.position, k.code;
$$;
