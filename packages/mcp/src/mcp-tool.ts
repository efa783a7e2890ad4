import { RecoveryPolicy, type ToolSemantics } from '@factum/tools';
import type { McpApprovalOverride, McpRecoveryOverride } from './mcp-server-config.js';

/** What a server's annotations say about a tool (MCP's defaults where it says nothing). */
export type McpHints = {
  readonly readOnly: boolean;
  readonly idempotent: boolean;
  /** May destroy data (MCP's default for a tool that is not read-only). */
  readonly destructive: boolean;
  /** The server said so explicitly (`destructiveHint: true`, not read-only). */
  readonly statedDestructive: boolean;
  readonly openWorld: boolean;
};

/** One tool of an MCP server as it sits in a Factum catalog. */
export type McpTool = {
  /** The name in the catalog (prefixed, and made a valid tool name). */
  readonly name: string;
  /** The name the server knows it by. */
  readonly mcpName: string;
  /** The label of the server it came from. */
  readonly server: string;
  readonly description: string;
  readonly inputSchema: Record<string, unknown>;
  readonly hints: McpHints;
  /** How its uncertain calls recover: from the hints, unless the user overrode it. */
  readonly recovery: McpRecoveryOverride;
  /**
   * The user declared it `read_only` (`recovery: { <name>: 'read_only' }`), so it is
   * registered `readOnly`: its dispatch rides with its settlement. The server's
   * `readOnlyHint` alone never does this.
   */
  readonly declaredReadOnly: boolean;
  /** Whether its calls need a person's approval: from the hints, unless the user overrode it. */
  readonly approval: McpApprovalOverride;
};

/**
 * MCP's annotation defaults (readOnlyHint false, destructiveHint true, idempotentHint
 * false, openWorldHint true), applied to what a server sent. Annotations are hints from
 * the server, not guarantees: the user may override the recovery of any tool.
 */
export function hintsOf(annotations: unknown): McpHints {
  const raw = (typeof annotations === 'object' && annotations !== null ? annotations : {}) as Record<
    string,
    unknown
  >;
  const readOnly = raw.readOnlyHint === true;
  return {
    readOnly,
    idempotent: readOnly || raw.idempotentHint === true,
    destructive: !readOnly && raw.destructiveHint !== false,
    statedDestructive: !readOnly && raw.destructiveHint === true,
    openWorld: raw.openWorldHint !== false,
  };
}

/**
 * A tool whose server states `destructiveHint: true` needs approval for every call. A
 * tool that says nothing is not asked about (MCP's default would call it destructive,
 * which would put a person in front of every unannotated tool); the user may set
 * `approval` per tool either way.
 */
export function defaultApproval(hints: McpHints): McpApprovalOverride {
  return hints.statedDestructive ? 'always' : 'never';
}

/** readOnlyHint → safe to re-run; idempotentHint → idempotent; otherwise uncertain until reconciled. */
export function defaultRecovery(hints: McpHints): McpRecoveryOverride {
  if (hints.readOnly) return 'read_only';
  return hints.idempotent ? 'idempotent' : 'never_auto_retry';
}

/** The catalog's recovery policy for a tool. Both re-runnable kinds re-run recorded, bounded. */
export function recoveryPolicyOf(recovery: McpRecoveryOverride): RecoveryPolicy {
  return recovery === 'never_auto_retry' ? RecoveryPolicy.neverAutoRetry() : RecoveryPolicy.idempotent();
}

/** Reads overlap; a tool that may change the world runs alone. */
export function semanticsOf(recovery: McpRecoveryOverride): ToolSemantics {
  return recovery === 'read_only' ? 'parallel' : 'exclusive';
}

const valid = /^[a-zA-Z][a-zA-Z0-9_-]{0,63}$/;

/** A catalog name for an MCP tool: the prefix and the name, other characters as `_`, 64 at most. */
export function catalogName(prefix: string, mcpName: string): string {
  const name = `${prefix}${mcpName}`.replace(/[^a-zA-Z0-9_-]/g, '_');
  const started = /^[a-zA-Z]/.test(name) ? name : `t_${name}`;
  return valid.test(started) ? started : started.slice(0, 64);
}
