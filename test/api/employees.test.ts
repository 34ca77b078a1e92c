import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEnv, type TestEnv } from '../helpers/server.js';

let env: TestEnv;
let E: Record<string, number>;
let EST: Record<string, number>;
let T: Record<string, number>;
let ACC: Record<string, number>;

beforeAll(async () => {
  env = await startTestEnv();
  E = env.ids.employees!;
  EST = env.ids.establishments!;
  T = env.ids.teams!;
  ACC = env.ids.accounts!;
});
afterAll(async () => {
  await env?.close();
});

async function count(sql: string, params: unknown[] = []): Promise<number> {
  const { rows } = await env.db.query<{ n: number }>(`select (${sql})::int as n`, params);
  return rows[0]!.n;
}

async function grant(account: string, permission: string): Promise<void> {
  await env.db.query('insert into app_public.account_permissions (account_id, permission_code) values ($1, $2) on conflict do nothing', [
    ACC[account],
    permission,
  ]);
}

async function revoke(account: string, permission: string): Promise<void> {
  await env.db.query('delete from app_public.account_permissions where account_id = $1 and permission_code = $2', [ACC[account], permission]);
}

describe('directory reads', () => {
  it('encadrement reads the whole directory; scope=perimeter restricts it to the queue perimeter', async () => {
    const token = await env.login('mgr1');
    const all = await env.get('/api/employees/?page_size=200', token);
    expect(all.status).toBe(200);
    expect(all.body.count).toBe(15);
    expect(Object.keys(all.body)).toEqual(['count', 'next', 'previous', 'results']);

    const scoped = await env.get('/api/employees/?scope=perimeter&page_size=200', token);
    expect(scoped.status).toBe(200);
    const ids = scoped.body.results.map((e: { id: number }) => e.id);
    // E1 (main or secondary workplace) and chloe through team T2 that spans E1.
    expect(ids).toEqual(expect.arrayContaining([E.alice, E.bruno, E.emma, E.mgr1, E.chloe]));
    expect(ids).not.toContain(E.david);
    expect(ids).not.toContain(E.gaelle);
    expect(ids).not.toContain(E.farid);
    expect(scoped.body.count).toBe(9);
  });

  it('an unknown scope value is refused under the parameter', async () => {
    const res = await env.get('/api/employees/?scope=everything', await env.login('mgr1'));
    expect(res.status).toBe(400);
    expect(res.body.scope).toBeDefined();
  });

  it('filters by search, establishment and team', async () => {
    const token = await env.login('admin');
    const search = await env.get('/api/employees/?search=mart', token);
    expect(search.body.results.map((e: { id: number }) => e.id)).toEqual([E.alice]);
    const byEst = await env.get(`/api/employees/?establishment=${EST.E3}`, token);
    expect(byEst.body.results.map((e: { id: number }) => e.id).sort()).toEqual([E.david, E.mgr3].sort());
    const byTeam = await env.get(`/api/employees/?team=${T.T2}`, token);
    expect(byTeam.body.results.map((e: { id: number }) => e.id).sort()).toEqual([E.bruno, E.chloe].sort());
  });

  it('an employee reads only their own record', async () => {
    const token = await env.login('alice');
    const list = await env.get('/api/employees/', token);
    expect(list.body.count).toBe(1);
    expect(list.body.results[0].id).toBe(E.alice);
    expect((await env.get(`/api/employees/${E.alice}/`, token)).status).toBe(200);
    const other = await env.get(`/api/employees/${E.bruno}/`, token);
    expect(other.status).toBe(404);
    expect(other.body.detail).toBeTruthy();
  });

  it('Service Paie reads the people of its payroll perimeter', async () => {
    const res = await env.get('/api/employees/?page_size=200', await env.login('paie'));
    expect(res.body.count).toBe(15);
  });

  it('a record carries contracts, teams, workplaces and account', async () => {
    const res = await env.get(`/api/employees/${E.bruno}/`, await env.login('rh1'));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      id: E.bruno,
      first_name: 'Bruno',
      last_name: 'Lambert',
      main_establishment: EST.E1,
      secondary_establishments: [EST.E2],
      account: { username: 'bruno', is_active: true },
    });
    expect(res.body.teams).toEqual([expect.objectContaining({ team: T.T2, team_name: 'Équipe de nuit' })]);
    expect(res.body.contracts).toEqual([
      expect.objectContaining({ type_code: 'CDD', start_date: '2026-01-05', end_date: '2027-01-04', weekly_hours: '35.00' }),
    ]);
  });

  it('an unknown record or a malformed id answers 404', async () => {
    const token = await env.login('admin');
    expect((await env.get('/api/employees/999999/', token)).status).toBe(404);
    expect((await env.get('/api/employees/abc/', token)).status).toBe(404);
    expect((await env.get('/api/employees/', null)).status).toBe(401);
  });
});

