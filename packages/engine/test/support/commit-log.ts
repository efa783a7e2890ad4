import { join } from 'node:path';
import { CodeExecutor } from '@factum/code-runtime';
import type { LogTarget } from '@factum/event-log';
import { EventLog } from '@factum/event-log';
import type { TestStoreFactory } from '@factum/event-log/testing';
import { ModelExecutor } from '@factum/model';
import { startScriptedProvider } from '@factum/model/testing';
import type { ToolCatalog } from '@factum/tools';
import { Engine } from '../../src/index.ts';
import { temporaryDirectory } from './agent-loop.ts';

const wide = { maxEvents: 10_000, maxBytes: 64 * 1024 * 1024 };

/**
 * A log that remembers which events each commit stored, for tests of what rides with
 * what: `commits()` gives the kinds of facts of each commit, in commit order. `engine`
 * makes an engine on it with its own host id.
 */
export async function commitRecordingLog(target: LogTarget) {
  const batches: string[][] = [];
  const log = await EventLog.open(target, {
    hooks: { afterCommit: (batch) => batches.push([...batch.eventIds]) },
  });
  const engine = (hostId: string) =>
    new Engine({
      log,
      models: new ModelExecutor({ timeoutMs: 10_000, retry: { maxAttempts: 1 } }),
      code: new CodeExecutor(),
      options: { lease: { hostId } },
    });
  const commits = async () => {
    const kinds = new Map(
      (await log.prefix(wide)).events.map((stored) => [stored.event.id, stored.event.fact.kind]),
    );
    return batches.map((ids) => ids.map((id) => kinds.get(id)));
  };
  return { log, engine, commits };
}

/**
 * A new store of `stores`, a `commitRecordingLog` on it, a scripted provider and a ledger
 * file in a new directory, with the catalog `tools` makes from the log and the ledger;
 * disposing it closes and removes all of them.
 */
export async function commitRecordingSetup(
  stores: TestStoreFactory,
  tools: (log: EventLog, ledger: string) => ToolCatalog,
) {
  const store = await stores.create();
  const dir = temporaryDirectory();
  const provider = await startScriptedProvider();
  const { log, engine, commits } = await commitRecordingLog(store.target);
  const ledger = join(dir.path, 'ledger');
  return {
    log,
    engine,
    ledger,
    tools: tools(log, ledger),
    config: provider.config({ model: 'test', auth: { apiKey: 'k' } }),
    provider,
    commits,
    async [Symbol.asyncDispose]() {
      await log.close();
      await provider[Symbol.asyncDispose]();
      dir[Symbol.dispose]();
      await store[Symbol.asyncDispose]();
    },
  };
}
