/**
 * A year of the demo association's life (issue 27 point 6), replayed after the demo
 * organisation is imported: absences filed by employees and decided by their managers
 * (granted, refused, refused then filed again), sick leave declared by a manager with its
 * certificate, a child's sickness with a photo of the certificate, day-change requests,
 * cancellations granted, refused and one still to decide, counter adjustments by HR,
 * on-call weekends, notifications read long ago and some still unread, and today's queues:
 * something to decide for every manager and HR level.
 *
 * Every step is a call of the API's SQL function, as the account that would make it, at
 * the moment it would have been made: the same prelude as an HTTP request
 * (app_private.begin_request_or_fail, then the wfm_visitor role) with the business clock
 * set to that moment (app.frozen_now, local to the step). Rules, audit lines, counter
 * journal and notifications are therefore the API's own. Files go through the storage and
 * the upload check (app.uploaded_files) as a multipart upload does.
 *
 * Deterministic: the plan depends only on the business date and a fixed seed. Dates are
 * relative to the business date, so the demo looks alive whenever it is loaded.
 */
import { Readable } from 'node:stream';
import { deflateSync } from 'node:zlib';
import type pg from 'pg';
import { ROLES } from '../db/roles.js';
import type { FileStorage, StoredFile } from '../storage/storage.js';
import { buildDemoOrganisation, DEMO_LOGINS, demoStaffFacts, zoneOffset, type DemoStaffFacts, type EstablishmentKey } from './demo.js';
import { importOrganisation } from './import.js';

/** The seed of the plan's choices (lead times, lengths, which request is refused). */
export const DEMO_HISTORY_SEED = 20_261_127;

/** A document attached to a step: the bytes are made by the loader (demoDocument). */
interface DocumentSpec {
  kind: 'pdf' | 'png';
  filename: string;
  title: string;
}

type Step =
  | { kind: 'absence'; ref: string; employee: string; type: string; start: string; end: string; comment?: string; documents?: DocumentSpec[] }
  | { kind: 'absence-validate'; ref: string; reason?: string }
  | { kind: 'absence-refuse'; ref: string; reason: string }
  | { kind: 'absence-request-cancellation'; ref: string; comment: string }
  | { kind: 'shift-change'; ref: string; employee: string; date: string; comment: string; shiftMinutes: number }
  | { kind: 'shift-change-validate'; ref: string }
  | { kind: 'shift-change-refuse'; ref: string; reason: string }
  | { kind: 'on-call'; holder: string; establishments: EstablishmentKey[]; start: string; end: string; comment: string }
  | { kind: 'counter-adjust'; employee: string; code: string; year: number; quantity: number; reason: string }
  | { kind: 'read-notifications'; before: string }
  | { kind: 'worker-job'; job: WorkerJob; day: string }
  | { kind: 'open-next-year'; year: number };

/**
 * The worker's daily jobs the history replays (worker/jobs.ts), each one SQL function of the
 * date; a job whose function this database does not have is passed over.
 */
const WORKER_JOBS = {
  consume_started_absences: 'app_private.consume_started_absences(date)',
  open_next_year_counters: 'app_private.open_next_year_counters(date)',
  acquire_monthly_counters: 'app_private.acquire_monthly_counters(date)',
  close_counter_years: 'app_private.close_counter_years(date)',
} as const;
type WorkerJob = keyof typeof WORKER_JOBS;

/** One step of the history: who acts, when (an instant with its offset), and what. */
export interface HistoryStep {
  at: string;
  actor: string;
  step: Step;
}

/** What the plan needs besides the business date. */
export interface PlanOptions {
  today: string;
  timeZone: string;
  /** Public holidays (YYYY-MM-DD) of the years around the business date. */
  holidays: ReadonlySet<string>;
  /** Years whose counters are open (import: the business year and the one before). */
  openYears: ReadonlySet<number>;
  /**
   * The counters that next year's opening (issue 27 point 2) opens, by employee key, when the
   * database has it: the history then opens next year and files requests in it.
   */
  nextYear?: ReadonlyMap<string, ReadonlySet<string>>;
}

// ---------------------------------------------------------------------------------------
// Dates

function parse(iso: string): Date {
  return new Date(`${iso}T00:00:00Z`);
}

function addDays(iso: string, days: number): string {
  const date = parse(iso);
  date.setUTCDate(date.getUTCDate() + days);
  return date.toISOString().slice(0, 10);
}

/** ISO weekday, 1 (Monday) to 7. */
function weekday(iso: string): number {
  return ((parse(iso).getUTCDay() + 6) % 7) + 1;
}

function mondayOnOrAfter(iso: string): string {
  return addDays(iso, (8 - weekday(iso)) % 7);
}

/** A deterministic generator (mulberry32). */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// ---------------------------------------------------------------------------------------
// The cast

/** Who decides an employee's requests in the demo (a manager of their establishment, or above). */
const DECIDER: Record<string, string> = {
  // Managers and HR: their superiors.
  manager1: 'rh1', da: 'rh1', admin: 'rh1', rh2: 'rh1',
  'claire.aubert': 'manager2', 'francois.lebrun': 'manager2', manager2: 'rh2', rh1: 'admin', paie: 'rh1',
};
const ESTABLISHMENT_DECIDER: Record<EstablishmentKey, string> = { FOYER: 'manager1', IME: 'claire.aubert', ESAT: 'francois.lebrun' };

