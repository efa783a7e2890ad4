import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { CodeExecutor } from '@factum/code-runtime';
import { Engine } from '@factum/engine';
import { EventLog } from '@factum/event-log';
import { ModelExecutor } from '@factum/model';
import { describe, expect, it } from 'vitest';
import { tortureCatalog } from '../src/child/torture-tools.js';
import { runTorture } from '../src/run-torture.ts';

/** Every SQLite log a kept torture run left, at any depth. */
function logsIn(directory: string): string[] {
  return readdirSync(directory, { recursive: true, encoding: 'utf8' })
    .filter((path) => path.endsWith('.sqlite'))
    .map((path) => join(directory, path))
    .sort();
}

describe('replay over the logs the torture smoke leaves', () => {
  it('verify reproduces every invocation of logs cut by SIGKILLs at random points — crashes, recoveries, approvals, handoffs, cells — without a divergence', async () => {
    const seed = Number(process.env.FACTUM_REPLAY_TORTURE_SEED ?? 20_261_204);
    const summary = await runTorture({ kills: 10, workers: 1, seed, keep: true });
    try {
      expect(summary.violations).toEqual([]);
      const logs = logsIn(summary.directory);
      expect(logs.length).toBeGreaterThan(0);
      let replayed = 0;
      const kinds = new Set<string>();
      for (const file of logs) {
        await using log = await EventLog.open(file);
        let opened = 0;
        for (const { event } of (await log.prefix({ maxEvents: 1_000_000, maxBytes: 1 << 30 })).events) {
          kinds.add(event.fact.kind);
          if (event.fact.kind === 'invocation_opened') opened += 1;
        }
        const engine = new Engine({
          log,
          models: new ModelExecutor({ timeoutMs: 5_000 }),
          code: new CodeExecutor(),
          options: { lease: false, recoverOnStart: false },
        });
        // The torture child's agent: its catalog (no executor is ever called), no
        // instructions, each step on the route its recorded request names.
        const provider = {
          kind: 'openai_chat_completions' as const,
          baseUrl: 'http://127.0.0.1/v1',
          model: 'x',
          auth: { none: true as const },
        };
        const catalog = tortureCatalog({ ledger: join(summary.directory, 'unused-ledger') });
        const report = await engine.replay(log, {
          target: { kind: 'all' },
          mode: 'verify',
          route: 'recorded',
          agent: { provider, catalog },
        });
        const diverged = report.invocations.filter((entry) => entry.status === 'diverged');
        expect(
          diverged,
          `${file}: ${String(JSON.stringify(diverged[0]?.divergences)).slice(0, 1500)}`,
        ).toEqual([]);
        // Every invocation the log opened, crashed ones included.
        expect(report.summary.invocations).toBe(opened);
        replayed += report.summary.invocations;
        await engine.close();
      }
      // How many turns a child finishes before its kill depends on the machine's speed
      // (the kills land at random moments too): 16–25 invocations on a quiet machine, 10
      // on a loaded CI run. So no count is asserted beyond some, and the kinds below.
      expect(replayed).toBeGreaterThan(0);
      // The logs hold what the promise is about: crashes recovered, approvals, reconciliations.
      for (const kind of ['tool_dispatched', 'invocation_ended', 'approval_requested'])
        expect(kinds).toContain(kind);
    } finally {
      rmSync(summary.directory, { recursive: true, force: true });
    }
  }, 240_000);
});
