/**
 * Told at once, one click to act (issue 28), in Chromium: an employee files; the e-mail is printed
 * as the embedded mode prints it, with its link; the link, followed in a fresh browser, asks for
 * the login and lands on the decision panel; the manager decides; the employee's notification
 * says the decision and links to her request; « Tout marquer comme lu » empties the menu's count;
 * « Mon compte › E-mails » chooses the daily digest, which the job run by hand gathers into one
 * e-mail; a failed SMTP send is retried and the request stayed written. The printed e-mails are
 * written to test-results/emails/ (their text is in docs/screens/emails.md).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OutboxPrinter } from '../../src/cli/outbox-printer.js';
import {
  createWorkerPool, drainEmailOutbox, queueNotificationEmails, sendNotificationDigests, type MailTransport, type OutgoingMail,
} from '../../worker/jobs.js';
import { typeIds } from '../api/absence-helpers.js';
import { FIXTURE_PASSWORD } from '../helpers/settings.js';
import { browserWalk, checkPage, login, openPage, poll, screenshots, type WatchedPage } from './browser.js';

const walk = browserWalk();
const EMAIL_DIR = path.resolve('test-results/emails');
let types: Record<string, number>;
let E: Record<string, number>;
let printer: OutboxPrinter;
const printed: string[] = [];
/** The worker's connections (PUBLIC_URL and the business time zone in their session, as in production). */
let workerPool: ReturnType<typeof createWorkerPool>;

beforeAll(async () => {
  types = await typeIds(walk.env);
  E = walk.env.ids.employees!;
  workerPool = createWorkerPool(walk.env.config, 2);
  printer = new OutboxPrinter(walk.env.config.databaseUrl, (text) => printed.push(text), 60_000);
  await printer.start();
  await mkdir(EMAIL_DIR, { recursive: true });
});
afterAll(async () => {
  await printer?.stop();
  await workerPool?.end();
});

/**
 * The e-mails printed since the last call, as the console of `npm start` shows them once the
 * worker (drain_email_outbox, enqueued by the notifying transaction) wrote them into the outbox.
 */
async function newlyPrinted(): Promise<string[]> {
  const before = printed.length;
  await queueNotificationEmails(workerPool);
  await printer.poll();
  return printed.slice(before);
}

/** The application's address of the first link of a printed e-mail (PUBLIC_URL is http://wfm.test). */
function linkOf(email: string): string {
  const match = /^Ouvrir : http:\/\/wfm\.test(\/\S*)$/m.exec(email);
  if (!match) throw new Error(`no link in:\n${email}`);
  return match[1]!;
}

async function fileAbsence(employee: string, type: string, dateStart: string, dateEnd = dateStart): Promise<number> {
  const res = await walk.env.post('/api/absences/', await walk.env.login(employee), { employee: E[employee], type: types[type], date_start: dateStart, date_end: dateEnd });
  expect(res.status).toBe(201);
  return res.body.id;
}

/** Opens an address in a fresh browser: the login comes first, then the address's screen. */
async function openAfterLogin(address: string, username: string): Promise<WatchedPage> {
  const page = await openPage(walk.browser, walk.env.url);
  await page.goto(address);
  await page.getByLabel('Identifiant').fill(username);
  await page.getByLabel('Mot de passe').fill(FIXTURE_PASSWORD);
  await page.getByRole('button', { name: 'Se connecter' }).click();
  await page.getByRole('navigation', { name: 'Menu principal' }).waitFor();
  return page;
}

