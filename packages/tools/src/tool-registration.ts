import type { ToolExecutor, ToolSource } from '@factum/agent-facts';
import type { SchemaInput } from './input-schema.js';
import type { RecoveryPolicy } from './recovery-policy.js';

/** What a model is told about a tool. */
export type ToolDefinition = {
  readonly name: string;
  readonly description: string;
  /** JSON Schema of the input, or a zod schema (converted with zod's JSON Schema support). */
  readonly inputSchema: SchemaInput;
  /** When given, a result that does not match settles the call as `invalid_output`. */
  readonly outputSchema?: SchemaInput;
  /** A free-form (non-JSON) tool's grammar, passed to providers that support it. */
  readonly freeform?: { readonly syntax: string; readonly definition: string };
  /** Provider-specific options of the tool, passed through. */
  readonly provider?: Record<string, unknown>;
};

/** How a tool's effect runs. */
export type ToolHandler = { readonly kind: 'immediate'; readonly executor: ToolExecutor };

/** Builders for tool handlers. */
export const ToolHandler = {
  /** The effect runs in process, by `executor.invoke`. */
  immediate: (executor: ToolExecutor): ToolHandler => ({ kind: 'immediate', executor }),
} as const;

/** Whether Code mode cells may call the tool (`nestable`) or only the model directly. */
export type ToolNesting = 'nestable' | 'direct_only';

/** Whether calls may overlap with others (`parallel`) or run alone (`exclusive`). */
export type ToolSemantics = 'parallel' | 'exclusive';

/**
 * Whether a call needs a person's approval before it may run: `'always'`, or a function
 * of the (schema-checked) input that returns `false` (no), `true` (yes) or the reason to
 * show the person. A function that throws is taken as "yes": approval fails closed.
 */
export type ToolApproval = 'always' | ((input: unknown) => boolean | string);

/** One tool in a catalog. */
export type ToolRegistration = {
  readonly definition: ToolDefinition;
  readonly handler: ToolHandler;
  readonly nesting: ToolNesting;
  readonly semantics: ToolSemantics;
  readonly recovery?: RecoveryPolicy;
  /** Calls wait for a person's decision before they run (see `ToolApproval`). */
  readonly approval?: ToolApproval;
  /** An approval not decided within this many milliseconds expires (denied as `expired`). */
  readonly approvalTtlMs?: number;
  /** Where the tool came from (an MCP server): recorded on each of its `tool_dispatched`. */
  readonly source?: ToolSource;
  /**
   * The tool changes nothing outside the process: it reads (a file, a search). Its call
   * has no effect for a `tool_dispatched` to guard, so that fact is not waited for
   * before the call runs: it rides, in order, with the call's `tool_settled` (or with
   * any commit of the run that comes first), and a call costs one waited-for commit
   * instead of two. A call a person approved is dispatched as any other (the log checks
   * the approval in its T1's transaction). The catalog's builder declares it; nothing a
   * model sends changes it. A tool that writes must not claim it: a crash during its
   * effect would leave no trace of the call.
   */
  readonly readOnly?: boolean;
};
