import { existsSync, readFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { startScriptedProvider } from '@factum/model/testing';
import { describe, expect, it } from 'vitest';
import { factsIn, runCli, temporaryDirectory } from './cli-harness.ts';

const providerArgs = (baseUrl: string, dataDir: string) => [
  '--base-url',
  baseUrl,
  '--model',
  'test',
  '--dir',
  dataDir,
];

describe('approvals from the command line, across processes', () => {
  it('run parks off a TTY (exit 4), approvals lists it, approve in another process runs the exact input once', async () => {
    using dir = temporaryDirectory();
    await using provider = await startScriptedProvider();
    provider.script(
      {
        toolCalls: [{ id: 'call-w', name: 'write_file', arguments: { path: 'a.txt', content: 'approved!' } }],
      },
      { text: 'Wrote a.txt.' },
    );
    const parked = await runCli(
      [
        'run',
        'write a.txt',
        '--require-approval',
        'write_file',
        '--session',
        's-approve',
        ...providerArgs(provider.baseUrl, dir.dataDir),
      ],
      { cwd: dir.workspace },
    );
    expect(parked.code, parked.stderr).toBe(4);
    const operation = /factum approve (\S+)/.exec(parked.stdout)?.[1];
    expect(operation, parked.stdout).toBeDefined();
    expect(parked.stdout).toContain(`factum deny ${operation}`);
    expect(parked.stdout).toContain('awaiting approval');
    expect(existsSync(join(dir.workspace, 'a.txt')), 'nothing ran before the approval').toBe(false);

    const listed = await runCli(['approvals', '--json', '--dir', dir.dataDir], { cwd: dir.workspace });
    expect(listed.code, listed.stderr).toBe(0);
    const { approvals } = JSON.parse(listed.stdout) as {
      approvals: { operationId: string; tool: string; input: unknown; decision: unknown }[];
    };
    expect(approvals).toEqual([
      expect.objectContaining({
        operationId: operation,
        tool: 'write_file',
        input: { path: 'a.txt', content: 'approved!' },
        decision: null,
      }),
    ]);
    const text = await runCli(['approvals', '--dir', dir.dataDir], { cwd: dir.workspace });
    expect(text.stdout).toContain(`factum approve ${operation}`);
    const logged = await runCli(['log', '--json', '--dir', dir.dataDir], { cwd: dir.workspace });
    expect(JSON.parse(logged.stdout).invocations[0].status).toBe('awaiting_approval');

    const approved = await runCli(
      ['approve', operation!, '--note', 'looks right', ...providerArgs(provider.baseUrl, dir.dataDir)],
      { cwd: dir.workspace },
    );
    expect(approved.code, approved.stderr).toBe(0);
    expect(approved.stdout).toContain('✔ approved write_file a.txt');
    expect(approved.stdout).toContain('Wrote a.txt.');
    expect(readFileSync(join(dir.workspace, 'a.txt'), 'utf8')).toBe('approved!');

    const facts = await factsIn(dir.dataDir);
    const of = (kind: string) =>
      facts.filter(
        ({ fact }) => fact.kind === kind && 'operationId' in fact && fact.operationId === operation,
      );
    expect(of('approval_requested')).toHaveLength(1);
    expect(of('approval_decided').map(({ fact }) => fact)).toEqual([
      expect.objectContaining({ decision: 'approved', by: userInfo().username, note: 'looks right' }),
    ]);
    expect(of('tool_dispatched'), 'the effect ran once').toHaveLength(1);
    expect(of('tool_settled')).toHaveLength(1);

    // `log` no longer shows the parked invocation as waiting: it names its continuation.
    const parkedId = of('approval_requested')[0]!.invocationId;
    const continuedId = of('tool_dispatched')[0]!.invocationId;
    expect(continuedId).not.toBe(parkedId);
    const listedAfter = await runCli(['log', '--dir', dir.dataDir], { cwd: dir.workspace });
    const parkedLine = listedAfter.stdout.split('\n').find((line) => line.includes(parkedId));
    expect(parkedLine).toContain(`parked for approval, continued in ${continuedId}`);
    expect(parkedLine).not.toContain('factum approvals');
    const jsonAfter = await runCli(['log', '--json', '--dir', dir.dataDir], { cwd: dir.workspace });
    expect(
      JSON.parse(jsonAfter.stdout).invocations.map((entry: { continuedBy: unknown }) => entry.continuedBy),
    ).toEqual([continuedId, null]);

    // A second decision is refused with its typed code, and nothing is written.
    const again = await runCli(['deny', operation!, '--no-continue', '--dir', dir.dataDir], {
      cwd: dir.workspace,
    });
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/error: .*(decided|already)/);
    expect(await factsIn(dir.dataDir)).toHaveLength(facts.length);
    const shown = await runCli(
      [
        'show',
        facts.find(({ fact }) => fact.kind === 'approval_requested')!.invocationId,
        '--dir',
        dir.dataDir,
      ],
      { cwd: dir.workspace },
    );
    expect(shown.stdout).toContain('needs approval');
    expect(shown.stdout).toContain(`✔ approved ${operation} · by ${userInfo().username}`);
    expect(shown.stdout).toContain('awaiting approval of 1 call');
  }, 120_000);

  it('deny tells the model why, and the call never runs', async () => {
    using dir = temporaryDirectory();
    await using provider = await startScriptedProvider();
    provider.script(
      { toolCalls: [{ id: 'call-w', name: 'write_file', arguments: { path: 'b.txt', content: 'no' } }] },
      { text: 'Understood, not writing.' },
    );
    const parked = await runCli(
      [
        'run',
        'write b.txt',
        '--require-approval',
        'write_file',
        ...providerArgs(provider.baseUrl, dir.dataDir),
      ],
      { cwd: dir.workspace },
    );
    expect(parked.code, parked.stderr).toBe(4);
    const operation = /factum deny (\S+)/.exec(parked.stdout)![1]!;
    const denied = await runCli(
      ['deny', operation, '--note', 'not in this repo', ...providerArgs(provider.baseUrl, dir.dataDir)],
      { cwd: dir.workspace },
    );
    expect(denied.code, denied.stderr).toBe(0);
    expect(denied.stdout).toContain('did not run: a person denied this call: not in this repo');
    expect(denied.stdout).toContain('Understood, not writing.');
    expect(existsSync(join(dir.workspace, 'b.txt'))).toBe(false);
    const facts = (await factsIn(dir.dataDir)).map(({ fact }) => fact);
    expect(facts.filter((fact) => fact.kind === 'tool_dispatched')).toHaveLength(0);
    expect(facts.find((fact) => fact.kind === 'tool_rejected')).toMatchObject({
      operationId: operation,
      reason: { kind: 'denied', note: 'not in this repo' },
    });
    expect(JSON.stringify(provider.requests.at(-1)), 'the model reads the denial').toContain(
      'a person denied this call: not in this repo',
    );
  }, 120_000);

  it('refuses bad decision and resolution flags before opening anything', async () => {
    using dir = temporaryDirectory();
    const both = await runCli(
      ['resolve', 'op-1', '--succeeded', '--failed', '--note', 'x', '--dir', dir.dataDir],
      {
        cwd: dir.workspace,
      },
    );
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('exactly one of --succeeded, --failed, --not-run');
    const noNote = await runCli(['resolve', 'op-1', '--not-run', '--dir', dir.dataDir], {
      cwd: dir.workspace,
    });
    expect(noNote.code).toBe(2);
    expect(noNote.stderr).toContain('--note <why> is required');
    const unknown = await runCli(['approve', 'no-such-op', '--no-continue', '--dir', dir.dataDir], {
      cwd: dir.workspace,
    });
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('factum approvals');
  }, 60_000);
});
