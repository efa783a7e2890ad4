import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { startScriptedProvider } from '@factum/model/testing';
import { describe, expect, it } from 'vitest';
import { findSandbox } from '../src/builtin-tools/shell-sandbox.ts';
import { eventually, factsIn, runCli, startCli, temporaryDirectory } from './cli-harness.ts';

// The model is an attacker: every shell command here is what a prompt injection would ask for.
const SENTINELS = {
  FACTUM_API_KEY: 'sk-sentinel-env-key-7f3a',
  DATABASE_URL: 'postgres://app:sentinel-db-password-91c2@db.internal/app',
  GITHUB_TOKEN: 'ghp_sentinelGithubToken5d8e',
  flag: 'sk-sentinel-flag-key-44b1',
};
const sandboxed = findSandbox() !== undefined;

function providerArgs(baseUrl: string): string[] {
  return ['--base-url', baseUrl, '--model', 'test'];
}

type ShellResult = { exitCode: number | null; stdout: string; stderr: string; killed?: boolean };

async function shellResults(dataDir: string): Promise<Map<string, ShellResult>> {
  const { EventLog } = await import('@factum/event-log');
  const log = await EventLog.open(join(dataDir, 'events.sqlite'));
  try {
    const results = new Map<string, ShellResult>();
    const { events } = await log.prefix({ maxEvents: 100_000, maxBytes: 64 << 20 });
    for (const { event } of events) {
      if (event.fact.kind !== 'tool_settled' || event.fact.outcome.kind !== 'succeeded') continue;
      const value = (await log.resolveToolResult(event.invocation.sessionId, event.id)).json() as ShellResult;
      results.set(event.fact.operationId.split(':').at(-1)!, value);
    }
    return results;
  } finally {
    await log.close();
  }
}

function listen(server: Server): Promise<number> {
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port)),
  );
}

