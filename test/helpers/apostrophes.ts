/**
 * One apostrophe style (issue 29 point 5): every French text shown to people writes the
 * typographic apostrophe ’ (U+2019), never the straight '. This module finds the texts that
 * still elide with a straight apostrophe: the string literals of sql/ (outside comments and
 * `comment on` descriptions, which are English notes for developers) and the string literals,
 * template literals and JSX text of the TypeScript sources (src/, web/src/, worker/).
 * test/api/apostrophes.test.ts uses it as a guard; docs/wording.md lists the exceptions.
 */
import ts from 'typescript';

/**
 * A French elision written with a straight apostrophe: « d'absence », « l'équipe », « qu'« En attente » »,
 * « qu'il », « jusqu'au », « aujourd'hui ». English possessives (« the caller's ») are not
 * elisions: the word before the apostrophe is not one that French elides.
 */
const ELISION = /(?<!\p{L})([cdjlmnst]|qu|jusqu|lorsqu|puisqu|quoiqu|presqu|quelqu|aujourd)'(?=[\p{L}«])/giu;

/**
 * The texts SPEC.md or CONTRACT.md write literally with a straight apostrophe: kept as written
 * (docs/wording.md). The notification titles (SPEC « Events », column « Title (as displayed) »)
 * and the audit verb « Demande d'annulation » (CONTRACT section 7), a value of the API.
 */
export const CONTRACT_TEXTS: readonly string[] = [
  "Nouvelle demande d'absence",
  "Demande d'absence sans valideur",
  "Demande d'absence refusée",
  "Demande d'absence validée",
  "Demande d'annulation d'absence",
  "Annulation d'absence refusée",
  "Annulation d'absence acceptée",
  "Demande d'annulation",
];

export interface Literal {
  /** The text as the program sees it (SQL `''` read as one `'`, TS escapes resolved). */
  text: string;
  /** Offsets of the literal's contents in the file (without the delimiters). */
  start: number;
  end: number;
  line: number;
}

export const hasStraightElision = (text: string) => new RegExp(ELISION.source, 'iu').test(text);

/** A text that should be typographic: a straight elision, and not one of the contract's texts. */
export const isStraightFrench = (text: string) => hasStraightElision(text) && !CONTRACT_TEXTS.includes(text);

const lineAt = (source: string, offset: number) => source.slice(0, offset).split('\n').length;

/**
 * The string literals of an SQL file, function bodies ($tag$ … $tag$) read as SQL too. Skipped:
 * `--` and `/* *\/` comments, quoted identifiers, and the literal of a `comment on … is '…'`.
 */
export function sqlLiterals(source: string): Literal[] {
  const found: Literal[] = [];
  const scan = (from: number, to: number) => {
    let i = from;
    while (i < to) {
      const c = source[i]!;
      if (c === '-' && source[i + 1] === '-') {
        const nl = source.indexOf('\n', i);
        i = nl < 0 || nl > to ? to : nl + 1;
      } else if (c === '/' && source[i + 1] === '*') {
        const close = source.indexOf('*/', i + 2);
        i = close < 0 ? to : close + 2;
      } else if (c === '"') {
        const close = source.indexOf('"', i + 1);
        i = close < 0 ? to : close + 1;
      } else if (c === '$' && /^\$[A-Za-z_]*\$/.test(source.slice(i, i + 40)) && !/[\w$]/.test(source[i - 1] ?? ' ')) {
        const tag = /^\$[A-Za-z_]*\$/.exec(source.slice(i, i + 40))![0];
        const close = source.indexOf(tag, i + tag.length);
        const bodyEnd = close < 0 || close > to ? to : close;
        scan(i + tag.length, bodyEnd);
        i = bodyEnd + tag.length;
      } else if (c === "'") {
        const escapes = /[eE]/.test(source[i - 1] ?? '') && !/\w/.test(source[i - 2] ?? ' ');
        let j = i + 1;
        let text = '';
        while (j < to) {
          const d = source[j]!;
          if (escapes && d === '\\') {
            const e = source[j + 1] ?? '';
            text += ({ n: '\n', t: '\t', r: '\r', b: '\b', f: '\f' } as Record<string, string>)[e] ?? e;
            j += 2;
            continue;
          }
          if (d === "'") {
            if (source[j + 1] === "'") { text += "'"; j += 2; continue; }
            break;
          }
          text += d;
          j += 1;
        }
        const before = source.slice(Math.max(from, i - 4000), i);
        const statement = before.slice(before.lastIndexOf(';') + 1);
        if (!/^\s*comment\s+on\b/i.test(statement)) {
          found.push({ text, start: i + 1, end: j, line: lineAt(source, i) });
        }
        i = j + 1;
      } else {
        i += 1;
      }
    }
  };
  scan(0, source.length);
  return found;
}

/** The string literals, template parts and JSX text of a TypeScript or TSX file. */
export function tsLiterals(fileName: string, source: string): Literal[] {
  const file = ts.createSourceFile(fileName, source, ts.ScriptTarget.Latest, true,
    fileName.endsWith('.tsx') ? ts.ScriptKind.TSX : ts.ScriptKind.TS);
  const found: Literal[] = [];
  const visit = (node: ts.Node) => {
    const start = node.getStart(file);
    if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) return;
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) {
      found.push({ text: node.text, start: start + 1, end: node.end - 1, line: lineAt(source, start) });
    } else if (ts.isTemplateHead(node) || ts.isTemplateMiddle(node) || ts.isTemplateTail(node)) {
      const close = ts.isTemplateTail(node) ? 1 : 2;
      found.push({ text: node.text, start: start + 1, end: node.end - close, line: lineAt(source, start) });
    } else if (ts.isJsxText(node)) {
      found.push({ text: node.text, start: node.pos, end: node.end, line: lineAt(source, node.pos) });
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return found;
}

/** The source with every straight elision inside the given literals made typographic. */
export function typographic(source: string, literals: Literal[], kind: 'sql' | 'ts'): string {
  const straight = new RegExp(ELISION.source.replace("'", kind === 'sql' ? "''" : "\\\\?'"), 'giu');
  let out = '';
  let at = 0;
  for (const literal of [...literals].filter((l) => isStraightFrench(l.text)).sort((a, b) => a.start - b.start)) {
    out += source.slice(at, literal.start) + source.slice(literal.start, literal.end).replace(straight, '$1’');
    at = literal.end;
  }
  return out + source.slice(at);
}
