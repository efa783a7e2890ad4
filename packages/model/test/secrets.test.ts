import { describe, expect, it } from 'vitest';
import { ModelError, type ModelRequest, routeIdentity } from '../src/index.js';
import { type ScriptedReply, startScriptedProvider } from '../src/testing.js';
import { collect, executor, recordingClock } from './support.js';

const sentinel = 'sk-SENTINEL-7f3a9c1e-do-not-persist';

/** Every string reachable from a value: own properties, error messages, causes, JSON. */
function everything(value: unknown, seen = new Set<unknown>()): string {
  if (value === null || value === undefined) return '';
  if (typeof value !== 'object') return String(value);
  if (seen.has(value)) return '';
  seen.add(value);
  const parts: string[] = [];
  if (value instanceof Error) {
    parts.push(value.message, value.stack ?? '', String(value), everything(value.cause, seen));
  }
  try {
    parts.push(JSON.stringify(value) ?? '');
  } catch {
    // Cyclic values are walked below.
  }
  for (const key of Reflect.ownKeys(value)) {
    parts.push(everything((value as Record<PropertyKey, unknown>)[key], seen));
  }
  return parts.join('\n');
}

const request: ModelRequest = {
  messages: [{ role: 'user', content: 'hello' }],
  tools: [{ name: 'echo', description: 'echo', inputSchema: { type: 'object' } }],
};

describe('the API key never leaks', () => {
  it.each([
    ['chat completions', 'openai_chat_completions'],
    ['responses', 'openai_responses'],
    ['anthropic messages', 'anthropic_messages'],
  ] as const)('%s: not in observations, steps, errors, causes or recorded requests', async (_name, kind) => {
    const echo = {
      error: { message: `Incorrect API key provided: ${sentinel}`, type: 'invalid_request_error' },
    };
    const replies: ScriptedReply[] = [
      { text: 'fine', toolCalls: [{ id: 'c', name: 'echo', arguments: { x: 1 } }] },
      { status: 401, body: echo },
      { status: 403, body: `forbidden for key ${sentinel}` },
      { status: 429, body: echo, headers: { 'retry-after': '0' } },
      { status: 500, body: echo },
      { status: 400, body: { error: { message: `context_length_exceeded for ${sentinel}` } } },
      {
        raw: `data: ${JSON.stringify({ type: 'error', error: { type: 'api_error', message: sentinel } })}\n\n`,
      },
      { raw: `<html><title>${sentinel}</title></html>`, contentType: 'text/html' },
      { raw: JSON.stringify({ note: sentinel }), contentType: 'application/json' },
      { raw: `data: not json ${sentinel}\n\n` },
      { text: 'held', hold: true },
    ];
    await using provider = await startScriptedProvider({ replies });
    const config = provider.config({ kind, auth: { apiKey: sentinel }, headers: { 'x-trace': 'visible' } });
    const produced: unknown[] = [routeIdentity(config)];
    const models = executor({ connectTimeoutMs: 5_000, clock: recordingClock().clock });
    produced.push(await collect(models, request, { provider: config }));
    for (let i = 1; i < replies.length - 1; i++) {
      const stream = models.stream(request, { provider: config });
      const error = await stream.step().catch((caught: unknown) => caught);
      expect(ModelError.isInstance(error), `reply ${i} should fail`).toBe(true);
      const observations: unknown[] = [];
      try {
        for await (const observation of stream) observations.push(observation);
      } catch (caught) {
        observations.push(caught);
      }
      produced.push(error, observations);
    }
    const controller = new AbortController();
    const held = models.stream(request, { provider: config, signal: controller.signal });
    await provider.requestArrived(replies.length - 1);
    controller.abort();
    produced.push(await held.step().catch((caught: unknown) => caught));

    expect(everything(produced)).not.toContain(sentinel);
    const recorded = provider.recorded.map(({ headers, ...rest }) => {
      const { authorization, 'x-api-key': apiKey, ...others } = headers;
      // The key is where it belongs, and only there.
      expect(authorization ?? apiKey).toContain(sentinel);
      return { ...rest, headers: others };
    });
    expect(recorded).toHaveLength(replies.length);
    expect(everything(recorded)).not.toContain(sentinel);
  });

  it('error bodies echoing a credential header are redacted too, and routeIdentity drops query keys', async () => {
    await using provider = await startScriptedProvider({
      replies: [{ status: 400, body: `bad token ${sentinel}` }],
    });
    const config = provider.config({ auth: { none: true }, headers: { 'api-key': sentinel } });
    const error = await executor()
      .stream(request, { provider: config })
      .step()
      .catch((caught: unknown) => caught);
    expect(everything(error)).not.toContain(sentinel);
    expect(everything(error)).toContain('[redacted]');
    expect(
      routeIdentity({ ...config, baseUrl: `https://user:${sentinel}@example.com/v1?key=${sentinel}` }),
    ).toBe('openai_chat_completions https://example.com/v1 test');
  });
});