/** The employees whose last twelve months are replayed (contracts that ran all of last year). */
const HISTORY_CAST = [
  'salarie', 'thomas.lefebvre', 'camille.rousseau', 'mathieu.dupuis', 'patrick.gauthier', 'alexandre.fournier',
  'isabelle.renaud', 'hugo.marchand', 'vincent.barbier', 'sandrine.faure', 'youssef.amrani',
  'philippe.duval', 'valerie.lemoine', 'david.noel', 'kevin.mallet', 'laurence.picard',
  'manager1', 'manager2', 'claire.aubert', 'francois.lebrun', 'rh2', 'da', 'paie', 'aurelie.masson',
];

const REFUSALS = [
  'Trop d’absences sur ces deux semaines dans l’équipe : merci de proposer d’autres dates.',
  'Période de transferts et de camps : la présence de toute l’équipe est nécessaire.',
  'Remplacement impossible à trouver sur ces dates, désolé.',
];
const SHIFT_REFUSALS = [
  'Pas de relève possible à cette heure-là ce jour-là.',
  'Réunion d’équipe ce jour-là : horaires habituels maintenus.',
];

// ---------------------------------------------------------------------------------------
// The plan

/**
 * The history as an ordered list of steps, for the business date. Pure: the same date,
 * holidays and open years give the same steps.
 */
