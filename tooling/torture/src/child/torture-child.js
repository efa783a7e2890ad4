// One torture child: runs real engine turns on a few sessions at once (a scripted
// model on loopback, tools whose effects go to the ledger) until it is killed with
// SIGKILL at the point its plan names. It starts by reading its configuration from
// stdin, so the driver can start it ahead of time and pay the imports while the
// previous child runs. Run with plain `node`: it imports the built packages.
import { writeSync } from 'node:fs';
import { successorOf } from '@factum/agent-facts';
import { CellLimits, CodeExecutor } from '@factum/code-runtime';
import { Engine } from '@factum/engine';
import { EventLog } from '@factum/event-log';
import { ModelExecutor } from '@factum/model';
import { startScriptedProvider } from '@factum/model/testing';
import { KillSwitch } from './kill-switch.js';
import { forwardPort } from './port-forward.js';
import { Random } from './random.js';
import { tortureCatalog } from './torture-tools.js';
import { continuationReplies, TURN_KINDS, turnReplies } from './torture-turns.js';

/**
 * What the driver sends on stdin, as one JSON line.
 * @typedef {{
 *   log: string | { postgres: string },
 *   ledger: string,
 *   generation: number,
 *   seed: number,
 *   plan: import('./kill-switch.js').KillPlan,
 *   sessions: { id: string, port: number }[],
 *   host?: { id: string, ttlMs: number, sweepEveryMs: number, partition?: boolean },
 * }} ChildConfig
 *
 * With `host`, the child is one host of several on one log (the multi-host mode): it
 * holds its own lease and sweeps, and when the driver closes its stdin it stops
 * starting turns, lets its runs finish, closes, and exits 0.
 */

const bounds = { maxEvents: 100_000, maxBytes: 64 * 1024 * 1024 };

/** The first line of stdin; the end of stdin afterwards asks a host to stop. */
let stopping = false;
/** @type {() => void} */
let onStop = () => {};
const stopped = new Promise((resolve) => {
  onStop = () => resolve(undefined);
});
/** @returns {Promise<ChildConfig>} */
function readConfig() {
  return new Promise((resolve, reject) => {
    let text = '';
    process.stdin.setEncoding('utf8');
    process.stdin.on('data', (chunk) => {
      if (text.includes('\n')) return;
      text += chunk;
      if (text.includes('\n')) resolve(JSON.parse(text.slice(0, text.indexOf('\n'))));
    });
    process.stdin.on('end', () => {
      if (!text.includes('\n')) reject(new Error('no configuration on stdin'));
      // A single-host child's stdin ends with its configuration: it runs until killed.
      if (JSON.parse(text.slice(0, text.indexOf('\n'))).host === undefined) return;
      stopping = true;
      onStop();
    });
  });
}

