import { factNeedsResult } from './fact-schema.js';
import { FactumError } from './factum-error.js';
import type { RuntimeEvent } from './runtime-event.js';
import { ToolResult } from './tool-result.js';

/**
 * One event to commit, with the tool result it settles when it has one. A success
 * must carry its result and the result must match the digest in the fact, so a
 * settlement can never point at bytes the log does not hold.
 */
export class EventWrite {
  readonly event: RuntimeEvent;
  readonly result: ToolResult | undefined;

  private constructor(event: RuntimeEvent, result: ToolResult | undefined) {
    this.event = event;
    this.result = result;
  }

  /** A write with no attachment; throws if the fact settles a success (use `withResult`). */
  static plain(event: RuntimeEvent): EventWrite {
    if (factNeedsResult(event.fact)) {
      throw new FactumError(
        'result_required',
        `a ${event.fact.kind} that succeeded must carry its result: use EventWrite.withResult`,
      );
    }
    return new EventWrite(event, undefined);
  }

  /** A write that stores `result` out of line; its digest must match the fact's reference. */
  static withResult(event: RuntimeEvent, result: ToolResult | unknown): EventWrite {
    const stored = result instanceof ToolResult ? result : ToolResult.of(result);
    const fact = event.fact;
    const reference =
      fact.kind === 'tool_settled' && fact.outcome.kind === 'succeeded'
        ? fact.outcome.result
        : fact.kind === 'tool_reconciled' && fact.decision.kind === 'succeeded'
          ? fact.decision.result
          : undefined;
    if (reference === undefined) {
      throw new FactumError(
        'result_unexpected',
        `a ${fact.kind} fact carries no result; use EventWrite.plain`,
      );
    }
    const actual = stored.reference();
    if (actual.digest !== reference.digest || actual.bytes !== reference.bytes) {
      throw new FactumError(
        'result_mismatch',
        'the result does not match the digest and size the fact names',
      );
    }
    return new EventWrite(event, stored);
  }
}
