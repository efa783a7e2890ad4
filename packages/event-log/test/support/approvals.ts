import { callInputDigest, type Fact, type Invocation, type JsonValue } from '@factum/agent-facts';
import type { EventLog } from '../../src/index.ts';
import { bounds, facts, write } from './facts.ts';

/** The call a step asked for, as an approval request and its dispatch name it. */
export function call(operationId: string, input: JsonValue = { command: 'rm -rf build' }, name = 'shell') {
  return {
    id: operationId.split(':')[1] ?? operationId,
    name,
    input,
    origin: { kind: 'provider' as const, stepId: 's' },
  };
}

export const approvalFacts = {
  requested(operationId: string, options: { input?: JsonValue; expiresAt?: string } = {}): Fact {
    const requested = call(operationId, options.input);
    return {
      kind: 'approval_requested',
      operationId,
      call: requested,
      inputDigest: callInputDigest(requested.input),
      reason: 'shell commands need approval',
      ...(options.expiresAt === undefined ? {} : { expiresAt: options.expiresAt }),
    };
  },
  decided(
    operationId: string,
    decision: 'approved' | 'denied' | 'expired',
    options: { input?: JsonValue; by?: string; note?: string } = {},
  ): Fact {
    return {
      kind: 'approval_decided',
      operationId,
      decision,
      inputDigest: callInputDigest(call(operationId, options.input).input),
      by: options.by ?? 'ada',
      ...(options.note === undefined ? {} : { note: options.note }),
    };
  },
  parked(...operations: string[]): Fact {
    return { kind: 'invocation_ended', outcome: { kind: 'approval_pending', operations } };
  },
  dispatched(operationId: string, input?: JsonValue, name?: string): Fact {
    return { kind: 'tool_dispatched', operationId, call: call(operationId, input, name) };
  },
  rejected(operationId: string, reason: Extract<Fact, { kind: 'tool_rejected' }>['reason']): Fact {
    const requested = call(operationId);
    return {
      kind: 'tool_rejected',
      operationId,
      call: { kind: 'provider', stepId: 's', callId: requested.id },
      name: requested.name,
      input: requested.input,
      reason,
    };
  },
};

/** Opens `at`, asks for approval of `operations` and parks: the state a person decides on. */
export async function parkFor(
  log: EventLog,
  at: Invocation,
  operations: string[],
  options: { expiresAt?: string } = {},
): Promise<void> {
  await log.append(write(at, facts.opened()));
  for (const operationId of operations) {
    await log.append(write(at, approvalFacts.requested(operationId, options)));
  }
  await log.append(write(at, approvalFacts.parked(...operations)));
}

/** The log's high water and digest: a refused write leaves both as they were. */
export async function headOf(log: EventLog): Promise<string> {
  const prefix = await log.prefix(bounds);
  return `${prefix.highWater} ${prefix.digest}`;
}
