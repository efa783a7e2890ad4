import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { startScriptedProvider } from '@factum/model/testing';
import { describe, expect, it } from 'vitest';
import { factsIn, scriptedFlags, startCli, temporaryDirectory } from './cli-harness.ts';

const require = createRequire(import.meta.url);
const everything = join(
  dirname(require.resolve('@modelcontextprotocol/server-everything/package.json')),
  'dist',
  'index.js',
);

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
});
