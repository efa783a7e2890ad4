import { join } from 'node:path';
import { FactumError } from '@factum/agent-facts';
import { CodeExecutor } from '@factum/code-runtime';
import { Engine, type EngineOptions } from '@factum/engine';
import { EventLog } from '@factum/event-log';
import { ModelExecutor } from '@factum/model';
import { defaultDataDir, LOG_FILE, prepareDataDirectory } from './data-directory.js';

/** Where a runtime keeps its log: a SQLite file (default `.factum/events.sqlite`) or PostgreSQL. */
export type RuntimeTarget = { readonly dataDir: string } | { readonly postgres: string };

/** Options of a runtime. */
export type FactumRuntimeOptions = {
  readonly target?: RuntimeTarget;
  readonly modelTimeoutMs?: number;
  readonly engine?: EngineOptions;
};

/** The shortest lease `FACTUM_LEASE_TTL_MS` may ask for: renewals every third of it. */
const MIN_LEASE_TTL_MS = 1_000;

/**
 * `FACTUM_LEASE_TTL_MS`: how long this process's lease lasts without a renewal (the
 * engine's default is 10 s), so how long the runs of a process that died stay open
 * before recovery — any other process's sweep, or `factum recover --apply` — may end
 * them. Shorter means faster failover, and less slack for a stalled process (it stops
 * starting effects once four fifths of it passed without a renewal).
 */
export function leaseTtlFrom(env: NodeJS.ProcessEnv): number | undefined {
  const text = env.FACTUM_LEASE_TTL_MS;
  if (text === undefined || text === '') return undefined;
  const ttlMs = Number(text);
  if (!Number.isSafeInteger(ttlMs) || ttlMs < MIN_LEASE_TTL_MS) {
    throw new FactumError(
      'invalid_setting',
      `FACTUM_LEASE_TTL_MS must be a whole number of milliseconds, at least ${MIN_LEASE_TTL_MS}`,
    );
  }
  return ttlMs;
}

/**
 * Everything the app composes, opened once: the event log, the engine over it, the
 * model executor and the code executor. Commands and the HTTP server share one.
 */
export class FactumRuntime implements AsyncDisposable {
  readonly log: EventLog;
  readonly engine: Engine;
  readonly models: ModelExecutor;
  readonly code: CodeExecutor;
  readonly description: string;

  private constructor(init: {
    log: EventLog;
    engine: Engine;
    models: ModelExecutor;
    code: CodeExecutor;
    description: string;
  }) {
    this.log = init.log;
    this.engine = init.engine;
    this.models = init.models;
    this.code = init.code;
    this.description = init.description;
  }

  static async open(options: FactumRuntimeOptions = {}): Promise<FactumRuntime> {
    // Settings first: a bad one opens nothing.
    const ttlMs = leaseTtlFrom(process.env);
    const target = options.target ?? { dataDir: defaultDataDir() };
    const path = 'postgres' in target ? undefined : join(target.dataDir, LOG_FILE);
    if ('dataDir' in target) prepareDataDirectory(target.dataDir);
    const log = await EventLog.open(path ?? { postgres: (target as { postgres: string }).postgres });
    const models = new ModelExecutor({ timeoutMs: options.modelTimeoutMs ?? 120_000 });
    const code = new CodeExecutor();
    // Every process that runs turns is a host of the log with its own lease (taken at
    // its first run): recovery, here or in any other process, ends only the runs of
    // hosts whose lease expired, never a live `run` or `serve` beside it.
    const engineOptions: EngineOptions = {
      ...(ttlMs === undefined ? {} : { lease: { ttlMs } }),
      ...options.engine,
    };
    const engine = new Engine({ log, models, code, options: engineOptions });
    return new FactumRuntime({ log, engine, models, code, description: path ?? 'PostgreSQL' });
  }

  /** Waits for every run to drain, stops the sweeper, then closes the log (ending its lease). */
  async close(): Promise<void> {
    await this.engine.close();
    await this.log.close();
    await this.code.close();
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}
