/**
 * Locates the first JSON syntax error of a text (JSON.parse's messages do not always give
 * a position): a strict RFC 8259 scanner that stops at the first problem.
 */
export interface JsonSyntaxError {
  /** Character offset of the problem. */
  offset: number;
  line: number;
  column: number;
  message: string;
}

class Stop extends Error {
  constructor(readonly offset: number, message: string) {
    super(message);
  }
}

export function findJsonSyntaxError(text: string): JsonSyntaxError | null {
  let i = 0;
  const describe = (at: number) => (at >= text.length ? 'end of file' : `character ${JSON.stringify(text[at])}`);
  const fail = (message: string, at = i): never => {
    throw new Stop(at, message);
  };
  const skipSpace = () => {
    while (i < text.length && ' \t\n\r'.includes(text[i]!)) i += 1;
  };
  const expectLiteral = (word: string) => {
    if (text.startsWith(word, i)) i += word.length;
    else fail(`expected a value, found ${JSON.stringify(text.slice(i, i + word.length))}`);
  };
  const parseString = () => {
    i += 1; // opening quote
    for (;;) {
      if (i >= text.length) fail('unterminated string');
      const char = text[i]!;
      if (char === '"') {
        i += 1;
        return;
      }
      if (char === '\\') {
        const next = text[i + 1];
        if (next === 'u') {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) fail('invalid \\u escape in a string');
          i += 6;
        } else if (next !== undefined && '"\\/bfnrt'.includes(next)) {
          i += 2;
        } else {
          fail('invalid escape in a string');
        }
        continue;
      }
      if (char.charCodeAt(0) < 0x20) fail('unescaped control character (e.g. a line break) in a string');
      i += 1;
    }
  };
  const parseNumber = () => {
    const match = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(i));
    if (!match) fail(`invalid number`);
    i += match![0].length;
  };
  const parseValue = (): void => {
    skipSpace();
    const char = text[i];
    if (char === undefined) return fail('unexpected end of file, a value was expected');
    if (char === '{') {
      i += 1;
      skipSpace();
      if (text[i] === '}') {
        i += 1;
        return;
      }
      for (;;) {
        skipSpace();
        if (text[i] !== '"') fail(`expected a property name in double quotes, found ${describe(i)}`);
        parseString();
        skipSpace();
        if (text[i] !== ':') fail(`expected ':' after a property name, found ${describe(i)}`);
        i += 1;
        parseValue();
        skipSpace();
        if (text[i] === ',') {
          i += 1;
          continue;
        }
        if (text[i] === '}') {
          i += 1;
          return;
        }
        fail(`expected ',' or '}' after a property value, found ${describe(i)}`);
      }
    }
    if (char === '[') {
      i += 1;
      skipSpace();
      if (text[i] === ']') {
        i += 1;
        return;
      }
      for (;;) {
        parseValue();
        skipSpace();
        if (text[i] === ',') {
          i += 1;
          continue;
        }
        if (text[i] === ']') {
          i += 1;
          return;
        }
        fail(`expected ',' or ']' after an array element, found ${describe(i)}`);
      }
    }
    if (char === '"') return parseString();
    if (char === 't') return expectLiteral('true');
    if (char === 'f') return expectLiteral('false');
    if (char === 'n') return expectLiteral('null');
    if (char === '-' || (char >= '0' && char <= '9')) return parseNumber();
    fail(`expected a value, found ${describe(i)}`);
  };

  try {
    parseValue();
    skipSpace();
    if (i < text.length) fail(`unexpected ${describe(i)} after the end of the JSON value`);
    return null;
  } catch (error) {
    if (!(error instanceof Stop)) throw error;
    const before = text.slice(0, error.offset);
    const line = before.split('\n').length;
    const column = error.offset - before.lastIndexOf('\n');
    return { offset: error.offset, line, column, message: error.message };
  }
}
