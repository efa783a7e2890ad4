import { describe, expect, it } from 'vitest';
import { AppendRefusedError, EventLog } from '../src/index.ts';
import { testStores } from '../src/testing.ts';
import { facts, invocation, write } from './support/facts.ts';
import { schemaSnapshot } from './support/schema-snapshot.ts';

describe.each(testStores())('unfinished invocations read through the live index on $name', (stores) => {
  it('a log from before the index was dropped loses it on open and still lists its unfinished invocations, oldest first', async () => {
    await using store = await stores.create();
    const first = invocation('-a', 'session-a');
    const ended = invocation('-b', 'session-b');
    const last = invocation('-c', 'session-c');
    const log = await EventLog.open(store.target);
    await log.append(write(first, facts.opened()));
    await log.append(write(ended, facts.opened()));
    await log.append(write(last, facts.opened()));
    await log.append(write(ended, facts.ended()));
    await log.close();
    // The schema as releases before this one left it.
    await store.raw(`create index invocations_unfinished on invocations (opened_sequence) where ended_sequence is null;
      delete from kysely_migration where name = '0005_one_live_index';`);
    const indexes = async () =>
      (await schemaSnapshot(store.target)).schema.filter((line) => line.includes('invocations_unfinished'));
    expect(await indexes()).not.toEqual([]);

    await using reopened = await EventLog.open(store.target);
    expect(await indexes()).toEqual([]);
    expect((await schemaSnapshot(store.target)).applied).toContain('0005_one_live_index');
    expect(await reopened.unfinishedInvocations(10)).toEqual([first, last]);
    expect(await reopened.unfinishedInvocations(1)).toEqual([first]);
    expect((await reopened.unfinishedOwnership(10)).map((one) => one.invocation)).toEqual([first, last]);

    // The live index still keeps one live invocation per session, and forgets an ended one.
    await expect(reopened.append(write(invocation('-a2', 'session-a'), facts.opened()))).rejects.toSatisfy(
      AppendRefusedError.isInstance,
    );
    await reopened.append(write(last, facts.ended()));
    expect(await reopened.unfinishedInvocations(10)).toEqual([first]);
    await reopened.append(write(invocation('-b2', 'session-b'), facts.opened()));
    expect(await reopened.unfinishedInvocations(10)).toEqual([first, invocation('-b2', 'session-b')]);
  });
});
