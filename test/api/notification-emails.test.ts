/**
 * E-mail notifications over HTTP (issue 28): a filing and a decision queue their e-mails in the
 * same transaction, with the address of the item for its reader; the notifications carry their
 * kind and address; « Mon compte » preferences (bad values under their field, nothing written);
 * « Tout marquer comme lu »; the List-Unsubscribe one-click address; the digest job; delivery
 * by SMTP with the HTML part and the List-Unsubscribe headers, a failed send retried while the
 * request stays written; the embedded mode's console printer.
 */
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OutboxPrinter } from '../../src/cli/outbox-printer.js';
import {
  createWorkerPool, drainEmailOutbox, queueNotificationEmails, sendNotificationDigests, type MailTransport, type OutgoingMail,
} from '../../worker/jobs.js';
import { typeIds } from './absence-helpers.js';
import { startTestEnv, type TestEnv } from '../helpers/server.js';

let env: TestEnv;
let types: Record<string, number>;
let E: Record<string, number>;

interface OutboxRow {
  id: string;
  kind: string;
  to_address: string;
  subject: string;
  body_text: string;
  body_html: string | null;
  headers: Record<string, string>;
  sent_at: string | null;
  attempts: number;
  last_error: string | null;
}
/** The outbox, once the worker's first step wrote the e-mails of the notifications sent at once. */
const outbox = async (address?: string): Promise<OutboxRow[]> => {
  await queueNotificationEmails(workerPool);
  return (await env.db.query<OutboxRow>(
    'select id::text, kind, to_address, subject, body_text, body_html, headers, sent_at, attempts, last_error from app_private.email_outbox where $1::text is null or to_address = $1 order by id',
    [address ?? null],
  )).rows;
};

/** The worker's connections (PUBLIC_URL and the business time zone in their session, as in production). */
let workerPool: ReturnType<typeof createWorkerPool>;

beforeAll(async () => {
  env = await startTestEnv();
  types = await typeIds(env);
  E = env.ids.employees!;
  workerPool = createWorkerPool(env.config, 2);
});
afterAll(async () => {
  await workerPool?.end();
  await env?.close();
});

async function fileAbsence(employee: string, type: string, dateStart: string, dateEnd = dateStart, comment?: string): Promise<number> {
  const res = await env.post('/api/absences/', await env.login(employee),
    { employee: E[employee], type: types[type], date_start: dateStart, date_end: dateEnd, ...(comment ? { comment } : {}) });
  expect(res.status).toBe(201);
  return res.body.id;
}