describe.skipIf(!sandboxed)('the shell runs in a sandbox', () => {
  it('never shows a command the key, the flag, a database password or a token: not in its output, the log, the terminal or any request', async () => {
    using dir = temporaryDirectory();
    await using provider = await startScriptedProvider();
    const reads = [
      'cat /proc/$PPID/environ /proc/$PPID/cmdline; echo',
      'cat /proc/1/environ /proc/1/cmdline; echo',
      'for p in /proc/[0-9]*; do cat $p/environ $p/cmdline 2>/dev/null; echo; done',
      'env; echo "$FACTUM_API_KEY$DATABASE_URL$GITHUB_TOKEN"',
      `ls -la .factum; cat .factum/* 2>&1 | head -c 2000; cat ${join(dir.workspace, '.factum', 'events.sqlite')} | head -c 100`,
    ];
    provider.script(
      { toolCalls: reads.map((command, i) => ({ id: `read-${i}`, name: 'shell', arguments: { command } })) },
      { text: 'done' },
    );
    const result = await runCli(
      ['run', 'look around', '--allow-shell', '--api-key', SENTINELS.flag, ...providerArgs(provider.baseUrl)],
      {
        cwd: dir.workspace,
        env: {
          FACTUM_API_KEY: SENTINELS.FACTUM_API_KEY,
          DATABASE_URL: SENTINELS.DATABASE_URL,
          GITHUB_TOKEN: SENTINELS.GITHUB_TOKEN,
        },
      },
    );
    expect(result.code).toBe(0);
    const dataDir = join(dir.workspace, '.factum');
    const results = await shellResults(dataDir);
    expect(results.size, 'every command ran and settled').toBe(reads.length);
    // The sandbox's /proc holds its own processes only, and the data directory is an empty stand-in.
    expect(results.get('read-2')!.stdout, 'no process of Factum is visible').not.toContain('@factum/source');
    expect(results.get('read-4')!.stdout).not.toContain('events.sqlite');
    const places: [string, string][] = [
      ['stdout', result.stdout],
      ['stderr', result.stderr],
      ['requests', JSON.stringify(provider.requests)],
      ...readdirSync(dataDir).map((file): [string, string] => [
        file,
        readFileSync(join(dataDir, file)).toString('latin1'),
      ]),
    ];
    for (const [where, text] of places) {
      for (const [name, secret] of Object.entries(SENTINELS)) {
        const needle = name === 'DATABASE_URL' ? 'sentinel-db-password' : secret;
        expect(text.includes(needle), `${name} must not reach ${where}`).toBe(false);
      }
    }
    expect(provider.recorded[0]!.headers.authorization).toBe(`Bearer ${SENTINELS.flag}`);
  }, 120_000);

  it('cannot write outside the workspace, and cannot reach a loopback server outside the sandbox', async () => {
    using dir = temporaryDirectory();
    await using provider = await startScriptedProvider();
    const connections: string[] = [];
    const server = createServer((socket) => {
      connections.push('connected');
      socket.on('error', () => {});
      socket.end('hello');
    });
    const port = await listen(server);
    const probe = `node -e "require('net').connect(${port},'127.0.0.1').on('connect',()=>{console.log('CONNECTED');process.exit(0)}).on('error',(e)=>{console.log('REFUSED',e.code);process.exit(0)})"`;
    const outside = join(dir.path, 'outside.txt');
    // Unique, and removed afterwards: if the sandbox ever failed, the test must not leave files in /etc.
    const system = `/etc/factum-escape-${process.pid}-${Date.now()}`;
    provider.script(
      {
        toolCalls: [
          {
            id: 'write-out',
            name: 'shell',
            arguments: {
              command: `echo pwned > ${outside}; echo pwned > ${system}; echo inside > inside.txt`,
            },
          },
          { id: 'net', name: 'shell', arguments: { command: probe } },
        ],
      },
      { text: 'done' },
      { toolCalls: [{ id: 'net-allowed', name: 'shell', arguments: { command: probe } }] },
      { text: 'done' },
    );
    try {
      const denied = await runCli(
        ['run', 'escape', '--allow-shell', '--dir', dir.dataDir, ...providerArgs(provider.baseUrl)],
        { cwd: dir.workspace },
      );
      expect(denied.code).toBe(0);
      expect(existsSync(outside)).toBe(false);
      expect(existsSync(system)).toBe(false);
      expect(readFileSync(join(dir.workspace, 'inside.txt'), 'utf8')).toBe('inside\n');
      const results = await shellResults(dir.dataDir);
      expect(results.get('net')!.stdout).toContain('REFUSED');
      expect(connections).toEqual([]);

      // The same probe with --allow-network connects: the refusal above was the sandbox's doing.
      const allowed = await runCli(
        [
          'run',
          'network',
          '--allow-shell',
          '--allow-network',
          // This test is about the sandbox's network, not about approvals.
          '--no-shell-approval',
          '--dir',
          dir.dataDir,
          ...providerArgs(provider.baseUrl),
        ],
        { cwd: dir.workspace },
      );
      expect(allowed.code).toBe(0);
      expect((await shellResults(dir.dataDir)).get('net-allowed')!.stdout).toContain('CONNECTED');
      expect(connections).toEqual(['connected']);
    } finally {
      server.close();
      rmSync(system, { force: true });
    }
  }, 120_000);
});

