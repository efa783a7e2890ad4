import type { ToolCallContext } from './tool-call-context.js';

/**
 * What runs tools' effects. A tool author implements this with nothing but
 * `@factum/agent-facts` installed; the runtime calls `invoke` only after the call's
 * dispatch is durable, and records what it returns (or throws) as the settlement.
 *
 * `context` names the operation (and its idempotency key, stable across processes and
 * re-runs), carries the abort signal and records progress. `context.signal` aborts when
 * the run is cancelled; an effect that has started may finish anyway — its result is
 * still recorded — or stop and throw.
 *
 * @example
 * const charge: ToolExecutor = {
 *   names: () => ['charge'],
 *   invoke: async (_name, input, context) => {
 *     await context.notify('charging');
 *     return payments.charge(input, { idempotencyKey: context.idempotencyKey, signal: context.signal });
 *   },
 * };
 */
export interface ToolExecutor {
  names(): string[];
  invoke(name: string, input: unknown, context: ToolCallContext): Promise<unknown>;
}
