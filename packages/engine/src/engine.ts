import type { EventOrigin } from '@factum/agent-facts';
import type { CodeExecutor } from '@factum/code-runtime';
import type { EventLog, LeaseOptions, PendingApproval, RecoveryReport } from '@factum/event-log';
import type { ModelExecutor } from '@factum/model';
import { admit } from './admission.js';
import { AgentLoop } from './agent-loop.js';
import { type ApprovalDecision, type DecideOptions, decideApproval } from './approval-decision.js';
import { HandoffGate } from './handoff-gate.js';
import { InvocationWriter } from './invocation-writer.js';
import type { ContextBounds, RunObserver } from './model-turn.js';
import { openingRefused } from './opening-refused.js';
import { type OperationResolution, type ResolveOptions, resolveOperation } from './operator-resolution.js';
import { type ParkedRunView, parkedRunView } from './parked-run-view.js';
import { RecoverySweeper, sweepOnce } from './recovery-sweeper.js';
import { replayLog } from './replay/replay.js';
import type { ReplayReport } from './replay/replay-report.js';
import type { ReplayOptions } from './replay/replay-setup.js';
import { RunError } from './run-error.js';
import type { RunInput, RunOutcome } from './run-input.js';
import { RunningInvocation } from './running-invocation.js';
import { SessionAccess } from './session-access.js';
import { type ForkedSession, type ForkOptions, type ForkSource, forkSession } from './session-fork.js';
import { type SessionProjection, SessionProjections } from './session-projection.js';
import { SubmissionGate } from './submission-gate.js';

/** Options of an engine. */
export type EngineOptions = {
  /** Model steps per invocation at most (default 50). */
  readonly maxSteps?: number;
  /** Bounds of the session history a prompt is built from. */
  readonly contextBounds?: ContextBounds;
  /**
   * End invocations whose owner's lease has expired before the first admission (default
   * true). Safe where other processes share the log: a live owner's runs are never
   * touched.
   */
  readonly recoverOnStart?: boolean;
  /**
   * The host lease this engine holds on the log (default: a new host id, 10 s
   * time-to-live). `false` runs without one: the engine's invocations have no owner, so
   * any recovery may end them — only for a log no other process writes.
   */
  readonly lease?: LeaseOptions | false;
  /**
   * How often the engine recovers the runs of hosts whose lease expired (default half
   * the time-to-live; 0 never sweeps). Runs only while the engine holds a lease.
   */
  readonly sweepEveryMs?: number;
  /** Where event ids and times come from. */
  readonly origin?: EventOrigin;
  /**
   * Commit each model step's facts (`model_requested`, `model_observed`,
   * `model_completed`) as they happen, without waiting, so a tail of the log sees a step
   * while it streams (default false: they ride along with the next fact the run must
   * wait for — fewer commits per turn, and a crash leaves a step whole or absent).
   */
  readonly liveModelFacts?: boolean;
  /**
   * How often a start with an idempotency key whose run is live on another host reads
   * the log again until that run ends (default 100 ms).
   */
  readonly submissionPollMs?: number;
};

/** Options of one run. */
export type RunOptions = {
  readonly signal?: AbortSignal;
  readonly observer?: RunObserver;
  /**
   * Resolve `start()` only once `invocation_opened` is durable, for a caller that tells
   * someone outside the process that the run exists (an HTTP 202, a queue's ack): a
   * crash after that leaves the run listed for recovery. By default the opening rides
   * with the run's first waited-for commit (its first T1 or rejection, or its end), so a
   * run that dies before that leaves no trace — it had no effect — and a turn waits for
   * one commit less.
   */
  readonly durableStart?: boolean;
  /**
   * The caller's key for this submission (1 to 255 visible ASCII characters), scoped to
   * the session. The first start with it opens the run, durably (as `durableStart`);
   * the same key again — on this host or another, live or ended — gets that run back
   * (`RunningInvocation.resubmitted`): its end, never a second model call. The same key
   * with other work is refused `idempotency_conflict`, with nothing written. Keys are
   * facts (`invocation_opened.idempotencyKey`), kept as long as the session.
   */
  readonly idempotencyKey?: string;
};

/**
 * Runs agent invocations durably over an event log: one live invocation per session,
 * every model step and tool effect recorded as facts, cancellation that lets a
 * dispatched effect finish and settle, and handoffs at safe points.
 *
 * @example
 * const engine = new Engine({ log, models: new ModelExecutor({ timeoutMs: 60_000 }), code: new CodeExecutor() });
 * const outcome = await engine.run(input, { signal });
 * await engine.drain();
 */
