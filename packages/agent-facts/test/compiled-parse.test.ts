import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { FactParseError, RuntimeEvent, RuntimeEventSchema } from '../src/index.ts';
import { COMPILE_AFTER } from '../src/parse.ts';
import { everyKind, invocation } from './fixtures.ts';
import { anyEvent } from './property-arbitraries.ts';

/**
 * Events are parsed through zod's compiled validator (`z.compile`) of their fact's kind
 * once a process has parsed `COMPILE_AFTER` of them. Its promise is the runtime parser's
 * output and issues; these properties hold it to that on every fact kind, on valid events
 * and on events broken at a random place, against the whole schema's own (uncompiled)
 * `safeParse`.
 */

type Path = readonly (string | number)[];
type Members = Record<string | number, unknown>;

/** Every path into `value` that names an object member or an array item. */
function pathsOf(value: unknown, prefix: Path = []): Path[] {
  if (typeof value !== 'object' || value === null) return [];
  const keys = Array.isArray(value) ? value.map((_, index) => index) : Object.keys(value);
  return keys.flatMap((key) => {
    const path = [...prefix, key];
    return [path, ...pathsOf((value as Members)[key], path)];
  });
}

/** A copy of `value` with the member at `path` replaced by `next` (or removed, for `REMOVE`). */
function withAt(value: unknown, path: Path, next: unknown): unknown {
  const copy = (Array.isArray(value) ? [...value] : { ...(value as object) }) as Members;
  const [key, ...rest] = path as [string | number, ...Path];
  if (next === REMOVE && rest.length === 0) {
    delete copy[key];
    return copy;
  }
  // Defined, not assigned: assigning `__proto__` would set the prototype instead.
  const member = rest.length > 0 ? withAt(copy[key], rest, next) : next;
  Object.defineProperty(copy, key, { value: member, enumerable: true, writable: true, configurable: true });
  return copy;
}
const REMOVE = Symbol('remove');

/** What the runtime parser says: the parsed value's JSON image, or its issues' paths and messages. */
function runtimeVerdict(value: unknown) {
  const result = RuntimeEventSchema.safeParse(value);
  if (result.success) return { ok: JSON.stringify(result.data) };
  return { issues: result.error.issues.map((issue) => [issue.path.map(String).join('.'), issue.message]) };
}

/** The same, through the parse facts go through. */
function compiledVerdict(value: unknown) {
  try {
    return { ok: JSON.stringify(RuntimeEvent.parse(value)) };
  } catch (error) {
    if (!FactParseError.isInstance(error)) throw error;
    const cause = error.cause as { issues: { path: PropertyKey[]; message: string }[] };
    return { issues: cause.issues.map((issue) => [issue.path.map(String).join('.'), issue.message]) };
  }
}

/**
 * Checks that the compiled parse and the runtime parser agree on each event broken as
 * `breaks` says (a member at a path replaced, or removed), and counts the refusals.
 */
function refusedOf(breaks: fc.Arbitrary<[RuntimeEvent, Path, unknown]>, numRuns: number): number {
  let refused = 0;
  fc.assert(
    fc.property(breaks, ([event, path, next]) => {
      const broken = withAt(event, path, next);
      const verdict = compiledVerdict(broken);
      expect(verdict).toEqual(runtimeVerdict(broken));
      if (verdict.issues) refused += 1;
    }),
    { numRuns },
  );
  return refused;
}

/** Replacements that break a member of any type: wrong types, edge values, extra structure. */
const replacement = fc.oneof(
  fc.constantFrom(
    REMOVE,
    undefined,
    null,
    '',
    0,
    -1,
    1.5,
    Number.NaN,
    Number.POSITIVE_INFINITY,
    true,
    [],
    {},
  ),
  fc.string({ maxLength: 300 }),
  fc.integer(),
  fc.dictionary(fc.string({ maxLength: 6 }), fc.jsonValue({ maxDepth: 1 }), { maxKeys: 3 }),
);

describe('compiled fact parsing', () => {
  // The event schema is compiled once it has parsed COMPILE_AFTER values: past them, every
  // parse below goes through the compiled validator.
  beforeAll(() => {
    const kinds = everyKind();
    for (let index = 0; index < COMPILE_AFTER; index += 1) {
      RuntimeEvent.parse(RuntimeEvent.create(invocation, kinds[index % kinds.length]!));
    }
  });

  it('parses every valid event to exactly what the runtime parser makes of it, key order included', () => {
    fc.assert(
      fc.property(anyEvent, (event) => {
        const verdict = compiledVerdict(event);
        expect(verdict).toEqual(runtimeVerdict(event));
        expect(verdict.ok).toBeDefined();
      }),
      { numRuns: 400 },
    );
  });

  it('refuses an event broken at any place with the runtime parser’s issues, and accepts what it accepts', () => {
    const breaks = anyEvent.chain((event) =>
      fc.tuple(fc.constant(event), fc.constantFrom(...pathsOf(event)), replacement),
    );
    // The replacements must mostly break the event, or this property proves little.
    expect(refusedOf(breaks, 1500)).toBeGreaterThan(1000);
  });

  it('refuses an unknown member at any depth, an own __proto__ member included, as the runtime parser does', () => {
    const additions = anyEvent.chain((event) => {
      const objects = pathsOf(event).filter((path) => {
        const value = path.reduce<unknown>((at, key) => (at as Members)[key], event);
        return typeof value === 'object' && value !== null && !Array.isArray(value);
      });
      // An own member named `__proto__` is what JSON.parse makes of a model's arguments.
      return fc.tuple(
        fc.constant(event),
        fc
          .constantFrom<Path>([], ...objects)
          .chain((path) => fc.constantFrom<Path>([...path, 'extra'], [...path, '__proto__'])),
        fc.constant({ admin: true }),
      );
    });
    // Only a tool's JSON input or result may hold members of any name.
    expect(refusedOf(additions, 300)).toBeGreaterThan(200);
  });

  it('parses with the runtime parser where code generation from strings is forbidden', () => {
    // A process run with --disallow-code-generation-from-strings cannot compile a schema:
    // past the compile point it must go on parsing, and refusing, as before.
    const parses = COMPILE_AFTER + 200;
    const script = `
      const { RuntimeEvent } = await import('./src/index.ts');
      const invocation = { sessionId: 's', turnId: 't', runId: 'r', invocationId: 'i' };
      const fact = { kind: 'invocation_ended', outcome: { kind: 'completed' } };
      let parsed = 0;
      for (let index = 0; index < ${parses}; index += 1) {
        if (RuntimeEvent.parse(RuntimeEvent.create(invocation, fact)).fact.kind === fact.kind) parsed += 1;
      }
      let refused = '';
      try { RuntimeEvent.parse({ ...RuntimeEvent.create(invocation, fact), extra: 1 }); } catch (error) { refused = error.message; }
      console.log(JSON.stringify({ parsed, refused }));
    `;
    const output = execFileSync(
      process.execPath,
      [
        '--disallow-code-generation-from-strings',
        '--import',
        'tsx',
        '--conditions=@factum/source',
        '--input-type=module',
        '--eval',
        script,
      ],
      { cwd: fileURLToPath(new URL('..', import.meta.url)), encoding: 'utf8', timeout: 60_000 },
    );
    expect(JSON.parse(output)).toEqual({
      parsed: parses,
      refused: expect.stringContaining('malformed event at (root): Unrecognized key: "extra"'),
    });
  });
});
