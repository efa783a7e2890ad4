import { FactumError } from '@factum/agent-facts';

const marker = Symbol.for('@factum/scripted-provider-error');

/**
 * A scripted provider was used in a way it cannot answer: awaited after `close()`, or
 * asked about a request with a negative index. Test code only.
 */
export class ScriptedProviderError extends FactumError {
  readonly [marker] = true;

  constructor(message: string) {
    super('scripted_provider', message);
  }

  static override isInstance(value: unknown): value is ScriptedProviderError {
    return FactumError.isInstance(value) && (value as unknown as Record<symbol, unknown>)[marker] === true;
  }
}
