/**
 * The demo organisation loaded by `npm start` into an empty embedded database: the
 * association "Horizons Solidaires" with a foyer d'hébergement (24/7, ouvrables), an IME
 * with a weekly boarding section (ouvrés) and an ESAT (ouvrés), as an organisation document
 * (CONTRACT section 6) for importOrganisation.
 *
 * Deterministic: the same business date gives the same document; only the demo password
 * (generated at first start, kept in the data directory) varies. Contract dates that must
 * stay "current" (fixed-term contracts, a trial period, temporary missions, the coming
 * weekend's on-call period) and the counters' year follow the business date.
 */
import type { OrganisationDoc } from './import.js';

export interface DemoLogin {
  username: string;
  /** What the account is, as printed next to the login. */
  role: string;
}

/** The accounts that receive the demo password, in the order they are printed. */
export const DEMO_LOGINS: readonly DemoLogin[] = [
  { username: 'admin', role: 'Admin' },
  { username: 'rh1', role: 'RH n1' },
  { username: 'rh2', role: 'RH n2' },
  { username: 'da', role: 'DA' },
  { username: 'manager1', role: 'Manager n1' },
  { username: 'manager2', role: 'Manager n2' },
  { username: 'salarie', role: 'Salarié' },
  { username: 'interimaire', role: 'Intérimaire' },
  { username: 'paie', role: 'Service Paie' },
  { username: 'superadmin', role: 'superuser (staff, no role)' },
];

export const DEMO_EMAIL_DOMAIN = 'horizons-solidaires.example';

type PostKey =
  | 'FOYER-M' | 'FOYER-S' | 'FOYER-J' | 'FOYER-N' | 'FOYER-WE'
  | 'IME-J' | 'IME-M' | 'IME-S' | 'IME-N' | 'IME-ADM'
  | 'ESAT-ATL' | 'ESAT-CUI' | 'ESAT-EV' | 'ESAT-ADM';
type Day = 'mon' | 'tue' | 'wed' | 'thu' | 'fri' | 'sat' | 'sun';
type Week = Partial<Record<Day, PostKey>>;
export type EstablishmentKey = 'FOYER' | 'IME' | 'ESAT';
type TeamKey = 'FOYER-EDUC' | 'NUIT' | 'IME-EDUC' | 'IME-SOIN' | 'ESAT-PROD' | 'ADMIN';

const ESTABLISHMENTS: Array<{ key: EstablishmentKey; name: string; count_base: 'ouvrables' | 'ouvres' }> = [
  { key: 'FOYER', name: "Foyer d’hébergement Les Glycines", count_base: 'ouvrables' },
  { key: 'IME', name: 'IME Les Coquelicots', count_base: 'ouvres' },
  { key: 'ESAT', name: 'ESAT Les Ateliers du Val', count_base: 'ouvres' },
];

const TEAMS: Array<{ key: TeamKey; name: string; establishments: EstablishmentKey[] }> = [
  { key: 'FOYER-EDUC', name: 'Équipe éducative du foyer', establishments: ['FOYER'] },
  { key: 'NUIT', name: 'Veille de nuit', establishments: ['FOYER', 'IME'] },
  { key: 'IME-EDUC', name: "Équipe éducative de l’IME", establishments: ['IME'] },
  { key: 'IME-SOIN', name: 'Pôle soins et rééducation', establishments: ['IME'] },
  { key: 'ESAT-PROD', name: 'Ateliers de production', establishments: ['ESAT'] },
  { key: 'ADMIN', name: 'Services administratifs', establishments: ['FOYER', 'IME', 'ESAT'] },
];

interface PostSpec {
  key: PostKey;
  code: string;
  label: string;
  establishment: EstablishmentKey;
  start_time: string;
  end_time: string;
  break_start_time: string | null;
  break_end_time: string | null;
  break_paid: boolean;
}

function post(key: PostKey, label: string, hours: string, breakHours: string | null, breakPaid: boolean): PostSpec {
  const [establishment, code] = key.split('-') as [EstablishmentKey, string];
  const [start_time, end_time] = hours.split('-') as [string, string];
  const [break_start_time, break_end_time] = breakHours ? (breakHours.split('-') as [string, string]) : [null, null];
  return { key, code, label, establishment, start_time, end_time, break_start_time, break_end_time, break_paid: breakPaid };
}

