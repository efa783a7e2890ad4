import type { CompiledQuery, Kysely } from 'kysely';
import type { LogDatabase } from './log-schema.js';

/** A compiled statement and, per parameter, which value of a call goes there (-1: its own). */
type Template = { readonly compiled: CompiledQuery; readonly slots: readonly number[] };

const templates = new WeakMap<object, Map<string, Template>>();
const SLOT = '\u0000slot:';

/** `count` slots from `first` on, for an `in` list of `count` values. */
export function slots(first: number, count: number): string[] {
  return Array.from({ length: count }, (_, at) => slot(first + at));
}

/** Stands for the `index`-th value of `templated`'s call in the statement being built. */
export function slot(index: number): string {
  return `${SLOT}${index}`;
}

/**
 * A statement built and compiled by Kysely once per dialect (keyed by its adapter, which
 * every connection-bound `Kysely` of one database shares) and `key`, then reused with
 * `values` put where `build` placed `slot(i)`: compiling costs more than SQLite spends
 * running such a statement, and a commit runs several. `key` must name everything the
 * statement's text depends on (which statement, how many rows).
 */
export function templated<R>(
  builder: Kysely<LogDatabase>,
  key: string,
  build: () => CompiledQuery<R>,
  values: readonly unknown[],
): CompiledQuery<R> {
  const adapter = builder.getExecutor().adapter;
  let byKey = templates.get(adapter);
  if (byKey === undefined) {
    byKey = new Map();
    templates.set(adapter, byKey);
  }
  let template = byKey.get(key);
  if (template === undefined) {
    const compiled = build();
    const slots = compiled.parameters.map((parameter) =>
      typeof parameter === 'string' && parameter.startsWith(SLOT) ? Number(parameter.slice(SLOT.length)) : -1,
    );
    if (slots.filter((index) => index >= 0).length !== values.length) {
      throw new Error(`statement template ${key}: ${values.length} values for its slots`);
    }
    template = { compiled: compiled as CompiledQuery, slots };
    // Keys grow with row counts and list lengths: a bound, as the prepared statements have.
    if (byKey.size >= 512) byKey.clear();
    byKey.set(key, template);
  }
  const { compiled, slots } = template;
  return {
    ...(compiled as CompiledQuery<R>),
    parameters: slots.map((index, at) => (index < 0 ? compiled.parameters[at] : values[index])),
  };
}