const config = await readConfig();
const random = new Random(config.seed);
const kill = new KillSwitch(config.plan);
// Ports first: a child that cannot take its session's port leaves before touching the log.
const providers = await Promise.all(config.sessions.map((session) => listen(session.port)));
if (kill.killedOpening) writeSync(2, `${JSON.stringify({ opening: true })}\n`);
/** Blocks the thread for a moment (the driver's chance to act on the network). */
const pauseCell = new Int32Array(new SharedArrayBuffer(4));
const log = await EventLog.open(config.log, {
  // On PostgreSQL, a stalled transaction frees the chain's lock well within a host's TTL.
  ...(config.host === undefined ? {} : { transactionBoundMs: 1_000 }),
  hooks: {
    batchStarted: () => kill.hook('batchStarted'),
    // Only where something happens there: a thread batch waits for this hook on the event
    // loop with the write lock held, which a code cell there may hold for 600 ms.
    ...(kill.diesBeforeCommit || config.host?.partition === true
      ? {
          beforeCommit: () => {
            kill.hook('beforeCommit');
            partitionPoint();
          },
        }
      : {}),
    afterCommit: () => kill.hook('afterCommit'),
  },
});
if (kill.killedOpening) writeSync(2, `${JSON.stringify({ opened: true })}\n`);
// One host, restarted after every kill: the checker registers the same id, so the
// killed epoch's runs are recoverable at once (see TORTURE_HOST_ID in torture-worker.ts).
const host = config.host;
/** The lease epoch each T1 was written under, by its effect's key (multi-host mode). */
const t1Epochs = new Map();
/** The invocation each session runs now (a host of several). */
const running = new Map();
const tools = tortureCatalog({
  ledger: config.ledger,
  failpoint: (name) => kill.failpoint(name),
  ...(host === undefined
    ? {}
    : { stamp: (key) => ({ host: host.id, epoch: t1Epochs.get(key) ?? log.lease?.stamp.epoch ?? 0 }) }),
});
let renewGap = 0;
/** The longest time this host's lease went unrenewed so far (multi-host mode). */
let leaseGap = () => 0;
const engine = new Engine({
  log,
  models: new ModelExecutor({ timeoutMs: 10_000, retry: { maxAttempts: 1 } }),
  // A cell holds the event loop: a host's must end well within its lease's margin.
  code: new CodeExecutor(CellLimits.from({ deadlineMs: config.host === undefined ? 2_000 : 600 })),
  options:
    host === undefined
      ? { lease: { hostId: 'torture-host' } }
      : { lease: { hostId: host.id, ttlMs: host.ttlMs }, sweepEveryMs: host.sweepEveryMs },
});
if (host !== undefined) {
  await watchLease();
  if (host.partition === true) writeSync(2, `${JSON.stringify({ hosting: true })}\n`);
}
const observer = { onObservation: () => kill.failpoint('stream') };
kill.arm();
await Promise.all(config.sessions.map((session, i) => sessionLoop(session, providers[i])));
if (host !== undefined) {
  await stopped;
  const gap = Math.round(leaseGap());
  await engine.close();
  const lost = log.lease?.status().lost ?? 0;
  await log.close();
  writeSync(2, `${JSON.stringify({ stopped: true, leaseLost: lost, renewGapMs: gap })}\n`);
  process.exit(0);
}

/**
 * Registers the host and wires the lease kill points: renewals and takeover writes are
 * counted, T1 writes are seen, and a `sweep` plan watches for another host's expired
 * invocations.
 */
async function watchLease() {
  let lastSent = performance.now();
  await engine.host();
  const lease = log.lease;
  if (lease === undefined) throw new Error('the engine holds no lease');
  // The background timer calls `this.renew()`: an own property is what it finds. The
  // longest time from a renewal's sending to the next one's success bounds how long the
  // lease may have gone unrenewed: past the time-to-live, this host was not surely live.
  const renew = lease.renew.bind(lease);
  lease.renew = () => {
    const sent = performance.now();
    const epoch = lease.stamp.epoch;
    return renew().then(() => {
      if (lease.stamp.epoch === epoch) {
        renewGap = Math.max(renewGap, performance.now() - lastSent);
        lastSent = sent;
      }
      kill.renewed();
    });
  };
  leaseGap = () => Math.max(renewGap, performance.now() - lastSent);
  const takeOver = log.takeOver.bind(log);
  log.takeOver = (write) => {
    kill.takeovers += 1;
    return takeOver(write).finally(() => {
      kill.takeovers -= 1;
    });
  };
  /**
   * Sees a T1 on its way: the epoch it is staged under (the lease's stamp of this very
   * moment) and, until it settles, one more T1 in flight.
   * @template T
   * @param {import('@factum/agent-facts').EventWrite} write
   * @param {() => Promise<T>} send
   * @returns {Promise<T>}
   */
  const seeT1 = (write, send) => {
    const fact = write.event.fact;
    if (fact.kind !== 'tool_dispatched') return send();
    const key = /** @type {{ key?: unknown } | null} */ (fact.call.input)?.key;
    if (typeof key === 'string') t1Epochs.set(key, lease.stamp.epoch);
    kill.dispatches += 1;
    const sent = send();
    // Counted down however it ends; its own caller handles its failure.
    sent.then(
      () => (kill.dispatches -= 1),
      () => (kill.dispatches -= 1),
    );
    return sent;
  };
  for (const method of /** @type {const} */ (['append', 'commit'])) {
    const original = /** @type {(write: import('@factum/agent-facts').EventWrite) => Promise<any>} */ (
      log[method].bind(log)
    );
    log[method] = /** @type {any} */ (
      (/** @type {import('@factum/agent-facts').EventWrite} */ write) => seeT1(write, () => original(write))
    );
  }
  // The engine's runs send their writes in groups, one transaction each: T1s mostly come here.
  const together = log.commitTogether.bind(log);
  log.commitTogether = (writes) => {
    const commits = together(writes);
    return commits.map((commit, i) => seeT1(/** @type {any} */ (writes[i]), () => commit));
  };
  if (kill.watchesExpiry) {
    const timer = setInterval(() => {
      log.unfinishedOwnership(1_000).then(
        (unfinished) => {
          kill.expiredSeen = unfinished.some(
            (u) => u.ownership.lease === 'expired' && u.ownership.owner?.hostId !== host?.id,
          );
        },
        () => {},
      );
    }, 50);
    timer.unref();
  }
}

