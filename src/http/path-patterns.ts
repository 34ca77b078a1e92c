/**
 * How the API's dispatcher (src/http/router.ts) and the rate limit's route matcher
 * (src/auth/middleware.ts) read the manifest's paths.
 */

/**
 * The first two segments of a path, as written (/api/absences of /api/absences/12/): every manifest
 * path starts with two literal ones, so the API's dispatcher (src/http/router.ts) and the rate
 * limit's route matcher (src/auth/middleware.ts) group their patterns by them.
 */
export function firstTwoSegments(path: string): string {
  const second = path.indexOf('/', 1);
  const third = second < 0 ? -1 : path.indexOf('/', second + 1);
  return third < 0 ? path : path.slice(0, third);
}

/** A manifest path's literal text as a regular expression. */
const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

/**
 * A manifest path (/api/absences/{id}/) as Express 5 matches a route's path (router 2 and
 * path-to-regexp 8, `strict: false`): case-insensitive, its trailing slashes removed then one
 * optional, each parameter one non-empty segment. `names`: the parameters, in order.
 */
export function routePattern(openApiPath: string): { pattern: RegExp; names: string[] } {
  const names: string[] = [];
  const source = openApiPath.replace(/\/+$/, '').split(/(\{[a-z_]+\})/).map((part) => {
    const name = /^\{([a-z_]+)\}$/.exec(part)?.[1];
    if (!name) return escapeRegExp(part);
    names.push(name);
    return '([^\\/]+)';
  }).join('');
  return { pattern: new RegExp(`^(?:${source})(?:\\/$)?$`, 'i'), names };
}
