import { createHash } from 'node:crypto';
import type { Invocation } from '@factum/agent-facts';
import type { IdGenerator } from '@opentelemetry/sdk-trace-base';

function hex(text: string, length: number): string {
  return createHash('sha256').update(text, 'utf8').digest('hex').slice(0, length);
}

/** The trace of an invocation: the same id from every process that exports part of it. */
export function traceIdOf(invocation: Invocation): string {
  return hex(`trace\u0000${invocation.sessionId}\u0000${invocation.invocationId}`, 32);
}

/** The id of the span an event opens (or of the invocation's own span). */
export function spanIdOf(key: string): string {
  return hex(`span\u0000${key}`, 16);
}

/**
 * Ids derived from the log instead of drawn at random: a trace id from the invocation
 * and a span id from the event that opens the span, so an invocation exported again
 * (or a recovery exported later, by another process) lands in the same trace. The
 * tracer asks for ids as it starts a span; `next` sets the ones it gets.
 */
export class FactIdGenerator implements IdGenerator {
  #trace: string | undefined;
  #span: string | undefined;

  /** The ids the next span started gets. */
  next(ids: { readonly traceId?: string; readonly spanId: string }): void {
    this.#trace = ids.traceId;
    this.#span = ids.spanId;
  }

  generateTraceId(): string {
    const id = this.#trace ?? hex(`random\u0000${Math.random()}\u0000${Date.now()}`, 32);
    this.#trace = undefined;
    return id;
  }

  generateSpanId(): string {
    const id = this.#span ?? hex(`random\u0000${Math.random()}\u0000${Date.now()}`, 16);
    this.#span = undefined;
    return id;
  }
}
