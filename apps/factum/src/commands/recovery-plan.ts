import type { ToolCall } from '@factum/agent-facts';
import { type ReconcileOutcome, reconcileUncertain, ToolCatalog, type ToolRegistration } from '@factum/tools';
import { builtinTools } from '../builtin-tools/builtin-catalog.js';
import { Workspace } from '../builtin-tools/workspace.js';
import type { FactumRuntime } from '../factum-runtime.js';
import type { InvocationSummary } from './invocation-index.js';

/**
 * The built-in tools as the invocation had them, in the workspace it recorded (shell
 * included: its policy is never to retry), then `extra` (the configured MCP servers'
 * tools). A reason instead when that workspace is gone.
 */
export async function catalogFor(
  summary: InvocationSummary,
  extra: readonly ToolRegistration[] = [],
): Promise<ToolCatalog | string> {
  const cwd = summary.configuration?.cwd;
  if (cwd === undefined) return 'the invocation recorded no workspace';
  try {
    return new ToolCatalog([...(await builtinsIn(cwd)), ...extra]);
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

/** The built-in tools' names, shell included (what a run's MCP tools were named around). */
export async function builtinToolNames(cwd: string): Promise<string[]> {
  return (await builtinsIn(cwd)).map((tool) => tool.definition.name);
}

/**
 * The built-in tools in `cwd`, shell included. Only their policies are used here (a shell
 * is never re-run), so no sandbox is looked for.
 */
async function builtinsIn(cwd: string): Promise<ToolRegistration[]> {
  const workspace = await Workspace.open(cwd);
  return builtinTools({ workspace, allowShell: true, isolation: { kind: 'none' } });
}

/**
 * How a person (or `--apply`) can close one uncertain operation. `servers` names the MCP
 * server of each MCP tool in the catalog.
 */
export function resolutionOf(
  call: ToolCall,
  catalog: ToolCatalog | string,
  servers: ReadonlyMap<string, string> = new Map(),
): string {
  if (call.origin.kind === 'code_cell' || call.name === 'exec') {
    return 'a code cell is never re-run: look at its child calls, then decide by hand';
  }
  if (typeof catalog === 'string') return `cannot be checked: ${catalog}`;
  const server = servers.get(call.name);
  const from = server === undefined ? '' : ` (MCP server ${server})`;
  switch (catalog.get(call.name)?.recovery.kind) {
    case 'reconcile':
      return call.name === 'write_file'
        ? '--apply compares the file with the content the call intended and records what it finds'
        : '--apply asks the tool to inspect the world and records what it finds';
    case 'idempotent':
      return server === undefined
        ? '--apply runs it again (harmless for this tool) and records the result'
        : `--apply runs it again${from}, which its server says is safe, with the same idempotency key, and records the result`;
    case 'never_auto_retry':
      return `never retried automatically${from}: check by hand whether it happened`;
    default:
      return 'not a built-in tool, nor one of a configured MCP server (`--mcp`, `--mcp-url` or mcpServers in the user config): check by hand whether it happened';
  }
}

/**
 * Applies the tools' recovery policies (the built-ins', then `extra`'s) to one
 * invocation's uncertain operations, each decision recorded as `tool_reconciled`.
 * Without a workspace everything stays uncertain, with the reason.
 */
export async function reconcileInvocation(
  runtime: FactumRuntime,
  summary: InvocationSummary,
  extra: readonly ToolRegistration[] = [],
): Promise<ReconcileOutcome[]> {
  const catalog = await catalogFor(summary, extra);
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