export function planDemoHistory({ today, timeZone, holidays, openYears, nextYear }: PlanOptions): HistoryStep[] {
  const staff = demoStaffFacts(today);
  const rnd = random(DEMO_HISTORY_SEED);
  const pick = (min: number, max: number) => min + Math.floor(rnd() * (max - min + 1));
  const steps: Array<HistoryStep & { order: number }> = [];
  let order = 0;
  /** The step at `time` (HH:MM, business zone) of `date`. */
  const at = (date: string, time: string) => `${date}T${time}:00${zoneOffset(date, time, timeZone)}`;
  const add = (date: string, time: string, actor: string, step: Step) => {
    steps.push({ at: at(date, time), actor, step, order: order++ });
  };
  /** A time of day between `from` and `to` hours, to the minute. */
  const clock = (from: number, to: number) => {
    const minutes = from * 60 + Math.floor(rnd() * (to - from) * 60);
    return `${String(Math.floor(minutes / 60)).padStart(2, '0')}:${String(minutes % 60).padStart(2, '0')}`;
  };
  const facts = (key: string): DemoStaffFacts => {
    const fact = staff.get(key);
    if (!fact) throw new Error(`demo history: unknown employee ${key}`);
    return fact;
  };
  const deciderOf = (key: string) => DECIDER[key] ?? ESTABLISHMENT_DECIDER[facts(key).establishment];
  const works = (key: string, date: string) => facts(key).week[weekday(date)] !== undefined && !holidays.has(date);
  /** The first day on or after `date` that the employee works (not a holiday). */
  const workday = (key: string, date: string) => {
    let day = date;
    for (let i = 0; i < 14 && !works(key, day); i++) day = addDays(day, 1);
    return day;
  };
  /**
   * A counter reason the employee holds for the years of [start, end], else a reason
   * without counter: a request never lands in a year whose counters are not open yet.
   */
  const thisYear = Number(today.slice(0, 4));
  const holds = (key: string, code: string, y: number) =>
    y === thisYear + 1 ? (nextYear?.get(key)?.has(code) ?? false) : openYears.has(y) && facts(key).counterCodes.includes(code);
  const leave = (key: string, preferred: string[], start: string, end: string) => {
    const years = [Number(start.slice(0, 4)), Number(end.slice(0, 4))];
    return preferred.find((code) => years.every((y) => holds(key, code, y))) ?? 'FOR';
  };
  /** A request filed by `key` on `filed`, decided by its decider on `decided` (or left pending). */
  let refs = 0;
  const absence = (key: string, type: string, start: string, end: string, filed: string,
                   outcome: { validate?: string; refuse?: string; reason?: string }, extra: Partial<Extract<Step, { kind: 'absence' }>> = {}) => {
    const ref = `a${++refs}`;
    add(filed, clock(7, 21), key, { kind: 'absence', ref, employee: key, type, start, end, ...extra });
    if (outcome.validate) add(outcome.validate, clock(8, 19), deciderOf(key), { kind: 'absence-validate', ref });
    if (outcome.refuse) add(outcome.refuse, clock(8, 19), deciderOf(key), { kind: 'absence-refuse', ref, reason: outcome.reason! });
    return ref;
  };
  const shiftChange = (key: string, date: string, filed: string, outcome: 'validate' | 'refuse' | 'pending', decided?: string) => {
    const ref = `s${++refs}`;
    const shiftMinutes = [60, -60, 30, 90][refs % 4]!;
    const comment = shiftMinutes > 0 ? 'Rendez-vous médical en début de journée : je peux finir plus tard.'
      : 'Sortie d’école de ma fille : je peux commencer plus tôt.';
    add(filed, clock(7, 21), key, { kind: 'shift-change', ref, employee: key, date, comment, shiftMinutes });
    if (outcome === 'validate') add(decided!, clock(8, 19), deciderOf(key), { kind: 'shift-change-validate', ref });
    if (outcome === 'refuse') {
      add(decided!, clock(8, 19), deciderOf(key), { kind: 'shift-change-refuse', ref, reason: SHIFT_REFUSALS[refs % SHIFT_REFUSALS.length]! });
    }
    return ref;
  };
  const T = today;

  // The last twelve months of each employee of the cast, spread so that no two overlap.
  HISTORY_CAST.forEach((key, i) => {
    const f = facts(key);
    // Winter week of paid leave, granted.
    const winter = mondayOnOrAfter(addDays(T, -335 + ((i * 5) % 28)));
    const winterEnd = addDays(winter, 4);
    absence(key, leave(key, ['CP'], winter, winterEnd), winter, winterEnd, addDays(winter, -pick(30, 45)),
      { validate: addDays(winter, -pick(20, 28)) });
    // Two days of quarterly leave, time off or paid leave in the spring (one employee in two).
    const spring = mondayOnOrAfter(addDays(T, -240 + ((i * 3) % 21)));
    if (i % 2 === 0) {
    const springStart = addDays(spring, 1);
    const springEnd = addDays(spring, 2);
      absence(key, leave(key, ['CT', 'RTT', 'CP'], springStart, springEnd), springStart, springEnd, addDays(spring, -pick(15, 25)),
        { validate: addDays(spring, -pick(8, 12)) });
    }
    // Two weeks of summer leave; one request in four is refused first, then filed again a week later.
    const summer = mondayOnOrAfter(addDays(T, -165 + ((i * 4) % 35)));
    if (i % 4 === 1) {
      const early = addDays(summer, -7);
      absence(key, leave(key, ['CP'], early, addDays(early, 11)), early, addDays(early, 11), addDays(early, -70),
        { refuse: addDays(early, -64), reason: REFUSALS[i % REFUSALS.length] });
    }
    absence(key, leave(key, ['CP'], summer, addDays(summer, 11)), summer, addDays(summer, 11), addDays(summer, -56),
      { validate: addDays(summer, -50) }, { comment: i % 3 === 0 ? 'Vacances en famille.' : undefined });
    // A sick leave declared by the manager with the certificate (one employee in five).
    if (i % 5 === 2 && !(key in DECIDER)) {
      const sick = workday(key, addDays(T, -100 + (i % 9)));
      absence(deciderOf(key), 'MAL', sick, addDays(sick, 2), addDays(sick, 1), {}, {
        employee: key,
        documents: [{ kind: 'pdf', filename: 'arret-de-travail.pdf', title: `Avis d’arrêt de travail du ${sick}` }],
      });
    }
    // A child's sickness, filed on the day with a photo of the certificate (one in seven).
    if (i % 7 === 3) {
      const child = workday(key, addDays(T, -200 + (i % 11)));
      absence(key, 'ENF', child, child, child, { validate: addDays(child, 1) }, {
        comment: 'Ma fille a de la fièvre, certificat du pédiatre joint.',
        documents: [{ kind: 'png', filename: 'certificat-enfant-malade.png', title: 'Certificat médical' }],
      });
    }
    // A day-change request in the autumn: granted, or refused one time in three.
    if (Object.keys(f.week).length > 0) {
      const day = workday(key, addDays(T, -80 + ((i * 2) % 25)));
      const filed = addDays(day, -pick(4, 8));
      shiftChange(key, day, filed, i % 3 === 2 ? 'refuse' : 'validate', addDays(filed, pick(1, 2)));
    }
    // One recent day off, granted (the other employee in two).
    if (i % 2 === 1) {
      const recent = workday(key, addDays(T, -45 + (i % 13)));
      absence(key, leave(key, ['RTT', 'CT', 'CP'], recent, recent), recent, recent, addDays(recent, -12), { validate: addDays(recent, -10) });
    }
  });

  // Cancellations decided in the past: one granted, one refused.
  {
    const start = workday('camille.rousseau', addDays(T, -120));
    const ref = absence('camille.rousseau', leave('camille.rousseau', ['CT', 'CP'], start, start), start, start, addDays(start, -30),
      { validate: addDays(start, -28) });
    add(addDays(start, -10), '12:30', 'camille.rousseau', { kind: 'absence-request-cancellation', ref, comment: 'Mon déménagement est reporté.' });
    add(addDays(start, -9), '10:15', 'manager1', { kind: 'absence-validate', ref });
  }
  {
    const start = workday('kevin.mallet', addDays(T, -70));
    const ref = absence('kevin.mallet', leave('kevin.mallet', ['CP'], start, start), start, start, addDays(start, -25),
      { validate: addDays(start, -24) });
    add(addDays(start, -5), '12:30', 'kevin.mallet', { kind: 'absence-request-cancellation', ref, comment: 'Je préférerais garder ce jour pour plus tard.' });
    add(addDays(start, -4), '10:15', 'francois.lebrun', { kind: 'absence-refuse', ref, reason: 'Le remplacement est déjà organisé : le congé est maintenu.' });
  }

  // Counter adjustments written by HR, with their reasons.
  const year = Number(T.slice(0, 4));
  add(addDays(T, -60), '11:00', 'rh1', { kind: 'counter-adjust', employee: 'salarie', code: 'CP', year, quantity: 2,
    reason: 'Jours de fractionnement : congés pris hors de la période principale.' });
  add(addDays(T, -25), '15:30', 'rh2', { kind: 'counter-adjust', employee: 'hugo.marchand', code: 'CT', year, quantity: -1,
    reason: 'Régularisation : journée de congé trimestriel posée sur papier en septembre.' });

  // On-call weekends of the managers over the last two months and the next one (the import
  // holds the coming weekend's of manager2).
  const nextMonday = addDays(T, 8 - weekday(T));
  const holders: Array<[string, EstablishmentKey]> = [['manager1', 'FOYER'], ['claire.aubert', 'IME'], ['francois.lebrun', 'ESAT']];
  for (let week = -8; week <= 2; week += 1) {
    if (week === 0) continue;
    const monday = addDays(nextMonday, week * 7);
    const friday = addDays(monday, -3);
    const [holder, establishment] = holders[(week + 9) % holders.length]!;
    add(addDays(friday, -12), '10:00', 'rh1', {
      kind: 'on-call', holder, establishments: [establishment], start: at(friday, '18:00'), end: at(monday, '08:00'),
      comment: 'Astreinte de direction du week-end',
    });
  }

  // Notifications read long ago; the last week's stay unread.
  add(addDays(T, -7), '18:30', '*', { kind: 'read-notifications', before: at(addDays(T, -9), '00:00') });

  // Today's queues. Granted leave ahead; a cancellation requested; requests to decide in every queue.
  {
    const start = workday('salarie', addDays(T, 9));
    const ref = absence('salarie', leave('salarie', ['CT', 'CP'], start, start), start, start, addDays(T, -20), { validate: addDays(T, -18) });
    add(addDays(T, -1), '19:40', 'salarie', { kind: 'absence-request-cancellation', ref,
      comment: 'Finalement je reste disponible ce jour-là : je garde ce congé pour les fêtes.' });
  }
  {
    const start = workday('sandrine.faure', addDays(T, 12));
    const ref = absence('sandrine.faure', leave('sandrine.faure', ['CP'], start, start), start, start, addDays(T, -30), { validate: addDays(T, -29) });
    add(addDays(T, -2), '08:15', 'sandrine.faure', { kind: 'absence-request-cancellation', ref, comment: 'Rendez-vous déplacé, je serai là.' });
  }
  // Leave granted ahead (drawn in the plannings).
  for (const [key, offset] of [['alexandre.fournier', 6], ['philippe.duval', 15], ['isabelle.renaud', 4]] as const) {
    const start = workday(key, addDays(T, offset));
    absence(key, leave(key, ['RTT', 'CT', 'CP'], start, start), start, start, addDays(T, -15), { validate: addDays(T, -13) });
  }
  // A sick leave running today, declared by the manager.
  {
    const start = addDays(T, -2);
    absence('manager1', 'MAL', start, addDays(T, 3), addDays(T, -1), {}, {
      employee: 'mathieu.dupuis',
      documents: [{ kind: 'pdf', filename: 'arret-de-travail.pdf', title: `Avis d’arrêt de travail du ${start}` }],
    });
  }
  // Decisions of the last days, whose notifications are still unread.
  {
    const day = workday('salarie', addDays(T, 38));
    absence('salarie', leave('salarie', ['CT', 'CP'], day, day), day, day, addDays(T, -8),
      { refuse: addDays(T, -4), reason: 'Sortie annuelle du foyer ce jour-là : toute l’équipe est mobilisée.' });
    shiftChange('salarie', workday('salarie', addDays(T, 6)), addDays(T, -6), 'validate', addDays(T, -3));
    shiftChange('interimaire', workday('interimaire', addDays(T, 2)), addDays(T, -5), 'validate', addDays(T, -4));
    for (const [key, offset] of [['da', 20], ['paie', 11]] as const) {
      const start = workday(key, addDays(T, offset));
      absence(key, leave(key, ['RTT', 'CT', 'CP'], start, start), start, start, addDays(T, -9), { validate: addDays(T, -3) });
    }
  }
  // Pending requests: each manager and HR level has something to decide.
  const pending: Array<[string, string[], number, number, number]> = [
    // employee, reasons, first day (days from today), length (days), filed (days from today)
    ['salarie', ['CP'], 24, 4, -2],
    ['thomas.lefebvre', ['CT', 'CP'], 17, 1, -3],
    ['camille.rousseau', ['CP'], 31, 4, -1],
    ['isabelle.renaud', ['CP'], 21, 4, -4],
    ['vincent.barbier', ['CT', 'CP'], 14, 1, -1],
    ['valerie.lemoine', ['CP'], 28, 4, -3],
    ['david.noel', ['CP'], 10, 1, -2],
    ['manager1', ['RTT', 'CP'], 19, 1, -2],
    ['manager2', ['RTT', 'CP'], 22, 1, -1],
    ['claire.aubert', ['RTT', 'CP'], 26, 1, -3],
    ['francois.lebrun', ['RTT', 'CP'], 16, 1, -4],
  ];
  for (const [key, reasons, offset, length, filed] of pending) {
    const start = mondayOnOrAfter(addDays(T, offset));
    const end = addDays(start, length);
    absence(key, leave(key, reasons, start, end), start, end, addDays(T, filed), {},
      { comment: length > 1 ? 'Congés de fin d’année en famille.' : undefined });
  }
  // Pending day-change requests in the three establishments.
  for (const [key, offset, filed] of [['salarie', 3, -1], ['hugo.marchand', 5, -2], ['kevin.mallet', 4, -1], ['christophe.lambert', 8, -3]] as const) {
    shiftChange(key, workday(key, addDays(T, offset)), addDays(T, filed), 'pending');
  }

  // The counters' year (issue 27 points 2 to 4), where the database has its jobs: next year's
  // counters opened by the daily job from 1 October (the setting's default), or on demand by
  // the admin when the demo is loaded before that date; each month's acquisition and the
  // year's end (carry-over, expiry and its notice), replayed on the first night of each month.
  if (nextYear && nextYear.size > 0) {
    const opening = `${year}-10-01`;
    if (opening <= T) add(opening, '01:17', 'worker', { kind: 'worker-job', job: 'open_next_year_counters', day: opening });
    else add(addDays(T, -6), '09:10', 'admin', { kind: 'open-next-year', year: year + 1 });
    add(T, '01:17', 'worker', { kind: 'worker-job', job: 'open_next_year_counters', day: T });
  }
  const firstStep = steps.reduce((first, step) => (step.at < first ? step.at : first), T).slice(0, 10);
  for (let month = firstStep.slice(0, 8) + '01'; month <= T; month = addDays(month, 32).slice(0, 8) + '01') {
    add(month, '01:27', 'worker', { kind: 'worker-job', job: 'acquire_monthly_counters', day: month });
    add(month, '01:37', 'worker', { kind: 'worker-job', job: 'close_counter_years', day: month });
  }
  add(T, '01:27', 'worker', { kind: 'worker-job', job: 'acquire_monthly_counters', day: T });
  add(T, '01:37', 'worker', { kind: 'worker-job', job: 'close_counter_years', day: T });

  // The worker's nightly job (00:07): granted absences that started move from Planifiés to
  // Pris. It runs on each night an absence started (on the others it has nothing to do).
  const starts = new Set<string>();
  for (const { step } of steps) if (step.kind === 'absence' && step.start <= T) starts.add(step.start);
  starts.add(T);
  for (const day of [...starts].sort()) add(day, '00:07', 'worker', { kind: 'worker-job', job: 'consume_started_absences', day });

  // Chronological order; steps of the same instant keep the order they were planned in.
  return steps
    .sort((a, b) => (a.at === b.at ? a.order - b.order : Date.parse(a.at) - Date.parse(b.at)))
    .map(({ at: when, actor, step }) => ({ at: when, actor, step }));
}