describe('social security number', () => {
  it('is present for readers holding the permission on that employee, absent (not null) otherwise', async () => {
    const admin = await env.get(`/api/employees/${E.alice}/`, await env.login('admin'));
    expect(admin.body.social_security_number).toBe('2850175123456');

    const mgr = await env.get(`/api/employees/${E.alice}/`, await env.login('mgr1'));
    expect(mgr.status).toBe(200);
    expect('social_security_number' in mgr.body).toBe(false);

    // rh2 holds the permission on E2 only.
    const rh2 = await env.login('rh2');
    expect((await env.get(`/api/employees/${E.chloe}/`, rh2)).body.social_security_number).toBe('2910713123455');
    expect('social_security_number' in (await env.get(`/api/employees/${E.alice}/`, rh2)).body).toBe(false);

    const list = await env.get('/api/employees/?page_size=200', await env.login('mgr1'));
    expect(list.body.results.every((e: object) => !('social_security_number' in e))).toBe(true);

    const self = await env.get(`/api/employees/${E.alice}/`, await env.login('alice'));
    expect('social_security_number' in self.body).toBe(false);
  });

  it('any write carrying the key by a caller without the permission answers 403 and writes nothing', async () => {
    await grant('mgr1', 'employee.change_employee_record');
    try {
      const token = await env.login('mgr1');
      const ok = await env.patch(`/api/employees/${E.alice}/`, token, { birth_date: '1985-01-17' });
      expect(ok.status).toBe(200);
      expect('social_security_number' in ok.body).toBe(false);

      for (const body of [
        { last_name: 'Changed', social_security_number: '1850175123456' },
        { last_name: 'Changed', social_security_number: null },
        { social_security_number: '' },
      ]) {
        const res = await env.patch(`/api/employees/${E.alice}/`, token, body);
        expect(res.status).toBe(403);
        expect(res.body.detail).toMatch(/sécurité sociale/);
      }
      const put = await env.put(`/api/employees/${E.alice}/`, token, { first_name: 'Alice', last_name: 'Changed', social_security_number: null });
      expect(put.status).toBe(403);

      const before = await count('select count(*) from app_public.employees');
      const post = await env.post('/api/employees/', token, {
        first_name: 'Nina',
        last_name: 'Roche',
        main_establishment: EST.E1,
        social_security_number: '2850175123456',
      });
      expect(post.status).toBe(403);
      expect(await count('select count(*) from app_public.employees')).toBe(before);
      expect(await count("select count(*) from app_public.accounts where username ilike 'nina%'")).toBe(0);

      const { rows } = await env.db.query(
        'select e.last_name, s.social_security_number from app_public.employees e left join app_public.employee_social_security_numbers s on s.employee_id = e.id where e.id = $1',
        [E.alice],
      );
      expect(rows[0]).toEqual({ last_name: 'Martin', social_security_number: '2850175123456' });
    } finally {
      await revoke('mgr1', 'employee.change_employee_record');
    }
  });

  it('is written by HR of the perimeter, validated, and audited without its value', async () => {
    const token = await env.login('rh2');
    const bad = await env.patch(`/api/employees/${E.chloe}/`, token, { social_security_number: '12345' });
    expect(bad.status).toBe(400);
    expect(bad.body.social_security_number[0]).toMatch(/13 chiffres/);

    const ok = await env.patch(`/api/employees/${E.chloe}/`, token, { social_security_number: '2 91 07 13 123 455 42' });
    expect(ok.status).toBe(200);
    expect(ok.body.social_security_number).toBe('291071312345542');
    const { rows } = await env.db.query(
      "select before, after from app_private.audit_log where model = 'employee_social_security_number' and target_id = $1 and verb = 'Modification'",
      [E.chloe],
    );
    expect(rows).toHaveLength(1);
    expect(JSON.stringify(rows[0])).not.toContain('2910713');

    // Outside rh2's SSN perimeter (alice, E1): 403 even for a null.
    expect((await env.patch(`/api/employees/${E.alice}/`, token, { social_security_number: null })).status).toBe(403);
  });
});