describe('a filing and its decision go by e-mail', () => {
  it('the filing’s transaction writes no e-mail: the worker does, seconds later', async () => {
    const before = Number((await env.db.query('select count(*) from app_private.email_outbox')).rows[0].count);
    const id = await fileAbsence('bruno', 'FOR', '2026-12-01');
    expect(Number((await env.db.query('select count(*) from app_private.email_outbox')).rows[0].count)).toBe(before);
    const waiting = await env.db.query("select count(*)::int as n from app_public.notifications where target_id = $1 and email = 'immediate' and emailed_at is null", [id]);
    expect(waiting.rows[0].n).toBeGreaterThan(0);
    expect(await queueNotificationEmails(workerPool)).toBe(waiting.rows[0].n);
    expect(await queueNotificationEmails(workerPool)).toBe(0);
  });

  it('the decider’s e-mail links to the decision panel and says neither the type nor the comment', async () => {
    const id = await fileAbsence('alice', 'MAL', '2026-11-23', '2026-11-24', 'Grippe, repos prescrit');
    const mail = (await outbox('julien.petit@tilleuls.example')).at(-1);
    expect(mail).toMatchObject({ kind: 'notification', subject: 'Nouvelle demande d\'absence', sent_at: null, attempts: 0 });
    expect(mail!.body_text).toContain('Alice Martin — absence du 23/11/2026 au 24/11/2026');
    expect(mail!.body_text).toContain(`Ouvrir : http://wfm.test/file/absences/${id}`);
    expect(mail!.body_html).toContain(`<a href="http://wfm.test/file/absences/${id}">`);
    for (const part of [mail!.subject, mail!.body_text, mail!.body_html!]) {
      expect(part).not.toMatch(/maladie|grippe|repos/i);
    }
    expect(mail!.headers['List-Unsubscribe']).toMatch(/^<http:\/\/wfm\.test\/api\/notifications\/unsubscribe\/\?token=[0-9a-f]{48}&kinds=decide>$/);
    expect(mail!.headers['List-Unsubscribe-Post']).toBe('List-Unsubscribe=One-Click');

    // The manager's notification leads to the same place.
    const list = await env.get('/api/notifications/', await env.login('mgr1'));
    expect(list.status).toBe(200);
    expect(list.body.results[0]).toMatchObject({ title: 'Nouvelle demande d\'absence', kind: 'decide', path: `/file/absences/${id}` });

    // The decision: the employee's notification and e-mail lead to her request.
    const refused = await env.post(`/api/absences/${id}/refuse/`, await env.login('mgr1'), { version: 1, reason: 'Certificat illisible' });
    expect(refused.status).toBe(200);
    const mine = await env.get('/api/notifications/', await env.login('alice'));
    expect(mine.body.results[0]).toMatchObject({ title: 'Demande d\'absence refusée', kind: 'own', path: `/demandes/absences/${id}`, level: 'error' });
    expect(mine.body.results[0].body).toContain('Certificat illisible');
    const [hers] = await outbox('alice.martin@tilleuls.example');
    expect(hers!.subject).toBe('Demande d\'absence refusée');
    expect(hers!.body_text).toContain(`http://wfm.test/demandes/absences/${id}`);
    expect(hers!.body_text).not.toMatch(/illisible|certificat/i);
  });

  it('a day-change request: the decider’s panel, then the author’s request', async () => {
    const res = await env.post('/api/shift-change-requests/', await env.login('alice'), { date: '2026-11-20', reason: 'urgence', is_remote: true });
    expect(res.status).toBe(201);
    const list = await env.get('/api/notifications/', await env.login('mgr1'));
    expect(list.body.results[0]).toMatchObject({ kind: 'decide', path: `/file/journees/${res.body.id}` });
    const mails = await outbox('julien.petit@tilleuls.example');
    expect(mails.at(-1)!.body_text).toContain(`Alice Martin — journée du 20/11/2026`);
    expect(mails.at(-1)!.body_text).toContain(`http://wfm.test/file/journees/${res.body.id}`);
    const validated = await env.post(`/api/shift-change-requests/${res.body.id}/validate/`, await env.login('mgr1'), { version: 1 });
    expect(validated.status).toBe(200);
    const mine = await env.get('/api/notifications/', await env.login('alice'));
    expect(mine.body.results[0]).toMatchObject({ title: 'Demande de modification validée', kind: 'own', path: `/demandes/journees/${res.body.id}` });
  });
});

describe('/api/notifications/preferences/', () => {
  it('needs an account', async () => {
    expect((await env.get('/api/notifications/preferences/')).status).toBe(401);
    expect((await env.put('/api/notifications/preferences/', null, { own: 'never', decide: 'never', planning: 'never', digest_hour: 7 })).status).toBe(401);
  });

  it('reads the defaults and the address, refuses a bad value under its field writing nothing, saves a choice', async () => {
    const mgr1 = await env.login('mgr1');
    const read = await env.get('/api/notifications/preferences/', mgr1);
    expect(read.status).toBe(200);
    expect(read.body).toEqual({ email: 'julien.petit@tilleuls.example', own: 'immediate', decide: 'immediate', planning: 'immediate', digest_hour: 7 });

    const bad = await env.put('/api/notifications/preferences/', mgr1, { own: 'soon', decide: 'digest', planning: 'never', digest_hour: 25 });
    expect(bad.status).toBe(400);
    expect(Object.keys(bad.body).sort()).toEqual(['digest_hour', 'own']);
    const missing = await env.put('/api/notifications/preferences/', mgr1, { own: 'never' });
    expect(missing.status).toBe(400);
    expect(Object.keys(missing.body).sort()).toEqual(['decide', 'digest_hour', 'planning']);
    expect((await env.get('/api/notifications/preferences/', mgr1)).body.own).toBe('immediate');

    const saved = await env.put('/api/notifications/preferences/', mgr1, { own: 'immediate', decide: 'digest', planning: 'never', digest_hour: 8 });
    expect(saved.status).toBe(200);
    expect(saved.body).toEqual({ email: 'julien.petit@tilleuls.example', own: 'immediate', decide: 'digest', planning: 'never', digest_hour: 8 });
    expect((await env.get('/api/notifications/preferences/', mgr1)).body).toEqual(saved.body);
  });

  it('an account without employee record has no address, and may still choose', async () => {
    const root = await env.login('root');
    expect((await env.get('/api/notifications/preferences/', root)).body.email).toBeNull();
    expect((await env.put('/api/notifications/preferences/', root, { own: 'never', decide: 'never', planning: 'never', digest_hour: 0 })).status).toBe(200);
  });

  it('the digest: a filing waits, the job run by hand at the next digest hour gathers the day into one e-mail, once', async () => {
    const before = (await outbox('julien.petit@tilleuls.example')).length;
    const first = await fileAbsence('alice', 'FOR', '2026-12-14');
    env.setNow('2026-11-16T15:00:00+01:00');
    const second = await fileAbsence('alice', 'FOR', '2026-12-15');
    env.setNow('2026-11-16T10:00:00+01:00');
    expect(await outbox('julien.petit@tilleuls.example')).toHaveLength(before);
    const pool = createWorkerPool(env.config, 1);
    try {
      expect(await sendNotificationDigests(pool, '2026-11-16T23:03:00+01:00')).toBe(0);
      expect(await sendNotificationDigests(pool, '2026-11-17T08:03:00+01:00')).toBe(1);
      expect(await sendNotificationDigests(pool, '2026-11-17T08:04:00+01:00')).toBe(0);
    } finally {
      await pool.end();
    }
    const digest = (await outbox('julien.petit@tilleuls.example')).at(-1)!;
    expect(digest.kind).toBe('notification_digest');
    expect(digest.subject).toBe('Résumé de vos notifications : 2 nouvelles');
    expect(digest.body_text.indexOf(`/file/absences/${first}`)).toBeGreaterThan(0);
    expect(digest.body_text.indexOf(`/file/absences/${second}`)).toBeGreaterThan(digest.body_text.indexOf(`/file/absences/${first}`));
    expect(digest.body_text).toContain('Alice Martin — absence le 14/12/2026');
    // Back to « at once » for the tests below.
    await env.put('/api/notifications/preferences/', await env.login('mgr1'), { own: 'immediate', decide: 'immediate', planning: 'immediate', digest_hour: 7 });
  });
});

