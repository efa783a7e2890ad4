import { describe, expect, it } from 'vitest';
import { FactSchema, IdempotencyKeySchema } from '../src/index.ts';

describe('the idempotency key of an opening', () => {
  it('is optional, 1 to 255 visible ASCII characters, and kept by the fact as given', () => {
    const opened = {
      kind: 'invocation_opened',
      input: { kind: 'message', content: 'send the invoice', sourceMessages: [] },
    } as const;
    expect(FactSchema.parse(opened)).toEqual(opened);
    const keyed = { ...opened, idempotencyKey: 'order-42:retry~ok' };
    expect(FactSchema.parse(keyed)).toEqual(keyed);
    for (const key of ['', ' ', 'a b', 'tab\there', 'é', 'x'.repeat(256), 'nul\u0000']) {
      expect(IdempotencyKeySchema.safeParse(key).success, JSON.stringify(key)).toBe(false);
      expect(FactSchema.safeParse({ ...opened, idempotencyKey: key }).success).toBe(false);
    }
    expect(IdempotencyKeySchema.safeParse('x'.repeat(255)).success).toBe(true);
  });
});
