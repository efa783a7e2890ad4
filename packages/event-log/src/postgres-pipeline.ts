import type { CompiledQuery } from 'kysely';
import type pg from 'pg';
import { HELD_WITH_COMMIT } from './lease-guard.js';
import type { Statements } from './log-dialect.js';
import { literal } from './postgres-literal.js';
import { ONE_MESSAGE } from './postgres-one-trip.js';

/** Past this much parameter text a write is sent on its own, with bound parameters. */
export const maxInlineChars = 1 << 20;

/**
 * Runs a transaction's statements on one PostgreSQL connection in as few round trips as
 * it can. Every round trip taken while the chain's lock is held is time every other
 * writer of the fleet waits (measured: the lock's hold time, not the work, bounded
 * several writer processes), so:
 * - a write whose rows nobody reads (an `insert`, `update` or `delete` without
 *   `returning`) is held back and sent together with the next statement that needs an
 *   answer — `COMMIT` at the latest — as one message of the simple query protocol, its
 *   parameters written out as literals;
 * - a statement made of several (`begin; …; select …`) comes back with the rows of its
 *   last part.
 * `ROLLBACK` drops what was held back: none of it was sent. A write with large
 * parameters (a big tool result) goes alone with bound parameters, after what was held.
 * The caller's generator sees every write as done at once; an error of a held write
 * surfaces at the statement it was sent with. A statement marked `HELD_WITH_COMMIT` (the
 * lease guard) is held like a write.
 */
export async function runPipelined<T>(steps: Statements<T>, client: pg.PoolClient): Promise<T> {
  const held: string[] = [];
  let step = steps.next();
  while (!step.done) {
    const query = step.value;
    let rows: unknown[];
    try {
      if (query.sql === 'rollback') {
        held.length = 0;
        rows = await execute(client, query.sql, []);
      } else if (isWrite(query) && inlineSize(query) <= maxInlineChars) {
        held.push(inline(query));
        rows = [];
      } else if (held.length > 0 && inlineSize(query) <= maxInlineChars) {
        splitsOneMessage(held, query);
        const text = [...held.splice(0), inline(query)].join(';\n');
        rows = await execute(client, text, []);
      } else {
        if (held.length > 0) {
          splitsOneMessage(held, query);
          await execute(client, held.splice(0).join(';\n'), []);
        }
        rows = await execute(client, query.sql, query.parameters);
      }
    } catch (error) {
      held.length = 0;
      step = steps.throw(error);
      continue;
    }
    step = steps.next(rows);
  }
  return step.value;
}

/**
 * A one-message transaction has no `BEGIN`: sent without its `COMMIT`, what was held
 * would commit alone. Such a batch never needs an answer before `COMMIT` (`oneTripFits`);
 * this stops the one that would, before anything is sent.
 */
function splitsOneMessage(held: readonly string[], next: CompiledQuery): void {
  if (next.sql !== 'commit' && held[0]?.includes(ONE_MESSAGE)) {
    throw new Error(`a one-message transaction cannot be split before its COMMIT: ${next.sql.slice(0, 80)}`);
  }
}

async function execute(client: pg.PoolClient, text: string, values: readonly unknown[]): Promise<unknown[]> {
  // Without values the driver uses the simple protocol, which allows several statements.
  const result = (await client.query(text, values.length === 0 ? undefined : [...values])) as
    | pg.QueryResult
    | pg.QueryResult[];
  const last = Array.isArray(result) ? result.at(-1) : result;
  return last?.rows ?? [];
}

function isWrite(query: CompiledQuery): boolean {
  if (query.sql.startsWith(HELD_WITH_COMMIT)) return true;
  return /^\s*(insert|update|delete)\s/i.test(query.sql) && !/\breturning\b/i.test(query.sql);
}

function inlineSize(query: CompiledQuery): number {
  let size = 0;
  for (const value of query.parameters) size += typeof value === 'string' ? value.length : 24;
  return size;
}

/**
 * The statement with its `$n` placeholders replaced by literals. Kysely writes a
 * placeholder for every value, and `$` appears nowhere else in the log's parameterised
 * statements. A statement without parameters is sent as it is: one the log wrote out
 * itself (a guard) may hold a caller's text, `$1` included, in its literals.
 */
function inline(query: CompiledQuery): string {
  if (query.parameters.length === 0) return query.sql;
  return query.sql.replace(/\$(\d+)/g, (_, index: string) => literal(query.parameters[Number(index) - 1]));
}