describe('POST /api/notifications/read-all/', () => {
  it('marks every unread notification of the caller read, and answers how many', async () => {
    const mgr1 = await env.login('mgr1');
    expect((await env.post('/api/notifications/read-all/')).status).toBe(401);
    const unread = (await env.get('/api/notifications/?unread=true', mgr1)).body.count;
    expect(unread).toBeGreaterThan(1);
    const res = await env.post('/api/notifications/read-all/', mgr1);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ count: unread });
    expect((await env.get('/api/notifications/?unread=true', mgr1)).body.count).toBe(0);
    expect((await env.post('/api/notifications/read-all/', mgr1)).body).toEqual({ count: 0 });
    expect((await env.get('/api/notifications/?unread=true', await env.login('alice'))).body.count).toBeGreaterThan(0);
  });
});

describe('POST /api/notifications/unsubscribe/ (List-Unsubscribe, one click)', () => {
  it('the address of an e-mail turns its kind off, without a session; an unknown one is 404', async () => {
    const [mail] = await outbox('alice.martin@tilleuls.example');
    const address = /^<http:\/\/wfm\.test(\/api\/notifications\/unsubscribe\/\?token=[0-9a-f]{48}&kinds=own)>$/.exec(mail!.headers['List-Unsubscribe']!)![1]!;
    // RFC 8058: the mail client posts a form body, which the route takes and ignores.
    const res = await env.request('POST', address, {
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      rawBody: 'List-Unsubscribe=One-Click',
    });
    expect(res.status).toBe(200);
    expect(res.body.detail).toContain('« Mes demandes »');
    expect((await env.get('/api/notifications/preferences/', await env.login('alice'))).body.own).toBe('never');
    const wrong = address.replace(/token=[0-9a-f]{48}/, `token=${'0'.repeat(48)}`);
    expect((await env.post(wrong)).status).toBe(404);
    expect((await env.post('/api/notifications/unsubscribe/?token=abc&kinds=own')).status).toBe(400);
    // Alice hears nothing by e-mail of her requests now.
    const before = (await outbox('alice.martin@tilleuls.example')).length;
    const id = await fileAbsence('alice', 'FOR', '2026-12-17');
    await env.post(`/api/absences/${id}/validate/`, await env.login('mgr1'), { version: 1 });
    expect(await outbox('alice.martin@tilleuls.example')).toHaveLength(before);
  });
});

/** A transport that fails its first `failures` sends (as an SMTP server refusing would). */
function flakyTransport(failures: number): MailTransport & { sent: OutgoingMail[] } {
  let left = failures;
  const sent: OutgoingMail[] = [];
  return {
    sent,
    async sendMail(mail) {
      if (left > 0) {
        left -= 1;
        throw new Error('421 4.3.0 Service temporairement indisponible');
      }
      sent.push(mail);
    },
    close() {},
  };
}