// Post codes share one namespace with absence reason codes (AT, MAT, ... are reasons).
const POSTS: PostSpec[] = [
  post('FOYER-M', 'Matin', '07:00-14:30', '10:00-10:20', true),
  post('FOYER-S', 'Soir', '14:00-21:30', '18:45-19:15', false),
  post('FOYER-J', 'Journée', '09:00-17:00', '12:30-13:15', false),
  post('FOYER-N', 'Nuit', '21:00-07:00', '01:00-01:30', true),
  post('FOYER-WE', 'Week-end', '08:00-20:00', '12:30-13:30', false),
  post('IME-J', 'Journée', '08:30-16:30', '12:00-12:45', false),
  post('IME-M', 'Matin internat', '07:00-13:30', '10:00-10:15', true),
  post('IME-S', 'Soir internat', '15:00-22:00', '19:00-19:30', false),
  post('IME-N', 'Nuit internat', '21:00-07:00', '01:00-01:30', true),
  post('IME-ADM', 'Administration', '09:00-17:00', '12:00-13:00', false),
  post('ESAT-ATL', 'Atelier', '08:00-16:00', '12:00-12:45', false),
  post('ESAT-CUI', 'Cuisine', '07:00-14:30', '10:30-10:45', true),
  post('ESAT-EV', 'Espaces verts', '07:30-15:30', '12:00-12:30', false),
  post('ESAT-ADM', 'Administration', '09:00-17:00', '12:00-13:00', false),
];

const weekdays = (key: PostKey): Week => ({ mon: key, tue: key, wed: key, thu: key, fri: key });

// Weekly templates. The foyer runs every day: its educators alternate weekends.
const WEEKS = {
  foyerOffice: weekdays('FOYER-J'),
  foyerRotaA: { mon: 'FOYER-M', tue: 'FOYER-M', wed: 'FOYER-S', sat: 'FOYER-WE' },
  foyerRotaB: { mon: 'FOYER-S', thu: 'FOYER-M', fri: 'FOYER-S', sun: 'FOYER-WE' },
  foyerRotaC: { mon: 'FOYER-J', tue: 'FOYER-M', wed: 'FOYER-M', thu: 'FOYER-S', fri: 'FOYER-S' },
  foyerWeekend: { wed: 'FOYER-M', thu: 'FOYER-M', sat: 'FOYER-WE', sun: 'FOYER-WE' },
  foyerNights: { mon: 'FOYER-N', tue: 'FOYER-N', wed: 'FOYER-N' },
  // Night watch across both sites: the foyer at the end of the week, the IME boarding
  // section when it opens on Sunday evening.
  mixedNights: { thu: 'FOYER-N', fri: 'FOYER-N', sun: 'IME-N' },
  imeNights: { mon: 'IME-N', tue: 'IME-N', wed: 'IME-N' },
  imeDay: weekdays('IME-J'),
  imeBoarding: { mon: 'IME-M', tue: 'IME-S', wed: 'IME-S', thu: 'IME-M', fri: 'IME-M' },
  imeAdmin: weekdays('IME-ADM'),
  esatWorkshop: weekdays('ESAT-ATL'),
  esatGreen: weekdays('ESAT-EV'),
  esatKitchen: weekdays('ESAT-CUI'),
  esatAdmin: weekdays('ESAT-ADM'),
} satisfies Record<string, Week>;

type ContractType = 'CDI' | 'CDD' | 'Intérim' | 'Apprentissage';

/** Contract dates: absolute for long-standing contracts, relative to the business date otherwise. */
type DateRule = string | ((calendar: Calendar) => string);

interface ContractSpec {
  type: ContractType;
  start: DateRule;
  end?: DateRule;
  trial_end?: DateRule;
}

interface StaffSpec {
  /** Username and key; the demo logins use DEMO_LOGINS names. */
  key: string;
  first: string;
  last: string;
  sex: 1 | 2;
  born: string; // YYYY-MM-DD
  department: string; // of birth (social security number)
  establishment: EstablishmentKey;
  secondary?: EstablishmentKey[];
  teams?: TeamKey[];
  title: string;
  weeklyHours: number;
  contract: ContractSpec;
  week: Week;
  email?: boolean; // default true
  /** Congés trimestriels (CCN 66): 18 days for educational staff, 9 for the others. */
  ct?: 18 | 9;
  rtt?: boolean;
  /** Staff representative on the CSE: delegation hours. */
  cse?: boolean;
  /** Night worker: compensatory rest hours. */
  nights?: boolean;
  roles?: Array<{ role: string; establishments?: EstablishmentKey[] }>;
  /** Polyvalent agent: an absence during the trial period raises an agreement warning. */
  polyvalent?: boolean;
  is_staff?: boolean;
  permissions?: string[];
}

class Calendar {
  readonly year: number;
  constructor(readonly today: string) {
    this.year = Number(today.slice(0, 4));
  }

  private static parse(iso: string): Date {
    return new Date(`${iso}T00:00:00Z`);
  }

  private static format(date: Date): string {
    return date.toISOString().slice(0, 10);
  }

  addDays(iso: string, days: number): string {
    const date = Calendar.parse(iso);
    date.setUTCDate(date.getUTCDate() + days);
    return Calendar.format(date);
  }

  days(offset: number): string {
    return this.addDays(this.today, offset);
  }

