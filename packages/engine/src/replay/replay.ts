import { appendFile, writeFile } from 'node:fs/promises';
import type { CodeExecutor } from '@factum/code-runtime';
import type { EventLog, StoredEvent } from '@factum/event-log';
import { type ModelExecutor, type ModelMessage, RequestDigester } from '@factum/model';
import type { ToolCatalog } from '@factum/tools';
import { MessageProjection } from '../message-projection.js';
import { RunError } from '../run-error.js';
import { ReplayComparison } from './compare-replay.js';
import { compareModelRun } from './model-comparison.js';
import { servedCatalog } from './recorded-calls.js';
import { type RecordedInvocation, type ReplayRun, replayInvocation } from './replay-invocation.js';
import type { InvocationReplay, ReplayReport } from './replay-report.js';
import type { InvocationSetup, OpenedInvocation, ReplayOptions } from './replay-setup.js';
import { SourceResults } from './source-results.js';

/** A request without instructions: no system message before the conversation. */
const NO_LEAD: readonly ModelMessage[] = Object.freeze([]);

const DEFAULT_BOUNDS = { maxEvents: 250_000, maxBytes: 256 * 1024 * 1024 };

/**
 * Replays recorded invocations of `source` without running any effect and without
 * writing to it: every invocation the target covers, in log order, into a scratch
 * sink in memory. See `Engine.replay`.
 */
export async function replayLog(
  source: EventLog,
  options: ReplayOptions,
  parts: { readonly models: ModelExecutor; readonly code: CodeExecutor },
): Promise<ReplayReport> {
  const signal = options.signal ?? new AbortController().signal;
  if (signal.aborted) throw new RunError('cancelled', 'the caller aborted before the replay started');
  const bounds = options.bounds ?? DEFAULT_BOUNDS;
  const served: InvocationSetup['served'] = { current: undefined };
  const results = new SourceResults(source);
  const catalogs = new Map<ToolCatalog, ToolCatalog>();
  const agentOf = (opened: OpenedInvocation) =>
    typeof options.agent === 'function' ? options.agent(opened) : options.agent;
  const setupOf = (opened: OpenedInvocation): InvocationSetup => {
    const agent = agentOf(opened);
    let catalog = catalogs.get(agent.catalog);
    if (catalog === undefined) {
      catalog = servedCatalog(agent.catalog, () => served.current!);
      catalogs.set(agent.catalog, catalog);
    }
    return { ...setup, agent, catalog };
  };
  const setup: Omit<InvocationSetup, 'agent' | 'catalog'> = {
    mode: options.mode,
    served,
    code: parts.code,
    models: parts.models,
    maxSteps: options.maxSteps ?? 50,
    route: options.mode === 'verify' ? (options.route ?? 'agent') : 'agent',
    onNewCall: options.onNewCall ?? 'unavailable',
    ...(options.now === undefined ? {} : { now: options.now }),
    readSource: (sessionId, eventId) => results.read(sessionId, eventId),
    signal,
  };
  const invocations: InvocationReplay[] = [];
  const scratch = options.scratchFile;
  if (scratch !== undefined) await writeFile(scratch, '');
  const leads = new Map<string, readonly ModelMessage[]>();
  const lead = (instructions: string | undefined) => {
    if (!instructions) return NO_LEAD;
    let list = leads.get(instructions);
    if (list === undefined) {
      list = Object.freeze([{ role: 'system' as const, content: instructions }]);
      leads.set(instructions, list);
    }
    return list;
  };
  for (const session of await sessionsOf(source, options, bounds)) {
    const { sessionId, events: history } = session;
    await results.prefetch(history);
    // A fork's inherited results are stored under the session that settled them.
    const holders = new Map(
      history
        .filter(({ event }) => event.invocation.sessionId !== sessionId)
        .map(({ event }) => [event.id, event.invocation.sessionId]),
    );
    const readRecorded = (eventId: string) => setup.readSource(holders.get(eventId) ?? sessionId, eventId);
    const projection = new MessageProjection(readRecorded);
    const digester = new RequestDigester();
    let ingested = 0;
    for (const { openedAt, events } of invocationsOf(session, options)) {
      if (signal.aborted) throw new RunError('cancelled', 'the caller aborted during the replay');
      for (; ingested < openedAt; ingested += 1) projection.ingest(history[ingested]!);
      const recorded: RecordedInvocation = {
        prefix: () => history.slice(0, openedAt),
        events,
        projection,
        readRecorded,
        digester,
        lead,
      };
      const opening = recorded.events[0]!.event;
      const configuration =
        opening.fact.kind === 'invocation_opened' ? opening.fact.configuration : undefined;
      const replayed = await replayOne(setupOf({ invocation: opening.invocation, configuration }), recorded);
      invocations.push(replayed.report);
      if (scratch !== undefined)
        await appendFile(scratch, replayed.events.map((stored) => `${JSON.stringify(stored)}\n`).join(''));
    }
  }
  const same = invocations.filter((invocation) => invocation.status === 'same').length;
  return {
    mode: options.mode,
    invocations,
    summary: { invocations: invocations.length, same, diverged: invocations.length - same },
  };
}

