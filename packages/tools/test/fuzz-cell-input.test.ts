import { canonicalJson, type ModelToolCall } from '@factum/agent-facts';
import { CellLimits, CodeExecutor } from '@factum/code-runtime';
import { EventLog } from '@factum/event-log';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { EXEC_TOOL, RunTools } from '../src/index.ts';
import { seed, temporaryDirectory, wide } from './support/fixtures.ts';
import { recordingCatalog } from './support/recording-tool.ts';

/** JavaScript expressions a cell may pass as a tool input, most of them not JSON. */
const leaf = fc.oneof(
  fc.jsonValue({ maxDepth: 1 }).map((value) => JSON.stringify(value)),
  fc.constantFrom(
    'undefined',
    'NaN',
    '-0',
    'Infinity',
    '10n',
    'Symbol("s")',
    '() => 1',
    'new Date(0)',
    'new Map([[1, 2]])',
    '[1, , 3]',
    'new Uint8Array(2)',
    '"\\ud800"',
    'Object.create(null)',
    '{ toJSON() { return { value: 1 } } }',
    '{ get value() { return 2 } }',
    '{ ["__proto__"]: { polluted: true }, value: 1 }',
  ),
);
const expression: fc.Arbitrary<string> = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: 'small' }, leaf, tie('object'), tie('array')),
  object: fc
    .dictionary(
      fc.constantFrom('value', 'tags', 'x', '__proto__', 'constructor'),
      tie('value') as fc.Arbitrary<string>,
      {
        maxKeys: 3,
      },
    )
    .map(
      (entries) =>
        `{ ${Object.entries(entries)
          .map(([key, value]) => `${JSON.stringify(key)}: ${value}`)
          .join(', ')} }`,
    ),
  array: fc
    .array(tie('value') as fc.Arbitrary<string>, { maxLength: 3 })
    .map((items) => `[${items.join(', ')}]`),
})).value as fc.Arbitrary<string>;

describe('fuzzing tool inputs from Code mode cells', () => {
  it('whatever a cell passes, the effect receives exactly the input its T1 recorded, or nothing runs', async () => {
    using dir = temporaryDirectory();
    const log = await EventLog.open(dir.file);
    const code = new CodeExecutor(CellLimits.from({ deadlineMs: 2_000 }));
    const { catalog, received } = recordingCatalog('probe');
    let n = 0;
    await fc.assert(
      fc.asyncProperty(expression, async (source) => {
        n += 1;
        const invocation = { sessionId: `s${n}`, turnId: 't', runId: 'r', invocationId: `i${n}` };
        const call: ModelToolCall = {
          id: 'c1',
          name: EXEC_TOOL,
          input: { code: `try { await tools.probe(${source}); text("ran") } catch (e) { text("refused") }` },
        };
        await seed(log, invocation, [call], 'step');
        const run = new RunTools({ sink: log, invocation, catalog, mode: 'code_mode', code });
        const step = (await run.capture('.')).intoStep('step');
        const before = received.length;
        await step.invoke(call).catch(() => undefined);
        await run.shutdown();
        const facts = (await log.invocationEvents(invocation, wide)).map(({ event }) => event.fact);
        const children = facts.flatMap((fact) =>
          fact.kind === 'tool_dispatched' && fact.call.origin.kind === 'code_mode' ? [fact] : [],
        );
        const ran = received.slice(before);
        expect(ran.length).toBe(children.length);
        for (const [i, child] of children.entries()) {
          expect(canonicalJson(ran[i])).toBe(canonicalJson(child.call.input));
        }
        // The parent and the cell always settle: the cell either ran the call or refused it.
        const settled = facts.filter((fact) => fact.kind === 'tool_settled').length;
        expect(settled).toBe(2 + children.length);
        expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      }),
      { numRuns: 150 },
    );
    await code.close();
    await log.close();
  }, 120_000);

  it('a cell passing an own __proto__ key: the effect receives exactly the input its T1 recorded', async () => {
    using dir = temporaryDirectory();
    const log = await EventLog.open(dir.file);
    const code = new CodeExecutor();
    const { catalog, received } = recordingCatalog('probe');
    const invocation = { sessionId: 's', turnId: 't', runId: 'r', invocationId: 'i' };
    const call: ModelToolCall = {
      id: 'c1',
      name: EXEC_TOOL,
      input: { code: 'await tools.probe({ ["__proto__"]: { admin: true }, value: 1 })' },
    };
    await seed(log, invocation, [call], 'step');
    const run = new RunTools({ sink: log, invocation, catalog, mode: 'code_mode', code });
    await (await run.capture('.'))
      .intoStep('step')
      .invoke(call)
      .catch(() => undefined);
    await run.shutdown();
    const recorded = (await log.invocationEvents(invocation, wide)).flatMap(({ event }) =>
      event.fact.kind === 'tool_dispatched' && event.fact.call.origin.kind === 'code_mode'
        ? [canonicalJson(event.fact.call.input)]
        : [],
    );
    expect(received.map((value) => canonicalJson(value))).toEqual(recorded);
    await code.close();
    await log.close();
  });
});
