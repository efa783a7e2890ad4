import type { ModelPart, ModelToolCall } from './model-step-schema.js';
import { providerOperationId } from './tool-call-schema.js';

/** One tool call of a model step and the operation it is recorded under. */
export type StepToolCall = {
  readonly operationId: string;
  readonly call: ModelToolCall;
  /** An earlier call of the same step already has this call id: it is rejected, never run. */
  readonly repeated: boolean;
};

/**
 * Names the operations of one model step's tool calls, in the order the model gave them.
 * A call's operation is `${stepId}:${callId}`; a call whose id an earlier call of the
 * same step already used gets an operation of its own (`…#<position>`), so that its
 * rejection is recorded beside the first call's operation instead of colliding with it.
 * The same parts always give the same names: the live loop, recovery and the context
 * projection agree on them.
 *
 * @example
 * const ids = new StepOperationIds('step-1');
 * ids.next('call_1'); // { operationId: 'step-1:call_1', repeated: false }
 * ids.next('call_1'); // { operationId: 'step-1:call_1#2', repeated: true }
 */
export class StepOperationIds {
  readonly #stepId: string;
  readonly #used = new Set<string>();
  #position = 0;

  constructor(stepId: string) {
    this.#stepId = stepId;
  }

  /** The operation of the step's next call. */
  next(callId: string): { operationId: string; repeated: boolean } {
    this.#position += 1;
    const first = providerOperationId(this.#stepId, callId);
    if (!this.#used.has(first)) {
      this.#used.add(first);
      return { operationId: first, repeated: false };
    }
    // A call id that itself ends in `#n` may name an operation given to a repeat: the
    // loop keeps every name unique whatever ids the model sends.
    let operationId = `${first}#${this.#position}`;
    while (this.#used.has(operationId)) operationId += '#';
    this.#used.add(operationId);
    return { operationId, repeated: true };
  }
}

/** The tool calls of one model step with their operations; see `StepOperationIds`. */
export function stepToolCalls(stepId: string, parts: readonly ModelPart[]): StepToolCall[] {
  const ids = new StepOperationIds(stepId);
  return parts.flatMap((part) =>
    part.kind === 'tool_call' ? [{ ...ids.next(part.call.id), call: part.call }] : [],
  );
}
