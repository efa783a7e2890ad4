import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { startScriptedProvider } from '@factum/model/testing';
import { describe, expect, it } from 'vitest';
import {
  type CliProcess,
  factsIn,
  runCli,
  scriptedFlags,
  startCli,
  temporaryDirectory,
} from './cli-harness.ts';

const require = createRequire(import.meta.url);
const everything = join(
  dirname(require.resolve('@modelcontextprotocol/server-everything/package.json')),
  'dist',
  'index.js',
);

const LONG = 'trigger-long-running-operation';

/** Waits until the run has recorded the first progress note of a call, polling the log. */
async function firstProgress(cli: CliProcess, dataDir: string): Promise<void> {
  for (let tries = 0; tries < 300; tries += 1) {
    if (cli.child.exitCode !== null) throw new Error(`the run ended first: ${cli.output.stdout}`);
    if (existsSync(join(dataDir, 'events.sqlite'))) {
      const facts = await factsIn(dataDir);
      if (facts.some(({ fact }) => fact.kind === 'tool_notified')) return;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('no progress was recorded');
}

/** server-everything as a Streamable HTTP server on a free loopback port. */
async function startHttpEverything(): Promise<{ server: ChildProcess; url: string }> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  const server = spawn(process.execPath, [everything, 'streamableHttp'], {
    env: { PATH: process.env.PATH ?? '', PORT: String(port) },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  await new Promise<void>((resolve, reject) => {
    server.stderr!.on('data', (chunk: Buffer) => chunk.toString().includes('listening') && resolve());
    server.on('exit', () => reject(new Error('the HTTP server exited')));
  });
  return { server, url: `http://127.0.0.1:${port}/mcp` };
}

describe('factum run with MCP servers', () => {
  it('--mcp and mcpServers in the user config offer the servers’ tools; each tool line names its server', async () => {
    using dir = temporaryDirectory();
    const configHome = join(dir.path, 'config-home');
    mkdirSync(join(configHome, 'factum'), { recursive: true });
    writeFileSync(
      join(configHome, 'factum', 'config.json'),
      JSON.stringify({
        mcpServers: [
          { kind: 'stdio', command: process.execPath, args: [everything], name: 'configured', prefix: 'c_' },
        ],
      }),
    );
    await using provider = await startScriptedProvider();
    provider.script(
      {
        toolCalls: [
          { id: 'call-1', name: 'echo', arguments: { message: 'from the flag' } },
          { id: 'call-2', name: 'c_echo', arguments: { message: 'from the config' } },
          { id: 'call-3', name: 'read_file', arguments: { path: 'missing.txt' } },
        ],
      },
      { text: 'done' },
    );
    const cli = startCli(
      [
        'run',
        'echo twice',
        '--mcp',
        `'${process.execPath}' '${everything}' stdio`,
        ...scriptedFlags(provider, dir.dataDir),
      ],
      { cwd: dir.workspace, env: { XDG_CONFIG_HOME: configHome } },
    );
    const result = await cli.exited;
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/✔ echo .*from the flag.*\[everything\]/);
    expect(result.stdout).toMatch(/✔ c_echo .*from the config.*\[configured\]/);
    const settled = (await factsIn(dir.dataDir))
      .map(({ fact }) => fact)
      .filter((fact) => fact.kind === 'tool_settled');
    expect(settled.map((fact) => fact.kind === 'tool_settled' && fact.outcome.kind)).toEqual([
      'succeeded',
      'succeeded',
      'failed',
    ]);
    // The log records which server each tool came from, so `show` says it too.
    const facts = await factsIn(dir.dataDir);
    const shown = await runCli(['show', facts[0]!.invocationId, '--dir', dir.dataDir], {
      cwd: dir.workspace,
    });
    expect(shown.stdout).toMatch(/T1 echo .*from the flag.*\[everything\]/);
    expect(shown.stdout).toMatch(/T1 c_echo .*from the config.*\[configured\]/);
    expect(shown.stdout).not.toMatch(/T1 read_file.*\[/);
  }, 60_000);

  it('a server that does not start is a clear error, and nothing runs', async () => {
    using dir = temporaryDirectory();
    await using provider = await startScriptedProvider();
    provider.script({ text: 'never asked' });
    const cli = startCli(
      ['run', 'hi', '--mcp', 'no-such-mcp-server --flag', ...scriptedFlags(provider, dir.dataDir)],
      { cwd: dir.workspace },
    );
    const result = await cli.exited;
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(/MCP server no-such-mcp-server did not start/);
    expect(provider.requests).toHaveLength(0);
  }, 60_000);

  it('a workspace config that names an MCP server is refused: no workspace chooses what Factum starts', async () => {
    using dir = temporaryDirectory();
    const marker = join(dir.path, 'started');
    mkdirSync(dir.dataDir, { recursive: true });
    writeFileSync(
      join(dir.dataDir, 'config.json'),
      JSON.stringify({
        mcpServers: [
          {
            kind: 'stdio',
            command: process.execPath,
            args: ['-e', `require('node:fs').writeFileSync(${JSON.stringify(marker)}, 'ran')`],
          },
        ],
      }),
    );
    await using provider = await startScriptedProvider();
    provider.script({ text: 'never asked' });
    const result = await startCli(
      ['run', 'hi', '--base-url', provider.baseUrl, '--model', 'test', '--dir', dir.dataDir],
      { cwd: dir.workspace, env: { XDG_CONFIG_HOME: join(dir.path, 'config-home') } },
    ).exited;
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(/config\.json sets mcpServers/);
    expect(existsSync(marker)).toBe(false);
    expect(provider.requests).toHaveLength(0);
  }, 60_000);

  it('an HTTP server that dies mid-call ends the run at once, the call left uncertain (not a 10-minute hang)', async () => {
    using dir = temporaryDirectory();
    const { server, url } = await startHttpEverything();
    try {
      await using provider = await startScriptedProvider();
      provider.script(
        { toolCalls: [{ id: 'call-1', name: LONG, arguments: { duration: 30, steps: 30 } }] },
        { text: 'never asked' },
      );
      const cli = startCli(['run', 'take long', '--mcp-url', url, ...scriptedFlags(provider, dir.dataDir)], {
        cwd: dir.workspace,
      });
      await firstProgress(cli, dir.dataDir);
      server.kill('SIGKILL');
      const result = await cli.exited;
      expect(result.code).toBe(1);
      expect(result.stdout).toMatch(/failed \{outcome_unknown\}/);
      expect(result.stdout).toMatch(/connection to the server broke mid-call/);
      const facts = (await factsIn(dir.dataDir)).map(({ fact }) => fact.kind);
      expect(facts).toContain('tool_dispatched');
      expect(facts).not.toContain('tool_settled');
    } finally {
      server.kill('SIGKILL');
    }
  }, 60_000);

  it('Ctrl-C during an MCP call that may change the world exits 130; the call is left uncertain', async () => {
    using dir = temporaryDirectory();
    const configHome = join(dir.path, 'config-home');
    mkdirSync(join(configHome, 'factum'), { recursive: true });
    writeFileSync(
      join(configHome, 'factum', 'config.json'),
      JSON.stringify({
        mcpServers: [
          {
            kind: 'stdio',
            command: process.execPath,
            args: [everything],
            name: 'everything',
            recovery: { [LONG]: 'never_auto_retry' },
          },
        ],
      }),
    );
    await using provider = await startScriptedProvider();
    provider.script(
      { toolCalls: [{ id: 'call-1', name: LONG, arguments: { duration: 30, steps: 30 } }] },
      { text: 'never asked' },
    );
    const cli = startCli(['run', 'take long', ...scriptedFlags(provider, dir.dataDir)], {
      cwd: dir.workspace,
      env: { XDG_CONFIG_HOME: configHome },
    });
    await firstProgress(cli, dir.dataDir);
    cli.child.kill('SIGINT');
    const result = await cli.exited;
    expect(result.stdout).toMatch(/failed \{outcome_unknown\}/);
    expect(result.code).toBe(130);
    const facts = (await factsIn(dir.dataDir)).map(({ fact }) => fact.kind);
    expect(facts).not.toContain('tool_settled');
  }, 60_000);
});