// ---------------------------------------------------------------------------------------
// Documents

function crc32(bytes: Buffer): number {
  let crc = 0xffffffff;
  for (const byte of bytes) {
    crc ^= byte;
    for (let k = 0; k < 8; k++) crc = (crc >>> 1) ^ (0xedb88320 & -(crc & 1));
  }
  return (crc ^ 0xffffffff) >>> 0;
}

function pngChunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([length, body, crc]);
}

/** A small valid PNG: a grey page with a few darker lines, like a photographed certificate. */
function demoPng(): Buffer {
  const width = 48;
  const height = 64;
  const rows: Buffer[] = [];
  for (let y = 0; y < height; y++) {
    const row = Buffer.alloc(1 + width, 0xee);
    row[0] = 0; // filter: none
    if (y % 8 === 4 && y > 6 && y < 58) for (let x = 6; x < width - 6 - (y % 16); x++) row[1 + x] = 0x55;
    rows.push(row);
  }
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header[8] = 8; // bit depth
  header[9] = 0; // greyscale
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk('IHDR', header),
    pngChunk('IDAT', deflateSync(Buffer.concat(rows))),
    pngChunk('IEND', Buffer.alloc(0)),
  ]);
}

/** A small valid one-page PDF (with its cross-reference table) showing `title`. */
function demoPdf(title: string): Buffer {
  const text = title.replace(/[^\x20-\x7e]/g, '?').replace(/([()\\])/g, '\\$1');
  const stream = `BT /F1 14 Tf 60 760 Td (${text}) Tj 0 -24 Td (Document de demonstration - Horizons Solidaires) Tj ET`;
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>',
    `<< /Length ${stream.length} >>\nstream\n${stream}\nendstream`,
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
  ];
  let body = '%PDF-1.4\n';
  const offsets: number[] = [];
  objects.forEach((object, index) => {
    offsets.push(body.length);
    body += `${index + 1} 0 obj\n${object}\nendobj\n`;
  });
  const xref = body.length;
  body += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const offset of offsets) body += `${String(offset).padStart(10, '0')} 00000 n \n`;
  body += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(body, 'latin1');
}

