-- Removing one member of a team from the back-office (issue 13, point 4): through the API's
-- PUT /api/teams/<id>/members/ (team_members_replace), the team's current and future members
-- as they are, without that one. Its rules apply: the right and perimeter on the team, the
-- member leaves yesterday, or their assignment is deleted when it has not started yet.

-- The current and future members of a team as the `members` input of team_members_replace,
-- each with the dates of the assignment that function matches (so that they stay as they are).
-- Read as the owner: the list only feeds team_members_replace, which decides whether the caller
-- may write this team (a list shortened by the caller's reading would remove members).
create or replace function app_private.team_members_input(p_team int) returns jsonb
language sql stable security definer set search_path = pg_catalog, public, pg_temp as $$
  select coalesce(jsonb_agg(jsonb_build_object('employee', m.employee_id, 'start_date', m.start_date, 'end_date', m.end_date)
                            order by m.employee_id), '[]'::jsonb)
  from (select distinct on (ta.employee_id) ta.employee_id, ta.start_date, ta.end_date
        from app_public.team_assignments ta
        where ta.team_id = p_team and (ta.end_date is null or ta.end_date >= app_hidden.today())
        order by ta.employee_id, ta.start_date nulls first) m;
$$;

-- p_employee: the team without that member (400 under `employee` if absent or no current or
-- future member; 404 / 403 as team_members_replace answers).
drop function if exists app_public.team_member_remove(int, jsonb) cascade;
drop function if exists app_public.team_member_remove(int, int) cascade;
create or replace function app_public.team_member_remove(p_team int, p_employee int) returns jsonb
language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp as $$
declare
  v_members jsonb;
begin
  perform app_hidden.team_for_write(p_team);
  v_members := app_private.team_members_input(p_team);
  if p_employee is null or not exists (select 1 from jsonb_array_elements(v_members) m where (m ->> 'employee')::int = p_employee) then
    perform app_hidden.invalid('employee', 'Ce salarié ne fait pas partie de cette équipe, ni aujourd’hui ni à venir.', 'WV520');
  end if;
  return app_public.team_members_replace(p_team, p_members => (
    select coalesce(jsonb_agg(m), '[]'::jsonb) from jsonb_array_elements(v_members) m
    where (m ->> 'employee')::int <> p_employee));
end;
$$;
comment on function app_public.team_member_remove(integer, integer) is
'SPEC Permissions rule 7 (back-office): removes one current or future member of a team through
team_members_replace and its rules (400 under employee when not a member).';

-- Whether the signed-in account writes this team: employee.change_team, and the team has an
-- establishment of that perimeter (SPEC Permissions rule 7; the writes check it again).
create or replace function app_hidden.team_writable(p_id int) returns boolean
language sql stable as $$
  select app_hidden.current_account_has('employee.change_team')
     and (app_hidden.perimeter_is_whole('employee.change_team')
          or exists (select 1 from app_public.team_establishments te where te.team_id = p_id
                     and te.establishment_id = any (app_hidden.perimeter_establishment_ids('employee.change_team'))));
$$;

-- The employees of the account's team-writing perimeter, « Last First », to add as members.
create or replace function app_hidden.team_member_choices() returns table (value text, label text)
language sql stable rows 200 as $$
  select e.id::text, e.last_name || ' ' || e.first_name from app_public.employees e
  where app_hidden.may(null, 'employee.change_team', e.id) order by e.last_name, e.first_name;
$$;
