import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { startHarness } from './server-harness.ts';

/** Any body a client could send: JSON of any shape, text, or raw bytes. */
const anyBody = fc.oneof(
  fc.jsonValue().map((value) => JSON.stringify(value)),
  fc.string({ maxLength: 200 }),
  fc.uint8Array({ maxLength: 200 }).map((bytes) => Buffer.from(bytes).toString('latin1')),
);

/** Bodies that would be a valid new turn are left out: those may rightly write facts. */
function couldStartATurn(body: string): boolean {
  try {
    const value = JSON.parse(body) as { message?: unknown } | null;
    return typeof value === 'object' && value !== null && typeof value.message === 'string';
  } catch {
    return false;
  }
}

describe('fuzzing the HTTP API bodies', () => {
  it('no body makes a route fail with a 5xx, hang, or write anything', async () => {
    await using harness = await startHarness();
    const before = await harness.digest();
    const routes = [
      '/api/sessions/fuzzed/turns',
      '/api/invocations/nothing/handoff',
      '/api/invocations/nothing/handoff/commit',
      '/api/invocations/nothing/cancel',
    ];
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...routes), anyBody, async (route, body) => {
        fc.pre(!couldStartATurn(body));
        const response = await harness.api(route, {
          method: 'POST',
          body,
          headers: { 'content-type': 'application/json' },
        });
        await response.arrayBuffer();
        expect(response.status).toBeGreaterThanOrEqual(400);
        expect(response.status).toBeLessThan(500);
      }),
      { numRuns: 150 },
    );
    expect(await harness.digest(), 'refused bodies write nothing').toBe(before);
    // The server still answers properly after all of it.
    expect((await harness.api('/api/sessions')).status).toBe(200);
  }, 60_000);
});
