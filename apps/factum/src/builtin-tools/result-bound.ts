import { WorkspaceError } from './workspace-error.js';

/** The most JSON bytes a built-in tool's result may have; each tool bounds itself well below it. */
export const RESULT_LIMIT_BYTES = 512 * 1024;

/**
 * Refuses a result whose JSON passes `RESULT_LIMIT_BYTES`: every result lands in the
 * log and in the next prompt, so none may grow without bound, whatever the input
 * (JSON writes a control character as six bytes, a path list can be long).
 */
export async function boundedResult(name: string, result: Promise<unknown>): Promise<unknown> {
  const value = await result;
  const size = Buffer.byteLength(JSON.stringify(value ?? null));
  if (size > RESULT_LIMIT_BYTES) {
    throw new WorkspaceError(
      'result_too_large',
      `the result of ${name} is ${size} bytes of JSON, past the bound of ${RESULT_LIMIT_BYTES}: ask for less (a narrower path, fewer results, maxBytes)`,
    );
  }
  return value;
}
