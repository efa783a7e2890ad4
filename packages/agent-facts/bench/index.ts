// `pnpm bench` in @factum/agent-facts: what the schemas and the canonical form cost a
// writer and a reader per fact, each against plain JSON doing the same job in the same
// run. The facts are one of every kind, as the engine writes them (the tests' fixture).
import { rate, report } from '../../../tooling/bench/harness.ts';
import { canonicalJson, contentDigest, newEventId, RuntimeEvent } from '../src/index.ts';
import { everyKind, invocation } from '../test/fixtures.ts';

const facts = everyKind();
const stored = facts.map((fact) => JSON.stringify(RuntimeEvent.create(invocation, fact)));
const ROUNDS = 5;
const PER_ROUND = 4_000;

/** A writer's work per fact: the event built and checked, its canonical bytes, their digest. */
function create(index: number): string {
  const event = RuntimeEvent.create(invocation, facts[index % facts.length]!);
  return contentDigest(canonicalJson(event));
}

/** The same envelope as a plain object, its JSON and the same digest: no schema, no canonical form. */
function createPlain(index: number): string {
  const now = new Date();
  const event = {
    id: newEventId(now.getTime()),
    invocation,
    timestamp: now.toISOString(),
    fact: facts[index % facts.length],
  };
  return contentDigest(JSON.stringify(event));
}

/** A reader's work per stored row: its JSON parsed and checked against the schema. */
function parse(index: number): unknown {
  return RuntimeEvent.parse(JSON.parse(stored[index % stored.length]!));
}

/** The same row's JSON parsed, unchecked. */
function parsePlain(index: number): unknown {
  return JSON.parse(stored[index % stored.length]!);
}

/** Alternating rounds, so that machine noise (and the JIT) hit both sides alike. */
async function compare(
  side: (index: number) => unknown,
  baseline: (index: number) => unknown,
): Promise<{ value: number; baselineValue: number }> {
  await rate(PER_ROUND, side);
  await rate(PER_ROUND, baseline);
  let value = 0;
  let baselineValue = 0;
  for (let round = 0; round < ROUNDS; round += 1) {
    value += (await rate(PER_ROUND, side)) / ROUNDS;
    baselineValue += (await rate(PER_ROUND, baseline)) / ROUNDS;
  }
  return { value, baselineValue };
}

const created = await compare(create, createPlain);
report({
  measure: 'fact_create_per_second',
  unit: `events built with RuntimeEvent.create, canonical JSON and digest, per second (one of each of ${facts.length} fact kinds)`,
  ...created,
  baseline: 'the same envelope as a plain object with JSON.stringify and the same digest',
  note: 'what the schema check and the canonical form cost a writer',
});
const parsed = await compare(parse, parsePlain);
report({
  measure: 'fact_parse_per_second',
  unit: 'stored events parsed with RuntimeEvent.parse (JSON.parse and the schema), per second',
  ...parsed,
  baseline: 'JSON.parse of the same rows, unchecked',
  note: 'what the schema check costs a reader of the log',
});
