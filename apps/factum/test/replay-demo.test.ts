import { join } from 'node:path';
import { CodeExecutor } from '@factum/code-runtime';
import { Engine } from '@factum/engine';
import { EventLog } from '@factum/event-log';
import { ModelExecutor } from '@factum/model';
import { describe, expect, it } from 'vitest';
import { builtinCatalog } from '../src/builtin-tools/builtin-catalog.ts';
import { Workspace } from '../src/builtin-tools/workspace.ts';
import { demoWorkspacePath } from '../src/demo/demo-input.ts';
import { runCli, temporaryDirectory } from './cli-harness.ts';

describe('replay over the log the demo leaves', () => {
  it('verify reproduces every demo turn — Direct mode, a Code mode cell, the killed child’s turn, its recovery, the turn after — and a changed tool description is reported at the first request', async () => {
    using dir = temporaryDirectory();
    const demo = await runCli(['demo', '--dir', dir.dataDir], { cwd: dir.path });
    expect(demo.code).toBe(0);
    const sessionId = /session {4}(session-[0-9a-f]+)/.exec(demo.stdout)![1]!;
    await using log = await EventLog.open(join(dir.dataDir, 'events.sqlite'));
    const facts = (await log.prefix({ maxEvents: 10_000, maxBytes: 64 << 20 })).events.map(
      ({ event }) => event.fact,
    );
    expect(
      facts.some((fact) => fact.kind === 'tool_reconciled'),
      'the demo recovered the killed turn',
    ).toBe(true);
    const before = await log.sessionHead(sessionId);

    // The demo's agent: the built-in tools of its workspace, no instructions, its scripted
    // provider (gone now: each step takes the route its recorded request names).
    const workspace = await Workspace.open(demoWorkspacePath(dir.dataDir, sessionId));
    const provider = {
      kind: 'openai_chat_completions' as const,
      baseUrl: 'http://127.0.0.1/v1',
      model: 'x',
      auth: { none: true as const },
    };
    const engine = new Engine({
      log,
      models: new ModelExecutor({ timeoutMs: 5_000 }),
      code: new CodeExecutor(),
      options: { lease: false, recoverOnStart: false },
    });
    const replay = (catalog = builtinCatalog({ workspace })) =>
      engine.replay(log, {
        target: { kind: 'session', sessionId },
        mode: 'verify',
        route: 'recorded',
        agent: { provider, catalog },
      });
    const report = await replay();
    expect(report.invocations.map((entry) => [entry.status, entry.divergences])).toEqual([
      ['same', []],
      ['same', []],
      ['same', []],
      ['same', []],
    ]);
    expect(report.invocations.every((entry) => entry.compared >= 4)).toBe(true);
    expect(JSON.stringify(await replay()), 'byte for byte the same report').toBe(JSON.stringify(report));

    const tools = builtinCatalog({ workspace });
    const { ToolCatalog } = await import('@factum/tools');
    const changed = new ToolCatalog(
      tools.names().map((name) => {
        const registration = tools.get(name)!.registration;
        return name === 'read_file'
          ? {
              ...registration,
              definition: { ...registration.definition, description: 'Reads a file, now differently.' },
            }
          : registration;
      }),
    );
    const planted = await replay(changed);
    expect(planted.summary.diverged).toBe(4);
    expect(planted.invocations[0]!.divergences[0]).toMatchObject({
      kind: 'request',
      index: 0,
      recorded: { kind: 'model_requested' },
    });
    expect(await log.sessionHead(sessionId), 'nothing was written to the log').toEqual(before);
    await engine.close();

    // The command line knows the demo's runs by their workspace and replays them with its agent.
    const cli = await runCli(['replay', '--all', '--dir', dir.dataDir], { cwd: dir.path });
    expect(cli.stderr).toBe('');
    expect(cli.stdout).toContain('verify: 4 invocations replayed, 4 same, 0 diverged');
    expect(cli.code).toBe(0);
  }, 90_000);
});
