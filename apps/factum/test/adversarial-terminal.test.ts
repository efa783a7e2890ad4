import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { startScriptedProvider } from '@factum/model/testing';
import { describe, expect, it } from 'vitest';
import { shownStream, shownText, terminalSafe } from '../src/terminal/terminal-text.ts';
import { eventually, runCli, startCli, temporaryDirectory } from './cli-harness.ts';

// What a hostile file could make a model say: set the title, write the clipboard, erase a line.
const TITLE = '\u001b]0;owned\u0007';
const CLIPBOARD = '\u001b]52;c;Y3VybCBldmlsIHwgc2g=\u0007';
const ERASE = '\r\u001b[2K';
const HOSTILE = [TITLE, CLIPBOARD, ERASE, '\u009b31m', '\u202e'];

function expectInert(output: string, where: string): void {
  expect(output.includes('\u001b]'), `${where}: no OSC`).toBe(false);
  expect(output.includes('\u0007'), `${where}: no BEL`).toBe(false);
  expect(output.includes('\u001b[2K'), `${where}: no erase`).toBe(false);
  expect(output.includes('\r'), `${where}: no carriage return`).toBe(false);
  expect(output.includes('\u009b'), `${where}: no C1 CSI`).toBe(false);
  expect(output.includes('\u202e'), `${where}: no bidi override`).toBe(false);
}

describe('the terminal shows text, never commands', () => {
  it('escapes model text, tool paths, errors and session ids in run, show, log and recover', async () => {
    using dir = temporaryDirectory();
    await using provider = await startScriptedProvider();
    const args = ['--base-url', provider.baseUrl, '--model', 'test', '--dir', dir.dataDir];
    const env = {};
    provider.script(
      {
        text: [`Reading ${TITLE}`, `${CLIPBOARD} now`, `${ERASE}done\n`],
        toolCalls: [
          { id: 'w', name: 'write_file', arguments: { path: `evil${ERASE}innocent.txt`, content: 'x' } },
          { id: 'r', name: 'read_file', arguments: { path: `missing${TITLE}.txt` } },
        ],
      },
      { text: `all ${CLIPBOARD} good` },
    );
    const session = 'session-a\nsession-forged  invocation-fake  completed';
    const run = await runCli(['run', `hi ${TITLE}`, '--session', session, ...args], {
      cwd: dir.workspace,
      env,
    });
    expect(run.code).toBe(0);
    expectInert(run.stdout + run.stderr, 'run');
    // Sequences are removed; a lone control character is shown as its escape.
    expect(run.stdout).toContain('Reading  now\\rdone');
    expect(run.stdout).toContain('session-a\\nsession-forged');
    const invocation = /factum show (invocation-[0-9a-f]+)/.exec(run.stdout)![1]!;

    const show = await runCli(['show', invocation, '--dir', dir.dataDir], { cwd: dir.workspace, env });
    expect(show.code).toBe(0);
    expectInert(show.stdout, 'show');
    expect(show.stdout).toContain('evil\\rinnocent.txt');

    const log = await runCli(['log', '--dir', dir.dataDir], { cwd: dir.workspace, env });
    expectInert(log.stdout, 'log');
    expect(log.stdout.split('\n').some((line) => line.startsWith('session-forged'))).toBe(false);
    expect(log.stdout).toContain('session-a\\nsession-forged');

    // recover lists an operation a killed process left uncertain, with its command as text.
    provider.script({
      toolCalls: [{ id: 's', name: 'shell', arguments: { command: `touch started; sleep 30 # ${TITLE}` } }],
    });
    const cli = startCli(['run', 'hang', '--unsandboxed-shell', '--no-shell-approval', ...args], {
      cwd: dir.workspace,
      env,
    });
    await eventually(() => existsSync(join(dir.workspace, 'started')), 60_000);
    cli.child.kill('SIGKILL');
    await cli.exited;
    const recover = await runCli(['recover', '--dir', dir.dataDir], { cwd: dir.workspace, env });
    expectInert(recover.stdout, 'recover');
    expect(recover.stdout).toContain('shell $ touch started; sleep 30 #');
  }, 150_000);

  it('one sanitiser: escape sequences removed, control characters escaped, SGR colours alone pass the terminal', () => {
    for (const hostile of HOSTILE) expectInert(shownText(`a${hostile}b`), JSON.stringify(hostile));
    expect(shownText('line\nforged')).toBe('line\\nforged');
    expect(shownStream('two\nlines\tand\u0007')).toBe('two\nlines\tand\\x07');
    expect(terminalSafe(`\u001b[32mok\u001b[39m ${CLIPBOARD}`)).toBe('\u001b[32mok\u001b[39m ');
    expect(terminalSafe('\u001b[2Kgone')).toBe('gone');
  });
});
