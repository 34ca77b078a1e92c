/**
 * The mixed workload, through HTTP as any client: employees file absences (some with a PDF
 * in multipart) and day-change requests, one employee's one-day CT absences drain their counter
 * (sent from every virtual user, so in parallel), managers decide (half of the items by two or three decisions sent at once by both
 * managers) and read their queues. Every answer is classified; writes go to the ledger.
 */
import { Ledger, type Decision, type ItemKind } from './ledger.js';
import { DRAINED_EMPLOYEE, MANAGERS, type Organisation } from './organisation.js';

const PDF = Buffer.from('%PDF-1.4\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n');
const REQUEST_TIMEOUT_MS = 15_000;
/** A client waits this long after a 503 or no answer before its next request (a real one would honour Retry-After). */
const BACKOFF_MS = 250;

export interface Answer {
  status: number;
  body: any;
  retryAfter: string | null;
}

export interface RequestStats {
  requests: number;
  byStatus: Record<string, number>;
  /** 5xx other than 503 with Retry-After, and 503 outside an outage (method, path, status, at). */
  unexpected: string[];
  /** Answers no write or read of this workload expects (a 401, a 404, a 429, ...). */
  errors: string[];
  /** [start time (ms since the run started), duration ms] of every answered request. */
  latencies: Array<[number, number]>;
}

/** Tells whether a fault is under way (or just ended): a 503 is then expected. */
export type OutageProbe = () => boolean;

/** Consecutive weekdays from `first`, one per call. */
class Weekdays {
  private next: Date;
  constructor(first: string) {
    this.next = new Date(`${first}T12:00:00Z`);
  }
  take(): string {
    while ([0, 6].includes(this.next.getUTCDay())) this.next.setUTCDate(this.next.getUTCDate() + 1);
    const day = this.next.toISOString().slice(0, 10);
    this.next.setUTCDate(this.next.getUTCDate() + 1);
    return day;
  }
}

interface Pending {
  kind: ItemKind;
  id: number;
  version: number;
}

export class Workload {
  readonly ledger = new Ledger();
  readonly stats: RequestStats = { requests: 0, byStatus: {}, unexpected: [], errors: [], latencies: [] };
  private readonly tokens = new Map<string, string>();
  private readonly absenceDays = new Map<string, Weekdays>();
  private readonly changeDays = new Map<string, Weekdays>();
  private readonly drainDays = new Weekdays('2027-01-04');
  private readonly queue: Pending[] = [];
  private typeIds: Record<string, number> = {};
  private random: () => number;
  private readonly started = Date.now();