/**
 * Partition mode: just before some commits that carry a T1 (the batch's last message,
 * with the lease guard and `COMMIT`, is still to go), the host tells the driver and
 * waits 60 ms, so that the driver's proxy can stall, hold the answer of, or cut that
 * very commit. One such batch in three, so that most T1s commit undisturbed.
 */
function partitionPoint() {
  if (host?.partition !== true || kill.dispatches === 0 || Math.random() >= 1 / 3) return;
  writeSync(2, `${JSON.stringify({ t1batch: true })}\n`);
  Atomics.wait(pauseCell, 0, 0, 60);
}

/**
 * A scripted provider behind the session's fixed port; exits with code 4 if it is taken.
 * @param {number} port
 */
async function listen(port) {
  const provider = await startScriptedProvider();
  try {
    await forwardPort(port, Number(new URL(provider.baseUrl).port));
  } catch (error) {
    report(`port ${port}`, error);
    process.exit(4);
  }
  return provider;
}

/**
 * @param {{ id: string, port: number }} session
 * @param {import('@factum/model/testing').ScriptedProvider | undefined} provider
 */
async function sessionLoop(session, provider) {
  if (provider === undefined) return;
  const model = provider.config({ baseUrl: `http://127.0.0.1:${session.port}/v1` });
  /** @param {import('@factum/agent-facts').Invocation} invocation @param {import('@factum/agent-facts').ToolMode} toolMode */
  const base = (invocation, toolMode) => ({
    invocation,
    provider: model,
    configuration: { cwd: '/torture', toolMode },
  });
  try {
    await resumeHandoff(session.id, provider, base);
  } catch (error) {
    // Reading the session's log failed (a network cut, say): this session stops here.
    report(`handoffs of ${session.id}`, error);
    return;
  }
  try {
    await settleParked(session.id, provider, base);
  } catch (error) {
    report(`parked run of ${session.id}`, error);
    runFailed(session.id, error);
    return;
  }
  for (let turn = 0; !stopping; turn += 1) {
    const kind = random.pick(TURN_KINDS);
    const name = `${config.generation}-${session.id}-${turn}`;
    const invocation = {
      sessionId: session.id,
      turnId: `t${name}`,
      runId: `r${name}`,
      invocationId: `i${name}`,
    };
    provider.script(...turnReplies(random, kind, `k${name}`));
    const input = {
      ...base(invocation, kind === 'code' ? 'code_mode' : 'direct'),
      work: {
        kind: /** @type {const} */ ('message'),
        message: `turn ${name}`,
        allowPriorUnknown: true,
        tools,
      },
    };
    try {
      says(invocation.invocationId, session.id);
      if (kind === 'handoff') await handoff(input, base);
      else await engine.run(input, { observer });
      if (kind === 'approval') await settleParked(session.id, provider, base);
    } catch (error) {
      report(`turn ${name} (${kind})`, error);
      runFailed(session.id, error);
      // The script may now be ahead of the runs: a fresh provider keeps turns aligned.
      return;
    }
  }
}

