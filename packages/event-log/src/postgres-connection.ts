import type pg from 'pg';

/** How long the log's PostgreSQL connections may sit in a transaction, by default. */
export const DEFAULT_TRANSACTION_BOUND_MS = 6000;

/**
 * What every connection of the log says to the server, so that no lock or transaction
 * of the log outlives a stalled or vanished client by more than `boundMs`:
 * - `idle_in_transaction_session_timeout`: a transaction whose client went quiet (a
 *   stalled network, a stopped process) is ended by the server, which frees the chain's
 *   advisory lock for every other writer;
 * - `lock_timeout`: a writer waits for the chain's lock a bounded time, then fails its
 *   batch (nothing written) instead of queueing behind a holder forever;
 * - TCP keepalive, so a dead peer's socket is found and closed.
 */
export function connectionSettings(
  boundMs: number,
  durableCommits: boolean,
): Pick<pg.PoolConfig, 'options' | 'keepAlive' | 'keepAliveInitialDelayMillis' | 'connectionTimeoutMillis'> {
  if (!(Number.isSafeInteger(boundMs) && boundMs >= 100)) {
    throw new TypeError(`transactionBoundMs must be a whole number of milliseconds ≥ 100, not ${boundMs}`);
  }
  const options = [
    `-c idle_in_transaction_session_timeout=${boundMs}`,
    `-c lock_timeout=${boundMs * 5}`,
    ...(durableCommits ? ['-c synchronous_commit=on'] : []),
  ];
  return {
    options: options.join(' '),
    keepAlive: true,
    keepAliveInitialDelayMillis: boundMs,
    connectionTimeoutMillis: boundMs * 5,
  };
}

/**
 * A connection the network cuts while it is checked out emits `'error'` on its own
 * client, not on the pool; unheard, that ends the process. Every client the pool makes
 * gets a listener for its whole life: the statement in flight fails with the error (a
 * typed failure of the operation that used it), and the pool drops the connection.
 */
export function hearClientErrors(pool: pg.Pool): void {
  pool.on('connect', (client) => {
    client.on('error', () => undefined);
  });
}

/**
 * `work` on `client`, or — once `ms` pass with no answer (a network that holds the
 * bytes, a server that answers slowly forever) — the connection destroyed, which fails
 * the statement in flight. The server ends the transaction on its side by itself.
 */
export async function withinBound<T>(client: pg.PoolClient, ms: number, work: Promise<T>): Promise<T> {
  const timer = setTimeout(() => {
    const connection = (client as unknown as { connection?: { stream?: { destroy(error?: Error): void } } })
      .connection;
    connection?.stream?.destroy(new Error(`no answer from PostgreSQL within ${ms} ms`));
  }, ms);
  try {
    return await work;
  } finally {
    clearTimeout(timer);
  }
}
