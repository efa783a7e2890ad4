import type { ModelStep, ModelUsage } from '@factum/agent-facts';
import { emptyUsage } from '@factum/agent-facts';
import type { StoredEvent } from '@factum/event-log';
import { addUsage } from './model-turn.js';
import { RunError } from './run-error.js';
import type { AnswerPart, RunAnswer, RunOutcome } from './run-input.js';

/** The answer a step gives: its text and refusal parts (`undefined`: the run took no step). */
export function answerOf(last: { readonly stepId: string; readonly step: ModelStep } | undefined): RunAnswer {
  if (last === undefined) return { stepId: undefined, parts: [], text: '', refused: false };
  const parts: AnswerPart[] = [];
  for (const part of last.step.parts) {
    if (part.kind === 'text' || part.kind === 'refusal') parts.push({ kind: part.kind, text: part.text });
  }
  return {
    stepId: last.stepId,
    parts,
    text: parts
      .filter((part) => part.kind === 'text')
      .map((part) => part.text)
      .join(''),
    refused: parts.some((part) => part.kind === 'refusal'),
  };
}

/**
 * The outcome of an ended invocation, from its events alone (`invocationEvents`, or a
 * `submission`'s): how it ended, its main model steps, their usage, and its last step's
 * answer — the same a live run resolves to. Throws `RunError('invalid_input')` when the
 * events hold no `invocation_ended`.
 */
export function recordedOutcome(events: readonly StoredEvent[]): RunOutcome {
  // Reconciliation facts may follow the end; the outcome is the end's.
  const last = events.find((stored) => stored.event.fact.kind === 'invocation_ended');
  const fact = last?.event.fact;
  if (last === undefined || fact?.kind !== 'invocation_ended') {
    throw new RunError('invalid_input', 'the invocation has not ended: there is no recorded outcome yet');
  }
  let steps = 0;
  let usage: ModelUsage = emptyUsage();
  let step: { stepId: string; step: ModelStep } | undefined;
  for (const { event, sequence } of events) {
    if (sequence > last.sequence) break;
    const current = event.fact;
    if (current.kind === 'model_requested' && current.purpose === 'main') steps += 1;
    if (current.kind === 'model_completed') {
      usage = addUsage(usage, current.output.usage);
      step = { stepId: current.stepId, step: current.output };
    }
  }
  return {
    invocation: last.event.invocation,
    outcome: fact.outcome,
    steps,
    usage,
    answer: answerOf(step),
    endSequence: last.sequence,
  };
}
