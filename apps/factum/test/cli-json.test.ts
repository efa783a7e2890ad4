import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startScriptedProvider } from '@factum/model/testing';
import { describe, expect, it } from 'vitest';
import {
  ApprovalsOutputSchema,
  LogOutputSchema,
  RecoverOutputSchema,
  ShowOutputSchema,
} from '../src/index.ts';
import { runCli, temporaryDirectory, untilLeaseExpired } from './cli-harness.ts';

const LONG_FILE = Array.from({ length: 40 }, (_, i) => `line ${i + 1} of the notes`).join('\n');

describe('scripting factum: --json, exit codes, and what show prints', () => {
  it('log --json and show --json print documents of their schemas, and show prints results, text and reasoning', async () => {
    using dir = temporaryDirectory();
    writeFileSync(join(dir.workspace, 'notes.txt'), LONG_FILE);
    await using provider = await startScriptedProvider();
    provider.script(
      {
        reasoning: 'The user wants the notes; read them first.',
        toolCalls: [{ id: 'c1', name: 'read_file', arguments: { path: 'notes.txt' } }],
      },
      { text: 'The notes have forty lines.' },
    );
    const args = ['--base-url', provider.baseUrl, '--model', 'test', '--dir', dir.dataDir];
    const run = await runCli(['run', 'read notes.txt', ...args], {
      cwd: dir.workspace,
      env: { FACTUM_API_KEY: 'k' },
    });
    expect(run.code).toBe(0);

    const log = await runCli(['log', '--json', '--dir', dir.dataDir], { cwd: dir.path });
    expect(log.code).toBe(0);
    const listed = LogOutputSchema.parse(JSON.parse(log.stdout));
    expect(listed.total).toBe(1);
    expect(listed.invocations[0]).toMatchObject({
      status: 'completed',
      toolCalls: 1,
      steps: 2,
      uncertainOperations: [],
    });
    const id = listed.invocations[0]!.invocation.invocationId;

    const json = await runCli(['show', id, '--json', '--dir', dir.dataDir], { cwd: dir.path });
    expect(json.code).toBe(0);
    const shown = ShowOutputSchema.parse(JSON.parse(json.stdout));
    expect(shown.status).toBe('completed');
    const settled = shown.events.find((event) => event.fact.kind === 'tool_settled');
    expect(settled?.result, 'the whole stored result rides with its settlement').toMatchObject({
      content: LONG_FILE,
    });

    const text = await runCli(['show', id, '--dir', dir.dataDir], { cwd: dir.path });
    expect(text.stdout).toContain('reasoning:');
    expect(text.stdout).toContain('The user wants the notes; read them first.');
    expect(text.stdout).toContain('│ The notes have forty lines.');
    expect(text.stdout, 'an excerpt of the result').toContain('line 1 of the notes');
    expect(text.stdout).not.toContain('line 40 of the notes');
    expect(text.stdout).toMatch(/… \d+ more lines \(--full shows all\)/);
    const full = await runCli(['show', id, '--full', '--dir', dir.dataDir], { cwd: dir.path });
    expect(full.stdout, '--full prints the whole result').toContain('line 40 of the notes');
    expect(full.stdout).not.toContain('--full shows all');
  }, 60_000);

  it('recover exits 3 while something is open and 0 once nothing is, with --json saying the same', async () => {
    using dir = temporaryDirectory();
    const session = 'session-crashed';
    const workspace = join(dir.dataDir, 'demo', session);
    mkdirSync(workspace, { recursive: true });
    const crash = await runCli(['demo', '--crash-child', session, '--dir', dir.dataDir], { cwd: dir.path });
    expect(crash.signal).toBe('SIGKILL');

    const listed = await runCli(['recover', '--json', '--dir', dir.dataDir], { cwd: dir.path });
    expect(listed.code, 'something is open').toBe(3);
    const before = RecoverOutputSchema.parse(JSON.parse(listed.stdout));
    expect(before).toMatchObject({ leftOpen: true, applied: null });
    expect(before.unfinished).toHaveLength(1);
    expect(before.uncertain[0]).toMatchObject({ tool: 'write_file', input: { path: 'plan.md' } });
    const intended = (before.uncertain[0]!.input as { content: string }).content;

    // Someone changed the file since: reconciliation cannot tell, so the operation stays open.
    writeFileSync(join(workspace, 'plan.md'), 'edited by hand');
    await untilLeaseExpired(dir.dataDir, dir.path);
    const unsure = await runCli(['recover', '--apply', '--json', '--dir', dir.dataDir], { cwd: dir.path });
    expect(unsure.code, 'left open after --apply').toBe(3);
    const applied = RecoverOutputSchema.parse(JSON.parse(unsure.stdout));
    expect(applied.applied).toMatchObject({
      endedInvocations: 1,
      reconciled: [{ tool: 'write_file', decision: 'unknown' }],
    });
    expect(applied.leftOpen).toBe(true);

    writeFileSync(join(workspace, 'plan.md'), intended);
    const closed = await runCli(['recover', '--apply', '--dir', dir.dataDir], { cwd: dir.path });
    expect(closed.code).toBe(0);
    expect(closed.stdout).toContain('nothing is left open');
    const after = await runCli(['recover', '--json', '--dir', dir.dataDir], { cwd: dir.path });
    expect(after.code).toBe(0);
    expect(RecoverOutputSchema.parse(JSON.parse(after.stdout))).toEqual({
      unfinished: [],
      uncertain: [],
      applied: null,
      leftOpen: false,
    });

    const help = await runCli(['recover', '--help'], { cwd: dir.path });
    expect(help.stdout).toMatch(
      /Exit codes:[\s\S]*0 {2}nothing is left open[\s\S]*3 {2}something is left open/,
    );
  }, 60_000);

  it('log, recover, approvals and show where Factum never ran answer "empty" and create no .factum/', async () => {
    using dir = temporaryDirectory();
    const options = { cwd: dir.workspace };
    const logged = await runCli(['log', '--json'], options);
    expect(LogOutputSchema.parse(JSON.parse(logged.stdout)).total).toBe(0);
    const recovered = await runCli(['recover'], options);
    expect(recovered.code, recovered.stderr).toBe(0);
    const waiting = await runCli(['approvals', '--json'], options);
    expect(ApprovalsOutputSchema.parse(JSON.parse(waiting.stdout)).approvals).toEqual([]);
    const shown = await runCli(['show', 'invocation-1'], options);
    expect(shown.stderr).toMatch(/no invocation invocation-1/);
    expect(existsSync(join(dir.workspace, '.factum')), 'nothing was created').toBe(false);
  }, 60_000);
});