// ---------------------------------------------------------------------------------------
// The loader

export interface HistoryOutcome {
  steps: number;
  absences: number;
  shiftChanges: number;
  documents: number;
  notificationsRead: number;
  milliseconds: number;
  /** Steps and milliseconds by kind of step (where the time goes). */
  byKind: Record<string, { steps: number; milliseconds: number }>;
}

export interface LoadHistoryOptions {
  /** Business time zone (the instants of the steps). */
  timeZone: string;
  storage: FileStorage;
  /** Ids of the import (importOrganisation's answer): accounts, employees, establishments by key. */
  ids: Record<string, Record<string, number>>;
  /** Largest accepted document, in bytes (the routes' limit). */
  maxFileBytes: number;
}

const MAX_STEP_ERROR = 400;

/**
 * Replays the plan in the caller's open transaction (the demo's import transaction: all of
 * it or nothing). Each step: the clock at its instant, the account's prelude, the visitor
 * role, the API function, back to the connection's own role. The connection must be able
 * to become wfm_visitor (the owner of an embedded database, a superuser, or an owner
 * granted the role).
 */
export async function loadDemoHistory(client: pg.ClientBase, options: LoadHistoryOptions): Promise<HistoryOutcome> {
  const began = performance.now();
  const { rows: dateRows } = await client.query<{ today: string }>("select to_char(app_hidden.today(), 'YYYY-MM-DD') as today");
  const today = dateRows[0]!.today;
  const year = Number(today.slice(0, 4));
  const { rows: holidayRows } = await client.query<{ day: string }>(
    "select to_char(h.day, 'YYYY-MM-DD') as day from generate_series($1::int - 1, $1::int + 1) y, app_public.public_holidays(y) h",
    [year],
  );
  const { rows: yearRows } = await client.query<{ year: number }>('select distinct year from app_public.counters');
  const { rows: typeRows } = await client.query<{ code: string; id: number }>('select code, id from app_public.absence_types');
  const types = new Map(typeRows.map((row) => [row.code, row.id]));
  const staff = demoStaffFacts(today);
  const { rows: jobRows } = await client.query<{ job: WorkerJob }>(
    'select j.key as job from jsonb_each_text($1::jsonb) j where to_regprocedure(j.value) is not null',
    [JSON.stringify(WORKER_JOBS)],
  );
  const jobs = new Set(jobRows.map((row) => row.job));
  const { rows: mailRows } = await client.query<{ mails: boolean }>(
    "select to_regprocedure('app_private.queue_notification_emails(integer)') is not null as mails",
  );
  const mails = mailRows[0]!.mails;
  // Next year opens during the history where the database has the opening (issue 27 point 2):
  // what it will open, from its own plan (read only).
  const openYears = new Set(yearRows.map((row) => row.year));
  let nextYear: Map<string, Set<string>> | undefined;
  if (jobs.has('open_next_year_counters')) {
    const keys = new Map(Object.entries(options.ids.employees ?? {}).map(([key, id]) => [id, key]));
    const { rows: opening } = await client.query<{ employee_id: number; code: string }>(
      'select p.employee_id, p.code from app_private.counter_opening_plan($1, null, $2::date, false) p where p.skip_reason is null and p.code is not null',
      [year + 1, today],
    );
    nextYear = new Map();
    for (const row of opening) {
      const key = keys.get(row.employee_id);
      if (!key) continue;
      if (!nextYear.has(key)) nextYear.set(key, new Set());
      nextYear.get(key)!.add(row.code);
    }
  }
  const plan = planDemoHistory({ today, timeZone: options.timeZone, holidays: new Set(holidayRows.map((row) => row.day)), openYears, nextYear });

  const accountId = (key: string) => {
    const id = options.ids.accounts?.[key];
    if (id === undefined) throw new Error(`demo history: no account ${key}`);
    return id;
  };
  const employeeId = (key: string) => {
    const id = options.ids.employees?.[key];
    if (id === undefined) throw new Error(`demo history: no employee ${key}`);
    return id;
  };
  const establishmentId = (key: string) => options.ids.establishments![key]!;
  const absences = new Map<string, { id: number; version: number }>();
  const shiftChanges = new Map<string, { id: number; version: number }>();
  const outcome: HistoryOutcome = { steps: 0, absences: 0, shiftChanges: 0, documents: 0, notificationsRead: 0, milliseconds: 0, byKind: {} };

  /**
   * One request: the connection's own role again (after the previous step), the clock at
   * the step's instant, the files of the step, the account's prelude, the visitor role:
   * one round trip (the values are an instant of the plan, an id and the storage's
   * metadata, quoted), then `work`.
   */
  const literal = (value: string) => `'${value.replace(/'/g, "''")}'`;
  const asAccount = async <T>(when: string, account: number, uploaded: StoredFile[], work: () => Promise<T>): Promise<T> => {
    if (!Number.isSafeInteger(account) || Number.isNaN(Date.parse(when))) throw new Error(`invalid step ${when} ${account}`);
    await client.query(
      `reset role; select set_config('app.frozen_now', ${literal(when)}, true), ` +
        `set_config('app.uploaded_files', ${literal(JSON.stringify(uploaded))}, true), ` +
        // The account's current credential generation, as its token would carry; no client address.
        `app_private.begin_request_or_fail(${account}, null, false, ` +
        `(select a.token_generation from app_public.accounts a where a.id = ${account}), null); set local role ${ROLES.visitor}`,
    );
    return work();
  };
  const call = async (sql: string, values: unknown[]) => (await client.query<{ r: any }>(`select ${sql} as r`, values)).rows[0]!.r;

  const store = async (document: DocumentSpec): Promise<StoredFile> => {
    const bytes = document.kind === 'pdf' ? demoPdf(document.title) : demoPng();
    const stored = await options.storage.save(Readable.from([bytes]), document.filename, options.maxFileBytes);
    if (typeof stored === 'string') throw new Error(`demo history: document ${document.filename} refused (${stored})`);
    outcome.documents += 1;
    return stored;
  };

  // The notifications of the demo logins are read (the other accounts never logged in).
  const readers = DEMO_LOGINS.map((login) => login.username).filter((key) => options.ids.accounts?.[key] !== undefined);
  for (const { at, actor, step } of plan) {
    const stepBegan = performance.now();
    try {
      switch (step.kind) {
        case 'absence': {
          const files = await Promise.all((step.documents ?? []).map(store));
          const type = types.get(step.type);
          if (type === undefined) throw new Error(`unknown reason ${step.type}`);
          const row = await asAccount(at, accountId(actor), files, () =>
            call('app_public.absence_create(p_employee => $1, p_type => $2, p_date_start => $3, p_date_end => $4, p_comment => $5, p_add_documents => $6)', [
              employeeId(step.employee), type, step.start, step.end, step.comment ?? null, files.length ? JSON.stringify(files) : null,
            ]));
          absences.set(step.ref, { id: row.id, version: row.version });
          outcome.absences += 1;
          break;
        }
        case 'absence-validate':
        case 'absence-refuse': {
          const known = absences.get(step.ref)!;
          const fn = step.kind === 'absence-validate' ? 'app_public.absence_validate' : 'app_public.absence_refuse';
          const reason = step.kind === 'absence-refuse' ? step.reason : (step.reason ?? null);
          const row = await asAccount(at, accountId(actor), [], () =>
            call(`${fn}(p_id => $1, p_version => $2, p_reason => $3)`, [known.id, known.version, reason]));
          absences.set(step.ref, { id: row.id, version: row.version });
          break;
        }
        case 'absence-request-cancellation': {
          const known = absences.get(step.ref)!;
          const row = await asAccount(at, accountId(actor), [], () =>
            call('app_public.absence_request_cancellation(p_id => $1, p_version => $2, p_comment => $3)', [known.id, known.version, step.comment]));
          absences.set(step.ref, { id: row.id, version: row.version });
          break;
        }
        case 'shift-change': {
          const day = staff.get(step.employee)!.week[weekday(step.date)]!;
          const slot = shifted(day, step.shiftMinutes);
          const row = await asAccount(at, accountId(actor), [], () =>
            call("app_public.shift_change_create(p_date => $1, p_reason => 'demande_personnelle', p_comment => $2, p_slots => $3)", [
              step.date, step.comment, JSON.stringify([slot]),
            ]));
          shiftChanges.set(step.ref, { id: row.id, version: row.version });
          outcome.shiftChanges += 1;
          break;
        }
        case 'shift-change-validate':
        case 'shift-change-refuse': {
          const known = shiftChanges.get(step.ref)!;
          const sql = step.kind === 'shift-change-validate'
            ? 'app_public.shift_change_validate(p_id => $1, p_version => $2)'
            : 'app_public.shift_change_refuse(p_id => $1, p_version => $2, p_reason => $3)';
          const values = step.kind === 'shift-change-validate' ? [known.id, known.version] : [known.id, known.version, step.reason];
          await asAccount(at, accountId(actor), [], () => call(sql, values));
          break;
        }
        case 'on-call':
          await asAccount(at, accountId(actor), [], () =>
            call('app_public.on_call_period_create(p_account => $1, p_start_at => $2, p_end_at => $3, p_establishments => $4, p_comment => $5)', [
              accountId(step.holder), step.start, step.end, step.establishments.map(establishmentId), step.comment,
            ]));
          break;
        case 'counter-adjust':
          await asAccount(at, accountId(actor), [], async () => {
            const found = await call('app_public.counters_search(p_employee => $1, p_code => $2, p_year => $3)', [
              employeeId(step.employee), step.code, step.year,
            ]);
            const counter = found.results?.[0];
            if (!counter) throw new Error(`no counter ${step.code} ${step.year} of ${step.employee}`);
            return call("app_public.counter_adjust(p_id => $1, p_bucket => 'acquired', p_quantity => $2, p_reason => $3)", [
              counter.id, step.quantity, step.reason,
            ]);
          });
          break;
        case 'worker-job': {
          if (!jobs.has(step.job)) break;
          // As the worker runs it: the connection's own role, no account.
          await client.query(
            "reset role; select set_config('app.account_id', '', true), set_config('app.employee_id', '', true), " +
              `set_config('app.frozen_now', ${literal(at)}, true)`,
          );
          await client.query(`select app_private.${step.job}($1::date)`, [step.day]);
          break;
        }
        case 'open-next-year':
          if (!jobs.has('open_next_year_counters')) break;
          await asAccount(at, accountId(actor), [], () => call('app_public.counter_opening_run(p_year => $1)', [step.year]));
          break;
        case 'read-notifications':
          // Every account of the demo reads what it had received before `before`.
          for (const key of readers) {
            outcome.notificationsRead += await asAccount(at, accountId(key), [], async () => {
              const old: number[] = [];
              for (let page = 1; ; page++) {
                const list = await call('app_public.notifications_list(p_unread => true, p_page => $1, p_page_size => 200)', [page]);
                const results = list.results as Array<{ id: number; created_at: string }>;
                for (const n of results) if (Date.parse(n.created_at) < Date.parse(step.before)) old.push(n.id);
                if (results.length < 200) break;
              }
              for (const id of old) await call('app_public.notification_mark_read($1::bigint)', [id]);
              return old.length;
            });
          }
          break;
      }
    } catch (error) {
      const message = (error as Error).message.slice(0, MAX_STEP_ERROR);
      const detail = (error as { detail?: string }).detail;
      throw new Error(`demo history, step ${outcome.steps + 1} (${step.kind} by ${actor} at ${at}): ${message}${detail ? ` [${detail}]` : ''}`);
    }
    // The worker's e-mails, seconds after the step (drain_email_outbox): the notifications sent
    // at once are written into the outbox as the worker composes them, and delivered then: a
    // year-old e-mail is neither printed nor sent when the service starts.
    if (mails && step.kind !== 'read-notifications') {
      await client.query(
        "reset role; select set_config('app.account_id', '', true), set_config('app.employee_id', '', true), " +
          `set_config('app.frozen_now', ${literal(new Date(Date.parse(at) + 5000).toISOString())}, true); ` +
          'select app_private.queue_notification_emails(500); ' +
          "select app_private.email_outbox_sent(o.id) from app_private.email_outbox o where o.sent_at is null and o.kind = 'notification'",
      );
    }
    outcome.steps += 1;
    const kind = (outcome.byKind[step.kind] ??= { steps: 0, milliseconds: 0 });
    kind.steps += 1;
    kind.milliseconds += Math.round(performance.now() - stepBegan);
  }
  await client.query("reset role; select set_config('app.frozen_now', '', true), set_config('app.uploaded_files', '', true)");
  outcome.milliseconds = Math.round(performance.now() - began);
  return outcome;
}

