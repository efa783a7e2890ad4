import { acquireSharedPostgres } from './shared-postgres.mjs';

/**
 * Vitest global setup for suites that run on PostgreSQL too. With
 * `FACTUM_TEST_POSTGRES_URL` set (CI's own server) it does nothing; otherwise it starts
 * or reuses the shared embedded PostgreSQL and sets the variable for the test workers.
 */
export default async function setup() {
  if (process.env.FACTUM_TEST_POSTGRES_URL) return undefined;
  const { url, release } = await acquireSharedPostgres();
  process.env.FACTUM_TEST_POSTGRES_URL = url;
  return () => release();
}
