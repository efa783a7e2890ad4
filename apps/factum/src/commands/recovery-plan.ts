import type { ToolCall } from '@factum/agent-facts';
import { type ReconcileOutcome, reconcileUncertain, type ToolCatalog } from '@factum/tools';
import { builtinCatalog } from '../builtin-tools/builtin-catalog.js';
import { Workspace } from '../builtin-tools/workspace.js';
import type { FactumRuntime } from '../factum-runtime.js';
import type { InvocationSummary } from './invocation-index.js';

/**
 * The built-in tools as the invocation had them, in the workspace it recorded (shell
 * included: its policy is never to retry). A reason instead when that workspace is gone.
 */
export async function catalogFor(summary: InvocationSummary): Promise<ToolCatalog | string> {
  const cwd = summary.configuration?.cwd;
  if (cwd === undefined) return 'the invocation recorded no workspace';
  try {
    // Only the policies are used here (a shell is never re-run), so no sandbox is looked for.
    return builtinCatalog({
      workspace: await Workspace.open(cwd),
      allowShell: true,
      isolation: { kind: 'none' },
    });
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

/** How a person (or `--apply`) can close one uncertain operation. */
export function resolutionOf(call: ToolCall, catalog: ToolCatalog | string): string {
  if (call.origin.kind === 'code_cell' || call.name === 'exec') {
    return 'a code cell is never re-run: look at its child calls, then decide by hand';
  }
  if (typeof catalog === 'string') return `cannot be checked: ${catalog}`;
  switch (catalog.get(call.name)?.recovery.kind) {
    case 'reconcile':
      return call.name === 'write_file'
        ? '--apply compares the file with the content the call intended and records what it finds'
        : '--apply asks the tool to inspect the world and records what it finds';
    case 'idempotent':
      return '--apply runs it again (harmless for this tool) and records the result';
    case 'never_auto_retry':
      return 'never retried automatically: check by hand whether it happened';
    default:
      return 'not a built-in tool: check by hand whether it happened';
  }
}

/**
 * Applies the built-in tools' recovery policies to one invocation's uncertain
 * operations, each decision recorded as `tool_reconciled`. Without a workspace
 * everything stays uncertain, with the reason.
 */
export async function reconcileInvocation(
  runtime: FactumRuntime,
  summary: InvocationSummary,
): Promise<ReconcileOutcome[]> {
  const catalog = await catalogFor(summary);
  if (typeof catalog === 'string') {
    return [...summary.open].map(([operationId, call]) => ({
      operationId,
      name: call.name,
      decision: 'left_uncertain',
      reason: catalog,
      attempt: 1,
    }));
  }
  return reconcileUncertain(runtime.log, summary.invocation, { catalog });
}
