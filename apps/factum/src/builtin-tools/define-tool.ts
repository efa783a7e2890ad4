import {
  type RecoveryPolicy,
  ToolHandler,
  type ToolNesting,
  type ToolRegistration,
  type ToolSemantics,
} from '@factum/tools';
import type { z } from 'zod';
import { boundedResult } from './result-bound.js';

/** Everything one built-in tool is: what the model is told, how it runs, how it recovers. */
export type ToolSpecification<S extends z.ZodType> = {
  readonly name: string;
  readonly description: string;
  readonly input: S;
  readonly nesting: ToolNesting;
  readonly semantics: ToolSemantics;
  readonly recovery: RecoveryPolicy;
  /** It changes nothing outside (see `ToolRegistration.readOnly`): its T1 rides with its T2. */
  readonly readOnly?: boolean;
  readonly run: (input: z.output<S>, signal: AbortSignal) => Promise<unknown>;
};

/**
 * A registration for the catalog from a zod input schema and a typed effect. The
 * catalog checks inputs before dispatch; the effect parses again, because what it
 * receives is `unknown` and a typed value must come from a parse, not a cast. Every
 * result is bounded in bytes (`boundedResult`).
 */
export function defineTool<S extends z.ZodType>(spec: ToolSpecification<S>): ToolRegistration {
  return {
    definition: { name: spec.name, description: spec.description, inputSchema: spec.input },
    handler: ToolHandler.immediate({
      names: () => [spec.name],
      invoke: (_name, input, context) =>
        boundedResult(spec.name, spec.run(spec.input.parse(input), context.signal)),
    }),
    nesting: spec.nesting,
    semantics: spec.semantics,
    recovery: spec.recovery,
    ...(spec.readOnly === true ? { readOnly: true } : {}),
  };
}
