import {
  canonicalJson,
  emptyUsage,
  type Fact,
  type InvocationOutcome,
  type ModelStep,
} from '@factum/agent-facts';
import type { SessionEvent } from '../context-projection.js';
import { addUsage } from '../model-turn.js';
import { answerOf } from '../run-answer.js';
import type { RecordedCall, UnmatchedCall } from './recorded-calls.js';
import type { ReplayRun } from './replay-invocation.js';
import { recordedEndOf } from './replay-invocation.js';
import type { ModelComparison, ReplayCall, ReplayDivergence } from './replay-report.js';

/**
 * `model` mode: the new model's run beside the recorded one — the calls served their
 * recorded result, the calls that were not run (they would have run new effects), the
 * recorded calls it did not make, both answers, tokens and model time. Divergences are
 * the new and missing calls and a different end; different wording is not one.
 */
export function compareModelRun(
  recorded: readonly SessionEvent[],
  run: ReplayRun,
): { comparison: ModelComparison; divergences: ReplayDivergence[] } {
  const recordedSteps: { stepId: string; step: ModelStep }[] = [];
  let recordedUsage = emptyUsage();
  let recordedMs = 0;
  const requestedAt = new Map<string, number>();
  const dispatches = new Map<string, { index: number; fact: Fact }>();
  let index = 0;
  for (const { event } of recorded.slice(1)) {
    const fact = event.fact;
    if (fact.kind === 'model_requested') requestedAt.set(fact.stepId, Date.parse(event.timestamp));
    if (fact.kind === 'model_completed') {
      recordedSteps.push({ stepId: fact.stepId, step: fact.output });
      recordedUsage = addUsage(recordedUsage, fact.output.usage);
      const start = requestedAt.get(fact.stepId);
      if (start !== undefined) recordedMs += Date.parse(event.timestamp) - start;
    }
    if (fact.kind === 'tool_dispatched') dispatches.set(fact.operationId, { index, fact });
    if (fact.kind !== 'model_observed') index += 1;
  }
  const replayedEnd = endOf(run.facts);
  const recordedEnd = recordedEndOf(recorded);
  const divergences: ReplayDivergence[] = [];
  for (const call of run.calls.unmatched) {
    const at = run.facts.findIndex(
      (fact) => fact.kind === 'tool_dispatched' && fact.operationId === call.operationId,
    );
    divergences.push({ kind: 'call', index: at, ...(at < 0 ? {} : { replayed: run.facts[at]! }) });
  }
  for (const call of run.calls.unused) {
    const at = dispatches.get(call.operationId);
    divergences.push({
      kind: 'call',
      index: at?.index ?? -1,
      ...(at === undefined ? {} : { recorded: at.fact }),
    });
  }
  if (canonicalJson(recordedEnd ?? null) !== canonicalJson(replayedEnd ?? null)) {
    const endIndex = run.facts.length - 1;
    divergences.push({
      kind: 'end',
      index: endIndex,
      ...(recordedEnd === undefined ? {} : { recorded: { kind: 'invocation_ended', outcome: recordedEnd } }),
      ...(replayedEnd === undefined ? {} : { replayed: { kind: 'invocation_ended', outcome: replayedEnd } }),
    });
  }
  let replayedUsage = emptyUsage();
  let replayedMs: number | undefined;
  for (const step of run.steps) {
    replayedUsage = addUsage(replayedUsage, step.step.usage);
    if (step.ms !== undefined) replayedMs = (replayedMs ?? 0) + step.ms;
  }
  const comparison: ModelComparison = {
    sameCalls: run.calls.served.map(callOf),
    newCalls: run.calls.unmatched.map(callOf),
    missingCalls: run.calls.unused.map(callOf),
    answers: {
      recorded: { text: answerOf(recordedSteps.at(-1)).text, end: endName(recordedEnd) },
      replayed: { text: answerOf(run.steps.at(-1)).text, end: endName(replayedEnd) },
    },
    usage: { recorded: recordedUsage, replayed: replayedUsage },
    latencyMs: { recorded: recordedMs, ...(replayedMs === undefined ? {} : { replayed: replayedMs }) },
  };
  return { comparison, divergences };
}

function callOf(call: RecordedCall | UnmatchedCall): ReplayCall {
  return { operationId: call.operationId, name: call.name, inputDigest: call.inputDigest };
}

function endOf(facts: readonly Fact[]): InvocationOutcome | undefined {
  const last = facts.at(-1);
  return last?.kind === 'invocation_ended' ? last.outcome : undefined;
}

function endName(end: InvocationOutcome | undefined): string {
  if (end === undefined) return 'none';
  return end.kind === 'failed' ? `failed: ${end.error.code}` : end.kind;
}