/**
 * Runs a turn that is paused for a handoff at its first safe point, then its successor.
 * @param {import('@factum/engine').RunInput} input
 * @param {(invocation: import('@factum/agent-facts').Invocation, toolMode: import('@factum/agent-facts').ToolMode) => Omit<import('@factum/engine').RunInput, 'work'>} base
 */
async function handoff(input, base) {
  const running = await engine.start(input, { observer });
  const { invocation } = input;
  const intent = {
    handoffId: `h-${invocation.invocationId}`,
    hostEpoch: `host-${config.generation}`,
    rootRunId: invocation.runId,
    successorRunId: `${invocation.runId}-next`,
    successorInvocationId: `${invocation.invocationId}-next`,
    claimId: `claim-${invocation.invocationId}`,
  };
  const held = await running.handoff.reserve(intent).ready();
  kill.failpoint('handoff');
  const pause = await held.commit().wait();
  await running.wait();
  await runSuccessor(invocation, pause, base);
}

/**
 * @param {import('@factum/agent-facts').Invocation} paused
 * @param {import('@factum/agent-facts').HandoffPause} pause
 * @param {(invocation: import('@factum/agent-facts').Invocation, toolMode: import('@factum/agent-facts').ToolMode) => Omit<import('@factum/engine').RunInput, 'work'>} base
 */
async function runSuccessor(paused, pause, base) {
  const source = await log.runSource(paused.sessionId, paused.runId);
  if (source === undefined) throw new Error(`run ${paused.runId} has no boundary`);
  says(pause.intent.successorInvocationId, paused.sessionId);
  await engine.run(
    {
      ...base(successorOf(pause.intent, paused), 'direct'),
      work: { kind: 'handoff', source: source.boundary, pause, tools },
    },
    { observer },
  );
}

/**
 * Decides every call a parked run of the session waits on — a person here: an amount
 * past a million is the model trying another input, always denied; the rest approved
 * seven times in ten — then continues the run, until nothing is parked. Runs after a
 * kill too: a decision already recorded is kept, a call already carried out is skipped.
 * @param {string} sessionId
 * @param {import('@factum/model/testing').ScriptedProvider} provider
 * @param {(invocation: import('@factum/agent-facts').Invocation, toolMode: import('@factum/agent-facts').ToolMode) => Omit<import('@factum/engine').RunInput, 'work'>} base
 */
async function settleParked(sessionId, provider, base) {
  for (let round = 0; !stopping; round += 1) {
    const parked = await engine.parkedRun(sessionId);
    if (parked === undefined) return;
    for (const operation of parked.operations) {
      if (operation.decision !== undefined) continue;
      const amount = /** @type {{ amount?: number }} */ (operation.input).amount ?? 0;
      const approve = amount <= 1_000_000 && random.next() < 0.7;
      await engine.decide(operation.operationId, {
        decision: approve ? 'approve' : 'deny',
        by: 'torture',
        ...(approve ? {} : { note: `denied by generation ${config.generation}` }),
      });
    }
    kill.failpoint('approval_decided');
    const key = String(/** @type {{ key?: unknown }} */ (parked.operations[0]?.input)?.key ?? 'k');
    provider.script(...continuationReplies(random, key.slice(0, key.lastIndexOf('.'))));
    const name = `${parked.invocation.invocationId}-c${config.generation}-${round}`;
    const invocation = { sessionId, turnId: `t${name}`, runId: `r${name}`, invocationId: name };
    says(name, sessionId);
    await engine.run(
      { ...base(invocation, 'direct'), work: { kind: 'continuation', source: parked.source, tools } },
      { observer },
    );
  }
}