async function replayOne(
  setup: InvocationSetup,
  recorded: RecordedInvocation,
): Promise<{ report: InvocationReplay; events: ReplayRun['events'] }> {
  const { invocation } = recorded.events[0]!.event;
  const comparison = new ReplayComparison(recorded.events);
  const verify = setup.mode === 'verify';
  const run = await replayInvocation(setup, recorded, (facts) => !verify || comparison.check(facts));
  const ids = { sessionId: invocation.sessionId, invocationId: invocation.invocationId };
  if (verify) {
    const divergence = comparison.finish(run.facts);
    const report: InvocationReplay = {
      ...ids,
      status: divergence === undefined ? 'same' : 'diverged',
      compared: comparison.compared,
      divergences: divergence === undefined ? [] : [divergence],
    };
    return { report, events: run.events };
  }
  const { comparison: model, divergences } = compareModelRun(recorded.events, run);
  const report: InvocationReplay = {
    ...ids,
    status: divergences.length === 0 ? 'same' : 'diverged',
    compared: run.facts.length,
    divergences,
    model,
  };
  return { report, events: run.events };
}

/** A session the target covers: its id and its history in log order (a fork's inherited prefix first). */
type SessionHistory = { readonly sessionId: string; readonly events: readonly StoredEvent[] };

/** The sessions the target covers, each as its events in log order. */
async function sessionsOf(
  source: EventLog,
  options: ReplayOptions,
  bounds: ReplayOptions['bounds'] & {},
): Promise<SessionHistory[]> {
  const target = options.target;
  if (target.kind !== 'all') {
    const prefix = await source.scopedPrefix({ session: target.sessionId }, bounds);
    if (prefix.events.length === 0) {
      throw new RunError('invalid_input', `session ${target.sessionId} has no facts in this log`);
    }
    return [{ sessionId: target.sessionId, events: prefix.events }];
  }
  const bySession = new Map<string, StoredEvent[]>();
  for (const stored of (await source.prefix(bounds)).events) {
    const id = stored.event.invocation.sessionId;
    const list = bySession.get(id) ?? [];
    if (list.length === 0) bySession.set(id, list);
    list.push(stored);
  }
  const sessions: SessionHistory[] = [];
  for (const [sessionId, events] of bySession) {
    // A fork's history starts with the prefix it inherits, which the log reads for it.
    const forked = events[0]?.event.fact.kind === 'session_forked';
    const history = forked ? (await source.scopedPrefix({ session: sessionId }, bounds)).events : events;
    sessions.push({ sessionId, events: history });
  }
  return sessions;
}

/**
 * The invocations the target covers, each with the history before it: those opened in
 * the session itself — a fork's inherited invocations are its source's, replayed there.
 */
function invocationsOf(
  session: SessionHistory,
  options: ReplayOptions,
): { readonly openedAt: number; readonly events: readonly StoredEvent[] }[] {
  const target = options.target;
  const { sessionId, events } = session;
  const byInvocation = new Map<string, StoredEvent[]>();
  const openedAt = new Map<string, number>();
  events.forEach((stored, index) => {
    const { invocation } = stored.event;
    if (invocation.sessionId !== sessionId) return;
    const id = invocation.invocationId;
    if (stored.event.fact.kind === 'invocation_opened') {
      openedAt.set(id, index);
      byInvocation.set(id, []);
    }
    byInvocation.get(id)?.push(stored);
  });
  const chosen = [...openedAt.keys()].filter(
    (id) => target.kind !== 'invocation' || id === target.invocationId,
  );
  if (target.kind === 'invocation' && chosen.length === 0) {
    throw new RunError(
      'invalid_input',
      `invocation ${target.invocationId} was not opened in session ${sessionId}`,
    );
  }
  return chosen.map((id) => ({ openedAt: openedAt.get(id)!, events: byInvocation.get(id)! }));
}