/** The planned post moved by `minutes` (later when positive, earlier when negative), break included. */
function shifted(day: NonNullable<DemoStaffFacts['week'][number]>, minutes: number) {
  const move = (time: string | null) => {
    if (time === null) return null;
    const [h, m] = time.split(':').map(Number) as [number, number];
    const total = (((h * 60 + m + minutes) % 1440) + 1440) % 1440;
    return `${String(Math.floor(total / 60)).padStart(2, '0')}:${String(total % 60).padStart(2, '0')}`;
  };
  return {
    start_time: move(day.start_time),
    end_time: move(day.end_time),
    break_start_time: move(day.break_start_time),
    break_end_time: move(day.break_end_time),
    break_paid: day.break_paid,
  };
}

export interface DemoLoadOptions {
  /** The password of the demo logins. */
  password: string;
  timeZone: string;
  storage: FileStorage;
  /** Largest accepted document, in bytes (the routes' limit). */
  maxFileBytes: number;
}

export interface DemoLoadOutcome {
  /** Invitation e-mails the import queued. */
  invitations: number;
  /** Ids of the import by section and key. */
  ids: Record<string, Record<string, number>>;
  /** The history replayed; null when the connection may not become wfm_visitor. */
  history: HistoryOutcome | null;
}

/**
 * The demo organisation (buildDemoOrganisation, for the business date) and its history, in
 * ONE transaction on `client` (an owner connection): all of it or nothing, so that a start
 * that failed loads it again at the next one (npm start loads the demo while the database
 * holds no establishment).
 */
