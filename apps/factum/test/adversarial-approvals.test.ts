import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { startScriptedProvider } from '@factum/model/testing';
import { describe, expect, it } from 'vitest';
import { factsIn, runCli, temporaryDirectory } from './cli-harness.ts';

describe('a model cannot approve its own calls', () => {
  it('the unsandboxed shell needs approval by default, the data directory is out of reach, and an injected escape is shown as text', async () => {
    using dir = temporaryDirectory();
    await using provider = await startScriptedProvider();
    const ws = dir.workspace;
    const dataDir = join(ws, '.factum');
    const injected = '\u001b]52;c;cGF5bG9hZA==\u0007\u001b[2K';
    provider.script(
      {
        toolCalls: [
          { id: 'w', name: 'write_file', arguments: { path: 'payload.sh', content: `rm -rf ~ ${injected}` } },
          // It guesses the command that decides, and runs it through the shell.
          { id: 'sh', name: 'shell', arguments: { command: 'factum approve --dir .factum "$(ls .factum)"' } },
          // Or writes the decision into the log itself.
          {
            id: 'forge',
            name: 'write_file',
            arguments: { path: '.factum/events.sqlite', content: 'approved' },
          },
          { id: 'peek', name: 'read_file', arguments: { path: '.factum/events.sqlite' } },
        ],
      },
      { text: 'done' },
    );
    const run = await runCli(
      [
        'run',
        'attack',
        '--require-approval',
        'write_file',
        '--unsandboxed-shell',
        '--base-url',
        provider.baseUrl,
        '--model',
        'test',
      ],
      { cwd: ws },
    );
    expect(run.code, run.stderr).toBe(4);
    expect(run.stdout, 'the input is printed as text, its escapes neutralised').not.toContain('\u001b]52');
    expect(run.stdout, 'shown as JSON text').toContain('\\u001b]52');

    const facts = (await factsIn(dataDir)).map(({ fact }) => fact);
    const requested = facts.flatMap((fact) => (fact.kind === 'approval_requested' ? [fact.call.name] : []));
    expect(requested.sort(), 'the shell waits for a person like every write').toEqual([
      'shell',
      'write_file',
      'write_file',
    ]);
    expect(
      facts.some((fact) => fact.kind === 'approval_decided'),
      'no decision was taken',
    ).toBe(false);
    const dispatched = facts.flatMap((fact) => (fact.kind === 'tool_dispatched' ? [fact.call.name] : []));
    expect(dispatched, 'only the read ran, and it was refused').toEqual(['read_file']);
    expect(
      facts.find((fact) => fact.kind === 'tool_settled' && fact.outcome.kind === 'failed'),
    ).toMatchObject({ outcome: { error: { message: expect.stringContaining("Factum's own state") } } });
    expect(existsSync(join(ws, 'payload.sh'))).toBe(false);

    // Denying the forgery and the shell, approving nothing: the log still holds no effect of theirs.
    const listed = JSON.parse(
      (await runCli(['approvals', '--json', '--dir', dataDir], { cwd: ws })).stdout,
    ) as { approvals: { operationId: string }[] };
    expect(listed.approvals).toHaveLength(3);
  }, 120_000);
});
