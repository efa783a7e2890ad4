import { FactumError } from '@factum/agent-facts';

const marker = Symbol.for('@factum/mcp-error');

/**
 * Why an MCP server could not be used as a tool source:
 * - `invalid_config`: the server's configuration does not parse (an empty command, a bad URL).
 * - `connect_failed`: the server did not start, or did not complete the MCP handshake.
 * - `list_failed`: the server did not list its tools.
 * - `closed`: the source was closed.
 */
export type McpErrorCode = 'invalid_config' | 'connect_failed' | 'list_failed' | 'closed';

/** A typed failure of an MCP tool source. Messages never carry headers or URL credentials. */
export class McpError extends FactumError {
  override readonly code: McpErrorCode;
  readonly [marker] = true;

  constructor(code: McpErrorCode, message: string, options: { cause?: unknown } = {}) {
    super(code, message, options);
    this.code = code;
  }

  static override isInstance(value: unknown): value is McpError {
    return FactumError.isInstance(value) && (value as unknown as Record<symbol, unknown>)[marker] === true;
  }
}
