import { existsSync, readFileSync } from 'node:fs';
import { CodeExecutor } from '@factum/code-runtime';
import type { EventLog } from '@factum/event-log';
import { ModelExecutor } from '@factum/model';
import type { ScriptedProvider } from '@factum/model/testing';
import { Engine, type RunInput } from '../../src/index.ts';
import { input } from './agent-loop.ts';

/** The lines an effect ledger holds: one per effect that ran in the world (none if none did). */
export const ledgerLines = (path: string): string[] =>
  existsSync(path) ? readFileSync(path, 'utf8').split('\n').filter(Boolean) : [];

/**
 * The crash child's host restarted: its id under a new epoch, so the runs of its dead
 * epoch end at once.
 */
export function restartedCrashHost(log: EventLog): Engine {
  return new Engine({
    log,
    models: new ModelExecutor({ timeoutMs: 5_000 }),
    code: new CodeExecutor(),
    options: { lease: { hostId: 'crash-host' } },
  });
}

/** The turn after a crash in the crashed session ("go on", with no-op `echo`). */
export function turnAfterCrash(provider: ScriptedProvider, allowPriorUnknown: boolean): RunInput {
  const effect = { names: () => ['echo'], invoke: async (_: string, value: unknown) => value };
  const base = input(provider, 'after', effect);
  return { ...base, work: { kind: 'message', message: 'go on', allowPriorUnknown, tools: base.work.tools } };
}