  constructor(
    private readonly baseUrl: () => string,
    private readonly org: Organisation,
    private readonly inOutage: OutageProbe,
    seed: number,
  ) {
    // mulberry32: a reproducible mix for a given --seed.
    let state = seed >>> 0;
    this.random = () => {
      state = (state + 0x6d2b79f5) >>> 0;
      let t = state;
      t = Math.imul(t ^ (t >>> 15), t | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
    for (const key of org.employees) {
      this.absenceDays.set(key, new Weekdays('2027-01-04'));
      this.changeDays.set(key, new Weekdays('2026-12-01'));
    }
  }

  /** Logs every account in once (tokens live 6 hours) and reads the absence types. */
  async prepare(): Promise<void> {
    for (const username of [...this.org.employees, DRAINED_EMPLOYEE, ...MANAGERS]) {
      const answer = await this.raw('POST', '/api/auth/token/', null, { username, password: this.org.password });
      if (answer?.status !== 200) throw new Error(`login of ${username}: ${answer?.status ?? 'no answer'}`);
      this.tokens.set(username, answer.body.access);
    }
    const types = await this.raw('GET', '/api/absence-types/', this.tokens.get(MANAGERS[0]!)!);
    if (types?.status !== 200) throw new Error(`absence types: ${types?.status ?? 'no answer'}`);
    const list = (Array.isArray(types.body) ? types.body : types.body.results) as Array<{ id: number; code: string }>;
    this.typeIds = Object.fromEntries(list.map((type) => [type.code, type.id]));
  }

  /** One request; null when no answer came (refused connection, reset, timeout). */
  async raw(method: string, path: string, token: string | null, body?: object | FormData): Promise<Answer | null> {
    const headers: Record<string, string> = {};
    if (token) headers.Authorization = `Bearer ${token}`;
    let payload: string | FormData | undefined;
    if (body instanceof FormData) payload = body;
    else if (body) {
      headers['Content-Type'] = 'application/json';
      payload = JSON.stringify(body);
    }
    const started = Date.now();
    this.stats.requests += 1;
    try {
      const res = await fetch(`${this.baseUrl()}${path}`, {
        method, headers, body: payload, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
      const text = await res.text();
      if (res.status === 503) await new Promise((resolve) => setTimeout(resolve, BACKOFF_MS));
      this.stats.latencies.push([started - this.started, Date.now() - started]);
      this.stats.byStatus[res.status] = (this.stats.byStatus[res.status] ?? 0) + 1;
      let parsed: unknown = null;
      try {
        parsed = text ? JSON.parse(text) : null;
      } catch {
        parsed = text;
      }
      const answer: Answer = { status: res.status, body: parsed, retryAfter: res.headers.get('retry-after') };
      if (res.status >= 500) {
        const expected = res.status === 503 && answer.retryAfter !== null && this.inOutage();
        if (!expected) this.stats.unexpected.push(`${method} ${path} ${res.status} at ${new Date().toISOString()}`);
      }
      return answer;
    } catch {
      this.stats.byStatus.none = (this.stats.byStatus.none ?? 0) + 1;
      await new Promise((resolve) => setTimeout(resolve, BACKOFF_MS));
      return null;
    }
  }

  private pick<T>(list: readonly T[]): T {
    return list[Math.floor(this.random() * list.length)]!;
  }

  /** Classifies the answer of a write: acknowledged, refused (a definite 4xx) or unknown. */
  private outcome(answer: Answer | null, refusals: number[]): 'ack' | 'refused' | 'unknown' {
    if (answer && answer.status >= 200 && answer.status < 300) return 'ack';
    if (answer && refusals.includes(answer.status)) {
      this.ledger.refused += 1;
      return 'refused';
    }
    if (answer && answer.status < 500) this.stats.errors.push(`${answer.status} ${JSON.stringify(answer.body).slice(0, 200)}`);
    this.ledger.unanswered += 1;
    return 'unknown';
  }

  private async fileAbsence(withDocument: boolean): Promise<void> {
    const username = this.pick(this.org.employees);
    const day = this.absenceDays.get(username)!.take();
    const fields = { employee: this.org.employeeIds[username]!, type: this.typeIds.FOR!, date_start: day, date_end: day, comment: 'Formation' };
    let body: object | FormData = fields;
    if (withDocument) {
      const form = new FormData();
      for (const [key, value] of Object.entries(fields)) form.append(key, String(value));
      form.append('add_documents', new Blob([PDF], { type: 'application/pdf' }), 'convocation.pdf');
      body = form;
    }
    const answer = await this.raw('POST', '/api/absences/', this.tokens.get(username)!, body);
    const outcome = this.outcome(answer, [400]);
    if (withDocument && outcome === 'unknown') this.ledger.uncertainUploads += 1;
    if (outcome !== 'ack') return;
    this.ledger.created('absence', answer!.body.id, (answer!.body.documents as Array<{ id: number }>).map((d) => d.id));
    this.queue.push({ kind: 'absence', id: answer!.body.id, version: answer!.body.version });
  }

  private async fileDayChange(): Promise<void> {
    const username = this.pick(this.org.employees);
    const date = this.changeDays.get(username)!.take();
    const answer = await this.raw('POST', '/api/shift-change-requests/', this.tokens.get(username)!, {
      date, reason: 'urgence', comment: 'Échange avec un collègue',
      slots: [{ start_time: '10:00', end_time: '18:00', break_start_time: '12:00', break_end_time: '12:30' }],
    });
    if (this.outcome(answer, [400]) !== 'ack') return;
    this.ledger.created('shift_change_request', answer!.body.id);
    this.queue.push({ kind: 'shift_change_request', id: answer!.body.id, version: answer!.body.version });
  }

  /** A one-day CT on the one drained counter (parallel with the other users' drains). */
  private async drain(): Promise<void> {
    const day = this.drainDays.take();
    const answer = await this.raw('POST', '/api/absences/', this.tokens.get(DRAINED_EMPLOYEE)!, {
      employee: this.org.employeeIds[DRAINED_EMPLOYEE], type: this.typeIds.CT, date_start: day, date_end: day,
    });
    if (this.outcome(answer, [400]) !== 'ack') return;
    this.ledger.created('absence', answer!.body.id);
    this.queue.push({ kind: 'absence', id: answer!.body.id, version: answer!.body.version });
  }

  /** Decides the oldest waiting item: alone, or by two or three decisions at once from both managers. */
  private async decide(): Promise<void> {
    const item = this.queue.shift();
    if (!item) return this.read();
    const base = item.kind === 'absence' ? '/api/absences' : '/api/shift-change-requests';
    const parallel = this.random() < 0.5 ? 2 + Math.floor(this.random() * 2) : 1;
    const decisions: Decision[] = Array.from({ length: parallel }, () => (this.random() < 0.7 ? 'validated' : 'refused'));
    await Promise.all(decisions.map(async (decision, i) => {
      const verb = decision === 'validated' ? 'validate' : 'refuse';
      const answer = await this.raw('POST', `${base}/${item.id}/${verb}/`, this.tokens.get(MANAGERS[i % MANAGERS.length]!)!,
        { version: item.version, reason: 'Décision du chaos' });
      const outcome = this.outcome(answer, [400, 409]);
      if (outcome === 'ack') this.ledger.decided(item.kind, item.id, decision);
      else if (outcome === 'unknown') this.ledger.decisionUncertain(item.kind, item.id, decision);
    }));
  }

  private async read(): Promise<void> {
    const manager = this.pick(MANAGERS);
    const path = this.random() < 0.5 ? '/api/absences/?status=pending&page_size=20' : '/api/shift-change-requests/?status=pending&page_size=20';
    const answer = await this.raw('GET', path, this.tokens.get(manager)!);
    if (answer && answer.status !== 200 && answer.status !== 503) this.stats.errors.push(`GET ${path} ${answer.status}`);
  }

  /** One action of the mix. */
  async step(): Promise<void> {
    const draw = this.random();
    if (draw < 0.25) return this.fileAbsence(false);
    if (draw < 0.35) return this.fileAbsence(true);
    if (draw < 0.55) return this.fileDayChange();
    if (draw < 0.65) return this.drain();
    if (draw < 0.9) return this.decide();
    return this.read();
  }

  /** Chaos mode: `users` loops back to back until `until`. */
  async runBackToBack(users: number, until: number): Promise<void> {
    await Promise.all(Array.from({ length: users }, async () => {
      while (Date.now() < until) {
        await this.step();
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    }));
  }

  /** Soak: `rate` actions a second, started on a fixed schedule (at most 64 in flight). */
  async runSteady(rate: number, until: number): Promise<void> {
    const inFlight = new Set<Promise<void>>();
    const interval = 1000 / rate;
    let next = Date.now();
    while (Date.now() < until) {
      if (inFlight.size < 64) {
        const action = this.step().finally(() => inFlight.delete(action));
        inFlight.add(action);
      }
      next += interval;
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, next - Date.now())));
    }
    await Promise.all(inFlight);
  }

  /** A probe through the SQL path: 200 once the service and its database answer. */
  async probe(): Promise<boolean> {
    try {
      const res = await fetch(`${this.baseUrl()}/api/auth/me/`, {
        headers: { Authorization: `Bearer ${this.tokens.get(MANAGERS[0]!)}` }, signal: AbortSignal.timeout(2000),
      });
      await res.arrayBuffer();
      return res.status === 200;
    } catch {
      return false;
    }
  }
}