export async function loadDemoOrganisation(client: pg.ClientBase, options: DemoLoadOptions): Promise<DemoLoadOutcome> {
  const { rows } = await client.query<{ today: string; outbox: string; visitor: boolean }>(
    "select to_char(app_hidden.today(), 'YYYY-MM-DD') as today, (select count(*) from app_private.email_outbox)::text as outbox, " +
      `pg_has_role(current_user, '${ROLES.visitor}', 'member') as visitor`,
  );
  const document = buildDemoOrganisation({ today: rows[0]!.today, password: options.password, timeZone: options.timeZone });
  await client.query('begin');
  try {
    const ids = await importOrganisation(client, document);
    // The import's invitations only: the history's notifications queue e-mails too.
    const { rows: after } = await client.query<{ outbox: string }>('select count(*)::text as outbox from app_private.email_outbox');
    const invitations = Number(after[0]!.outbox) - Number(rows[0]!.outbox);
    const history = rows[0]!.visitor
      ? await loadDemoHistory(client, { timeZone: options.timeZone, storage: options.storage, ids, maxFileBytes: options.maxFileBytes })
      : null;
    await client.query('commit');
    return { invitations, ids, history };
  } catch (error) {
    await client.query('rollback').catch(() => undefined);
    throw error;
  }
}
