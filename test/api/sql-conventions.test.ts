/**
 * Conventions of sql/ that the catalogue cannot show (issue 12, point 6): every function states
 * its volatility. PostgreSQL stores an omitted one as `volatile`, so only the sources tell
 * whether the author decided it. The catalogue checks (trigger names, comments of the API
 * functions) are in test/db/58-sql-conventions.sql.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT_DIR } from '../../src/db/migrate.js';

interface FunctionSource { file: string; name: string; header: string; trailer: string }

/** Each `create function` of a file: the text before its body and after it, up to the `;`. */
function functionSources(file: string, text: string): FunctionSource[] {
  const found: FunctionSource[] = [];
  const start = /create\s+(?:or\s+replace\s+)?function\s+([\w.]+)\s*\(/gi;
  for (let match = start.exec(text); match; match = start.exec(text)) {
    const rest = text.slice(match.index + match[0].length);
    const open = /\$[a-z_]*\$/i.exec(rest);
    if (!open) continue;
    const close = rest.indexOf(open[0], open.index + open[0].length);
    const end = rest.indexOf(';', close + open[0].length);
    found.push({ file, name: match[1]!, header: rest.slice(0, open.index), trailer: rest.slice(close + open[0].length, end) });
  }
  return found;
}

const statesVolatility = (f: FunctionSource) => /\b(immutable|stable|volatile)\b/i.test(`${f.header} ${f.trailer}`);

describe('sql/ conventions', () => {
  it('the scanner finds a function without volatility, and one with it', () => {
    const [without, withIt] = functionSources('x.sql', [
      'create or replace function a.f(p int) returns int language sql as $$ select p $$;',
      'create function a.g() returns int as $body$ select 1 $body$ language sql stable;',
    ].join('\n'));
    expect([without!.name, statesVolatility(without!)]).toEqual(['a.f', false]);
    expect([withIt!.name, statesVolatility(withIt!)]).toEqual(['a.g', true]);
  });

  it('every function of sql/ states its volatility (immutable, stable or volatile)', async () => {
    const order = await readFile(path.join(ROOT_DIR, 'sql/ORDER'), 'utf8');
    const files = order.split('\n').map((line) => line.trim()).filter((line) => line && !line.startsWith('#'));
    const sources = (await Promise.all(files.map(async (file) =>
      functionSources(file, await readFile(path.join(ROOT_DIR, 'sql', file), 'utf8'))))).flat();
    expect(sources.length).toBeGreaterThan(400);
    expect(sources.filter((f) => !statesVolatility(f)).map((f) => `${f.file}: ${f.name}`)).toEqual([]);
  });
});