describe('creating an employee', () => {
  it('opens the account without usable password, grants Salarié and queues the invitation', async () => {
    const token = await env.login('rh1');
    const res = await env.post('/api/employees/', token, {
      first_name: 'Zoé',
      last_name: "L'Hôpital",
      professional_email: 'zoe.lhopital@tilleuls.example',
      main_establishment: EST.E1,
      secondary_establishments: [EST.E2],
      social_security_number: '2950175123456',
      contracts: [{ type: 2, start_date: '2026-12-01', end_date: '2027-05-31', trial_end_date: '2026-12-15', job_title: 'Éducatrice', weekly_hours: 28 }],
      teams: [{ team: T.T1, start_date: '2026-12-01' }],
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      first_name: 'Zoé',
      last_name: "L'Hôpital",
      main_establishment: EST.E1,
      secondary_establishments: [EST.E2],
      social_security_number: '2950175123456',
      invitation_queued: true,
      account: { username: 'zoe.l-hopital', is_active: true },
    });
    expect(res.body.contracts).toEqual([
      expect.objectContaining({ type_code: 'CDD', start_date: '2026-12-01', end_date: '2027-05-31', trial_end_date: '2026-12-15', weekly_hours: '28.00' }),
    ]);
    expect(res.body.teams).toEqual([expect.objectContaining({ team: T.T1, start_date: '2026-12-01', end_date: null })]);

    const accountId = res.body.account.id;
    const secret = await env.db.query('select password_hash from app_private.account_secrets where account_id = $1', [accountId]);
    expect(secret.rows).toEqual([{ password_hash: null }]);
    const roles = await env.db.query(
      'select r.name from app_public.role_attributions ra join app_public.roles r on r.id = ra.role_id where ra.account_id = $1',
      [accountId],
    );
    expect(roles.rows).toEqual([{ name: 'Salarié' }]);
    expect(await count("select count(*) from app_private.email_outbox where kind = 'invitation' and account_id = $1 and to_address = 'zoe.lhopital@tilleuls.example'", [accountId])).toBe(1);
    expect(await count("select count(*) from app_private.password_tokens where account_id = $1 and purpose = 'invitation'", [accountId])).toBe(1);
    // No usable password: logging in is impossible until the invitation is used.
    expect((await env.post('/api/auth/token/', null, { username: 'zoe.l-hopital', password: '' })).status).toBe(400);
    expect((await env.post('/api/auth/token/', null, { username: 'zoe.l-hopital', password: 'anything' })).status).toBe(401);
    // Audited: the record and its contract.
    expect(await count("select count(*) from app_private.audit_log where model = 'employee' and verb = 'Creation' and target_id = $1 and actor_username = 'rh1'", [res.body.id])).toBe(1);
    expect(await count("select count(*) from app_private.audit_log where model = 'contract' and verb = 'Creation' and (after ->> 'employee_id')::int = $1", [res.body.id])).toBe(1);
  });

  it('derives a free username, takes a given one, and invites nobody without e-mail', async () => {
    const token = await env.login('rh1');
    const twin = await env.post('/api/employees/', token, { first_name: 'Zoé', last_name: "L'Hôpital", main_establishment: EST.E1 });
    expect(twin.status).toBe(201);
    expect(twin.body.account.username).toBe('zoe.l-hopital2');
    expect(twin.body.invitation_queued).toBe(false);
    expect(await count('select count(*) from app_private.email_outbox where account_id = $1', [twin.body.account.id])).toBe(0);

    const given = await env.post('/api/employees/', token, { first_name: 'Marc', last_name: 'Duval', username: 'm.duval' });
    expect(given.status).toBe(201);
    expect(given.body.account.username).toBe('m.duval');
    expect(given.body.main_establishment).toBeNull();

    const taken = await env.post('/api/employees/', token, { first_name: 'Marc', last_name: 'Duval', username: 'ALICE' });
    expect(taken.status).toBe(400);
    expect(taken.body.username[0]).toMatch(/déjà utilisé/);
  });

  it('validates every field, answers under the field to correct and writes nothing', async () => {
    const token = await env.login('rh1');
    const before = await count('select count(*) from app_public.employees');
    const res = await env.post('/api/employees/', token, {
      first_name: '  ',
      last_name: 'Valide',
      professional_email: 'pas-une-adresse',
      birth_date: '2030-01-01',
      main_establishment: 999999,
      social_security_number: '3850175123456',
      username: 'x',
      contracts: [
        { type: 999, start_date: '2026-01-01' },
        { type: 1, start_date: '2026-06-01', end_date: '2026-05-01' },
        { type: 1, start_date: '2026-03-01', trial_end_date: '2026-02-01', weekly_hours: 60 },
      ],
      teams: [{ team: 999999 }],
    });
    expect(res.status).toBe(400);
    expect(res.body.first_name).toEqual(['Le prénom est obligatoire.']);
    expect(res.body.professional_email[0]).toMatch(/Adresse e-mail invalide/);
    expect(res.body.birth_date[0]).toMatch(/Date de naissance invalide/);
    expect(res.body.main_establishment[0]).toMatch(/introuvable/);
    expect(res.body.social_security_number[0]).toMatch(/sécurité sociale invalide/);
    expect(res.body.username[0]).toMatch(/Identifiant invalide/);
    expect(res.body.contracts).toEqual(
      expect.arrayContaining([
        'Contrat n° 1 : type de contrat n° 999 introuvable.',
        'Contrat n° 2 : la date de fin précède la date de début.',
        'Contrat n° 3 : la fin de période d’essai précède la date de début.',
        'Contrat n° 3 : la durée hebdomadaire doit être comprise entre 0 et 48 heures.',
        'Les contrats n° 1 et n° 3 se chevauchent : un salarié a un seul contrat à la fois.',
      ]),
    );
    expect(res.body.teams[0]).toMatch(/équipe n° 999999 introuvable/);
    expect(res.body.last_name).toBeUndefined();
    expect(await count('select count(*) from app_public.employees')).toBe(before);

    const shape = await env.post('/api/employees/', token, { first_name: 'A', last_name: 'B', contracts: [{ start_date: 'demain' }] });
    expect(shape.status).toBe(400);
    expect(shape.body.contracts).toBeDefined();
    const missing = await env.post('/api/employees/', token, {});
    expect(missing.status).toBe(400);
    expect(missing.body).toMatchObject({ first_name: ['Ce champ est obligatoire.'], last_name: ['Ce champ est obligatoire.'] });
  });

  it('is refused without employee.change_employee_record', async () => {
    for (const user of ['mgr1', 'da', 'alice', 'paie']) {
      const res = await env.post('/api/employees/', await env.login(user), { first_name: 'Léa', last_name: 'Noir', main_establishment: EST.E1 });
      expect(res.status).toBe(403);
    }
  });

  it('a restricted writer creates records of its perimeter only', async () => {
    const token = await env.login('rh2');
    const outside = await env.post('/api/employees/', token, { first_name: 'Léa', last_name: 'Noir', main_establishment: EST.E1 });
    expect(outside.status).toBe(400);
    expect(outside.body.main_establishment[0]).toMatch(/pas dans votre périmètre/);
    const none = await env.post('/api/employees/', token, { first_name: 'Léa', last_name: 'Noir' });
    expect(none.status).toBe(400);
    expect(none.body.main_establishment).toBeDefined();
    const inside = await env.post('/api/employees/', token, { first_name: 'Léa', last_name: 'Noir', main_establishment: EST.E2 });
    expect(inside.status).toBe(201);
  });
});

