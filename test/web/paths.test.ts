/**
 * The addresses of the web application (web/src/lib/paths.ts), which notifications and e-mails
 * link to: each builder makes an address its own route pattern matches (React Router's
 * matching, as the application's router does), and no other pattern does.
 */
import { matchPath } from 'react-router';
import { describe, expect, it } from 'vitest';
import { appPath, parseId, paths, patterns, type ScreenName } from '../../web/src/lib/paths.js';

const SAMPLES: { [K in ScreenName]: Parameters<(typeof paths)[K]> } = {
  planning: [], myRequests: [], myAbsence: [42], myDayChange: [7], absenceRequest: [], absenceDeclaration: [], counters: [],
  queue: [], queueAbsence: [42], queueDayChange: [7], teamPlanning: [], payroll: [], notifications: [], account: [],
  calendarFeeds: [], delegations: [], impersonation: [],
};

describe('web application paths', () => {
  for (const name of Object.keys(patterns) as ScreenName[]) {
    it(`${name}: ${patterns[name]}`, () => {
      const build = paths[name] as (...args: unknown[]) => string;
      const address = build(...SAMPLES[name]);
      const pathname = new URL(address, 'http://app.test').pathname;
      const matched = (Object.keys(patterns) as ScreenName[]).filter((other) => matchPath(patterns[other], pathname));
      expect(matched).toEqual([name]);
      const id = SAMPLES[name][0];
      if (id !== undefined) expect(matchPath(patterns[name], pathname)?.params.id).toBe(String(id));
    });
  }

  it('the scheme the e-mails and notifications use', () => {
    expect(paths.myAbsence(12)).toBe('/demandes/absences/12');
    expect(paths.myDayChange(12)).toBe('/demandes/journees/12');
    expect(paths.queueAbsence(12)).toBe('/file/absences/12');
    expect(paths.queueDayChange(12)).toBe('/file/journees/12');
    expect(paths.teamPlanning('2026-11')).toBe('/equipe?mois=2026-11');
  });

  it('an address the server wrote (a notification’s path) is taken only when it is one of the application’s', () => {
    // The addresses app_private.notification_path writes (sql/notifications/emails.sql).
    expect(appPath('/demandes/absences/12')).toBe(paths.myAbsence(12));
    expect(appPath('/demandes/journees/7')).toBe(paths.myDayChange(7));
    expect(appPath('/file/absences/12')).toBe(paths.queueAbsence(12));
    expect(appPath('/file/journees/7')).toBe(paths.queueDayChange(7));
    expect(appPath('/equipe')).toBe(paths.teamPlanning());
    expect(appPath('/compte')).toBe(paths.account());
    expect(appPath('/compteurs')).toBe(paths.counters());
    for (const wrong of [null, undefined, '', '/', '/file/absences/0', '/file/absences/abc', '/demandes/conges/3', 'https://evil.example/file',
      '//evil.example', '/admin', '/file/absences/12/extra']) {
      expect(appPath(wrong), String(wrong)).toBeNull();
    }
  });

  it('an id of an address is a positive PostgreSQL integer, anything else none', () => {
    expect(parseId('12')).toBe(12);
    expect(parseId('2147483647')).toBe(2147483647);
    for (const wrong of [undefined, '', '0', '-1', '012', '1.5', 'abc', '2147483648', '99999999999']) expect(parseId(wrong), String(wrong)).toBeNull();
  });
});
