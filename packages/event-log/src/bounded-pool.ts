import type { PostgresPool, PostgresPoolClient, PostgresQueryResult } from 'kysely';
import type pg from 'pg';
import { EventLogError } from './event-log-error.js';
import { withinBound } from './postgres-connection.js';

/**
 * The pool as the log's Kysely handle sees it: every statement that goes through the
 * handle (every read of `EventLog`, the lease's statements, migrations) is bounded by
 * `boundMs` and fails as `EventLogError('store_unreachable')` when the connection is
 * lost — reset, ended by the server, or silent past the bound — instead of a raw
 * driver error. The connection that failed is dropped by the pool (it is no longer
 * queryable), so the next statement opens another: the pool heals with the network.
 * Errors the server answers with (a constraint, a syntax error) pass through as they
 * are. One wrapper per driver client, so Kysely's own connection cache keeps working.
 */
export function boundedPool(pool: pg.Pool, boundMs: number): PostgresPool {
  const wrapped = new WeakMap<pg.PoolClient, PostgresPoolClient>();
  return {
    async connect() {
      let client: pg.PoolClient;
      try {
        client = await pool.connect();
      } catch (error) {
        throw unreachable(error, 'cannot open a connection to PostgreSQL');
      }
      let bounded = wrapped.get(client);
      if (bounded === undefined) {
        bounded = boundedClient(client, boundMs);
        wrapped.set(client, bounded);
      }
      return bounded;
    },
    end: () => pool.end(),
  };
}

function boundedClient(client: pg.PoolClient, boundMs: number): PostgresPoolClient {
  // A statement can fail on a lost connection before the driver has seen the socket
  // close, and Kysely releases without saying why: the pool would keep the dead
  // connection and hand it to the next read. Once lost, it is destroyed on release.
  let lost = false;
  return {
    async query<R>(sql: string, parameters: readonly unknown[]): Promise<PostgresQueryResult<R>> {
      try {
        const result = client.query(sql, [...parameters]) as unknown as Promise<PostgresQueryResult<R>>;
        return await withinBound(client, boundMs, result);
      } catch (error) {
        if (!connectionLost(error)) throw error;
        lost = true;
        throw unreachable(error, 'the connection to PostgreSQL was lost');
      }
    },
    release: (destroy?: boolean) => client.release(destroy === true || lost),
  } as PostgresPoolClient;
}

/**
 * Whether `error` says the connection is gone rather than what the server thought of
 * the statement: a socket error (no SQLSTATE), a connection exception (class 08), the
 * server shutting the session down (57P01–57P05), or a transaction ended for idling.
 */
export function connectionLost(error: unknown): boolean {
  if (EventLogError.isInstance(error)) return false;
  const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
  const severity =
    typeof error === 'object' && error !== null ? (error as { severity?: unknown }).severity : undefined;
  if (severity === undefined) return true;
  return typeof code === 'string' && (code.startsWith('08') || /^57P0[1-5]$/.test(code) || code === '25P03');
}

function unreachable(error: unknown, what: string): EventLogError {
  const reason = error instanceof Error ? error.message : String(error);
  return new EventLogError('store_unreachable', `${what}: ${withoutUrls(reason)}`, { cause: error });
}

/** Any connection string in a driver's message, cut to its scheme: it may hold a password. */
function withoutUrls(text: string): string {
  return text.replace(/\bpostgres(?:ql)?:\/\/\S+/gi, 'postgres://…');
}
