/**
 * GET /api/absence-types/ (SPEC "Absence type", CONTRACT sections 3 and 4): the active
 * reasons, read-only, in the list envelope, each with its counter codes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEnv, type TestEnv } from '../helpers/server.js';

let env: TestEnv;
let token: string;
beforeAll(async () => {
  env = await startTestEnv();
  token = await env.login('alice');
});
afterAll(async () => {
  await env?.close();
});

const KEYS = ['id', 'code', 'name', 'category', 'subcategory', 'unit', 'paid', 'splittable', 'annual_cap', 'cap_overrun',
  'contract_types', 'half_day_allowed', 'documents_expected', 'validation_required', 'annualisation_effect', 'counter_codes'].sort();

async function all(): Promise<any[]> {
  const res = await env.get('/api/absence-types/?page_size=200', token);
  expect(res.status).toBe(200);
  return res.body.results;
}

function byCode(types: any[]): Record<string, any> {
  return Object.fromEntries(types.map((t) => [t.code, t]));
}

describe('GET /api/absence-types/', () => {
  it('answers the list envelope with the 52 reasons of the reference, for any account', async () => {
    for (const username of ['alice', 'emma', 'paie', 'staff', 'root']) {
      const res = await env.get('/api/absence-types/', await env.login(username));
      expect(res.status, username).toBe(200);
      expect(Object.keys(res.body)).toEqual(['count', 'next', 'previous', 'results']);
      expect(res.body.count).toBe(52);
      // Default page size 50.
      expect(res.body.results).toHaveLength(50);
      expect(res.body.previous).toBeNull();
      expect(new URL(res.body.next).searchParams.get('page')).toBe('2');
    }
  });

  it('pages with page and page_size (at most 200)', async () => {
    const first = await env.get('/api/absence-types/?page_size=20', token);
    expect(first.body.count).toBe(52);
    expect(first.body.results).toHaveLength(20);
    expect(first.body.previous).toBeNull();
    const next = new URL(first.body.next);
    expect(next.pathname).toBe('/api/absence-types/');
    expect(next.searchParams.get('page')).toBe('2');
    expect(next.searchParams.get('page_size')).toBe('20');

    const last = await env.get('/api/absence-types/?page_size=20&page=3', token);
    expect(last.body.results).toHaveLength(12);
    expect(last.body.next).toBeNull();
    expect(new URL(last.body.previous).searchParams.get('page')).toBe('2');

    // The pages cover every reason once.
    const second = await env.get(next.pathname + next.search, token);
    const codes = [...first.body.results, ...second.body.results, ...last.body.results].map((t: any) => t.code);
    expect(new Set(codes).size).toBe(52);

    const whole = await env.get('/api/absence-types/?page_size=200', token);
    expect(whole.body.results).toHaveLength(52);
    expect(whole.body.next).toBeNull();
    // Above 200 the page size is capped, not refused.
    const capped = await env.get('/api/absence-types/?page_size=1000', token);
    expect(capped.status).toBe(200);
    expect(capped.body.results).toHaveLength(52);
  });

  it('refuses bad paging parameters: 400 under the parameter, 404 beyond the last page', async () => {
    for (const [query, key] of [['page=0', 'page'], ['page=abc', 'page'], ['page_size=0', 'page_size'], ['page_size=-5', 'page_size']] as const) {
      const res = await env.get(`/api/absence-types/?${query}`, token);
      expect(res.status, query).toBe(400);
      expect(Object.keys(res.body), query).toEqual([key]);
    }
    const beyond = await env.get('/api/absence-types/?page=3', token);
    expect(beyond.status).toBe(404);
    expect(Object.keys(beyond.body)).toEqual(['detail']);
  });

  it('each type carries exactly the CONTRACT keys, with their types', async () => {
    for (const type of await all()) {
      expect(Object.keys(type).sort(), type.code).toEqual(KEYS);
      expect(Number.isInteger(type.id)).toBe(true);
      expect(['day', 'hour']).toContain(type.unit);
      expect(['refuse', 'warn']).toContain(type.cap_overrun);
      expect(['none', 'neutralise', 'impute']).toContain(type.annualisation_effect);
      for (const key of ['paid', 'splittable', 'half_day_allowed', 'documents_expected', 'validation_required']) {
        expect(typeof type[key], `${type.code}.${key}`).toBe('boolean');
      }
      expect(type.annual_cap === null || /^\d+\.\d{2}$/.test(type.annual_cap), type.code).toBe(true);
      expect(Array.isArray(type.contract_types)).toBe(true);
      expect(Array.isArray(type.counter_codes)).toBe(true);
      expect(typeof type.category).toBe('string');
    }
  });

  it('carries the counters each reason consumes and the reference properties', async () => {
    const types = byCode(await all());
    expect(types.CP.counter_codes).toEqual(['CP']);
    expect(types.DLG_SEC.counter_codes).toEqual(['DLG_CSE']);
    expect(types.DLG_TRE.counter_codes).toEqual(['DLG_CSE']);
    expect(types.DLG_DS.counter_codes).toEqual(['DLG_DS']);
    expect(types.CNS_SAL.counter_codes).toEqual(['DLG_CS']);
    expect(types.MAL.counter_codes).toEqual([]);
    expect(types['R+'].counter_codes).toEqual([]);
    expect(types['R+'].annualisation_effect).toBe('impute');
    for (const code of ['CP', 'CT', 'ANC', 'JRS', 'CET', 'R+']) expect(types[code].half_day_allowed, code).toBe(false);
    expect(types.MAL.half_day_allowed).toBe(true);
    expect(types.DON.unit).toBe('hour');
    expect(types.SYN_ELU).toMatchObject({ annual_cap: '10.00', cap_overrun: 'refuse', paid: true });
    // 15 counter associations in the reference.
    expect(Object.values(types).reduce((n: number, t: any) => n + t.counter_codes.length, 0)).toBe(15);
  });

  it('returns active types only: a deactivated type disappears from the list', async () => {
    await env.db.query("update app_public.absence_types set is_active = false where code = 'SAB'");
    try {
      const res = await env.get('/api/absence-types/?page_size=200', token);
      expect(res.body.count).toBe(51);
      expect(res.body.results.map((t: any) => t.code)).not.toContain('SAB');
    } finally {
      await env.db.query("update app_public.absence_types set is_active = true where code = 'SAB'");
    }
    expect((await env.get('/api/absence-types/', token)).body.count).toBe(52);
  });

  it('a deactivated counter association (no active counter depends on it) is no longer listed in counter_codes', async () => {
    await env.db.query("update app_public.counter_associations set is_active = false where absence_type_id = (select id from app_public.absence_types where code = 'FRAC')");
    try {
      expect(byCode(await all()).FRAC.counter_codes).toEqual([]);
    } finally {
      await env.db.query("update app_public.counter_associations set is_active = true where absence_type_id = (select id from app_public.absence_types where code = 'FRAC')");
    }
  });

  it('is read-only: POST, PUT, PATCH and DELETE answer 405 with Allow', async () => {
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE']) {
      const res = await env.request(method, '/api/absence-types/', { token, body: { code: 'NEW', name: 'Nouveau' } });
      expect(res.status, method).toBe(405);
      expect(Object.keys(res.body)).toEqual(['detail']);
      const allow = (res.headers.get('allow') ?? '').split(',').map((m) => m.trim()).sort();
      expect(allow, method).toEqual(['GET', 'HEAD', 'OPTIONS']);
    }
    const { rows } = await env.db.query("select count(*)::int as n from app_public.absence_types where code = 'NEW'");
    expect(rows[0].n).toBe(0);
  });

  it('answers 401 without authentication', async () => {
    const res = await env.get('/api/absence-types/');
    expect(res.status).toBe(401);
    expect(Object.keys(res.body)).toEqual(['detail']);
  });
});

describe('GET /api/absence-types/requestable/ (issue 29 point 2)', () => {
  const list = async (username: string, query = '') => env.get(`/api/absence-types/requestable/?page_size=200${query}`, await env.login(username));

  it('offers an employee the reasons demandables par le salarié, each with its availability and why', async () => {
    const res = await list('alice');
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(['count', 'next', 'previous', 'results']);
    expect(res.body.count).toBe(40);
    const reasons = byCode(res.body.results);
    expect(Object.keys(reasons.CP).sort()).toEqual([...KEYS, 'available', 'unavailable_reason'].sort());
    expect(reasons.ABS).toBeUndefined();
    expect(reasons.SYN_CON).toBeUndefined();
    expect([reasons.CP.available, reasons.CP.unavailable_reason]).toEqual([true, null]);
    expect(reasons.DLG_DS.available).toBe(false);
    expect(reasons.DLG_DS.unavailable_reason).toBe(
      'Aucun compteur DLG_DS ouvert pour 2026 : le motif « Délégation délégué syndical » ne peut pas être posé sur cette année.');
    // The date chooses the year of the counters.
    const next = byCode((await list('alice', '&date=2027-03-01')).body.results);
    expect([next.CP.available, next.CT.available]).toEqual([true, false]);
  });

  it('leaves out the reasons of other contracts; a manager declaring keeps the full list', async () => {
    const emma = byCode((await list('emma')).body.results);
    expect(emma.CET).toBeUndefined();
    expect(emma.CP.available).toBe(false);
    const declared = await list('mgr1', `&employee=${env.ids.employees!.emma}`);
    expect(declared.status).toBe(200);
    expect(declared.body.count).toBe(52);
    const reasons = byCode(declared.body.results);
    expect(reasons.ABS.available).toBe(true);
    expect(reasons.CET.unavailable_reason).toBe('Réservé aux contrats CDI ; le contrat en vigueur le 16/11/2026 est : Intérim.');
  });

  it('refuses under employee a colleague, somebody outside the perimeter, or no record at all; a bad date under date', async () => {
    const colleague = await list('alice', `&employee=${env.ids.employees!.bruno}`);
    expect([colleague.status, colleague.body]).toEqual([400, { employee: ['Vous ne pouvez déposer une absence que pour vous-même.'] }]);
    const outside = await list('mgr1', `&employee=${env.ids.employees!.david}`);
    expect([outside.status, Object.keys(outside.body)]).toEqual([400, ['employee']]);
    const noRecord = await list('salarie_noemp');
    expect([noRecord.status, Object.keys(noRecord.body)]).toEqual([400, ['employee']]);
    const badDate = await list('alice', '&date=2026-13-01');
    expect([badDate.status, Object.keys(badDate.body)]).toEqual([400, ['date']]);
    expect((await env.post('/api/absence-types/requestable/', token, {})).status).toBe(405);
  });
});
