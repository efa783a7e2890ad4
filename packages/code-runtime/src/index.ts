export type { CellBridge, CellHostCall, CellNotification } from './cell-bridge.js';
export type { CellLimitName, CellLimitValues } from './cell-limits.js';
export { CellLimits } from './cell-limits.js';
export { CellLimitsError } from './cell-limits-error.js';
export type {
  CellCancelled,
  CellCompleted,
  CellError,
  CellFailed,
  CellFatal,
  CellFatalCall,
  CellHostCallCounts,
  CellLimitExceeded,
  CellLogEntry,
  CellOutOfMemory,
  CellResult,
  CellResultBase,
  CellResultKind,
  CellTimedOut,
} from './cell-result.js';
export { CellTerminatedError } from './cell-terminated-error.js';
export type { CellRunOptions, CodeExecutorStats } from './code-executor.js';
export { CodeExecutor } from './code-executor.js';
export type { CodeRuntimeErrorOptions } from './code-runtime-error.js';
export { CodeRuntimeError } from './code-runtime-error.js';
export { ExecutorClosedError } from './executor-closed-error.js';
export { FatalHostError } from './fatal-host-error.js';