export class Engine {
  readonly #log: EventLog;
  readonly #models: ModelExecutor;
  readonly #code: CodeExecutor;
  readonly #options: Required<Omit<EngineOptions, 'origin' | 'lease' | 'sweepEveryMs' | 'submissionPollMs'>> &
    Pick<EngineOptions, 'origin' | 'lease' | 'sweepEveryMs'>;
  readonly #submissions: SubmissionGate;
  readonly #projections = new SessionProjections();
  readonly #live = new Set<string>();
  readonly #access: SessionAccess;
  readonly #workers = new Set<Promise<unknown>>();
  #recovered: Promise<number> | undefined;
  #hosting: Promise<void> | undefined;
  #sweeper: RecoverySweeper | undefined;
  #closed = false;

  constructor(init: { log: EventLog; models: ModelExecutor; code: CodeExecutor; options?: EngineOptions }) {
    this.#log = init.log;
    this.#models = init.models;
    this.#code = init.code;
    this.#options = {
      maxSteps: init.options?.maxSteps ?? 50,
      contextBounds: init.options?.contextBounds ?? { maxEvents: 250_000, maxBytes: 256 * 1024 * 1024 },
      recoverOnStart: init.options?.recoverOnStart ?? true,
      origin: init.options?.origin,
      lease: init.options?.lease ?? {},
      sweepEveryMs: init.options?.sweepEveryMs,
      liveModelFacts: init.options?.liveModelFacts ?? false,
    };
    this.#access = new SessionAccess({
      log: this.#log,
      projections: this.#projections,
      bounds: this.#options.contextBounds,
      running: (sessionId) => this.#live.has(sessionId),
    });
    this.#submissions = new SubmissionGate({
      log: this.#log,
      bounds: this.#options.contextBounds,
      pollMs: init.options?.submissionPollMs ?? 100,
      track: (work) => this.#track(work),
      host: () => this.host(),
    });
  }

  /**
   * Registers this engine as a host of the log (its lease, renewed in the background)
   * and starts its sweeper. `start` and `recover` do it on first use; a server calls it
   * at start-up so that it sweeps before its first run.
   */
  host(): Promise<void> {
    if (this.#closed) return Promise.reject(new RunError('persistence', 'the engine is closed'));
    this.#hosting ??= this.#hostOnce().catch((error: unknown) => {
      this.#hosting = undefined;
      throw new RunError('persistence', 'the engine could not register as a host of the log', {
        cause: error,
      });
    });
    return this.#hosting;
  }

  async #hostOnce(): Promise<void> {
    const options = this.#options.lease;
    if (options === false) return;
    const lease = this.#log.lease ?? (await this.#log.holdLease(options));
    const every = this.#options.sweepEveryMs ?? Math.max(1, Math.floor(lease.ttlMs / 4));
    if (every > 0) this.#sweeper = new RecoverySweeper(this.#log, every);
  }

  /**
   * Ends the invocations whose owner's lease has expired (once per engine; the sweeper
   * goes on doing it); returns how many it ended. A live owner's runs are never touched.
   */
  recover(): Promise<number> {
    this.#recovered ??= this.sweep()
      .then((report) => report.ended.length)
      .catch((error: unknown) => {
        // A failed recovery is tried again at the next admission, not remembered forever.
        this.#recovered = undefined;
        throw error;
      });
    return this.#recovered;
  }

  /**
   * One recovery pass now: what it ended, and the live and untrusted runs it left alone.
   * Approvals past their deadline are expired in the same pass.
   */
  async sweep(): Promise<RecoveryReport> {
    await this.host();
    return sweepOnce(this.#log);
  }

  /**
   * Every call that waits for a person, across sessions, and the decided ones whose run
   * has not been continued yet (listed with their decision).
   */
  pendingApprovals(): Promise<PendingApproval[]> {
    return this.#log.pendingApprovals();
  }

  /**
   * Records a person's decision on a call that waits for approval (`approval_decided`);
   * nothing runs until a continuation of the parked run (`parkedRun`). Refused, with
   * nothing written: `approval_unknown`, `approval_decided_twice`, `already_executed`,
   * `approval_input_mismatch`.
   */
  decide(operationId: string, options: DecideOptions): Promise<ApprovalDecision> {
    return decideApproval(this.#log, operationId, options, {
      access: this.#access,
      ...(this.#options.origin === undefined ? {} : { origin: this.#options.origin }),
    });
  }

  /**
   * Records a person's resolution of an uncertain operation (`tool_reconciled` with
   * policy `operator`), which unblocks its session; `not_uncertain` for any other
   * operation. A dead host's run is recovered first; a live one is refused `busy`.
   */
  resolve(operationId: string, options: ResolveOptions): Promise<OperationResolution> {
    return resolveOperation(this.#log, operationId, options, {
      access: this.#access,
      ...(this.#options.origin === undefined ? {} : { origin: this.#options.origin }),
      recover: () => this.sweep(),
    });
  }

  /**
   * Forks `from.session` at `from.at` (an invocation id: its end; a step id: right before
   * that step's model request; default: the last invocation that ended) into a new
   * session whose history references that prefix. Its next `run` is an ordinary turn.
   *
   * @example
   * const fork = await engine.fork({ session: 'session-a', at: 'invocation-1' }, { newSession: 'session-b' });
   * await engine.run({ ...input, invocation: { ...input.invocation, sessionId: fork.sessionId } });
   */
  fork(from: ForkSource, options: ForkOptions = {}): Promise<ForkedSession> {
    if (this.#closed) return Promise.reject(new RunError('persistence', 'the engine is closed'));
    return forkSession(this.#log, from, { ...options, origin: this.#options.origin });
  }

  /**
   * The session's run parked on approvals that has not been carried out, with the
   * boundary a continuation starts from (`work: { kind: 'continuation', source }`) and
   * whether every call is decided (`ready`); `undefined` when none waits.
   */
  parkedRun(sessionId: string): Promise<ParkedRunView | undefined> {
    return parkedRunView(this.#log, this.#access, sessionId);
  }

  /**
   * Replays recorded invocations of `source` (an invocation, a session, or every session)
   * into a scratch sink in memory: no effect runs and nothing is written to `source`.
   * `verify` serves the recorded answers and tool outcomes and reports the first fact
   * the current code produces differently; `model` lets `options.agent.provider` answer
   * (through this engine's model executor), serves calls that match recorded ones and
   * runs no other. The same replay gives the same report, byte for byte.
   *
   * @example
   * const report = await engine.replay(log, { target: { kind: 'all' }, mode: 'verify', agent });
   * if (report.summary.diverged > 0) console.log(report.invocations[0]?.divergences);
   */
  replay(source: EventLog, options: ReplayOptions): Promise<ReplayReport> {
    return replayLog(source, options, { models: this.#models, code: this.#code });
  }

  /** Waits for every run, then stops the sweeper. The log's lease ends when the log closes. */
  async close(): Promise<void> {
    this.#closed = true;
    await this.drain();
    await this.#sweeper?.stop();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  /**
   * Admits and starts a run. Admission checks the log (busy, sealed, boundaries,
   * uncertain operations, parked approvals) before anything is written; the run's
   * `invocation_opened` then rides with its first waited-for commit — its first T1 or
   * rejection, or its end — unless `durableStart` (or `liveModelFacts`) asks to resolve
   * only once it is durable. Refusals (`busy`, `sealed`, `fingerprint_mismatch`, …)
   * write nothing; one that only the log sees when a riding opening commits (another
   * process admitted the session a moment before) ends the run with the same error
   * before any effect, with nothing of it written. Aborting `signal` cancels this run
   * only.
   */
  start(input: RunInput, options: RunOptions = {}): Promise<RunningInvocation> {
    const key = options.idempotencyKey;
    // Not an async wrapper: a caller that reserves a handoff as soon as this resolves
    // still meets the run's first safe point.
    if (key === undefined) return this.#start(input, options, undefined);
    if (options.signal?.aborted) {
      return Promise.reject(new RunError('cancelled', 'the caller aborted before the run started'));
    }
    return this.#submissions.start(input, key, options, (first) => this.#start(first, options, key));
  }

  async #start(input: RunInput, options: RunOptions, key: string | undefined): Promise<RunningInvocation> {
    const { sessionId } = input.invocation;
    if (options.signal?.aborted) throw new RunError('cancelled', 'the caller aborted before the run started');
    if (this.#live.has(sessionId)) {
      throw new RunError('busy', `session ${sessionId} has a live invocation; wait until it has drained`);
    }
    this.#live.add(sessionId);
    const projection = this.#projections.hold(sessionId);
    try {
      await this.host();
      if (this.#options.recoverOnStart) await this.recover();
      // Not waited for unless asked: nothing outside can observe the run before its
      // first T1, rejection or end, and the opening rides with that commit (a refusal by
      // the log then ends the run with this error). Admission has checked the log.
      // A keyed opening is durable before the run calls its model: a submitter on another
      // host that loses the key must learn it before any effect or model request.
      const durable = options.durableStart === true || key !== undefined;
      // An opening that rides with the run's first commit makes that commit conditional
      // on the session's head (`InvocationWriter.openOn`): a message run's first step, a
      // continuation's first call carried out. A refused one starts the run over, read.
      // A message run builds on the history in memory unread.
      const riding = !durable && !this.#options.liveModelFacts;
      const rides = riding && input.work.kind === 'message';
      const restarts = rides || (riding && input.work.kind === 'continuation');
      const open = async (unchecked: boolean) => {
        const admitted = await admit(this.#log, input, this.#options.contextBounds, projection, unchecked);
        const writer = new InvocationWriter(this.#log, input.invocation, {
          projection,
          eager: this.#options.liveModelFacts,
          ...(this.#options.origin ? { origin: this.#options.origin } : {}),
        });
        const opening = {
          kind: 'invocation_opened',
          configuration: input.configuration,
          input: admitted,
          ...(key === undefined ? {} : { idempotencyKey: key }),
        } as const;
        const opened = durable ? writer.write(opening) : writer.open(opening);
        await opened.catch((error: unknown) => {
          throw openingRefused(error);
        });
        return writer;
      };
      const writer = await open(rides);
      return this.#launch(input, writer, projection, options, restarts ? () => open(false) : undefined);
    } catch (error) {
      this.#live.delete(sessionId);
      this.#projections.release(sessionId);
      throw error;
    }
  }

  /**
   * Runs to the end. If the caller aborts, the promise rejects at once with
   * `RunError('cancelled')` while the run finishes its in-flight effect and ends
   * cancelled in the background (`drain()` waits for it).
   */
  async run(input: RunInput, options: RunOptions = {}): Promise<RunOutcome> {
    const running = await this.start(input, options);
    const signal = options.signal;
    if (signal === undefined) return running.wait();
    return new Promise<RunOutcome>((resolve, reject) => {
      const onAbort = () =>
        reject(
          new RunError(
            'cancelled',
            'the caller aborted; the run finishes its in-flight effect and ends cancelled',
          ),
        );
      if (signal.aborted) onAbort();
      signal.addEventListener('abort', onAbort, { once: true });
      running
        .wait()
        .then(resolve, reject)
        .finally(() => signal.removeEventListener('abort', onAbort));
    });
  }

  /** Waits until every run this engine started has ended and its effects are durable. */
  async drain(): Promise<void> {
    while (this.#workers.size > 0) await Promise.allSettled([...this.#workers]);
  }

  #track(work: Promise<unknown>): void {
    const tracked = work.catch(() => undefined);
    this.#workers.add(tracked);
    void tracked.then(() => this.#workers.delete(tracked));
  }

  #launch(
    input: RunInput,
    writer: InvocationWriter,
    projection: SessionProjection,
    options: RunOptions,
    restart: (() => Promise<InvocationWriter>) | undefined,
  ): RunningInvocation {
    const controller = new AbortController();
    const cancel = () => controller.abort();
    options.signal?.addEventListener('abort', cancel, { once: true });
    const gate = new HandoffGate();
    const loop = new AgentLoop({
      log: this.#log,
      models: this.#models,
      code: this.#code,
      input,
      writer,
      projection,
      gate,
      signal: controller.signal,
      maxSteps: this.#options.maxSteps,
      bounds: this.#options.contextBounds,
      ...(options.observer ? { observer: options.observer } : {}),
      ...(restart ? { restart } : {}),
    });
    const done = loop.run().finally(() => {
      options.signal?.removeEventListener('abort', cancel);
      this.#live.delete(input.invocation.sessionId);
      this.#projections.release(input.invocation.sessionId);
    });
    this.#track(done.catch(() => undefined));
    return new RunningInvocation({ invocation: input.invocation, handoff: gate, done, cancel });
  }
}
