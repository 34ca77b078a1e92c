/**
 * Day-change requests in the back-office: list and filters, detail, the HR correction
 * (slots before and after in the audit line, version + 1, corrected_by also on the API
 * record), a corrected request validated only with a reason (nothing written without), a
 * refusal, the employee notified as by the API; nothing offered on one's own request.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enrolAs, type BackofficeVisitor } from '../helpers/backoffice.js';
import { startTestEnv, type TestEnv } from '../helpers/server.js';

let env: TestEnv;
let rh1: BackofficeVisitor;
let alice: string;

beforeAll(async () => {
  env = await startTestEnv({ configOverrides: { backofficeLoginAttempts: 1000 } });
  rh1 = (await enrolAs(env, 'rh1')).visitor;
  alice = await env.login('alice');
});
afterAll(async () => {
  await env?.close();
});

async function file(token: string, date: string, slots?: object[]): Promise<number> {
  const res = await env.post('/api/shift-change-requests/', token, {
    date, reason: 'urgence', ...(slots ? { slots } : { is_remote: true }),
  });
  expect(res.status).toBe(201);
  return res.body.id as number;
}

async function notes(title: string) {
  const { rows } = await env.db.query<{ body: string; level: string }>(
    `select body, level from app_public.notifications where account_id = $1 and title = $2 order by id`, [env.ids.accounts!.alice, title]);
  return rows;
}

/** The CSRF token and the version of the form of `action` on the detail page of request `id`. */
async function formOf(id: number, action: string) {
  const page = await rh1.get(`/backoffice/shift-change-requests/${id}/`);
  const form = new RegExp(`<form method="post" action="/backoffice/shift-change-requests/${id}/${action}/"[\\s\\S]*?</form>`).exec(page.text)?.[0];
  if (!form) throw new Error(`no ${action} form on request ${id} (${page.status})`);
  return {
    csrf: /name="csrf_token" value="([^"]+)"/.exec(form)![1]!,
    version: /name="version" value="(\d+)"/.exec(form)![1]!,
    form,
  };
}

function post(id: number, action: string, fields: Record<string, string>) {
  return rh1.request('POST', `/backoffice/shift-change-requests/${id}/${action}/`, { form: fields });
}