describe('the shell’s processes end with the run', () => {
  // Ignores SIGTERM, then writes a file after Factum would have exited.
  const STUBBORN = "trap '' TERM; echo started > started.txt; sleep 3; echo late > late.txt";

  for (const mode of [...(sandboxed ? ['--allow-shell'] : []), '--unsandboxed-shell']) {
    it(`the second Ctrl-C kills the whole process group and the log records it (${mode})`, async () => {
      using dir = temporaryDirectory();
      await using provider = await startScriptedProvider();
      provider.script(
        { toolCalls: [{ id: 'stubborn', name: 'shell', arguments: { command: STUBBORN } }] },
        { text: 'never' },
      );
      // An unsandboxed shell needs approval by default; these tests are about process groups.
      const approval = mode === '--unsandboxed-shell' ? ['--no-shell-approval'] : [];
      const cli = startCli(
        ['run', 'go', mode, ...approval, '--dir', dir.dataDir, ...providerArgs(provider.baseUrl)],
        {
          cwd: dir.workspace,
        },
      );
      await eventually(() => existsSync(join(dir.workspace, 'started.txt')), 60_000);
      cli.child.kill('SIGINT');
      await eventually(() => cli.output.stdout.includes('cancelling'));
      cli.child.kill('SIGINT');
      const result = await cli.exited;
      expect(result.code).toBe(130);
      expect(result.stdout).toContain('second interrupt: commands killed');
      await new Promise((resolve) => setTimeout(resolve, 3_500));
      expect(existsSync(join(dir.workspace, 'late.txt')), 'nothing of the command survives Factum').toBe(
        false,
      );
      const settled = (await shellResults(dir.dataDir)).get('stubborn');
      expect(settled).toMatchObject({ killed: true });
      const facts = (await factsIn(dir.dataDir)).map(({ fact }) => fact);
      expect(facts.at(-1)).toMatchObject({ kind: 'invocation_ended', outcome: { kind: 'cancelled' } });
    }, 120_000);
  }

  it('a timeout kills the whole group, background children included, and says so', async () => {
    using dir = temporaryDirectory();
    await using provider = await startScriptedProvider();
    const command = "trap '' TERM; (trap '' TERM; sleep 3; echo late > late.txt) & sleep 20";
    provider.script(
      { toolCalls: [{ id: 'slow', name: 'shell', arguments: { command, timeoutMs: 300 } }] },
      { text: 'ok' },
    );
    const result = await runCli(
      [
        'run',
        'go',
        '--unsandboxed-shell',
        '--no-shell-approval',
        '--dir',
        dir.dataDir,
        ...providerArgs(provider.baseUrl),
      ],
      { cwd: dir.workspace },
    );
    expect(result.code).toBe(0);
    expect((await shellResults(dir.dataDir)).get('slow')).toMatchObject({ timedOut: true, killed: true });
    await new Promise((resolve) => setTimeout(resolve, 3_500));
    expect(existsSync(join(dir.workspace, 'late.txt'))).toBe(false);
  }, 120_000);

  it('is not offered where no sandbox can be made, unless --unsandboxed-shell says so', async () => {
    using dir = temporaryDirectory();
    await using provider = await startScriptedProvider();
    const empty = join(dir.path, 'empty-path');
    mkdirSync(empty);
    writeFileSync(join(empty, 'README'), 'no bubblewrap here');
    provider.script(
      { toolCalls: [{ id: 'c1', name: 'shell', arguments: { command: 'echo > ran.txt' } }] },
      { text: 'ok' },
      { toolCalls: [{ id: 'c2', name: 'shell', arguments: { command: 'echo > ran.txt' } }] },
      { text: 'ok' },
    );
    const env = { PATH: empty };
    const refused = await runCli(
      ['run', 'go', '--allow-shell', '--dir', dir.dataDir, ...providerArgs(provider.baseUrl)],
      { cwd: dir.workspace, env },
    );
    expect(refused.code).toBe(0);
    expect(refused.stderr).toContain('the shell is not offered: no sandbox can be made here');
    expect(
      (provider.requests[0]!.tools as { function: { name: string } }[]).map((t) => t.function.name),
    ).not.toContain('shell');
    expect(existsSync(join(dir.workspace, 'ran.txt'))).toBe(false);
    const rejected = (await factsIn(dir.dataDir)).find(({ fact }) => fact.kind === 'tool_rejected')?.fact;
    expect(rejected).toMatchObject({ name: 'shell', reason: { kind: 'unavailable' } });

    const explicit = await runCli(
      [
        'run',
        'go',
        '--unsandboxed-shell',
        '--no-shell-approval',
        '--dir',
        dir.dataDir,
        ...providerArgs(provider.baseUrl),
      ],
      { cwd: dir.workspace, env },
    );
    expect(explicit.code).toBe(0);
    expect(existsSync(join(dir.workspace, 'ran.txt'))).toBe(true);
  }, 120_000);
});
