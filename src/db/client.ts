import pg from 'pg';

/**
 * One connection for one piece of work (the commands, start-up, the sql/ workflow), always
 * closed after it. `options` are startup options (session settings), or none.
 */
export async function withClient<T>(
  connectionString: string,
  options: string | undefined,
  work: (client: pg.Client) => Promise<T>,
): Promise<T> {
  const client = new pg.Client({ connectionString, options, application_name: 'wfm-cli' });
  client.on('error', () => {});
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}
