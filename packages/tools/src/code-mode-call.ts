import { type FactError, ToolCallIdentity, ToolError, ToolResult } from '@factum/agent-facts';
import { type CellBridge, type CellResult, type CodeExecutor, FatalHostError } from '@factum/code-runtime';
import { type ApprovalPolicy, approvalReason } from './approval-gate.js';
import { isNestable } from './exec-tool.js';
import { type PreparedCall, type RunContext, refusal, reject, runCall } from './tool-call-runner.js';
import type { ToolCatalog } from './tool-catalog.js';

/**
 * Runs one `exec` call: T1 of the parent (the model's call) and T1 of the cell in one
 * transaction, the cell, then T2 of the cell and T2 of the parent in another (with a sink
 * that can hold a write; else each in its own). Every `tools.x()` inside the cell is a
 * child call with its own T1, effect and T2. A commit failure anywhere inside the cell
 * is fatal: the cell is stopped before JS can observe it, and neither the cell nor the
 * parent is settled — both stay uncertain, which is the truth.
 */
export async function runExec(
  context: RunContext & {
    readonly catalog: ToolCatalog;
    readonly code: CodeExecutor;
    readonly approval: ApprovalPolicy;
  },
  parent: PreparedCall,
  signal: AbortSignal,
): Promise<ToolResult> {
  const { ledger } = context;
  const source = (parent.call.input as { code?: unknown } | null)?.code;
  if (parent.invalidArguments !== undefined || typeof source !== 'string') {
    const message =
      parent.invalidArguments !== undefined ? 'the arguments are not valid JSON' : '`code` must be a string';
    return reject(context, parent, { kind: 'invalid_input', message });
  }
  if (signal.aborted) return reject(context, parent, { kind: 'cancelled' });
  // The parent's T1 rides with the cell's: nothing runs between the two.
  await ledger.defer({ kind: 'tool_dispatched', operationId: parent.operationId, call: parent.call });
  const cellId = `${parent.operationId}#cell`;
  await ledger.commit({
    kind: 'tool_dispatched',
    operationId: cellId,
    call: {
      id: 'cell',
      name: parent.call.name,
      input: parent.call.input,
      origin: { kind: 'code_cell', parentOperationId: parent.operationId },
    },
  });
  const result = await context.code.run(source, { bridge: bridgeFor(context, cellId), signal });
  if (result.kind === 'fatal') {
    const cause = (result.cause as { cause?: unknown } | undefined)?.cause;
    if (ToolError.isInstance(cause) && cause.code === 'outcome_unknown') {
      throw new ToolError(
        'outcome_unknown',
        `the cell of ${parent.operationId} was stopped: ${cause.message}`,
        {
          cause,
        },
      );
    }
    throw new ToolError(
      'persistence',
      `the cell of ${parent.operationId} was stopped: a commit inside it failed`,
      {
        cause: result.cause,
      },
    );
  }
  const settled = settlementOf(result);
  const outcome =
    settled.kind === 'failed'
      ? settled
      : ({ kind: 'succeeded', result: settled.result.reference() } as const);
  const stored = settled.kind === 'failed' ? undefined : settled.result;
  // The cell's T2 rides with the parent's: both settle the same result, together or not at all.
  await ledger.defer({ kind: 'tool_settled', operationId: cellId, outcome }, stored);
  await ledger.commit({ kind: 'tool_settled', operationId: parent.operationId, outcome }, stored);
  if (settled.kind === 'failed') {
    throw new ToolError(
      result.kind === 'cancelled' ? 'cancelled' : 'failed',
      `the cell failed: ${settled.error.message}`,
    );
  }
  return settled.result;
}

function bridgeFor(
  context: RunContext & { readonly catalog: ToolCatalog; readonly approval: ApprovalPolicy },
  cellId: string,
): CellBridge {
  const { catalog, ledger } = context;
  // Children are numbered in the order the cell called them (notifications aside).
  let calls = 0;
  return {
    tools: catalog.names().filter((name) => isNestable(catalog.get(name)!)),
    async call({ name, input, signal }) {
      const callId = `c${calls++}`;
      const entry = catalog.get(name);
      const child: PreparedCall = {
        operationId: `${cellId}/${callId}`,
        identity: ToolCallIdentity.codeMode(cellId, callId),
        call: {
          id: callId,
          name,
          input: input as never,
          origin: { kind: 'code_mode', parentOperationId: cellId },
        },
        entry: entry && isNestable(entry) ? entry : undefined,
      };
      try {
        const why = refusal(child, signal);
        if (why !== undefined) return await reject(context, child, why);
        // A cell cannot wait across processes for a person: a call that needs approval
        // is rejected in the cell, and the model is told to call the tool directly.
        const reason = approvalReason(child.entry!, input, context.approval);
        if (reason !== undefined) return await reject(context, child, { kind: 'approval_required', reason });
        return (await runCall(context, child, signal)).json();
      } catch (error) {
        // A persistence failure, or a child whose outcome is unknown, must not be
        // catchable: the cell stops at once, and nothing above it is settled.
        if (
          ToolError.isInstance(error) &&
          (error.code === 'persistence' || error.code === 'outcome_unknown')
        ) {
          throw new FatalHostError(error.message, { cause: error });
        }
        throw error;
      }
    },
    async notify({ message }) {
      try {
        await ledger.commit({ kind: 'tool_notified', operationId: cellId, message });
      } catch (error) {
        throw new FatalHostError('a progress notification could not be recorded', { cause: error });
      }
    },
  };
}

type Settlement = { kind: 'succeeded'; result: ToolResult } | { kind: 'failed'; error: FactError };

function settlementOf(result: Exclude<CellResult, { kind: 'fatal' }>): Settlement {
  switch (result.kind) {
    case 'completed':
      return { kind: 'succeeded', result: ToolResult.of({ output: result.output }) };
    case 'failed': {
      const line = result.error.line === undefined ? '' : ` (line ${result.error.line})`;
      return {
        kind: 'failed',
        error: { code: 'cell_failed', message: `${result.error.name}: ${result.error.message}${line}` },
      };
    }
    case 'timed_out':
      return { kind: 'failed', error: { code: 'timed_out', message: 'the cell ran past its deadline' } };
    case 'out_of_memory':
      return { kind: 'failed', error: { code: 'out_of_memory', message: 'the cell ran out of memory' } };
    case 'cancelled':
      return {
        kind: 'failed',
        error: { code: 'cancelled', message: 'the run was cancelled while the cell ran' },
      };
    case 'limit_exceeded':
      return { kind: 'failed', error: { code: 'limit_exceeded', message: result.message } };
    default:
      return result satisfies never;
  }
}