describe('updating an employee', () => {
  it('contracts and assignments are written only with employee.change_employee_record', async () => {
    const contracts = [{ type: 1, start_date: '2020-01-01', weekly_hours: 30 }];
    expect((await env.patch(`/api/employees/${E.alice}/`, await env.login('mgr1'), { contracts })).status).toBe(403);
    expect((await env.patch(`/api/employees/${E.alice}/`, await env.login('alice'), { contracts })).status).toBe(403);
    expect((await env.patch(`/api/employees/${E.alice}/`, await env.login('alice'), { teams: [] })).status).toBe(403);
    // rh2 reads alice in the directory, but her record is outside its write perimeter: 404.
    const rh2 = await env.patch(`/api/employees/${E.alice}/`, await env.login('rh2'), { contracts });
    expect(rh2.status).toBe(404);
    expect(rh2.body.detail).toMatch(/périmètre/);
    expect(await count('select count(*) from app_public.contracts where employee_id = $1 and weekly_hours = 30', [E.alice])).toBe(0);
  });

  it('replaces contracts: update by id, create without id, delete what is left out', async () => {
    const token = await env.login('rh2');
    const current = (await env.get(`/api/employees/${E.gaelle}/`, token)).body.contracts;
    expect(current).toHaveLength(1);
    const res = await env.patch(`/api/employees/${E.gaelle}/`, token, {
      contracts: [
        { id: current[0].id, type: 2, start_date: '2026-10-01', end_date: '2026-12-31', trial_end_date: '2026-11-15', job_title: 'Agente polyvalente', weekly_hours: '35.00' },
        { type: 1, start_date: '2027-01-01', weekly_hours: 35 },
      ],
    });
    expect(res.status).toBe(200);
    expect(res.body.contracts).toEqual([
      expect.objectContaining({ id: current[0].id, type_code: 'CDD', end_date: '2026-12-31', trial_end_date: '2026-11-15' }),
      expect.objectContaining({ type_code: 'CDI', start_date: '2027-01-01', end_date: null }),
    ]);
    const dropped = await env.patch(`/api/employees/${E.gaelle}/`, token, {
      contracts: [{ id: res.body.contracts[1].id, type: 1, start_date: '2027-01-01', weekly_hours: 35 }],
    });
    expect(dropped.body.contracts).toHaveLength(1);
    expect(await count("select count(*) from app_private.audit_log where model = 'contract' and verb = 'Suppression' and target_id = $1", [current[0].id])).toBe(1);

    const foreign = await env.patch(`/api/employees/${E.gaelle}/`, token, { contracts: [{ id: 1, type: 1, start_date: '2027-01-01' }] });
    expect(foreign.status).toBe(400);
    expect(foreign.body.contracts[0]).toMatch(/n’appartient pas à ce salarié/);
  });

  it('a restricted writer neither moves a record out of its perimeter nor touches teams outside it', async () => {
    const token = await env.login('rh2');
    const move = await env.patch(`/api/employees/${E.chloe}/`, token, { main_establishment: EST.E1 });
    expect(move.status).toBe(400);
    expect(move.body.main_establishment[0]).toMatch(/pas dans votre périmètre/);
    const secondary = await env.patch(`/api/employees/${E.chloe}/`, token, { secondary_establishments: [EST.E3] });
    expect(secondary.status).toBe(400);
    const team = await env.patch(`/api/employees/${E.chloe}/`, token, { teams: [{ team: T.T1 }] });
    expect(team.status).toBe(400);
    expect(team.body.teams.join(' ')).toMatch(/aucun établissement dans votre périmètre/);

    // bruno: main E1, secondary E2, team T2 (E1+E2): rh2 edits his name, keeps his E1 workplace.
    const bruno = await env.patch(`/api/employees/${E.bruno}/`, token, { first_name: 'Bruno-Marie' });
    expect(bruno.status).toBe(200);
    expect(bruno.body.main_establishment).toBe(EST.E1);
    const removeE2 = await env.patch(`/api/employees/${E.bruno}/`, token, { secondary_establishments: [] });
    expect(removeE2.status).toBe(200);
    expect(removeE2.body.secondary_establishments).toEqual([]);
  });

  it('PUT requires the names, PATCH writes only what it is sent', async () => {
    const token = await env.login('admin');
    const put = await env.put(`/api/employees/${E.david}/`, token, { first_name: 'David' });
    expect(put.status).toBe(400);
    expect(put.body.last_name).toEqual(['Ce champ est obligatoire.']);
    const patch = await env.patch(`/api/employees/${E.david}/`, token, { is_polyvalent: true, professional_email: null });
    expect(patch.status).toBe(200);
    expect(patch.body).toMatchObject({ first_name: 'David', last_name: 'Mercier', is_polyvalent: true, professional_email: null });
    expect(patch.body.contracts).toHaveLength(1);
    const username = await env.patch(`/api/employees/${E.david}/`, token, { username: 'dmercier' });
    expect(username.status).toBe(400);
    expect(username.body.username).toBeDefined();
  });
});

describe('OpenAPI', () => {
  it('documents the employee routes with their bodies and errors', async () => {
    const res = await env.get('/api/schema/');
    const paths = res.body.paths;
    expect(paths['/api/employees/'].post.requestBody.content['application/json'].schema.properties.social_security_number).toBeDefined();
    expect(Object.keys(paths['/api/employees/{id}/'])).toEqual(expect.arrayContaining(['get', 'put', 'patch']));
    expect(paths['/api/employees/{id}/'].patch.responses['403']).toBeDefined();
    expect(paths['/api/employees/'].get.parameters.map((p: { name: string }) => p.name)).toEqual(
      expect.arrayContaining(['scope', 'search', 'page', 'page_size']),
    );
    expect(res.body.components.schemas.Employee).toBeDefined();
  });
});