describe('e-mail notifications in the browser', () => {
  let absence: number;

  it('an employee files: the e-mail is printed with its link, which after the login lands on the decision panel; the manager decides', async () => {
    absence = await fileAbsence('alice', 'MAL', '2026-11-23', '2026-11-24');
    const emails = await newlyPrinted();
    const toManager = emails.find((email) => email.includes('To: julien.petit@tilleuls.example'))!;
    expect(toManager).toContain('Subject: Nouvelle demande d\'absence');
    expect(toManager).toContain('Alice Martin — absence du 23/11/2026 au 24/11/2026');
    expect(toManager).not.toMatch(/maladie/i);
    expect(linkOf(toManager)).toBe(`/file/absences/${absence}`);
    await writeFile(path.join(EMAIL_DIR, 'to-decide.txt'), toManager);

    // A fresh browser (no session): the login, then the decision panel itself.
    const page = await openAfterLogin(linkOf(toManager), 'mgr1');
    expect(new URL(page.url()).pathname).toBe(`/file/absences/${absence}`);
    const dialog = page.getByRole('dialog', { name: 'Demande d’absence' });
    await dialog.getByRole('form', { name: 'Décision' }).waitFor();
    expect(await dialog.textContent()).toContain('Alice Martin');
    await dialog.getByRole('button', { name: 'Valider', exact: true }).click();
    await poll(() => page.getByRole('status').filter({ hasText: 'Demande d’absence d’Alice Martin validée.' }).count()).toBe(1);
    expect(page.problems).toEqual([]);
    await page.context().close();
  });

  it('the employee’s notification says the decision and links to her request; « Tout marquer comme lu » empties the count', async () => {
    const emails = await newlyPrinted();
    const toAlice = emails.find((email) => email.includes('To: alice.martin@tilleuls.example'))!;
    expect(toAlice).toContain('Subject: Demande d\'absence validée');
    expect(linkOf(toAlice)).toBe(`/demandes/absences/${absence}`);
    await writeFile(path.join(EMAIL_DIR, 'my-request.txt'), toAlice);

    // A second notification, so that « Tout marquer comme lu » has more than one to mark.
    await walk.env.db.query("select app_private.notify($1, 'Demande de modification refusée', 'Refusée : effectif insuffisant.', 'error')",
      [walk.env.ids.accounts!.alice]);
    const page = await openPage(walk.browser, walk.env.url);
    await login(page, 'alice');
    const menuLink = page.getByRole('navigation', { name: 'Menu principal' }).getByRole('link', { name: /^Notifications/ });
    await poll(() => menuLink.locator('.count').textContent()).toBe('2');
    await menuLink.click();
    await page.getByRole('heading', { name: 'Notifications', level: 1 }).waitFor();
    const card = page.getByRole('listitem', { name: 'Demande d\'absence validée' });
    expect(await card.textContent()).toContain('validée');
    await checkPage(page, 'Notifications');
    await screenshots(page, 'notifications');
    const link = card.getByRole('link', { name: 'Voir ma demande' });
    expect(await link.getAttribute('href')).toBe(`/demandes/absences/${absence}`);
    await link.click();
    await page.getByRole('heading', { name: 'Demande d’absence', level: 1 }).waitFor();
    expect(new URL(page.url()).pathname).toBe(`/demandes/absences/${absence}`);
    await poll(() => page.locator('.card', { hasText: 'du 23/11/2026 au 24/11/2026' }).locator('.badge').textContent()).toBe('Validée');
    // Opening it marked it read: one left.
    await poll(() => menuLink.locator('.count').textContent()).toBe('1');

    await menuLink.click();
    await page.getByRole('button', { name: 'Tout marquer comme lu' }).click();
    await poll(() => page.getByRole('status').filter({ hasText: 'marquée lue' }).count()).toBe(1);
    await poll(() => menuLink.locator('.count').count()).toBe(0);
    expect(await page.getByText('Non lue').count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Tout marquer comme lu' }).count()).toBe(0);
    expect(page.problems).toEqual([]);
    await page.context().close();
  });

  it('« Mon compte »: the daily digest at a chosen hour; the job run by hand gathers the day into one e-mail', async () => {
    const page = await openPage(walk.browser, walk.env.url);
    await login(page, 'mgr1');
    await page.goto('/compte');
    const form = page.getByRole('form', { name: 'E-mails' });
    await form.waitFor();
    expect(await form.textContent()).toContain('julien.petit@tilleuls.example');
    const decide = form.getByRole('group', { name: 'Demandes à décider' });
    expect(await decide.getByRole('radio', { name: 'Tout de suite' }).isChecked()).toBe(true);
    await decide.getByRole('radio', { name: 'Un résumé par jour' }).check();
    await form.getByLabel('Heure du résumé quotidien (heure de Paris)').selectOption('8');
    await form.getByRole('button', { name: 'Enregistrer mes préférences d’e-mail' }).click();
    await poll(() => page.getByRole('status').filter({ hasText: 'Vos préférences d’e-mail sont enregistrées.' }).count()).toBe(1);
    await checkPage(page, 'Mon compte, e-mails');
    await screenshots(page, 'account-emails');
    expect(page.problems).toEqual([]);
    await page.context().close();
    const stored = await walk.env.get('/api/notifications/preferences/', await walk.env.login('mgr1'));
    expect(stored.body).toMatchObject({ decide: 'digest', digest_hour: 8, own: 'immediate' });

    // The day's filings wait for the digest: nothing printed for the manager.
    const first = await fileAbsence('alice', 'FOR', '2026-12-14');
    walk.env.setNow('2026-11-16T16:30:00+01:00');
    const second = await fileAbsence('bruno', 'FOR', '2026-12-15');
    walk.env.setNow('2026-11-16T10:00:00+01:00');
    expect((await newlyPrinted()).filter((email) => email.includes('To: julien.petit@tilleuls.example'))).toEqual([]);

    // The job, run by hand at the next morning's 8 o'clock run.
    const pool = createWorkerPool(walk.env.config, 1);
    try {
      expect(await sendNotificationDigests(pool, '2026-11-17T08:03:00+01:00')).toBe(1);
      expect(await sendNotificationDigests(pool, '2026-11-17T08:03:30+01:00')).toBe(0);
    } finally {
      await pool.end();
    }
    const digests = (await newlyPrinted()).filter((email) => email.includes('To: julien.petit@tilleuls.example'));
    expect(digests).toHaveLength(1);
    const digest = digests[0]!;
    expect(digest).toContain('Subject: Résumé de vos notifications : 2 nouvelles');
    expect(digest).toContain(`http://wfm.test/file/absences/${first}`);
    expect(digest).toContain(`http://wfm.test/file/absences/${second}`);
    expect(digest).toContain('Bruno Lambert — absence le 15/12/2026');
    await writeFile(path.join(EMAIL_DIR, 'digest.txt'), digest);
  });

  it('a failed SMTP send is retried later, and the request that caused it stayed written', async () => {
    const id = await fileAbsence('chloe', 'FOR', '2026-12-21');
    let refusals = 1;
    const sent: OutgoingMail[] = [];
    const transport: MailTransport = {
      async sendMail(mail) {
        if (refusals > 0) {
          refusals -= 1;
          throw new Error('421 4.3.2 Service indisponible, réessayez plus tard');
        }
        sent.push(mail);
      },
      close() {},
    };
    await walk.env.db.query("update app_private.email_outbox set sent_at = now() where sent_at is null and body_text not like '%' || $1 || '%'",
      [`/file/absences/${id}`]);
    const pool = createWorkerPool(walk.env.config, 1);
    try {
      const smtp = { url: 'smtp://127.0.0.1:1', from: 'planning@wfm.test' };
      const first = await drainEmailOutbox(pool, smtp, transport);
      expect(first.failed).toBe(1);
      // The request is there for its author, whatever the mail did.
      const page = await openAfterLogin(`/demandes/absences/${id}`, 'chloe');
      await page.getByRole('heading', { name: 'Demande d’absence', level: 1 }).waitFor();
      await poll(() => page.locator('.card', { hasText: '21/12/2026' }).locator('.badge').textContent()).toBe('En attente');
      await page.context().close();
      const retry = await drainEmailOutbox(pool, smtp, transport);
      expect(retry).toEqual({ smtp: true, sent: 1, failed: 0, pending: 0 });
      expect(sent.some((mail) => mail.text.includes(`/file/absences/${id}`) && mail.html?.includes(`/file/absences/${id}`))).toBe(true);
      // Each decider's e-mail went; the refused one on its second attempt.
      const { rows } = await walk.env.db.query(
        'select attempts, sent_at is not null as sent, last_error from app_private.email_outbox where body_text like $1 order by attempts', [`%/file/absences/${id}%`]);
      expect(rows.every((row) => row.sent && row.last_error === null)).toBe(true);
      expect(rows.map((row) => row.attempts).filter((attempts) => attempts === 2)).toEqual([2]);
    } finally {
      await pool.end();
    }
  });
});
