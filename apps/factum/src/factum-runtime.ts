import { randomUUID } from 'node:crypto';
import { join, resolve } from 'node:path';
import type { Invocation } from '@factum/agent-facts';
import { CodeExecutor } from '@factum/code-runtime';
import { Engine, type EngineOptions } from '@factum/engine';
import { EventLog } from '@factum/event-log';
import { ModelExecutor } from '@factum/model';
import { prepareDataDirectory } from './data-directory.js';
import { HostClaim } from './host-claim.js';

/** Where a runtime keeps its log: a SQLite file (default `.factum/events.sqlite`) or PostgreSQL. */
export type RuntimeTarget = { readonly dataDir: string } | { readonly postgres: string };

/** Options of a runtime. */
export type FactumRuntimeOptions = {
  readonly target?: RuntimeTarget;
  readonly modelTimeoutMs?: number;
  readonly engine?: EngineOptions;
  /** Claim the data directory for this process (a server), so other commands leave its runs alone. */
  readonly claim?: boolean;
};

/** The default data directory: `.factum` in the current working directory. */
export function defaultDataDir(cwd = process.cwd()): string {
  return resolve(cwd, '.factum');
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
  readonly #claim: HostClaim | undefined;

  private constructor(init: {
    log: EventLog;
    engine: Engine;
    models: ModelExecutor;
    code: CodeExecutor;
    description: string;
    claim: HostClaim | undefined;
  }) {
    this.log = init.log;
    this.engine = init.engine;
    this.models = init.models;
    this.code = init.code;
    this.description = init.description;
    this.#claim = init.claim;
  }

  static async open(options: FactumRuntimeOptions = {}): Promise<FactumRuntime> {
    const target = options.target ?? { dataDir: defaultDataDir() };
    const path = 'postgres' in target ? undefined : join(target.dataDir, 'events.sqlite');
    const dataDir = 'dataDir' in target ? target.dataDir : undefined;
    // A live server on this directory is running its invocations: recovery must not end them.
    const served = dataDir !== undefined && HostClaim.holder(dataDir) !== undefined;
    if (dataDir !== undefined) prepareDataDirectory(dataDir);
    const log = await EventLog.open(path ?? { postgres: (target as { postgres: string }).postgres });
    const claim = options.claim && dataDir !== undefined ? HostClaim.take(dataDir) : undefined;
    const models = new ModelExecutor({ timeoutMs: options.modelTimeoutMs ?? 120_000 });
    const code = new CodeExecutor();
    const engineOptions = { ...options.engine, ...(served ? { recoverOnStart: false } : {}) };
    const engine = new Engine({ log, models, code, options: engineOptions });
    return new FactumRuntime({ log, engine, models, code, description: path ?? 'PostgreSQL', claim });
  }

  /** Waits for every run to drain, then closes the log and the code executor. */
  async close(): Promise<void> {
    await this.engine.drain();
    await this.log.close();
    await this.code.close();
    this.#claim?.release();
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}

/** A fresh invocation: a new session unless one is given, new turn, run and invocation ids. */
export function newInvocation(sessionId?: string): Invocation {
  const id = () => randomUUID().slice(0, 8);
  return {
    sessionId: sessionId ?? `session-${id()}`,
    turnId: `turn-${id()}`,
    runId: `run-${id()}`,
    invocationId: `invocation-${id()}`,
  };
}
