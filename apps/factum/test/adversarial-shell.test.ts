import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { startScriptedProvider } from '@factum/model/testing';
import { describe, expect, it } from 'vitest';
import { runCommand } from '../src/builtin-tools/shell-tool.ts';
import { EXIT_AWAITING_APPROVAL } from '../src/commands/live-run.ts';
import { eventually, factsIn, runCli, startCli, temporaryDirectory } from './cli-harness.ts';
import { MACHINE_SANDBOXES } from './sandboxes.ts';

// The model is an attacker: every shell command here is what a prompt injection would ask for.
const SENTINELS = {
  FACTUM_API_KEY: 'sk-sentinel-env-key-7f3a',
  DATABASE_URL: 'postgres://app:sentinel-db-password-91c2@db.internal/app',
  GITHUB_TOKEN: 'ghp_sentinelGithubToken5d8e',
  flag: 'sk-sentinel-flag-key-44b1',
};

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

// Once per sandbox this machine can make, each forced with FACTUM_SANDBOX.
for (const { backend, isolation } of MACHINE_SANDBOXES)
  describe(`the shell runs in the ${backend} sandbox`, () => {
    const forced = { FACTUM_SANDBOX: backend };

    it('cannot undo its sandbox: unmount what hides the data directory, remount the root writable, or do either from a namespace of its own', async () => {
      using dir = temporaryDirectory();
      const dataDir = join(dir.workspace, '.factum');
      mkdirSync(dataDir);
      writeFileSync(join(dataDir, 'events.sqlite'), 'sentinel-log-contents');
      const system = `/etc/factum-escape-${process.pid}-${Date.now()}`;
      const attacks = [
        'umount .factum',
        'umount -l .factum',
        'mount -o remount,rw /',
        `echo pwned > ${system}`,
        'mount -t tmpfs x /etc',
        'unshare -rm sh -c "umount -l \\"$PWD/.factum\\"; cat .factum/events.sqlite"',
        'cat .factum/events.sqlite',
        'cat "/proc/1/root$PWD/.factum/events.sqlite"',
        'ls -a .factum',
      ];
      try {
        const result = await runCommand(
          attacks
            .map((attack) => `${attack} 2>&1`)
            .join('; ')
            .concat('; echo done'),
          {
            cwd: dir.workspace,
            timeoutMs: 30_000,
            signal: new AbortController().signal,
            isolation,
            policy: { workspace: dir.workspace, hidden: [dataDir], allowNetwork: false },
            env: process.env,
          },
        );
        expect(result).toMatchObject({
          sandboxed: true,
          exitCode: 0,
          stdout: expect.stringContaining('done'),
        });
        expect(result.stdout).not.toContain('sentinel-log-contents');
        expect(result.stdout).not.toContain('events.sqlite\n');
        expect(existsSync(system)).toBe(false);
        expect(readFileSync(join(dataDir, 'events.sqlite'), 'utf8')).toBe('sentinel-log-contents');
      } finally {
        rmSync(system, { force: true });
      }
    }, 60_000);
    it('a timeout kills the whole sandbox, background children that ignore SIGTERM included, and says so', async () => {
      using dir = temporaryDirectory();
      // A background child that ignores SIGTERM (inherited from the shell) and beats until killed.
      const command = "trap '' TERM; (while :; do echo beat >> beat.txt; sleep 0.2; done) & sleep 30";
      const beats = join(dir.workspace, 'beat.txt');
      const result = await runCommand(command, {
        cwd: dir.workspace,
        // Long enough for the sandbox to be set up on a loaded machine, so the command runs.
        timeoutMs: 5_000,
        signal: new AbortController().signal,
        isolation,
        policy: { workspace: dir.workspace, hidden: [], allowNetwork: false },
        env: process.env,
      });
      expect(result).toMatchObject({ sandboxed: true, timedOut: true, killed: true });
      expect(existsSync(beats), 'the command ran').toBe(true);
      const after = readFileSync(beats, 'utf8');
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      expect(readFileSync(beats, 'utf8'), 'nothing of the command survives it').toBe(after);
    }, 60_000);

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
        {
          toolCalls: reads.map((command, i) => ({ id: `read-${i}`, name: 'shell', arguments: { command } })),
        },
        { text: 'done' },
      );
      const result = await runCli(
        [
          'run',
          'look around',
          '--allow-shell',
          '--api-key',
          SENTINELS.flag,
          ...providerArgs(provider.baseUrl),
        ],
        {
          cwd: dir.workspace,
          env: {
            ...forced,
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
      expect(results.get('read-2')!.stdout, 'no process of Factum is visible').not.toContain(
        '@factum/source',
      );
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
          { cwd: dir.workspace, env: forced },
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
          { cwd: dir.workspace, env: forced },
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

  const modes = [
    ...MACHINE_SANDBOXES.map(({ backend }) => ({ mode: '--allow-shell', backend })),
    { mode: '--unsandboxed-shell', backend: 'none' },
  ];
  for (const { mode, backend } of modes) {
    it(`the second Ctrl-C kills the whole process group and the log records it (${mode}, FACTUM_SANDBOX=${backend})`, async () => {
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
        { cwd: dir.workspace, env: { FACTUM_SANDBOX: backend } },
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

  it('is not offered where no sandbox can be made: --allow-shell stops before the run, --unsandboxed-shell asks first', async () => {
    using dir = temporaryDirectory();
    await using provider = await startScriptedProvider();
    provider.script(
      // The first run parks at its call, so the model's next reply is the second run's.
      { toolCalls: [{ id: 'c1', name: 'shell', arguments: { command: 'echo > ran.txt' } }] },
      { toolCalls: [{ id: 'c2', name: 'shell', arguments: { command: 'echo > ran.txt' } }] },
      { text: 'ok' },
    );
    // As on a machine with neither bubblewrap nor user namespaces.
    const env = { FACTUM_SANDBOX: 'none' };
    const refused = await runCli(
      ['run', 'go', '--allow-shell', '--dir', dir.dataDir, ...providerArgs(provider.baseUrl)],
      { cwd: dir.workspace, env },
    );
    expect(refused.code).toBe(2);
    expect(refused.stdout).toBe('');
    expect(refused.stderr.trim().split('\n')).toEqual([
      expect.stringMatching(
        /^error: --allow-shell: no sandbox can be made here \(FACTUM_SANDBOX=none .*\); install bubblewrap, or pass --unsandboxed-shell/,
      ),
    ]);
    expect(provider.requests, 'the model was never asked').toEqual([]);
    expect(existsSync(join(dir.dataDir, 'events.sqlite')), 'nothing is written to the log').toBe(false);

    // Unsandboxed, the shell can reach beyond the workspace: its call waits for a person.
    const asked = await runCli(
      ['run', 'go', '--unsandboxed-shell', '--dir', dir.dataDir, ...providerArgs(provider.baseUrl)],
      { cwd: dir.workspace, env },
    );
    expect(asked.code, asked.stderr).toBe(EXIT_AWAITING_APPROVAL);
    expect(existsSync(join(dir.workspace, 'ran.txt'))).toBe(false);
    const requested = (await factsIn(dir.dataDir)).find(
      ({ fact }) => fact.kind === 'approval_requested',
    )?.fact;
    expect(requested).toMatchObject({ call: { name: 'shell', input: { command: 'echo > ran.txt' } } });
    expect((await factsIn(dir.dataDir)).some(({ fact }) => fact.kind === 'tool_dispatched')).toBe(false);

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
    expect(explicit.code, explicit.stderr).toBe(0);
    expect(existsSync(join(dir.workspace, 'ran.txt'))).toBe(true);
  }, 120_000);

  if (MACHINE_SANDBOXES.length === 0) {
    // The path that remains on a machine that can make no sandbox at all.
    it('on this machine, which can make no sandbox, --allow-shell stops with exit 2 without FACTUM_SANDBOX', async () => {
      using dir = temporaryDirectory();
      const refused = await runCli(
        [
          'run',
          'go',
          '--allow-shell',
          '--dir',
          dir.dataDir,
          '--base-url',
          'http://127.0.0.1:9/v1',
          '--model',
          'm',
        ],
        { cwd: dir.workspace },
      );
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain('no sandbox can be made here');
      expect(existsSync(join(dir.dataDir, 'events.sqlite'))).toBe(false);
    }, 60_000);
  }
});
