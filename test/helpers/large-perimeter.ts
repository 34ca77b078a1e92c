/**
 * A 200-employee perimeter for the team month's tests (GET /api/planning/, its compact grid, the
 * team planning screen): 191 more employees in an establishment (with the fixture's 9, mgr1's
 * perimeter of E1 holds 200), each with a template from 1 January 2026 working Monday to Friday on
 * one of two posts (even ids on the first, odd on the second), optionally in a team.
 */
import type pg from 'pg';

export interface LargePerimeter {
  establishment: number;
  /** The posts of the even and of the odd employee ids. */
  evenPost: number;
  oddPost: number;
  /** The agents' last names: `<lastName> 001` to `<lastName> 191`. */
  lastName: string;
  team?: number;
}

/** Adds the agents and answers their ids. */
export async function addAgents(db: pg.Pool, perimeter: LargePerimeter): Promise<number[]> {
  const { rows } = await db.query<{ id: number }>(`
    with new_employees as (
      insert into app_public.employees (first_name, last_name, main_establishment_id)
      select 'Agent', $5 || ' ' || lpad(g::text, 3, '0'), $1 from generate_series(1, 191) g
      returning id
    ),
    templates as (
      insert into app_public.planning_templates (employee_id, valid_from)
      select id, '2026-01-01' from new_employees returning id, employee_id
    ),
    slots as (
      insert into app_public.planning_template_slots (template_id, weekday, post_id)
      select t.id, d, case when t.employee_id % 2 = 0 then $2::int else $3::int end
      from templates t cross join generate_series(1, 5) d returning template_id
    ),
    teams as (
      insert into app_public.team_assignments (employee_id, team_id)
      select id, $4 from new_employees where $4::int is not null returning id
    )
    select id from new_employees`,
    [perimeter.establishment, perimeter.evenPost, perimeter.oddPost, perimeter.team ?? null, perimeter.lastName]);
  return rows.map((row) => row.id);
}

/** A validated week of CP (7 to 11 December 2026) for every fifth of `ids` (id divisible by 5). */
export async function addLeaveWeek(db: pg.Pool, ids: number[]): Promise<void> {
  await db.query(`
    insert into app_public.absences (employee_id, type_id, date_start, date_end, status)
    select id, (select id from app_public.absence_types where code = 'CP'), '2026-12-07', '2026-12-11', 'validated'
    from unnest($1::int[]) id where id % 5 = 0`, [ids]);
}
