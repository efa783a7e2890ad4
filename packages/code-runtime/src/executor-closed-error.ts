import { CodeRuntimeError } from './code-runtime-error.js';

/** `run()` was called on a {@link CodeExecutor} after `close()`. */
export class ExecutorClosedError extends CodeRuntimeError {
  constructor() {
    super('executor_closed', 'the code executor is closed: create a new CodeExecutor to run more cells');
    this.name = 'ExecutorClosedError';
  }
}