describe('delivery', () => {
  it('a failed send is retried later; the request that caused it stayed written', async () => {
    await env.db.query('update app_private.email_outbox set sent_at = now() where sent_at is null');
    const id = await fileAbsence('bruno', 'FOR', '2026-12-21');
    const pool = createWorkerPool(env.config, 1);
    try {
      const smtp = { url: 'smtp://127.0.0.1:1', from: 'planning@wfm.test' };
      const first = await drainEmailOutbox(pool, smtp, flakyTransport(99));
      expect(first.sent).toBe(0);
      expect(first.failed).toBeGreaterThan(0);
      // The request is there, pending, whatever the mail did.
      const absence = await env.get(`/api/absences/${id}/`, await env.login('bruno'));
      expect(absence.status).toBe(200);
      expect(absence.body.status).toBe('pending');
      const failed = (await outbox()).filter((row) => row.sent_at === null);
      expect(failed.every((row) => row.attempts === 1 && /421/.test(row.last_error ?? ''))).toBe(true);
      // The next drain (graphile-worker retries the failed job) delivers them, with their HTML and headers.
      const transport = flakyTransport(0);
      const second = await drainEmailOutbox(pool, smtp, transport);
      expect(second).toEqual({ smtp: true, sent: failed.length, failed: 0, pending: 0 });
      const mail = transport.sent.find((sent) => sent.text.includes(`/file/absences/${id}`))!;
      expect(mail.html).toContain(`/file/absences/${id}`);
      expect(mail.headers!['List-Unsubscribe']).toMatch(/^<http:\/\/wfm\.test\/api\/notifications\/unsubscribe\//);
      expect(mail.headers!['List-Unsubscribe-Post']).toBe('List-Unsubscribe=One-Click');
    } finally {
      await pool.end();
    }
  });

  it('by SMTP: a multipart text and HTML message with List-Unsubscribe', async () => {
    const received: string[] = [];
    const server = net.createServer((socket) => {
      socket.setEncoding('utf8');
      let buffer = '';
      let inData = false;
      socket.write('220 smtp.test ESMTP\r\n');
      socket.on('data', (chunk: string) => {
        buffer += chunk;
        for (;;) {
          if (inData) {
            const end = buffer.indexOf('\r\n.\r\n');
            if (end < 0) return;
            received.push(buffer.slice(0, end));
            buffer = buffer.slice(end + 5);
            inData = false;
            socket.write('250 Ok\r\n');
            continue;
          }
          const newline = buffer.indexOf('\r\n');
          if (newline < 0) return;
          const verb = buffer.slice(0, 4).toUpperCase();
          buffer = buffer.slice(newline + 2);
          if (verb === 'EHLO' || verb === 'HELO') socket.write('250-smtp.test\r\n250 8BITMIME\r\n');
          else if (verb === 'DATA') {
            inData = true;
            socket.write('354 go\r\n');
          } else if (verb === 'QUIT') {
            socket.write('221 Bye\r\n');
            socket.end();
          } else socket.write('250 Ok\r\n');
        }
      });
      socket.on('error', () => {});
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as net.AddressInfo).port;
    const pool = createWorkerPool(env.config, 1);
    try {
      const id = await fileAbsence('chloe', 'FOR', '2026-12-22');
      const outcome = await drainEmailOutbox(pool, { url: `smtp://127.0.0.1:${port}`, from: 'planning@wfm.test' });
      expect(outcome.failed).toBe(0);
      // Header lines unfolded (RFC 5322 2.2.3); the parts' quoted-printable soft breaks removed.
      const data = received.map((text) => text.replace(/\r\n(?=[ \t])/g, '').replace(/=\r\n/g, ''))
        .find((text) => text.includes(`/file/absences/${id}`))!;
      expect(data).toMatch(/^List-Unsubscribe: <http:\/\/wfm\.test\/api\/notifications\/unsubscribe\/\?token=[0-9a-f]{48}&kinds=decide>/m);
      expect(data).toMatch(/^List-Unsubscribe-Post: List-Unsubscribe=One-Click/m);
      expect(data).toMatch(/Content-Type: multipart\/alternative/);
      expect(data).toMatch(/Content-Type: text\/plain; charset=utf-8/);
      expect(data).toMatch(/Content-Type: text\/html; charset=utf-8/);
    } finally {
      await pool.end();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it('the embedded mode prints each notification e-mail with its link', async () => {
    const printed: string[] = [];
    const printer = new OutboxPrinter(env.config.databaseUrl, (text) => printed.push(text), 60_000);
    await printer.start();
    try {
      const id = await fileAbsence('david', 'FOR', '2026-12-23');
      await queueNotificationEmails(workerPool);
      await printer.poll();
      const text = printed.join('\n');
      expect(text).toContain('To: paul.fontaine@moulin.example');
      expect(text).toContain('Subject: Nouvelle demande d\'absence');
      expect(text).toContain(`http://wfm.test/file/absences/${id}`);
    } finally {
      await printer.stop();
    }
  });
});
