export type { McpBinaryReference, McpContent, McpToolResult } from './map-mcp-result.js';
export { mapMcpResult } from './map-mcp-result.js';
export type { McpConnectOptions } from './mcp-connection.js';
export type { McpErrorCode } from './mcp-error.js';
export { McpError } from './mcp-error.js';
export type {
  McpApprovalOverride,
  McpRecoveryOverride,
  McpServerConfig,
  ParsedMcpServerConfig,
} from './mcp-server-config.js';
export {
  McpApprovalOverrideSchema,
  McpRecoveryOverrideSchema,
  McpServerConfigSchema,
  mcpCommand,
  mcpServerLabel,
  parseMcpServerConfig,
} from './mcp-server-config.js';
export type { McpHints, McpTool } from './mcp-tool.js';
export type { McpSourceOptions } from './mcp-tool-source.js';
export { ATTEMPT_META_KEY, IDEMPOTENCY_META_KEY, McpToolSource } from './mcp-tool-source.js';
