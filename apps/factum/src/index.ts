export type { BuiltinToolOptions } from './builtin-tools/builtin-catalog.js';
export { builtinCatalog, builtinTools } from './builtin-tools/builtin-catalog.js';
export { CommandProcesses } from './builtin-tools/command-processes.js';
export { reconcileWrite } from './builtin-tools/file-tools.js';
export type {
  SandboxBackend,
  SandboxPolicy,
  SandboxProbe,
  ShellIsolation,
} from './builtin-tools/shell-sandbox.js';
export {
  COMMAND_ENVIRONMENT,
  findSandbox,
  probeSandbox,
  SANDBOX_BACKENDS,
} from './builtin-tools/shell-sandbox.js';
export type { CommandResult } from './builtin-tools/shell-tool.js';
export type { WorkspaceOptions } from './builtin-tools/workspace.js';
export { Workspace } from './builtin-tools/workspace.js';
export type { WorkspaceErrorCode } from './builtin-tools/workspace-error.js';
export { WorkspaceError } from './builtin-tools/workspace-error.js';
export type { CliContext } from './commands/cli-context.js';
export type { CliErrorCode } from './commands/cli-error.js';
export { CliError } from './commands/cli-error.js';
export { createCli, main } from './commands/create-cli.js';
export type {
  ApprovalsOutput,
  CopyOutput,
  LogOutput,
  RecoverOutput,
  ShowOutput,
  VerifyOutput,
} from './commands/json-output-schemas.js';
export {
  ApprovalDecisionSchema,
  ApprovalEntrySchema,
  ApprovalsOutputSchema,
  CopyOutputSchema,
  InvocationStatusSchema,
  LogEntrySchema,
  LogOutputSchema,
  ReconciledOperationSchema,
  RecoverOutputSchema,
  ShowEventSchema,
  ShowOutputSchema,
  UncertainOperationSchema,
  VerifyOutputSchema,
} from './commands/json-output-schemas.js';
export { EXIT_LEFT_OPEN } from './commands/recover.js';
export { EXIT_BROKEN } from './commands/verify.js';
export { resolveProvider, userConfigFile } from './provider-settings.js';
export { createServer } from './server/create-server.js';
export type { ErrorBody } from './server/error-response.js';
export { InvocationRegistry } from './server/invocation-registry.js';
export type { HandoffTimeouts } from './server/live-invocation.js';
export type { ServerErrorCode } from './server/server-error.js';
export { ServerError } from './server/server-error.js';
export type { ServerLogger, ServerOptions } from './server/server-options.js';
export { ServerToken, TOKEN_FILE } from './server/server-token.js';
export type { RunningServer, StartServerOptions } from './server/start-server.js';
export { startServer } from './server/start-server.js';
