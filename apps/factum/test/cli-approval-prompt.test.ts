import { EventEmitter } from 'node:events';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough, Writable } from 'node:stream';
import { startScriptedProvider } from '@factum/model/testing';
import { describe, expect, it } from 'vitest';
import type { CliContext } from '../src/commands/cli-context.ts';
import { main } from '../src/commands/create-cli.ts';
import { Terminal } from '../src/terminal/terminal.ts';
import { eventually, factsIn, scriptedFlags, temporaryDirectory } from './cli-harness.ts';

/**
 * `factum run` in this process with a terminal-like stdin: a stream marked as a TTY, read
 * by the real readline of the prompt. (No pseudo-terminal library is available here, so
 * the seam is the stream the CLI reads its answers from — `process.stdin` in `cli.ts`.)
 */
function cliWithTty(cwd: string) {
  let out = '';
  const stdout = new Writable({
    write(chunk, _encoding, done) {
      out += String(chunk);
      done();
    },
  });
  const stdin = Object.assign(new PassThrough(), { isTTY: true });
  const context: CliContext = {
    cwd,
    env: { ...process.env, NO_COLOR: '1' },
    terminal: new Terminal({ stdout, stderr: stdout, env: { NO_COLOR: '1' } }),
    self: { execPath: process.execPath, args: [] },
    version: '0.0.0-test',
    signals: new EventEmitter() as unknown as CliContext['signals'],
    stdin,
  };
  return { context, stdin, output: () => out };
}

describe('factum run on a TTY', () => {
  it('asks approve? [y/N] for each pending call; y runs it and the turn goes on in the same command', async () => {
    using dir = temporaryDirectory();
    await using provider = await startScriptedProvider();
    provider.script(
      {
        toolCalls: [
          { id: 'call-1', name: 'write_file', arguments: { path: 'yes.txt', content: 'y' } },
          { id: 'call-2', name: 'write_file', arguments: { path: 'no.txt', content: 'n' } },
        ],
      },
      { text: 'One written, one refused.' },
    );
    const cli = cliWithTty(dir.workspace);
    const exit = main(
      [
        'node',
        'factum',
        'run',
        'write two files',
        '--require-approval',
        'write_file',
        ...scriptedFlags(provider, dir.dataDir),
      ],
      cli.context,
    );
    await eventually(() => cli.output().includes('approve? [y/N]'), 60_000);
    expect(cli.output()).toContain('write_file yes.txt');
    cli.stdin.write('y\n');
    await eventually(() => cli.output().split('approve? [y/N]').length === 3, 60_000);
    cli.stdin.write('\n');
    expect(await exit, cli.output()).toBe(0);
    const output = cli.output();
    expect(output).toContain('approved');
    expect(output).toContain('denied');
    expect(output).toContain('One written, one refused.');
    expect(readFileSync(join(dir.workspace, 'yes.txt'), 'utf8')).toBe('y');
    const facts = (await factsIn(dir.dataDir)).map(({ fact }) => fact);
    expect(facts.filter((fact) => fact.kind === 'approval_decided').map((fact) => fact.decision)).toEqual([
      'approved',
      'denied',
    ]);
    expect(facts.filter((fact) => fact.kind === 'tool_dispatched')).toHaveLength(1);
    expect(facts.find((fact) => fact.kind === 'tool_rejected')).toMatchObject({ reason: { kind: 'denied' } });
    expect(facts.at(-1)).toMatchObject({ kind: 'invocation_ended', outcome: { kind: 'completed' } });
  }, 120_000);
});
