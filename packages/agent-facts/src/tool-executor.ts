/**
 * What runs tools' effects. A tool author implements this with nothing but
 * `@factum/agent-facts` installed; the runtime calls `invoke` only after the call's
 * dispatch is durable, and records what it returns (or throws) as the settlement.
 *
 * `signal` aborts when the run is cancelled. An effect that has started may finish
 * anyway — its result is still recorded — or stop and throw.
 *
 * @example
 * const clock: ToolExecutor = {
 *   names: () => ['now'],
 *   invoke: async () => ({ now: new Date().toISOString() }),
 * };
 */
export interface ToolExecutor {
  names(): string[];
  invoke(name: string, input: unknown, signal: AbortSignal): Promise<unknown>;
}
