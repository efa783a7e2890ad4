import { CompiledQuery } from 'kysely';
import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import type { Statements } from '../src/log-dialect.ts';
import { oneTripOpening } from '../src/postgres-one-trip.ts';
import { runPipelined } from '../src/postgres-pipeline.ts';

/** A connection that records what it was sent and answers every message with no rows. */
class RecordingClient {
  readonly sent: string[] = [];
  async query(text: string): Promise<{ rows: unknown[] }> {
    this.sent.push(text);
    return { rows: [] };
  }
}

function* steps(middle: CompiledQuery | undefined): Statements<void> {
  yield oneTripOpening({ sequence: 3, digest: 'abc' }, 42);
  yield CompiledQuery.raw(`insert into "events" ("sequence") values (4)`);
  if (middle !== undefined) yield middle;
  yield CompiledQuery.raw('commit');
}

describe('a one-message transaction reaches the server whole or not at all', () => {
  it('its opening, its writes and its COMMIT go as one message', async () => {
    const client = new RecordingClient();
    await runPipelined(steps(undefined), client as unknown as pg.PoolClient);
    expect(client.sent).toHaveLength(1);
    expect(client.sent[0]).toMatch(/pg_advisory_xact_lock\(42\)[\s\S]*insert into "events"[\s\S]*commit$/);
    expect(client.sent[0]).not.toMatch(/\bbegin;/);
  });

  it('a statement that needs an answer before COMMIT fails the batch before anything is sent', async () => {
    const client = new RecordingClient();
    const run = runPipelined(
      steps(CompiledQuery.raw('select 1 from events')),
      client as unknown as pg.PoolClient,
    );
    await expect(run).rejects.toThrow(/cannot be split before its COMMIT/);
    expect(client.sent.filter((text) => text !== 'rollback')).toEqual([]);
  });
});
