/**
 * One apostrophe style (issue 29 point 5): the French texts people read write the typographic
 * apostrophe ’, as the screens do. A guard over the sources, so that the next message written
 * with a straight ' fails here: the string literals of sql/ (raise messages, notification and
 * e-mail texts, reference data; not the comments nor the `comment on` descriptions, which are
 * English notes) and the strings, template literals and JSX text of src/, web/src/ and worker/.
 * The only straight apostrophes left are the texts SPEC.md and CONTRACT.md write literally
 * (CONTRACT_TEXTS, listed in docs/wording.md).
 */
import { readFile } from 'node:fs/promises';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT_DIR } from '../../src/db/migrate.js';
import { CONTRACT_TEXTS, isStraightFrench, sqlLiterals, tsLiterals, typographic } from '../helpers/apostrophes.js';

const tracked = (...patterns: string[]) =>
  execFileSync('git', ['ls-files', ...patterns], { cwd: ROOT_DIR, encoding: 'utf8' }).split('\n').filter(Boolean);

async function straightTexts(files: string[], kind: 'sql' | 'ts'): Promise<string[]> {
  const found: string[] = [];
  for (const file of files) {
    const source = await readFile(path.join(ROOT_DIR, file), 'utf8');
    for (const literal of kind === 'sql' ? sqlLiterals(source) : tsLiterals(file, source)) {
      if (isStraightFrench(literal.text)) found.push(`${file}:${literal.line}: ${literal.text}`);
    }
  }
  return found;
}

describe('one apostrophe style', () => {
  it('the SQL scanner finds a straight elision in a message, not in a comment, a description or English', () => {
    const source = [
      "-- the caller's rows; n'importe",
      "/* l'ancien */",
      "create function a.f() returns void language plpgsql volatile as $$",
      "begin",
      "  perform app_hidden.invalid('x', 'Vous n''avez pas le droit d''écrire.');",
      "  raise exception 'notify: the caller''s account';",
      "  perform app_private.notify(1, 'Nouvelle demande d''absence', format(E'L''absence\\n%s', 1));",
      "end;",
      "$$;",
      "comment on function a.f() is 'SPEC: l''absence of the caller''s perimeter';",
      "insert into t (name) values ('Congé d’adoption'), ('Mariage d''un enfant');",
    ].join('\n');
    const flagged = sqlLiterals(source).filter((l) => isStraightFrench(l.text)).map((l) => l.text);
    expect(flagged).toEqual(["Vous n'avez pas le droit d'écrire.", "L'absence\n%s", "Mariage d'un enfant"]);
    expect(typographic(source, sqlLiterals(source), 'sql')).toContain("'Vous n’avez pas le droit d’écrire.'");
    expect(typographic(source, sqlLiterals(source), 'sql')).toContain("'Nouvelle demande d''absence'");
  });

  it('the TypeScript scanner reads strings, templates and JSX text, not comments nor English', () => {
    const source = [
      "// l'ancien texte",
      "const a = 'Vous n\\'avez pas', b = \"the row's id\", c = `jusqu'au ${d} d'abord`;",
      "const e = <p title=\"Aujourd'hui\">Aucune demande d'absence.</p>;",
      "const f = 'Demande d\\'annulation', g = \"remis qu'« En attente »\";",
    ].join('\n');
    const flagged = tsLiterals('x.tsx', source).filter((l) => isStraightFrench(l.text)).map((l) => l.text);
    expect(flagged).toEqual(["Vous n'avez pas", "jusqu'au ", " d'abord", "Aujourd'hui", "Aucune demande d'absence.", "remis qu'« En attente »"]);
  });

  it('the exceptions are the texts SPEC.md and CONTRACT.md write literally', () => {
    expect(CONTRACT_TEXTS).toContain("Demande d'annulation");
    expect(CONTRACT_TEXTS.every((text) => text.includes("'"))).toBe(true);
  });

  // Reading every source takes a few seconds, more on a loaded machine: no timing is asserted.
  it('no message of sql/ elides with a straight apostrophe', { timeout: 180_000 }, async () => {
    const files = tracked('sql/*.sql', 'sql/**/*.sql');
    expect(files.length).toBeGreaterThan(80);
    expect(await straightTexts(files, 'sql')).toEqual([]);
  });

  // web/src/api/schema.d.ts is generated from the routes of src/http, read here already.
  it('no text of src/, web/src/ or worker/ elides with a straight apostrophe', { timeout: 180_000 }, async () => {
    const files = tracked('src/*.ts', 'src/**/*.ts', 'web/src/**/*.ts', 'web/src/**/*.tsx', 'worker/*.ts', 'worker/**/*.ts')
      .filter((file) => !file.endsWith('.d.ts'));
    expect(files.length).toBeGreaterThan(150);
    expect(await straightTexts(files, 'ts')).toEqual([]);
  });
});
