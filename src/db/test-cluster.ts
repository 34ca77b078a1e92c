/**
 * The PostgreSQL cluster of the tests and of the sql/ workflow (`npm run db:current|commit|check`
 * build their scratch databases there): TEST_DATABASE_URL, else the local system cluster (trust
 * authentication), never the embedded one of `npm start`.
 */
export const TEST_ROOT_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