  /** First day of the month `offset` months from the business date's month. */
  monthStart(offset: number): string {
    const date = Calendar.parse(this.today);
    return Calendar.format(new Date(Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + offset, 1)));
  }

  /** Last day of the month `offset` months from the business date's month. */
  monthEnd(offset: number): string {
    return this.addDays(this.monthStart(offset + 1), -1);
  }

  /** The latest 1 September on or before the business date (school and apprenticeship year). */
  schoolYearStart(): string {
    const candidate = `${this.year}-09-01`;
    return candidate <= this.today ? candidate : `${this.year - 1}-09-01`;
  }

  shiftYears(iso: string, years: number): string {
    return `${Number(iso.slice(0, 4)) + years}${iso.slice(4)}`;
  }

  /** Whole years from `iso` to the business date. */
  yearsSince(iso: string): number {
    const years = this.year - Number(iso.slice(0, 4));
    return iso.slice(5) <= this.today.slice(5) ? years : years - 1;
  }

  /** Whole months from `iso` to the business date. */
  monthsSince(iso: string): number {
    const [y1, m1, d1] = iso.split('-').map(Number) as [number, number, number];
    const [y2, m2, d2] = this.today.split('-').map(Number) as [number, number, number];
    return Math.max(0, (y2 - y1) * 12 + (m2 - m1) - (d2 < d1 ? 1 : 0));
  }

  /** Monday after the business date (strictly), so Saturday and Sunday give this weekend. */
  nextMonday(): string {
    const isoDay = ((Calendar.parse(this.today).getUTCDay() + 6) % 7) + 1;
    return this.days(8 - isoDay);
  }
}

