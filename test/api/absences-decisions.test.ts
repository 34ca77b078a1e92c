/**
 * Decisions on absences over HTTP: validate (with correction and requalification), refuse,
 * request-cancellation and the cancellation decision; versions, 403/404/409, counters and
 * notifications.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEnv, type TestEnv } from '../helpers/server.js';
import { PDF, auditVerbs, balance, form, notifications, typeIds } from './absence-helpers.js';

let env: TestEnv;
let T: Record<string, number>;
let E: Record<string, number>;
const tokens: Record<string, string> = {};
const as = (user: string) => tokens[user]!;

beforeAll(async () => {
  env = await startTestEnv();
  T = await typeIds(env);
  E = env.ids.employees!;
  for (const user of ['alice', 'bruno', 'chloe', 'mgr1', 'mgr2', 'mgr3', 'da', 'rh1']) tokens[user] = await env.login(user);
});
afterAll(async () => {
  await env?.close();
});

async function file(employee: string, type: string, date_start: string, date_end?: string, extra: Record<string, unknown> = {}) {
  const res = await env.post('/api/absences/', as(employee), { employee: E[employee], type: T[type], date_start, date_end: date_end ?? date_start, ...extra });
  expect(res.status).toBe(201);
  return res.body as { id: number; version: number };
}

describe('POST /api/absences/<id>/validate/', () => {
  it('validates: status, version + 1, decided_by, the employee informed, an audit line', async () => {
    const absence = await file('alice', 'CP', '2026-11-23', '2026-11-24');
    const res = await env.post(`/api/absences/${absence.id}/validate/`, as('mgr1'), { version: 1 });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'validated', version: 2, decided_by: env.ids.accounts!.mgr1, decision_reason: null });
    expect(res.body.decided_at).toBe('2026-11-16T10:00:00+01:00');
    expect((await notifications(env, 'alice')).at(-1)).toBe(
      "Demande d'absence validée | info | Votre demande d’absence « Congés payés » du 23/11/2026 au 24/11/2026 a été validée.",
    );
    expect(await auditVerbs(env, absence.id)).toEqual(['Creation', 'Validation']);
    expect(await balance(env, 'alice', 'CP')).toBe('25.00/0.00/2.00');
  });

  it('a stale version: 409 (somebody else decided); current version on a decided request: 400 under status', async () => {
    const absence = await file('alice', 'FOR', '2026-11-30');
    const [a, b] = await Promise.all([
      env.post(`/api/absences/${absence.id}/validate/`, as('mgr1'), { version: 1 }),
      env.post(`/api/absences/${absence.id}/refuse/`, as('rh1'), { version: 1, reason: 'Non' }),
    ]);
    expect([a.status, b.status].sort()).toEqual([200, 409]);
    const loser = a.status === 409 ? a : b;
    expect(loser.body).toEqual({ detail: "Quelqu’un d’autre a déjà traité cette absence (version périmée) : rechargez la file et recommencez." });
    const again = await env.post(`/api/absences/${absence.id}/validate/`, as('mgr1'), { version: 2 });
    expect(again.status).toBe(400);
    expect(again.body).toEqual({ status: ['Seule une demande en attente peut être décidée.'] });
  });

  it('403 for a role that cannot decide (DA) and for one’s own request; 404 outside the perimeter; 400 without version', async () => {
    const absence = await file('alice', 'FOR', '2026-12-01');
    const da = await env.post(`/api/absences/${absence.id}/validate/`, as('da'), { version: 1 });
    expect(da.status).toBe(403);
    expect(da.body).toEqual({ detail: "Votre rôle ne permet pas de décider des demandes d’absence." });
    expect((await env.post(`/api/absences/${absence.id}/refuse/`, as('da'), { version: 1, reason: 'x' })).status).toBe(403);
    const own = await file('mgr1', 'FOR', '2026-12-01');
    const self = await env.post(`/api/absences/${own.id}/validate/`, as('mgr1'), { version: 1 });
    expect(self.status).toBe(403);
    expect(self.body).toEqual({ detail: "Vous ne pouvez pas décider de votre propre demande d’absence." });
    expect((await env.post(`/api/absences/${absence.id}/validate/`, as('mgr2'), { version: 1 })).status).toBe(404);
    const noVersion = await env.post(`/api/absences/${absence.id}/validate/`, as('mgr1'), {});
    expect(noVersion.status).toBe(400);
    expect(noVersion.body).toEqual({ version: ['Ce champ est obligatoire.'] });
  });

  it('a corrected end date needs a reason; with one, the correction is granted and counted once', async () => {
    const absence = await file('bruno', 'CP', '2026-12-07', '2026-12-11');
    expect(await balance(env, 'bruno', 'CP')).toBe('25.00/0.00/5.00');
    const noReason = await env.post(`/api/absences/${absence.id}/validate/`, as('mgr1'), { version: 1, date_end: '2026-12-08' });
    expect(noReason.status).toBe(400);
    expect(Object.keys(noReason.body)).toEqual(['reason']);
    const unchanged = await env.get(`/api/absences/${absence.id}/`, as('mgr1'));
    expect(unchanged.body).toMatchObject({ status: 'pending', version: 1 });
    const res = await env.post(`/api/absences/${absence.id}/validate/`, as('mgr1'), { version: 1, date_end: '2026-12-08', reason: 'Deux jours' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'validated', date_end: '2026-12-08', counted_quantity: '2.00', decision_reason: 'Deux jours' });
    expect(await balance(env, 'bruno', 'CP')).toBe('25.00/0.00/2.00');
    expect((await notifications(env, 'bruno')).at(-1)).toMatch(/validée avec modification : « Congés payés » du 07\/12\/2026 au 08\/12\/2026 accordé\(e\) \(2 jours\). Motif : Deux jours$/);
  });

  it('requalification reruns every rule: DLG_CSE without hours gives the two messages and stays pending', async () => {
    const absence = await file('alice', 'FOR', '2026-12-14', '2026-12-15');
    const res = await env.post(`/api/absences/${absence.id}/validate/`, as('mgr1'), { version: 1, type: T.DLG_CSE, reason: 'Délégation' });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      date_end: ['Une absence en heures porte sur une seule date : la date de fin doit être celle du début.'],
      start_time: ['Un motif en heures demande une heure de début et une heure de fin.'],
    });
    expect((await env.get(`/api/absences/${absence.id}/`, as('mgr1'))).body.status).toBe('pending');
    const ok = await env.post(`/api/absences/${absence.id}/validate/`, as('mgr1'), {
      version: 1, type: T.DLG_CSE, date_end: '2026-12-14', start_time: '14:00', end_time: '17:30', reason: 'Délégation CSE',
    });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ type_code: 'DLG_CSE', counted_quantity: '3.50', counted_unit: 'hour', start_time: '14:00', end_time: '17:30' });
    expect(await balance(env, 'alice', 'DLG_CSE')).toBe('20.00/0.00/3.50');
  });
});

describe('POST /api/absences/<id>/refuse/', () => {
  it('needs a non-empty reason; releases the reservation; the employee gets an error-level notice ending with the reason', async () => {
    const absence = await file('chloe', 'RTT', '2026-12-21', '2026-12-23');
    expect(await balance(env, 'chloe', 'RTT')).toBe('10.00/0.00/3.00');
    const missing = await env.post(`/api/absences/${absence.id}/refuse/`, as('mgr2'), { version: 1 });
    expect(missing.status).toBe(400);
    expect(missing.body).toEqual({ reason: ['Un refus doit être motivé : indiquez la raison.'] });
    const blank = await env.post(`/api/absences/${absence.id}/refuse/`, as('mgr2'), { version: 1, reason: '  ' });
    expect(blank.status).toBe(400);
    const res = await env.post(`/api/absences/${absence.id}/refuse/`, as('mgr2'), { version: 1, reason: 'Fermeture annuelle' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'refused', version: 2, decision_reason: 'Fermeture annuelle' });
    expect(await balance(env, 'chloe', 'RTT')).toBe('10.00/0.00/0.00');
    expect((await notifications(env, 'chloe')).at(-1)).toBe(
      "Demande d'absence refusée | error | Votre demande d’absence « Réduction du temps de travail » du 21/12/2026 au 23/12/2026 a été refusée. Motif : Fermeture annuelle",
    );
    expect(await auditVerbs(env, absence.id)).toEqual(['Creation', 'Refus']);
  });
});

describe('cancellation', () => {
  it('request-cancellation by the owner; refused with a reason; asked again and granted: documents deleted, counters recredited', async () => {
    const created = await env.request('POST', '/api/absences/', {
      token: as('alice'),
      form: form({ employee: E.alice!, type: T.CP!, date_start: '2026-12-28', date_end: '2026-12-29' }, [['add_documents', PDF, 'billet.pdf']]),
    });
    expect(created.status).toBe(201);
    const id = created.body.id as number;
    const storageKey = (await env.db.query('select storage_key from app_public.absence_documents where absence_id = $1', [id])).rows[0].storage_key as string;
    const path = `${env.config.storageDir}/${storageKey.slice(0, 2)}/${storageKey}`;
    const { access } = await import('node:fs/promises');
    await access(path);
    expect((await env.post(`/api/absences/${id}/validate/`, as('mgr1'), { version: 1 })).status).toBe(200);
    const before = await balance(env, 'alice', 'CP');

    expect((await env.post(`/api/absences/${id}/request-cancellation/`, as('bruno'), {})).status).toBe(404);
    const notOwner = await env.post(`/api/absences/${id}/request-cancellation/`, as('mgr1'), {});
    expect(notOwner.status).toBe(403);
    const asked = await env.post(`/api/absences/${id}/request-cancellation/`, as('alice'), { comment: 'Voyage annulé' });
    expect(asked.status).toBe(200);
    expect(asked.body).toMatchObject({ status: 'cancellation_requested', status_label: 'Annulation demandée', cancellation_comment: 'Voyage annulé', version: 3 });
    expect(asked.body.cancellation_requested_at).toBe('2026-11-16T10:00:00+01:00');
    expect(asked.body.cancellation_counter_effects).toEqual([{ counter: 'CP', year: 2026, column: 'planned', direction: 'credit', quantity: '2.00' }]);
    expect(await balance(env, 'alice', 'CP')).toBe(before);
    expect((await notifications(env, 'mgr1')).at(-1)).toBe(
      "Demande d'annulation d'absence | info | Alice Martin demande l’annulation de son absence « Congés payés » du 28/12/2026 au 29/12/2026. Commentaire : Voyage annulé",
    );
    const twice = await env.post(`/api/absences/${id}/request-cancellation/`, as('alice'), {});
    expect(twice.status).toBe(400);
    expect(Object.keys(twice.body)).toEqual(['status']);
    expect((await env.delete(`/api/absences/${id}/`, as('alice'))).status).toBe(400);

    const noReason = await env.post(`/api/absences/${id}/refuse/`, as('mgr1'), { version: 3 });
    expect(noReason.status).toBe(400);
    expect(Object.keys(noReason.body)).toEqual(['reason']);
    const refused = await env.post(`/api/absences/${id}/refuse/`, as('mgr1'), { version: 3, reason: 'Trop tard' });
    expect(refused.status).toBe(200);
    expect(refused.body).toMatchObject({ status: 'validated', version: 4, cancellation_decision_reason: 'Trop tard' });
    expect((await notifications(env, 'alice')).at(-1)).toMatch(/^Annulation d'absence refusée \| error \| .* Motif : Trop tard$/);

    expect((await env.post(`/api/absences/${id}/request-cancellation/`, as('alice'), {})).status).toBe(200);
    const corrected = await env.post(`/api/absences/${id}/validate/`, as('mgr1'), { version: 5, date_end: '2026-12-28', reason: 'x' });
    expect(corrected.status).toBe(400);
    expect(corrected.body).toEqual({ date_end: ['Une annulation ne se corrige pas : accordez-la ou refusez-la.'] });
    const granted = await env.post(`/api/absences/${id}/validate/`, as('mgr1'), { version: 5 });
    expect(granted.status).toBe(200);
    expect(granted.body).toMatchObject({ status: 'cancelled', documents: [], cancelled_by: env.ids.accounts!.mgr1 });
    expect(granted.body.cancellation_decided_at).toBe('2026-11-16T10:00:00+01:00');
    expect(await balance(env, 'alice', 'CP')).not.toBe(before);
    await expect(access(path)).rejects.toThrow();
    expect((await notifications(env, 'alice')).at(-1)).toBe(
      "Annulation d'absence acceptée | info | Votre demande d’annulation de l’absence « Congés payés » du 28/12/2026 au 29/12/2026 a été acceptée : l’absence est annulée.",
    );
    expect(await auditVerbs(env, id)).toEqual(['Creation', 'Validation', "Demande d'annulation", 'Refus', "Demande d'annulation", 'Annulation']);
    const read = await env.get(`/api/absences/${id}/`, as('alice'));
    expect(read.status).toBe(200);
    expect(read.body.status).toBe('cancelled');
  });

  it('a cancellation request on an absence older than 14 days: 400 under date_start; on a pending request: 400 under status', async () => {
    const old = await env.post('/api/absences/', as('mgr1'), { employee: E.alice, type: T.FOR, date_start: '2026-10-15' });
    expect(old.status).toBe(201);
    const res = await env.post(`/api/absences/${old.body.id}/request-cancellation/`, as('alice'), {});
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      date_start: ["L’annulation ne peut plus être demandée : l’absence a commencé avant le 02/11/2026 (14 jours au plus)."],
    });
    const pending = await file('alice', 'FOR', '2027-01-05');
    const notGranted = await env.post(`/api/absences/${pending.id}/request-cancellation/`, as('alice'), {});
    expect(notGranted.status).toBe(400);
    expect(Object.keys(notGranted.body)).toEqual(['status']);
  });
});
