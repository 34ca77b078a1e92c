/**
 * A back-office visitor without a browser: a cookie jar, form posts with the page's CSRF
 * token, and the steps of the login (password, enrolment, second factor).
 */
import { generate } from 'otplib';
import type { TestEnv } from './server.js';
import { DEFAULT_NOW, FIXTURE_PASSWORD } from './settings.js';

export interface Page {
  status: number;
  location: string | null;
  text: string;
  headers: Headers;
}

export class BackofficeVisitor {
  readonly cookies = new Map<string, string>();

  /** `fetcher`: another client address (test/helpers/client-address.ts), else the global fetch. */
  constructor(private readonly baseUrl: string, private readonly fetcher: typeof fetch = fetch) {}

  cookieHeader(): string {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }

  async request(method: string, path: string, options: { form?: Record<string, string>; headers?: Record<string, string>; json?: unknown } = {}): Promise<Page> {
    const headers: Record<string, string> = { cookie: this.cookieHeader(), ...options.headers };
    let body: string | undefined;
    if (options.form) {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      body = new URLSearchParams(options.form).toString();
    } else if (options.json !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(options.json);
    }
    const response = await this.fetcher(`${this.baseUrl}${path}`, { method, headers, body, redirect: 'manual' });
    for (const line of response.headers.getSetCookie()) {
      const [pair, ...attributes] = line.split(';');
      const [name, value] = [pair!.slice(0, pair!.indexOf('=')), pair!.slice(pair!.indexOf('=') + 1)];
      if (attributes.some((a) => a.trim() === 'Max-Age=0')) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return { status: response.status, location: response.headers.get('location'), text: await response.text(), headers: response.headers };
  }

  get(path: string, headers?: Record<string, string>): Promise<Page> {
    return this.request('GET', path, { headers });
  }

  /** Posts a form with the CSRF token of the page at `from` (default: the action itself). */
  async submit(action: string, fields: Record<string, string>, from = action): Promise<Page> {
    const page = await this.get(from);
    const csrf = /name="csrf_token" value="([^"]+)"/.exec(page.text)?.[1];
    if (!csrf) throw new Error(`no CSRF token on ${from} (${page.status})`);
    return this.request('POST', action, { form: { ...fields, csrf_token: csrf } });
  }

  login(username: string, password = FIXTURE_PASSWORD): Promise<Page> {
    return this.submit('/backoffice/login/', { username, password });
  }

  /** The enrolment page's secret (shown once), and the confirmation with a code of `epoch`. */
  async enrol(epochSeconds: number): Promise<{ secret: string; page: Page; codes: string[] }> {
    const enrolPage = await this.get('/backoffice/login/enrol/');
    const secret = /<code id="cle">([A-Z2-7 ]+)<\/code>/.exec(enrolPage.text)?.[1]?.replace(/ /g, '');
    if (!secret) throw new Error(`no secret on the enrolment page (${enrolPage.status})`);
    const csrf = /name="csrf_token" value="([^"]+)"/.exec(enrolPage.text)![1]!;
    const code = await generate({ secret, epoch: epochSeconds });
    const page = await this.request('POST', '/backoffice/login/enrol/', { form: { code, csrf_token: csrf } });
    const codes = [...page.text.matchAll(/<li><code>([a-z0-9]{5}-[a-z0-9]{5})<\/code><\/li>/g)].map((m) => m[1]!);
    return { secret, page, codes };
  }
}

export function totp(secret: string, epochSeconds: number): Promise<string> {
  return generate({ secret, epoch: epochSeconds });
}

/**
 * Signs `username` in afresh at the frozen DEFAULT_NOW: its factors are deleted, then the
 * password step and the enrolment give a full session. Returns the visitor, the secret and
 * the backup codes, and the enrolment's last page.
 */
export async function enrolAs(env: TestEnv, username: string) {
  await env.db.query('delete from app_private.backoffice_factors where account_id = $1', [env.ids.accounts![username]]);
  env.setNow(DEFAULT_NOW);
  const visitor = new BackofficeVisitor(env.url);
  const login = await visitor.login(username);
  if (login.location !== '/backoffice/login/enrol/') throw new Error(`${username}: login gave ${login.status} ${login.location}`);
  const result = await visitor.enrol(Date.parse(DEFAULT_NOW) / 1000);
  if (result.page.status !== 200) throw new Error(`${username}: enrolment gave ${result.page.status}`);
  return { ...result, visitor };
}
