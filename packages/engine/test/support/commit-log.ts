import { CodeExecutor } from '@factum/code-runtime';
import type { LogTarget } from '@factum/event-log';
import { EventLog } from '@factum/event-log';
import { ModelExecutor } from '@factum/model';
import { Engine } from '../../src/index.ts';

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
