import { setTimeout as sleep } from 'node:timers/promises';
import {
  canonicalJson,
  IdempotencyKeySchema,
  type Invocation,
  type InvocationInput,
} from '@factum/agent-facts';
import { AppendRefusedError, type EventLog, type Submission } from '@factum/event-log';
import { HandoffGate } from './handoff-gate.js';
import type { ContextBounds } from './model-turn.js';
import { recordedOutcome } from './run-answer.js';
import { RunError } from './run-error.js';
import type { RunInput, RunOutcome } from './run-input.js';
import { RunningInvocation } from './running-invocation.js';

/** How a keyed start begins a run of its own (the engine's unkeyed start, made durable). */
export type BeginRun = (input: RunInput) => Promise<RunningInvocation>;

/** What the gate needs of its engine. */
export type SubmissionGateInit = {
  readonly log: EventLog;
  readonly bounds: ContextBounds;
  /** How often a run live on another host is read again until it ends. */
  readonly pollMs: number;
  /** Owns a background wait, so that `drain()` awaits it. */
  readonly track: (work: Promise<unknown>) => void;
  /** Makes sure the engine sweeps dead hosts' runs while it waits for one. */
  readonly host: () => Promise<void>;
};

const ROUNDS = 8;

/**
 * Idempotent submission: a run started with an idempotency key is started at most once
 * per session. The same key again gets the first run — its live end if it runs on this
 * host, its end read from the log when it runs on another (waited for) or has ended —
 * and never a second model call. The same key with other work is `idempotency_conflict`,
 * with nothing written. The log decides between submitters on several hosts: an opening
 * with a key it has seen is refused `duplicate_submission` inside the write transaction,
 * and the loser reads the winner's run.
 */
export class SubmissionGate {
  readonly #init: SubmissionGateInit;
  /** Keyed runs this engine started and that have not ended, by session and key. */
  readonly #local = new Map<
    string,
    { readonly input: RunInput; readonly started: Promise<RunningInvocation> }
  >();

  constructor(init: SubmissionGateInit) {
    this.#init = init;
  }

  /** Starts `input` under `key`, or answers with the run the key already started. */
  async start(
    input: RunInput,
    key: string,
    options: { readonly signal?: AbortSignal | undefined },
    begin: BeginRun,
  ): Promise<RunningInvocation> {
    if (!IdempotencyKeySchema.safeParse(key).success) {
      throw new RunError(
        'invalid_input',
        'an idempotency key is 1 to 255 visible ASCII characters, without spaces',
      );
    }
    const { sessionId } = input.invocation;
    const id = `${sessionId}\u0000${key}`;
    for (let round = 0; round < ROUNDS; round += 1) {
      const local = this.#local.get(id);
      if (local !== undefined) {
        refuseConflict(submittedInput(local.input), input, key);
        const first = await local.started.catch(() => undefined);
        if (first !== undefined) return attached(first.invocation, first.wait());
        if (this.#local.get(id) === local) this.#local.delete(id);
        continue;
      }
      const recorded = await this.#init.log.submission(sessionId, key, this.#init.bounds);
      if (recorded !== undefined) return this.#attach(recorded, input, key, options.signal);
      // Another start with this key began on this host while the log was read.
      if (this.#local.has(id)) continue;
      const started = begin(input);
      const entry = { input, started };
      this.#local.set(id, entry);
      const forget = () => {
        if (this.#local.get(id) === entry) this.#local.delete(id);
      };
      started.then((running) => running.wait().then(forget, forget), forget);
      try {
        return await started;
      } catch (error) {
        // Another host's opening may have taken the key first (admission then finds the
        // session busy, or the log refuses this opening): its run is the answer.
        if (!RunError.isInstance(error)) throw error;
        const winner = await this.#init.log.submission(sessionId, key, this.#init.bounds);
        if (winner !== undefined) return this.#attach(winner, input, key, options.signal);
        if (!tookByAnother(error)) throw error;
      }
    }
    throw new RunError(
      'persistence',
      `the run of idempotency key ${JSON.stringify(key)} could not be started nor read back; try again`,
    );
  }

  #attach(
    recorded: Submission,
    input: RunInput,
    key: string,
    signal: AbortSignal | undefined,
  ): RunningInvocation {
    const opened = recorded.events[0]?.event.fact;
    if (opened?.kind !== 'invocation_opened') {
      throw new RunError('persistence', `the run of idempotency key ${JSON.stringify(key)} has no opening`);
    }
    refuseConflict(opened.input, input, key);
    if (recorded.ended) return attached(recorded.invocation, recordedOutcome(recorded.events));
    const done = this.#watch(recorded.invocation.sessionId, key, signal);
    this.#init.track(done.catch(() => undefined));
    return attached(recorded.invocation, done);
  }

  /** Reads the run again until it has ended (its host ends it, or a sweep recovers it). */
  async #watch(sessionId: string, key: string, signal: AbortSignal | undefined): Promise<RunOutcome> {
    await this.#init.host();
    for (;;) {
      try {
        await sleep(this.#init.pollMs, undefined, signal ? { signal } : {});
      } catch {
        throw new RunError('cancelled', 'the caller aborted while waiting for the run its key started');
      }
      const recorded = await this.#init.log.submission(sessionId, key, this.#init.bounds);
      if (recorded?.ended) return recordedOutcome(recorded.events);
    }
  }
}

/** A handle on a run an earlier submission started: it waits, it does not steer. */
function attached(invocation: Invocation, end: Promise<RunOutcome> | RunOutcome): RunningInvocation {
  const gate = new HandoffGate();
  gate.close(
    () =>
      new RunError('handoff_unavailable', 'this run was started by an earlier submission with the same key'),
  );
  const recorded = end instanceof Promise ? {} : { recorded: end };
  const done = end instanceof Promise ? end : Promise.resolve(end);
  return new RunningInvocation({
    invocation,
    handoff: gate,
    done,
    cancel: () => undefined,
    resubmitted: true,
    ...recorded,
  });
}

/** What an opening of `input` records as its input (as admission builds it). */
function submittedInput(input: RunInput): InvocationInput {
  const { work } = input;
  const fingerprint =
    input.requestFingerprint === undefined ? {} : { requestFingerprint: input.requestFingerprint };
  switch (work.kind) {
    case 'message':
      return {
        kind: 'message',
        content: work.message,
        sourceMessages: [...(work.sourceMessages ?? [])],
        ...fingerprint,
      };
    case 'continuation':
      return { kind: 'continuation', source: work.source, ...fingerprint };
    case 'handoff':
      return { kind: 'handoff', source: work.source, pause: work.pause };
    default:
      return work satisfies never;
  }
}

function refuseConflict(first: InvocationInput, input: RunInput, key: string): void {
  if (canonicalJson(first) === canonicalJson(submittedInput(input))) return;
  throw new RunError(
    'idempotency_conflict',
    `idempotency key ${JSON.stringify(key)} already started a run with other work in session ${input.invocation.sessionId}: use a new key for a new request`,
  );
}

function tookByAnother(error: unknown): boolean {
  if (!RunError.isInstance(error)) return false;
  const cause = error.cause;
  return AppendRefusedError.isInstance(cause) && cause.code === 'duplicate_submission';
}
