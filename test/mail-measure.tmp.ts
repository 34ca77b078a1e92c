import pg from 'pg';
import { cloneTemplate, ensureTemplate } from './helpers/template.js';
import { databaseUrl } from './helpers/settings.js';
const template = await ensureTemplate();
const db = await cloneTemplate(template, 'wfm_mailmeasure');
const pool = new pg.Pool({ connectionString: databaseUrl(db.name), max: 1 });
try {
  const c = await pool.connect();
  await c.query("select set_config('app.frozen_now', '2026-11-16 10:00+01', false)");
  await c.query("select set_config('app.account_id', (select id::text from app_public.accounts where username='alice'), false), set_config('app.employee_id', (select employee_id::text from app_public.accounts where username='alice'), false)");
  const abs = (await c.query("select (app_public.absence_create(p_employee => (select employee_id from app_public.accounts where username='alice'), p_type => (select id from app_public.absence_types where code='FOR'), p_date_start => '2026-12-10', p_date_end => '2026-12-10') ->> 'id')::int as id")).rows[0].id;
  await c.query("select set_config('app.account_id', '', false), set_config('app.employee_id', '', false)");
  const mgr1 = (await c.query("select id from app_public.accounts where username='mgr1'")).rows[0].id;
  const n = (await c.query(`select id from app_public.notifications where account_id=${mgr1} order by id desc limit 1`)).rows[0].id;
  const parts: Record<string, string> = {
    kind: `app_private.notification_kind(${mgr1}, 'absence', ${abs}, 'Nouvelle demande d''absence')`,
    path: `app_private.notification_path(${mgr1}, 'absence', ${abs})`,
    mode: `app_private.notification_email_mode(${mgr1}, 'decide')`,
    line: `app_private.notification_email_line(${mgr1}, 'absence', ${abs})`,
    may: `app_hidden.may(${mgr1}, 'absences.view_absence_queue', (select employee_id from app_public.absences where id=${abs}), app_hidden.now())`,
    token: `app_private.notification_unsubscribe_token(${mgr1})`,
    name: `app_hidden.account_display_name(${mgr1})`,
    compose: `app_private.notification_email_compose(${mgr1}, 'S', 'I', '[{"title":"t","line":"l","path":"/file/absences/1"}]'::jsonb, array['decide'])`,
    email: `app_private.notification_email((select n from app_public.notifications n where id=${n}))`,
  };
  for (const [label, expr] of Object.entries(parts)) {
    const times: number[] = [];
    for (let r = 0; r < 3; r++) {
      const t = process.hrtime.bigint();
      await c.query(`select ${expr} from generate_series(1,300)`);
      times.push(Number(process.hrtime.bigint() - t) / 1e6 / 300);
    }
    times.sort((a, b) => a - b);
    console.log(label.padEnd(8), 'ms/call min', times[0]!.toFixed(3));
  }
  c.release();
} finally {
  await pool.end();
  await db.drop();
}
