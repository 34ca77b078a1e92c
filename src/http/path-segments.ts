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