/**
 * A session whose last turn was sealed for a handoff belongs to its successor: run it.
 * @param {string} sessionId
 * @param {import('@factum/model/testing').ScriptedProvider} provider
 * @param {(invocation: import('@factum/agent-facts').Invocation, toolMode: import('@factum/agent-facts').ToolMode) => Omit<import('@factum/engine').RunInput, 'work'>} base
 */
async function resumeHandoff(sessionId, provider, base) {
  const events = (await log.scopedPrefix({ session: sessionId }, bounds)).events;
  const opened = new Set(
    events
      .filter(({ event }) => event.fact.kind === 'invocation_opened')
      .map(({ event }) => event.invocation.invocationId),
  );
  for (const { event } of events) {
    const fact = event.fact;
    if (fact.kind !== 'invocation_ended' || fact.outcome.kind !== 'handoff_paused') continue;
    const pause = fact.outcome.pause;
    if (opened.has(pause.intent.successorInvocationId)) continue;
    provider.script(...turnReplies(random, 'stream', `k${config.generation}-${sessionId}-resume`));
    try {
      await runSuccessor(event.invocation, pause, base);
    } catch (error) {
      report(`successor of ${event.invocation.invocationId}`, error);
      runFailed(sessionId, error);
    }
  }
}

/**
 * A host of several tells the driver, before it starts, which invocation it runs: the
 * driver then knows whose runs a recovery may end (a dead host's) and may not.
 * @param {string} invocationId
 * @param {string} sessionId
 */
function says(invocationId, sessionId) {
  running.set(sessionId, invocationId);
  if (host !== undefined) writeSync(2, `${JSON.stringify({ runs: invocationId })}\n`);
}

/**
 * A host of several tells the driver that the session's current run failed, and why: a
 * run that failed because the store was out of reach may have no end recorded (recovery
 * ends it), while one refused as fenced or sealed was ended or taken over by another.
 * @param {string} sessionId
 * @param {unknown} error
 */
function runFailed(sessionId, error) {
  const id = running.get(sessionId);
  if (host === undefined || id === undefined) return;
  const cause = /** @type {{ cause?: { code?: unknown } }} */ (error)?.cause;
  const codes = [/** @type {{ code?: unknown }} */ (error)?.code, cause?.code].map(String);
  writeSync(2, `${JSON.stringify({ runFailed: id, codes })}\n`);
}

/**
 * Tells the driver about an error the child did not expect (on stderr, one JSON line).
 * @param {string} where
 * @param {unknown} error
 */
function report(where, error) {
  const code = /** @type {{ code?: unknown }} */ (error)?.code;
  const message = error instanceof Error ? error.message : String(error);
  // Why, one level down: a fenced or refused write hides behind a run's error.
  const cause = /** @type {{ cause?: { code?: unknown, message?: unknown } }} */ (error)?.cause;
  const because = cause === undefined ? undefined : `${String(cause.code)}: ${String(cause.message)}`;
  // Below that, to the root: a store's own error (busy, I/O) hides behind a rejected commit.
  const deeper = [];
  let next = /** @type {{ cause?: unknown } | undefined} */ (cause)?.cause;
  while (next !== undefined && next !== null && deeper.length < 4) {
    const deep = /** @type {{ code?: unknown, message?: unknown, cause?: unknown }} */ (next);
    deeper.push(`${String(deep.code)}: ${String(deep.message ?? next)}`);
    next = deep.cause;
  }
  const line =
    deeper.length === 0 ? { where, code, message, because } : { where, code, message, because, deeper };
  process.stderr.write(`${JSON.stringify(line)}\n`);
}
