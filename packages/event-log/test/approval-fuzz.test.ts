import { type Fact, RuntimeEvent } from '@factum/agent-facts';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AppendRefusedError, EventLog } from '../src/index.ts';
import { approvalFacts as a, headOf, parkFor } from './support/approvals.ts';
import { invocation, temporaryDirectory } from './support/facts.ts';

/** Ways to break a well-formed approval fact: each must be refused, never repaired. */
const breakages: fc.Arbitrary<(fact: Record<string, unknown>) => Record<string, unknown>> = fc.oneof(
  fc.constantFrom(
    (fact: Record<string, unknown>) => ({ ...fact, inputDigest: 'md5:0' }),
    (fact: Record<string, unknown>) => ({ ...fact, operationId: '' }),
    (fact: Record<string, unknown>) => ({ ...fact, unexpected: true }),
    (fact: Record<string, unknown>) => {
      const { inputDigest: _dropped, ...rest } = fact;
      return rest;
    },
  ),
  fc
    .string({ maxLength: 12 })
    .map(
      (text) => (fact: Record<string, unknown>) =>
        fact.kind === 'approval_requested'
          ? { ...fact, expiresAt: `${text}tomorrow` }
          : { ...fact, decision: `${text}maybe` },
    ),
  fc
    .integer({ min: 257, max: 3000 })
    .map(
      (n) => (fact: Record<string, unknown>) =>
        fact.kind === 'approval_requested'
          ? { ...fact, reason: 'x'.repeat(n + 1024) }
          : { ...fact, by: 'x'.repeat(n) },
    ),
  fc.constant((fact: Record<string, unknown>) =>
    fact.kind === 'approval_requested' ? { ...fact, reason: '' } : { ...fact, note: 'x'.repeat(2049) },
  ),
);

describe('malformed approval facts (fuzz)', () => {
  it('are refused with a typed error and write nothing', async () => {
    using dir = temporaryDirectory();
    await using log = await EventLog.open(dir.file);
    const at = invocation('-1');
    await parkFor(log, at, ['s:c']);
    const head = await headOf(log);
    await fc.assert(
      fc.asyncProperty(fc.boolean(), breakages, async (request, breakage) => {
        const fact = (request ? a.requested('s:new') : a.decided('s:c', 'approved')) as Fact &
          Record<string, unknown>;
        const broken = RuntimeEvent.create(at, fact);
        const write = { event: { ...broken, fact: breakage(fact) } as RuntimeEvent, result: undefined };
        const error = await log.append(write as never).then(
          () => undefined,
          (caught: unknown) => caught,
        );
        expect(AppendRefusedError.isInstance(error) && error.code).toBe('invalid_write');
      }),
      { numRuns: 80 },
    );
    expect(await headOf(log)).toBe(head);
    expect(await log.pendingApprovals()).toHaveLength(1);
  });
});
