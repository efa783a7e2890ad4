/** A PostgreSQL server for tests or benchmarks; see `shared-postgres.mjs`. */
export declare function acquireSharedPostgres(options?: {
  readonly graceMs?: number;
  readonly durable?: boolean;
}): Promise<{ readonly url: string; readonly release: () => void }>;
export declare const stateDir: string;