const STAFF: StaffSpec[] = [
  // Direction and support services (the demo logins).
  { key: 'admin', first: 'Bernard', last: 'Lemaire', sex: 1, born: '1968-04-12', department: '69', establishment: 'FOYER',
    teams: ['ADMIN'], title: 'Directeur général', weeklyHours: 35, contract: { type: 'CDI', start: '2009-09-01' },
    week: WEEKS.foyerOffice, rtt: true, roles: [{ role: 'Admin' }], is_staff: true },
  { key: 'rh1', first: 'Catherine', last: 'Mercier', sex: 2, born: '1975-11-03', department: '38', establishment: 'FOYER',
    teams: ['ADMIN'], title: 'Responsable des ressources humaines', weeklyHours: 35,
    contract: { type: 'CDI', start: '2014-03-03' }, week: WEEKS.foyerOffice, rtt: true,
    roles: [{ role: 'RH n1' }], permissions: ['audit.view_actionlog'] },
  { key: 'rh2', first: 'Élodie', last: 'Fabre', sex: 2, born: '1988-06-21', department: '42', establishment: 'IME',
    teams: ['ADMIN'], title: 'Assistante ressources humaines', weeklyHours: 35,
    contract: { type: 'CDI', start: '2019-01-07' }, week: WEEKS.imeAdmin, ct: 9, roles: [{ role: 'RH n2', establishments: ['IME'] }] },
  { key: 'da', first: 'Olivier', last: 'Chevalier', sex: 1, born: '1972-02-17', department: '01', establishment: 'FOYER',
    title: 'Directeur adjoint du foyer', weeklyHours: 35, contract: { type: 'CDI', start: '2011-05-02' },
    week: WEEKS.foyerOffice, rtt: true, roles: [{ role: 'DA', establishments: ['FOYER'] }] },
  { key: 'manager1', first: 'Stéphanie', last: 'Girard', sex: 2, born: '1980-09-09', department: '69', establishment: 'FOYER',
    teams: ['FOYER-EDUC'], title: 'Cheffe de service éducatif', weeklyHours: 35,
    contract: { type: 'CDI', start: '2016-09-01' }, week: WEEKS.foyerOffice, rtt: true,
    roles: [{ role: 'Manager n1', establishments: ['FOYER'] }] },
  { key: 'manager2', first: 'Karim', last: 'Benali', sex: 1, born: '1979-01-25', department: '13', establishment: 'IME',
    secondary: ['ESAT'], title: "Directeur de l’IME et de l’ESAT", weeklyHours: 35,
    contract: { type: 'CDI', start: '2013-01-02' }, week: WEEKS.imeAdmin, rtt: true,
    roles: [{ role: 'Manager n2', establishments: ['IME', 'ESAT'] }] },
  { key: 'salarie', first: 'Julie', last: 'Caron', sex: 2, born: '1992-05-14', department: '69', establishment: 'FOYER',
    teams: ['FOYER-EDUC'], title: 'Éducatrice spécialisée', weeklyHours: 35,
    contract: { type: 'CDI', start: '2018-10-01' }, week: WEEKS.foyerRotaA, ct: 18, cse: true },
  { key: 'interimaire', first: 'Maxime', last: 'Roussel', sex: 1, born: '1996-12-02', department: '42', establishment: 'FOYER',
    teams: ['FOYER-EDUC'], title: 'Accompagnant éducatif et social (mission)', weeklyHours: 35,
    contract: { type: 'Intérim', start: (c) => c.days(-14), end: (c) => c.days(46) }, week: WEEKS.foyerRotaB,
    email: false, roles: [{ role: 'Intérimaire' }] },
  { key: 'paie', first: 'Nathalie', last: 'Perrin', sex: 2, born: '1983-03-30', department: '38', establishment: 'IME',
    teams: ['ADMIN'], title: 'Gestionnaire de paie', weeklyHours: 28,
    contract: { type: 'CDI', start: '2017-02-01' }, week: { mon: 'IME-ADM', tue: 'IME-ADM', wed: 'IME-ADM', thu: 'IME-ADM' },
    ct: 9, roles: [{ role: 'Service Paie' }] },

  // Other managers (no demo password: they receive an invitation).
  { key: 'claire.aubert', first: 'Claire', last: 'Aubert', sex: 2, born: '1970-07-19', department: '26', establishment: 'IME',
    teams: ['IME-EDUC'], title: 'Cheffe de service de l’IME', weeklyHours: 35, contract: { type: 'CDI', start: '2008-01-07' },
    week: WEEKS.imeAdmin, rtt: true, roles: [{ role: 'Manager n1', establishments: ['IME'] }] },
  { key: 'francois.lebrun', first: 'François', last: 'Lebrun', sex: 1, born: '1973-10-08', department: '07', establishment: 'ESAT',
    teams: ['ESAT-PROD'], title: "Chef d’atelier", weeklyHours: 35, contract: { type: 'CDI', start: '2007-09-03' },
    week: WEEKS.esatWorkshop, rtt: true, roles: [{ role: 'Manager n1', establishments: ['ESAT'] }] },

  // Foyer d'hébergement.
  { key: 'thomas.lefebvre', first: 'Thomas', last: 'Lefebvre', sex: 1, born: '1985-08-16', department: '69', establishment: 'FOYER',
    teams: ['FOYER-EDUC'], title: 'Éducateur spécialisé', weeklyHours: 35, contract: { type: 'CDI', start: '2012-09-03' },
    week: WEEKS.foyerRotaB, ct: 18 },
  { key: 'camille.rousseau', first: 'Camille', last: 'Rousseau', sex: 2, born: '1994-02-05', department: '71', establishment: 'FOYER',
    teams: ['FOYER-EDUC'], title: 'Monitrice-éducatrice', weeklyHours: 35, contract: { type: 'CDI', start: '2020-01-06' },
    week: WEEKS.foyerRotaA, ct: 18 },
  { key: 'nicolas.blanc', first: 'Nicolas', last: 'Blanc', sex: 1, born: '1990-11-27', department: '69', establishment: 'FOYER',
    teams: ['FOYER-EDUC'], title: 'Accompagnant éducatif et social (remplacement)', weeklyHours: 35,
    contract: { type: 'CDD', start: (c) => c.monthStart(-2), end: (c) => c.monthEnd(4) }, week: WEEKS.foyerRotaB, ct: 18 },
  { key: 'sarah.henry', first: 'Sarah', last: 'Henry', sex: 2, born: '1998-04-22', department: '38', establishment: 'FOYER',
    teams: ['FOYER-EDUC'], title: 'Accompagnante éducative et sociale', weeklyHours: 35,
    contract: { type: 'CDI', start: (c) => c.monthStart(-1), trial_end: (c) => c.monthEnd(1) }, week: WEEKS.foyerRotaA, ct: 18,
    polyvalent: true },
  { key: 'lea.morel', first: 'Léa', last: 'Morel', sex: 2, born: '2005-01-11', department: '69', establishment: 'FOYER',
    teams: ['FOYER-EDUC'], title: 'Apprentie monitrice-éducatrice', weeklyHours: 35,
    contract: { type: 'Apprentissage', start: (c) => c.shiftYears(c.schoolYearStart(), -1),
                end: (c) => c.addDays(c.shiftYears(c.schoolYearStart(), 1), -1) },
    // Alternance: school on Wednesdays and Fridays.
    week: { mon: 'FOYER-J', tue: 'FOYER-J', thu: 'FOYER-J' }, ct: 18 },
  { key: 'mathieu.dupuis', first: 'Mathieu', last: 'Dupuis', sex: 1, born: '1993-06-03', department: '74', establishment: 'FOYER',
    teams: ['FOYER-EDUC'], title: 'Moniteur-éducateur', weeklyHours: 35, contract: { type: 'CDI', start: '2019-05-13' },
    week: WEEKS.foyerRotaC, ct: 18 },
  { key: 'christophe.lambert', first: 'Christophe', last: 'Lambert', sex: 1, born: '1982-12-14', department: '69', establishment: 'FOYER',
    title: 'Maître de maison', weeklyHours: 35, contract: { type: 'CDI', start: '2015-06-01' }, week: WEEKS.foyerWeekend, ct: 9 },
  { key: 'aurelie.masson', first: 'Aurélie', last: 'Masson', sex: 2, born: '1987-03-08', department: '63', establishment: 'FOYER',
    secondary: ['IME'], teams: ['IME-SOIN'], title: 'Infirmière', weeklyHours: 21,
    contract: { type: 'CDI', start: '2016-01-04' }, week: { mon: 'FOYER-J', tue: 'FOYER-J', thu: 'IME-J' }, ct: 9 },
  { key: 'patrick.gauthier', first: 'Patrick', last: 'Gauthier', sex: 1, born: '1966-05-29', department: '42', establishment: 'FOYER',
    teams: ['NUIT'], title: 'Veilleur de nuit', weeklyHours: 30, contract: { type: 'CDI', start: '2005-04-01' },
    week: WEEKS.foyerNights, ct: 9, nights: true },
  { key: 'fatima.haddad', first: 'Fatima', last: 'Haddad', sex: 2, born: '1977-09-18', department: '2A', establishment: 'FOYER',
    secondary: ['IME'], teams: ['NUIT'], title: 'Surveillante de nuit qualifiée', weeklyHours: 30,
    contract: { type: 'CDI', start: '2010-11-15' }, week: WEEKS.mixedNights, ct: 9, nights: true },
  { key: 'alexandre.fournier', first: 'Alexandre', last: 'Fournier', sex: 1, born: '1978-08-01', department: '69', establishment: 'FOYER',
    teams: ['ADMIN'], title: 'Comptable', weeklyHours: 35, contract: { type: 'CDI', start: '2010-02-01' },
    week: WEEKS.foyerOffice, rtt: true },

  // IME (weekly boarding section from Sunday evening to Friday).
  { key: 'isabelle.renaud', first: 'Isabelle', last: 'Renaud', sex: 2, born: '1974-10-23', department: '38', establishment: 'IME',
    teams: ['IME-EDUC'], title: 'Éducatrice spécialisée', weeklyHours: 35, contract: { type: 'CDI', start: '2003-09-01' },
    week: WEEKS.imeDay, ct: 18 },
  { key: 'hugo.marchand', first: 'Hugo', last: 'Marchand', sex: 1, born: '1995-07-07', department: '69', establishment: 'IME',
    teams: ['IME-EDUC'], title: 'Éducateur de jeunes enfants', weeklyHours: 35, contract: { type: 'CDI', start: '2021-09-01' },
    week: WEEKS.imeDay, ct: 18 },
  { key: 'manon.leclerc', first: 'Manon', last: 'Leclerc', sex: 2, born: '1997-01-30', department: '01', establishment: 'IME',
    teams: ['IME-EDUC'], title: 'Monitrice-éducatrice (remplacement de congé maternité)', weeklyHours: 32.5,
    contract: { type: 'CDD', start: (c) => c.monthStart(-3), end: (c) => c.monthEnd(3) }, week: WEEKS.imeBoarding, ct: 18 },
  { key: 'vincent.barbier', first: 'Vincent', last: 'Barbier', sex: 1, born: '1984-04-04', department: '42', establishment: 'IME',
    teams: ['IME-EDUC'], title: 'Éducateur technique spécialisé', weeklyHours: 35, contract: { type: 'CDI', start: '2014-09-01' },
    week: WEEKS.imeDay, ct: 18 },
  { key: 'chloe.bertrand', first: 'Chloé', last: 'Bertrand', sex: 2, born: '1999-11-12', department: '69', establishment: 'IME',
    teams: ['IME-EDUC'], title: 'Accompagnante éducative et sociale', weeklyHours: 32.5,
    contract: { type: 'CDI', start: '2023-01-09' }, week: WEEKS.imeBoarding, ct: 18 },
  { key: 'emilie.robin', first: 'Émilie', last: 'Robin', sex: 2, born: '1989-02-26', department: '75', establishment: 'IME',
    teams: ['IME-SOIN'], title: 'Orthophoniste', weeklyHours: 21, contract: { type: 'CDI', start: '2017-09-04' },
    week: { mon: 'IME-J', tue: 'IME-J', thu: 'IME-J' }, ct: 9 },
  { key: 'julien.arnaud', first: 'Julien', last: 'Arnaud', sex: 1, born: '1986-05-17', department: '69', establishment: 'IME',
    secondary: ['FOYER'], teams: ['IME-SOIN'], title: 'Psychologue', weeklyHours: 17.5,
    contract: { type: 'CDI', start: '2015-03-02' }, week: { mon: 'IME-J', tue: 'IME-J', thu: 'FOYER-J' } },
  { key: 'sandrine.faure', first: 'Sandrine', last: 'Faure', sex: 2, born: '1971-08-20', department: '43', establishment: 'IME',
    teams: ['IME-SOIN'], title: 'Secrétaire médicale', weeklyHours: 35, contract: { type: 'CDI', start: '2000-01-03' },
    week: WEEKS.imeAdmin, ct: 9 },
  { key: 'youssef.amrani', first: 'Youssef', last: 'Amrani', sex: 1, born: '1991-03-15', department: '69', establishment: 'IME',
    teams: ['NUIT'], title: 'Surveillant de nuit', weeklyHours: 30, contract: { type: 'CDI', start: '2018-02-05' },
    week: WEEKS.imeNights, ct: 9, nights: true },
  { key: 'ines.boyer', first: 'Inès', last: 'Boyer', sex: 2, born: '2000-06-28', department: '38', establishment: 'IME',
    title: 'Agente de service intérieur', weeklyHours: 26, contract: { type: 'CDI', start: '2022-11-02' },
    week: { mon: 'IME-M', tue: 'IME-M', wed: 'IME-M', thu: 'IME-M' }, ct: 9 },

  // ESAT.
  { key: 'philippe.duval', first: 'Philippe', last: 'Duval', sex: 1, born: '1969-09-05', department: '69', establishment: 'ESAT',
    teams: ['ESAT-PROD'], title: "Moniteur principal d’atelier", weeklyHours: 35, contract: { type: 'CDI', start: '2006-04-03' },
    week: WEEKS.esatWorkshop, ct: 9, cse: true },
  { key: 'valerie.lemoine', first: 'Valérie', last: 'Lemoine', sex: 2, born: '1976-12-01', department: '42', establishment: 'ESAT',
    teams: ['ESAT-PROD'], title: "Monitrice d’atelier blanchisserie", weeklyHours: 35, contract: { type: 'CDI', start: '2009-10-05' },
    week: WEEKS.esatWorkshop, ct: 9 },
  { key: 'david.noel', first: 'David', last: 'Noël', sex: 1, born: '1983-05-10', department: '69', establishment: 'ESAT',
    teams: ['ESAT-PROD'], title: "Moniteur d’atelier espaces verts", weeklyHours: 35, contract: { type: 'CDI', start: '2012-03-19' },
    week: WEEKS.esatGreen, ct: 9 },
  { key: 'guillaume.brunet', first: 'Guillaume', last: 'Brunet', sex: 1, born: '1990-10-19', department: '01', establishment: 'ESAT',
    teams: ['ESAT-PROD'], title: "Moniteur d’atelier espaces verts (saison)", weeklyHours: 35,
    contract: { type: 'CDD', start: (c) => c.monthStart(-8), end: (c) => c.monthEnd(1) }, week: WEEKS.esatGreen, ct: 9 },
  { key: 'laurence.picard', first: 'Laurence', last: 'Picard', sex: 2, born: '1980-01-22', department: '69', establishment: 'ESAT',
    title: 'Cuisinière', weeklyHours: 35, contract: { type: 'CDI', start: '2011-01-10' }, week: WEEKS.esatKitchen, ct: 9 },
  { key: 'romain.giraud', first: 'Romain', last: 'Giraud', sex: 1, born: '2007-03-03', department: '69', establishment: 'ESAT',
    title: 'Apprenti cuisinier', weeklyHours: 35,
    contract: { type: 'Apprentissage', start: (c) => c.schoolYearStart(), end: (c) => c.addDays(c.shiftYears(c.schoolYearStart(), 2), -1) },
    week: { mon: 'ESAT-CUI', tue: 'ESAT-CUI', wed: 'ESAT-CUI' }, ct: 9 },
  { key: 'martine.roche', first: 'Martine', last: 'Roche', sex: 2, born: '1964-07-27', department: '42', establishment: 'ESAT',
    teams: ['ADMIN'], title: 'Assistante de direction', weeklyHours: 35, contract: { type: 'CDI', start: '1998-09-01' },
    week: WEEKS.esatAdmin, ct: 9 },
  { key: 'sebastien.colin', first: 'Sébastien', last: 'Colin', sex: 1, born: '1987-11-09', department: '69', establishment: 'ESAT',
    secondary: ['IME'], title: "Chargé d’insertion professionnelle", weeklyHours: 35, contract: { type: 'CDI', start: '2017-06-06' },
    week: { mon: 'ESAT-ADM', tue: 'ESAT-ADM', wed: 'ESAT-ADM', thu: 'ESAT-ADM', fri: 'IME-ADM' }, ct: 9 },
  { key: 'kevin.mallet', first: 'Kévin', last: 'Mallet', sex: 1, born: '1994-08-13', department: '38', establishment: 'ESAT',
    teams: ['ESAT-PROD'], title: "Moniteur d’atelier conditionnement", weeklyHours: 35, contract: { type: 'CDI', start: '2020-09-01' },
    week: WEEKS.esatWorkshop, ct: 9 },
  { key: 'pauline.vidal', first: 'Pauline', last: 'Vidal', sex: 2, born: '1996-02-14', department: '69', establishment: 'ESAT',
    teams: ['ESAT-PROD'], title: "Monitrice d’atelier (mission d’intérim)", weeklyHours: 35,
    contract: { type: 'Intérim', start: (c) => c.days(-3), end: (c) => c.days(25) }, week: WEEKS.esatWorkshop,
    email: false, roles: [{ role: 'Intérimaire' }] },
];

