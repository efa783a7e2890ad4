import type { CellError } from './cell-result.js';

/** The file name cells are evaluated under; stack lines are matched on it. */
export const CELL_FILE_NAME = 'cell.js';

const LINE = new RegExp(`${CELL_FILE_NAME.replace('.', '\\.')}:(\\d+)`);

/** What a dumped QuickJS exception means for the cell. */
export type QuickJSErrorMeaning = 'interrupted' | 'out_of_memory' | 'stack_overflow' | 'error';

/** Classify a dumped QuickJS exception (a thrown value converted to host data). */
export function classifyQuickJSError(value: unknown): QuickJSErrorMeaning {
  // Out of memory can leave QuickJS unable to build the error object at all.
  if (value === null || value === undefined) return 'out_of_memory';
  const { name, message } = readError(value);
  if (name === 'InternalError' && message === 'interrupted') return 'interrupted';
  if (name === 'InternalError' && message === 'out of memory') return 'out_of_memory';
  if (name === 'RangeError' && message === 'Maximum call stack size exceeded') return 'stack_overflow';
  return 'error';
}

/** Convert a dumped QuickJS exception into a {@link CellError}, with its line in the cell source. */
export function mapQuickJSError(value: unknown): CellError {
  const { name, message, stack } = readError(value);
  const match = stack === undefined ? null : LINE.exec(stack);
  return {
    name,
    message,
    ...(match ? { line: Number(match[1]) } : {}),
    ...(stack ? { stack } : {}),
  };
}

function readError(value: unknown): { name: string; message: string; stack?: string } {
  if (typeof value === 'object' && value !== null && 'message' in value) {
    const record = value as Record<string, unknown>;
    const stack = typeof record.stack === 'string' && record.stack !== '' ? record.stack : undefined;
    return {
      name: typeof record.name === 'string' ? record.name : 'Error',
      message: String(record.message),
      ...(stack ? { stack } : {}),
    };
  }
  let message: string;
  try {
    message = typeof value === 'string' ? value : (JSON.stringify(value) ?? String(value));
  } catch {
    message = String(value);
  }
  return { name: 'Error', message: `uncaught non-error value: ${message}` };
}
