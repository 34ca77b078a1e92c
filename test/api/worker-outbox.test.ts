/**
 * The e-mail outbox and the worker: the drain job is enqueued in the transaction that
 * writes a mail once graphile-worker's schema exists (and skipped silently before); the
 * drain delivers with SMTP (a tiny SMTP server written here with node:net), records
 * failures, and sends nothing without SMTP settings; startWorker runs it all in-process.
 */
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { drainEmailOutbox, createWorkerPool } from '../../worker/jobs.js';
import { ensureWorkerSchema, startWorker, type RunningWorker } from '../../worker/runner.js';
import { pino } from 'pino';
import { startTestEnv, type TestEnv } from '../helpers/server.js';

interface ReceivedMail {
  from: string;
  to: string[];
  data: string;
}

/** A minimal SMTP server: accepts everything except the recipients it is told to refuse. */
async function startSmtpServer(refuse: (recipient: string) => boolean = () => false) {
  const mails: ReceivedMail[] = [];
  const waiters: Array<() => void> = [];
  const server = net.createServer((socket) => {
    socket.setEncoding('utf8');
    let buffer = '';
    let inData = false;
    let current: ReceivedMail = { from: '', to: [], data: '' };
    socket.write('220 smtp.test ESMTP\r\n');
    socket.on('data', (chunk: string) => {
      buffer += chunk;
      for (;;) {
        if (inData) {
          const end = buffer.indexOf('\r\n.\r\n');
          if (end < 0) return;
          current.data = buffer.slice(0, end);
          buffer = buffer.slice(end + 5);
          inData = false;
          mails.push(current);
          current = { from: '', to: [], data: '' };
          socket.write('250 2.0.0 Ok: queued\r\n');
          waiters.splice(0).forEach((wake) => wake());
          continue;
        }
        const newline = buffer.indexOf('\r\n');
        if (newline < 0) return;
        const line = buffer.slice(0, newline);
        buffer = buffer.slice(newline + 2);
        const verb = line.slice(0, 4).toUpperCase();
        const address = /<([^>]*)>/.exec(line)?.[1] ?? '';
        if (verb === 'EHLO' || verb === 'HELO') socket.write('250-smtp.test\r\n250 8BITMIME\r\n');
        else if (verb === 'MAIL') {
          current.from = address;
          socket.write('250 2.1.0 Ok\r\n');
        } else if (verb === 'RCPT') {
          if (refuse(address)) socket.write('550 5.1.1 Mailbox unavailable\r\n');
          else {
            current.to.push(address);
            socket.write('250 2.1.5 Ok\r\n');
          }
        } else if (verb === 'DATA') {
          inData = true;
          socket.write('354 End data with <CR><LF>.<CR><LF>\r\n');
        } else if (verb === 'RSET') {
          current = { from: '', to: [], data: '' };
          socket.write('250 2.0.0 Ok\r\n');
        } else if (verb === 'NOOP') socket.write('250 2.0.0 Ok\r\n');
        else if (verb === 'QUIT') {
          socket.write('221 2.0.0 Bye\r\n');
          socket.end();
        } else socket.write('502 5.5.2 Command not recognized\r\n');
      }
    });
    socket.on('error', () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  return {
    url: `smtp://127.0.0.1:${port}`,
    mails,
    /** Resolves when `count` mails have arrived (event-driven, bounded by the test timeout). */
    waitFor(count: number): Promise<void> {
      if (mails.length >= count) return Promise.resolve();
      return new Promise((resolve) => {
        const check = () => (mails.length >= count ? resolve() : waiters.push(check));
        waiters.push(check);
      });
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

let env: TestEnv;
const outbox = async () =>
  (await env.db.query('select to_address, sent_at, attempts, last_error from app_private.email_outbox order by id')).rows;
const queuedDrainJobs = async () =>
  Number((await env.db.query(
    "select count(*) from graphile_worker.jobs where task_identifier = 'drain_email_outbox' and key = 'drain_email_outbox'",
  )).rows[0].count);

beforeAll(async () => {
  env = await startTestEnv();
});
afterAll(async () => {
  await env?.close();
});

describe('the e-mail outbox', () => {
  it('queues a mail without graphile-worker’s schema (the enqueue is skipped silently)', async () => {
    const { rows } = await env.db.query("select to_regnamespace('graphile_worker') is null as absent");
    expect(rows[0].absent).toBe(true);
    const res = await env.post('/api/auth/password/reset/', null, { login: 'alice' });
    expect(res.status).toBe(200);
    expect(await outbox()).toEqual([{ to_address: 'alice.martin@tilleuls.example', sent_at: null, attempts: 0, last_error: null }]);
  });

  it('without SMTP settings, the drain sends nothing and the mails stay visible to staff', async () => {
    const pool = createWorkerPool(env.config);
    try {
      expect(await drainEmailOutbox(pool, null)).toEqual({ smtp: false, sent: 0, failed: 0, pending: 1 });
    } finally {
      await pool.end();
    }
    const res = await env.get('/api/email-outbox/?status=pending', await env.login('staff'));
    expect(res.status).toBe(200);
    expect(res.body.count).toBe(1);
    expect(res.body.results[0]).toMatchObject({ kind: 'password_reset', to_address: 'alice.martin@tilleuls.example', sent_at: null, attempts: 0 });
    expect(res.body.results[0]).not.toHaveProperty('body_text');
    const root = await env.get('/api/email-outbox/', await env.login('root'));
    expect(root.body.results[0].body_text).toMatch(/password-reset\/confirm\/\?token=[0-9a-f]{64}/);
    expect((await env.get('/api/email-outbox/', await env.login('rh1'))).status).toBe(403);
    expect((await env.get('/api/email-outbox/?status=lost', await env.login('staff'))).status).toBe(400);
  });

  it('once the worker’s schema exists, writing a mail enqueues the drain job in the same transaction', async () => {
    await ensureWorkerSchema(env.config);
    expect(await queuedDrainJobs()).toBe(0);
    await env.post('/api/auth/password/reset/', null, { login: 'bruno' });
    expect(await queuedDrainJobs()).toBe(1);
    await env.post('/api/auth/password/reset/', null, { login: 'chloe' });
    expect(await queuedDrainJobs()).toBe(1); // one job, by its key
    // A rolled-back mail leaves no job.
    await env.db.query("select graphile_worker.remove_job('drain_email_outbox')");
    const client = await env.db.connect();
    try {
      await client.query('begin');
      await client.query("insert into app_private.email_outbox (kind, to_address, subject, body_text) values ('test', 'x@example.org', 'S', 'B')");
      await client.query('rollback');
    } finally {
      client.release();
    }
    expect(await queuedDrainJobs()).toBe(0);
  });

  it('delivers by SMTP, records each attempt and the failures', async () => {
    const smtp = await startSmtpServer((recipient) => recipient === 'chloe.bernard@peupliers.example');
    const pool = createWorkerPool(env.config);
    try {
      const outcome = await drainEmailOutbox(pool, { url: smtp.url, from: 'Planning <planning@wfm.test>' });
      expect(outcome).toEqual({ smtp: true, sent: 2, failed: 1, pending: 1 });
      expect(smtp.mails.map((mail) => mail.to)).toEqual([['alice.martin@tilleuls.example'], ['bruno.lambert@tilleuls.example']]);
      expect(smtp.mails[0]!.from).toBe('planning@wfm.test');
      expect(smtp.mails[0]!.data).toMatch(/^Subject: =\?UTF-8\?Q\?R=C3=A9initialisation/m);
      expect(smtp.mails[0]!.data).toContain('http://wfm.test/password-reset/confirm/?token=');
      const rows = await outbox();
      expect(rows.map((row) => [row.to_address, row.sent_at !== null, row.attempts])).toEqual([
        ['alice.martin@tilleuls.example', true, 1],
        ['bruno.lambert@tilleuls.example', true, 1],
        ['chloe.bernard@peupliers.example', false, 1],
      ]);
      expect(rows[2].last_error).toMatch(/550/);

      // A second drain sends nothing twice; it retries the failed mail only.
      expect(await drainEmailOutbox(pool, { url: smtp.url, from: 'planning@wfm.test' })).toEqual({ smtp: true, sent: 0, failed: 1, pending: 1 });
      expect(smtp.mails).toHaveLength(2);
      expect((await outbox())[2].attempts).toBe(2);
    } finally {
      await pool.end();
      await smtp.close();
    }
  });

  it('startWorker migrates, drains at start and delivers a new mail promptly', async () => {
    const smtp = await startSmtpServer();
    let worker: RunningWorker | null = null;
    try {
      worker = await startWorker({
        databaseUrl: env.config.databaseUrl,
        businessTimeZone: 'Europe/Paris',
        publicUrl: 'http://wfm.test',
        smtp: { url: smtp.url, from: 'planning@wfm.test' },
        logger: pino({ level: 'silent' }),
        pollInterval: 200,
      });
      // At start: the mail left behind (chloe's, refused earlier by the other server) goes out.
      await smtp.waitFor(1);
      expect(smtp.mails[0]!.to).toEqual(['chloe.bernard@peupliers.example']);
      // A new mail is enqueued by its transaction and delivered by the running worker.
      await env.post('/api/auth/password/reset/', null, { login: 'david' });
      await smtp.waitFor(2);
      expect(smtp.mails[1]!.to).toEqual(['david.mercier@moulin.example']);
      // A notification sent by e-mail at once (issue 28): its transaction enqueues the drain, whose
      // first step writes the e-mail; it leaves promptly, with its link.
      const filed = await env.post('/api/absences/', await env.login('david'),
        { employee: env.ids.employees!.david, type: (await env.db.query("select id from app_public.absence_types where code = 'FOR'")).rows[0].id,
          date_start: '2026-12-09', date_end: '2026-12-09' });
      expect(filed.status).toBe(201);
      await smtp.waitFor(3);
      expect(smtp.mails[2]!.to).toEqual(['paul.fontaine@moulin.example']);
      expect(smtp.mails[2]!.data.replace(/=\r\n/g, '')).toContain(`http://wfm.test/file/absences/${filed.body.id}`);
    } finally {
      await worker?.stop();
      await smtp.close();
    }
    const { rows } = await env.db.query("select count(*)::int as n from app_private.email_outbox where sent_at is null");
    expect(rows[0].n).toBe(0);
  });
});