/** ASCII, lower case, words joined by "-": "Élodie" → "elodie", "Noël" → "noel". */
function slug(text: string): string {
  return text
    .normalize('NFD')
    .replace(/\p{Diacritic}/gu, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');
}

/**
 * A well-formed 15-character social security number: sex, year and month of birth,
 * department, commune, order number and the key (97 - number mod 97; Corsica's 2A/2B
 * count as 19/18).
 */
export function socialSecurityNumber(sex: 1 | 2, born: string, department: string, index: number): string {
  const commune = String(100 + ((index * 37) % 800)).padStart(3, '0');
  const order = String(1 + ((index * 53) % 998)).padStart(3, '0');
  const body = `${sex}${born.slice(2, 4)}${born.slice(5, 7)}${department}${commune}${order}`;
  const numeric = BigInt(body.replace('2A', '19').replace('2B', '18'));
  const key = 97n - (numeric % 97n);
  return `${body}${String(key).padStart(2, '0')}`;
}

function resolve(rule: DateRule | undefined, calendar: Calendar): string | null {
  if (rule === undefined) return null;
  return typeof rule === 'string' ? rule : rule(calendar);
}

const money = (value: number) => value.toFixed(2);

/** The counters of one year (CCN 66 customs for CT, ANC and RTT), `seniority` whole years of service. */
function yearCounters(spec: StaffSpec, year: number, cp: number, seniority: number) {
  const list: Array<{ code: string; year: number; acquired: string }> = [];
  list.push({ code: 'CP', year, acquired: money(cp) });
  if (spec.ct) list.push({ code: 'CT', year, acquired: money(spec.ct) });
  // Seniority leave: 2 days per 5 years of service, at most 6.
  if (seniority >= 5) list.push({ code: 'ANC', year, acquired: money(Math.min(6, Math.floor(seniority / 5) * 2)) });
  if (spec.rtt) list.push({ code: 'RTT', year, acquired: money(12) });
  // CSE member: 18 hours a month.
  if (spec.cse) list.push({ code: 'DLG_CSE', year, acquired: money(216) });
  if (spec.nights) list.push({ code: 'RC', year, acquired: money(21) });
  return list;
}

/**
 * Counters of the current business year, and of the year before for the contracts that
 * ran all of it (the demo's history, src/org/demo-history.ts, draws on them).
 */
function counters(spec: StaffSpec, start: string, calendar: Calendar) {
  if (spec.contract.type === 'Intérim') return []; // paid leave is the agency's
  const year = calendar.year;
  // Paid leave: 25 days a year, pro rata for contracts that began this year.
  const yearStart = `${year}-01-01`;
  const cp = start < yearStart ? 25 : Math.min(25, Math.round(((calendar.monthsSince(start) * 25) / 12) * 100) / 100);
  const seniority = calendar.yearsSince(start);
  const previous = start <= `${year - 1}-01-01` ? yearCounters(spec, year - 1, 25, seniority - 1) : [];
  return [...previous, ...yearCounters(spec, year, cp, seniority)];
}

/** What the demo's history needs to know of a demo employee (src/org/demo-history.ts). */
export interface DemoStaffFacts {
  key: string;
  establishment: EstablishmentKey;
  /** Contract start (YYYY-MM-DD) and end (null: open-ended) for `today`. */
  start: string;
  end: string | null;
  counterCodes: string[];
  /** The planned post of each weekday, 1 (Monday) to 7, with its hours; absent: rest. */
  week: Partial<Record<number, { code: string; start_time: string; end_time: string; break_start_time: string | null; break_end_time: string | null; break_paid: boolean }>>;
}

/** The demo employees as the history sees them, for the business date `today`. */
export function demoStaffFacts(today: string): Map<string, DemoStaffFacts> {
  const calendar = new Calendar(today);
  const posts = new Map(POSTS.map((p) => [p.key, p]));
  const days: Day[] = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'];
  const facts = new Map<string, DemoStaffFacts>();
  for (const spec of STAFF) {
    const start = resolve(spec.contract.start, calendar)!;
    const week: DemoStaffFacts['week'] = {};
    days.forEach((day, index) => {
      const key = spec.week[day];
      if (!key) return;
      const p = posts.get(key)!;
      week[index + 1] = { code: p.code, start_time: p.start_time, end_time: p.end_time, break_start_time: p.break_start_time,
        break_end_time: p.break_end_time, break_paid: p.break_paid };
    });
    facts.set(spec.key, {
      key: spec.key,
      establishment: spec.establishment,
      start,
      end: resolve(spec.contract.end, calendar),
      counterCodes: [...new Set(counters(spec, start, calendar).map((c) => c.code))],
      week,
    });
  }
  return facts;
}

/** UTC offset of a zone at a local date and time, as "+01:00". */
export function zoneOffset(date: string, time: string, timeZone: string): string {
  // The offset at the UTC instant of the same wall time is the right one except within an
  // hour of a change, which never falls on Friday 18:00 or Monday 08:00 in Europe.
  const instant = new Date(`${date}T${time}:00Z`);
  const name = new Intl.DateTimeFormat('en-US', { timeZone, timeZoneName: 'longOffset' })
    .formatToParts(instant)
    .find((part) => part.type === 'timeZoneName')?.value;
  const match = /GMT([+-]\d{2}):?(\d{2})?/.exec(name ?? '');
  return match ? `${match[1]}:${match[2] ?? '00'}` : '+00:00';
}

export interface DemoOptions {
  /** The business date (YYYY-MM-DD) the demo is built for. */
  today: string;
  /** The password of the demo logins. */
  password: string;
  /** Business time zone of the on-call period's timestamps. */
  timeZone?: string;
}

/** The demo organisation as an organisation document (CONTRACT section 6). */
export function buildDemoOrganisation({ today, password, timeZone = 'Europe/Paris' }: DemoOptions): OrganisationDoc {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(today)) throw new Error(`invalid business date "${today}"`);
  const calendar = new Calendar(today);
  const demoUsernames = new Set(DEMO_LOGINS.map((login) => login.username));

  const employees = STAFF.map((spec, index) => {
    const start = resolve(spec.contract.start, calendar)!;
    return {
      key: spec.key,
      first_name: spec.first,
      last_name: spec.last,
      professional_email: spec.email === false ? null : `${slug(spec.first)}.${slug(spec.last)}@${DEMO_EMAIL_DOMAIN}`,
      birth_date: spec.born,
      is_polyvalent: spec.polyvalent ?? false,
      main_establishment: spec.establishment,
      secondary_establishments: spec.secondary ?? [],
      teams: spec.teams ?? [],
      social_security_number: socialSecurityNumber(spec.sex, spec.born, spec.department, index + 1),
      contracts: [
        {
          type: spec.contract.type,
          start,
          end: resolve(spec.contract.end, calendar),
          trial_end: resolve(spec.contract.trial_end, calendar),
          job_title: spec.title,
          weekly_hours: spec.weeklyHours,
        },
      ],
      week: Object.fromEntries((['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const).map((day) => [day, spec.week[day] ?? null])),
      counters: counters(spec, start, calendar),
    };
  });

  const accounts: Array<Record<string, unknown>> = STAFF.map((spec) => ({
    key: spec.key,
    username: spec.key,
    // Accounts without a demo login have no usable password: an invitation is queued for
    // those with an e-mail, the others use password reset once they have one.
    ...(demoUsernames.has(spec.key) ? { password } : {}),
    employee: spec.key,
    is_staff: spec.is_staff ?? false,
    is_superuser: false,
    is_active: true,
    permissions: spec.permissions ?? [],
    roles: (spec.roles ?? []).map((role) => ({ role: role.role, establishments: role.establishments ?? [] })),
  }));
  accounts.push({
    key: 'superadmin',
    username: 'superadmin',
    password,
    employee: null,
    is_staff: true,
    is_superuser: true,
    is_active: true,
    permissions: [],
    roles: [],
  });

  // The coming weekend's on-call period: the IME/ESAT director covers the foyer from
  // Friday 18:00 to Monday 08:00.
  const monday = calendar.nextMonday();
  const friday = calendar.addDays(monday, -3);
  const on_call = [
    {
      account: 'manager2',
      establishments: ['FOYER'],
      start: `${friday}T18:00:00${zoneOffset(friday, '18:00', timeZone)}`,
      end: `${monday}T08:00:00${zoneOffset(monday, '08:00', timeZone)}`,
      comment: 'Astreinte de direction du week-end',
    },
  ];

  return {
    establishments: ESTABLISHMENTS,
    teams: TEAMS,
    posts: POSTS,
    employees,
    accounts,
    on_call,
  };
}

/** The business date (YYYY-MM-DD) of an instant in a time zone. */
export function businessDate(timeZone: string, at: Date = new Date()): string {
  const parts = new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }).formatToParts(at);
  const get = (type: string) => parts.find((part) => part.type === type)?.value ?? '';
  return `${get('year')}-${get('month')}-${get('day')}`;
}
