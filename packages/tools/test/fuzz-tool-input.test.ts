import { canonicalJson, type ModelToolCall, ToolError } from '@factum/agent-facts';
import { CodeExecutor } from '@factum/code-runtime';
import { EventLog } from '@factum/event-log';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RunTools, ToolCatalog, ToolHandler } from '../src/index.ts';
import { seed, temporaryDirectory, wide } from './support/fixtures.ts';
import { recordingCatalog } from './support/recording-tool.ts';

const schema = {
  type: 'object',
  properties: {
    value: { type: 'number' },
    tags: { type: 'array', items: { type: 'string', maxLength: 8 }, maxItems: 3 },
    nested: { type: 'object', properties: { flag: { type: 'boolean' } }, required: ['flag'] },
  },
  required: ['value'],
  additionalProperties: false,
};

/** Inputs a model may send (JSON: arguments arrive as JSON text): anything, near misses of the schema, prototype tricks. */
const input = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }),
  fc.record(
    {
      value: fc.oneof(
        fc.double({ noNaN: true, noDefaultInfinity: true }),
        fc.integer(),
        fc.string(),
        fc.constant(null),
      ),
      tags: fc.oneof(fc.array(fc.string({ maxLength: 10 }), { maxLength: 4 }), fc.jsonValue({ maxDepth: 1 })),
      nested: fc.oneof(
        fc.record({ flag: fc.jsonValue({ maxDepth: 0 }) }, { requiredKeys: [] }),
        fc.jsonValue({ maxDepth: 1 }),
      ),
      extra: fc.jsonValue({ maxDepth: 1 }),
    },
    { requiredKeys: [] },
  ),
  fc.constantFrom(
    JSON.parse('{"value":1,"__proto__":{"polluted":true}}'),
    JSON.parse('{"value":1,"constructor":{"prototype":{"polluted":true}}}'),
    { value: Number.MAX_VALUE, tags: ['a'.repeat(9)] },
    { value: 1, nested: { flag: 'yes' } },
  ),
);

/** The schema above, written out by hand: the oracle the validator is compared with. */
function conforms(value: unknown): boolean {
  const isObject = (v: unknown): v is Record<string, unknown> =>
    typeof v === 'object' && v !== null && !Array.isArray(v);
  if (!isObject(value) || typeof value.value !== 'number') return false;
  if (Object.keys(value).some((key) => !['value', 'tags', 'nested'].includes(key))) return false;
  if ('tags' in value) {
    const tags = value.tags;
    if (!Array.isArray(tags) || tags.length > 3) return false;
    if (!tags.every((tag) => typeof tag === 'string' && [...tag].length <= 8)) return false;
  }
  if ('nested' in value) {
    const nested = value.nested;
    if (!isObject(nested) || typeof nested.flag !== 'boolean') return false;
  }
  return true;
}

describe('fuzzing tool input validation', () => {
  it('any input is either refused as invalid_input with nothing run, or run once and settled', async () => {
    using dir = temporaryDirectory();
    const log = await EventLog.open(dir.file);
    const code = new CodeExecutor();
    const ran: unknown[] = [];
    const catalog = new ToolCatalog([
      {
        definition: { name: 'probe', description: 'probe', inputSchema: schema },
        handler: ToolHandler.immediate({
          names: () => ['probe'],
          invoke: async (_name, value) => {
            ran.push(value);
            return { ok: true };
          },
        }),
        nesting: 'nestable',
        semantics: 'parallel',
      },
    ]);
    let n = 0;
    await fc.assert(
      fc.asyncProperty(
        input,
        fc.option(fc.string({ unit: 'binary', maxLength: 20 })),
        async (value, broken) => {
          n += 1;
          const invocation = { sessionId: `s${n}`, turnId: 't', runId: 'r', invocationId: `i${n}` };
          const call: ModelToolCall = {
            id: 'c1',
            name: 'probe',
            input: value,
            ...(broken === null ? {} : { invalidArguments: broken }),
          };
          await seed(log, invocation, [call], 'step');
          const run = new RunTools({ sink: log, invocation, catalog, mode: 'direct', code });
          const step = (await run.capture('.')).intoStep('step');
          const before = ran.length;
          const outcome = await step.invoke(call).then(
            () => 'ran' as const,
            (error: unknown) => error,
          );
          await run.shutdown();
          const kinds = (await log.invocationEvents(invocation, wide)).map(({ event }) => event.fact.kind);
          expect(outcome === 'ran', JSON.stringify({ value, broken, outcome: String(outcome) })).toBe(
            broken === null && conforms(value),
          );
          if (outcome === 'ran') {
            expect(ran.length).toBe(before + 1);
            expect(kinds.slice(-2)).toEqual(['tool_dispatched', 'tool_settled']);
          } else {
            expect(ToolError.isInstance(outcome), String(outcome)).toBe(true);
            expect((outcome as ToolError).code).toBe('invalid_input');
            expect(ran.length).toBe(before);
            expect(kinds.at(-1)).toBe('tool_rejected');
          }
          expect(({} as Record<string, unknown>).polluted).toBeUndefined();
        },
      ),
      { numRuns: 300 },
    );
    await code.close();
    await log.close();
  }, 60_000);

  it('the effect receives exactly the input its T1 recorded, even one with an own __proto__ key', async () => {
    using dir = temporaryDirectory();
    const log = await EventLog.open(dir.file);
    const { catalog, received } = recordingCatalog('open');
    const invocation = { sessionId: 's', turnId: 't', runId: 'r', invocationId: 'i' };
    // What JSON.parse makes of a model's arguments: `__proto__` is an own key here.
    const input = JSON.parse('{"__proto__":{"admin":true},"value":1}');
    const call: ModelToolCall = { id: 'c1', name: 'open', input };
    await seed(log, invocation, [call], 'step');
    const code = new CodeExecutor();
    const run = new RunTools({ sink: log, invocation, catalog, mode: 'direct', code });
    const step = (await run.capture('.')).intoStep('step');
    const outcome = await step.invoke(call).then(
      () => 'ran',
      (error: unknown) => (ToolError.isInstance(error) ? error.code : error),
    );
    await run.shutdown();
    const dispatched = (await log.invocationEvents(invocation, wide)).flatMap(({ event }) =>
      event.fact.kind === 'tool_dispatched' ? [event.fact.call.input] : [],
    );
    if (outcome === 'ran') {
      // Refusing the input (invalid_input, nothing run) would keep the rule as well.
      expect(received.map((value) => canonicalJson(value))).toEqual(
        dispatched.map((value) => canonicalJson(value)),
      );
    } else {
      expect(outcome).toBe('invalid_input');
      expect(received).toEqual([]);
    }
    await code.close();
    await log.close();
  });
});