describe('day-change requests in the back-office', () => {
  it('lists the perimeter with filters drawn from the route, and links to the detail', async () => {
    const id = await file(alice, '2026-11-19', [{ start_time: '10:00', end_time: '18:00', break_start_time: '12:00', break_end_time: '12:30' }]);
    const home = await rh1.get('/backoffice/');
    expect(home.text).toContain('href="/backoffice/shift-change-requests/"');
    const list = await rh1.get(`/backoffice/shift-change-requests/?status=pending&establishment=${env.ids.establishments!.E1}&from=2026-11-19&to=2026-11-19`);
    expect(list.status).toBe(200);
    expect(list.text).toContain(`href="/backoffice/shift-change-requests/${id}/"`);
    expect(list.text).toMatch(/<select id="f-establishment" name="establishment">/);
    const elsewhere = await rh1.get(`/backoffice/shift-change-requests/?establishment=${env.ids.establishments!.E2}&from=2026-11-19&to=2026-11-19`);
    expect(elsewhere.text).not.toContain(`/backoffice/shift-change-requests/${id}/`);
    const detail = await rh1.get(`/backoffice/shift-change-requests/${id}/`);
    expect(detail.text).toContain('Créneaux demandés');
    expect(detail.text).toContain('10:00–18:00');
    expect(detail.text).toContain('La journée telle que prévue aujourd’hui');
    expect(detail.text).toContain('Corriger la demande (RH)');
  });

  it('corrects, refuses a validation without reason (nothing written), then validates with one', async () => {
    const id = await file(alice, '2026-11-20', [{ start_time: '10:00', end_time: '18:00', break_start_time: '12:00', break_end_time: '12:30' }]);
    const correct = await formOf(id, 'correct');
    expect(correct.version).toBe('1');
    const corrected = await post(id, 'correct', {
      csrf_token: correct.csrf, version: correct.version,
      'slots.0.start_time': '08:30', 'slots.0.end_time': '16:30', 'slots.0.break_start_time': '12:00', 'slots.0.break_end_time': '12:30',
    });
    expect(corrected.status).toBe(303);
    expect(corrected.location).toBe(`/backoffice/shift-change-requests/${id}/?fait=correct`);
    const shown = await rh1.get(corrected.location!);
    expect(shown.text).toContain('La demande a été corrigée');
    expect(shown.text).toContain(`<a href="/file/journees/${id}">Voir dans l’application</a>`);
    expect(shown.text).toMatch(/<dt>Corrigée par<\/dt><dd>Claire Dubois, le/);
    // The API record carries corrected_by and the next version.
    const record = await env.get(`/api/shift-change-requests/${id}/`, await env.login('rh1'));
    expect([record.body.corrected_by, record.body.version, record.body.slots[0].start_time]).toEqual([env.ids.accounts!.rh1, 2, '08:30']);
    // The audit line Correction carries the slots before and after.
    const { rows } = await env.db.query(`select before -> 'slots' as b, after -> 'slots' as a, actor_username from app_private.audit_log
      where model = 'shift_change_request' and target_id = $1 and verb = 'Correction'`, [id]);
    expect(rows).toHaveLength(1);
    expect(JSON.stringify(rows[0].b)).toContain('10:00');
    expect(JSON.stringify(rows[0].a)).toContain('08:30');
    expect(rows[0].actor_username).toBe('rh1');
    expect(shown.text).toMatch(/Historique \(journal d’audit\)[\s\S]*Correction/);

    // Validation without reason: 400 under reason, nothing written.
    const validate = await formOf(id, 'validate');
    const refused = await post(id, 'validate', { csrf_token: validate.csrf, version: validate.version, reason: '' });
    expect(refused.status).toBe(400);
    expect(refused.text).toMatch(/id="a-validate-reason-erreur">[^<]*motif/i);
    expect((await env.db.query('select status, version from app_public.shift_change_requests where id = $1', [id])).rows[0])
      .toEqual({ status: 'pending', version: 2 });
    expect(await notes('Demande de modification validée')).toEqual([]);

    const accepted = await post(id, 'validate', { csrf_token: validate.csrf, version: validate.version, reason: 'Correction de l’horaire de prise de poste' });
    expect(accepted.status).toBe(303);
    const done = await rh1.get(accepted.location!);
    expect(done.text).toContain('La demande a été validée');
    expect(done.text).not.toContain('Valider la demande');
    const validated = await notes('Demande de modification validée');
    expect(validated).toHaveLength(1);
    expect(validated[0]!.level).toBe('info');
    expect(validated[0]!.body).toContain('Correction de l’horaire de prise de poste');
    // Two audit lines for the acceptance: the transition and the day modification.
    const lines = await env.db.query(`select model, verb from app_private.audit_log where transaction_id =
      (select transaction_id from app_private.audit_log where model = 'shift_change_request' and target_id = $1 and verb = 'Validation') order by id`, [id]);
    expect(lines.rows.map((l) => l.model)).toEqual(expect.arrayContaining(['shift_change_request', 'day_modification']));
  });

  it('validates with an adjusted day: a reason is required, the granted day is stored next to the request', async () => {
    const id = await file(alice, '2026-11-26', [{ start_time: '10:00', end_time: '18:00', break_start_time: '12:00', break_end_time: '12:30' }]);
    const validate = await formOf(id, 'validate');
    // The form offers the requested slots, with the post of each.
    expect(validate.form).toMatch(/name="adjusted_slots\.0\.start_time" value="10:00"/);
    expect(validate.form).toMatch(/name="adjusted_slots\.0\.post" value="\d+"/);
    const adjusted = { 'adjusted_slots.0.start_time': '10:00', 'adjusted_slots.0.end_time': '17:00', 'adjusted_slots.0.break_start_time': '12:00', 'adjusted_slots.0.break_end_time': '12:30' };
    const noReason = await post(id, 'validate', { csrf_token: validate.csrf, version: validate.version, ...adjusted });
    expect(noReason.status).toBe(400);
    expect(noReason.text).toContain('id="a-validate-reason-erreur"');
    // The submitted hours stay in the form.
    expect(noReason.text).toMatch(/name="adjusted_slots\.0\.end_time" value="17:00"/);
    const ok = await post(id, 'validate', { csrf_token: validate.csrf, version: validate.version, reason: 'Départ à 17 h', ...adjusted });
    expect(ok.status).toBe(303);
    const record = await env.get(`/api/shift-change-requests/${id}/`, await env.login('rh1'));
    expect([record.body.status, record.body.granted_slots[0].end_time, record.body.granted_gap_minutes]).toEqual(['validated', '17:00', -60]);
    expect((await rh1.get(ok.location!)).text).toContain('Journée accordée');
  });

  it('a stale form answers the conflict on the form', async () => {
    const id = await file(alice, '2026-11-23');
    const refuse = await formOf(id, 'refuse');
    const stale = await post(id, 'refuse', { csrf_token: refuse.csrf, version: '7', reason: 'Non' });
    expect(stale.status).toBe(409);
    expect(stale.text).toContain('role="alert"');
  });

  it('refuses with a reason, notifying the employee at error level', async () => {
    const id = await file(alice, '2026-11-24');
    const refuse = await formOf(id, 'refuse');
    const missing = await post(id, 'refuse', { csrf_token: refuse.csrf, version: refuse.version, reason: '   ' });
    expect(missing.status).toBe(400);
    expect(missing.text).toContain('id="a-refuse-reason-erreur"');
    const ok = await post(id, 'refuse', { csrf_token: refuse.csrf, version: refuse.version, reason: 'Effectif insuffisant ce jour-là' });
    expect(ok.status).toBe(303);
    const refused = await notes('Demande de modification refusée');
    expect(refused.at(-1)).toEqual({ level: 'error', body: expect.stringMatching(/Effectif insuffisant ce jour-là$/) });
  });

  it('offers nothing on one’s own request, and the function refuses a forged post', async () => {
    const own = await file(await env.login('rh1'), '2026-11-25');
    const detail = await rh1.get(`/backoffice/shift-change-requests/${own}/`);
    expect(detail.status).toBe(200);
    expect(detail.text).not.toContain('<form method="post" action="/backoffice/shift-change-requests/');
    const csrf = /name="csrf_token" value="([^"]+)"/.exec(detail.text)![1]!;
    const forged = await post(own, 'correct', { csrf_token: csrf, version: '1', 'slots.0.start_time': '09:00', 'slots.0.end_time': '17:00' });
    expect(forged.status).toBe(403);
    expect(forged.text).toContain('Vous ne pouvez pas corriger votre propre demande');
    expect((await rh1.get('/backoffice/shift-change-requests/999999/')).status).toBe(404);
  });
});
