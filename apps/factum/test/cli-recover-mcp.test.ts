import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { startScriptedProvider } from '@factum/model/testing';
import { describe, expect, it } from 'vitest';
import {
  eventually,
  factsIn,
  keyedMcpServer,
  ledgerLines,
  runCli,
  scriptedFlags,
  startCli,
  temporaryDirectory,
  untilLeaseExpired,
} from './cli-harness.ts';

describe('factum recover with MCP servers', () => {
  it('an idempotent MCP call a SIGKILL left uncertain stays open without its server, and --apply with it runs it again under the same key: one effect', async () => {
    using dir = temporaryDirectory();
    const { mcp, ledger } = keyedMcpServer(dir.path);
    await using provider = await startScriptedProvider();
    provider.script(
      { toolCalls: [{ id: 'call-1', name: 'slow-charge', arguments: { amount: 7 } }] },
      { text: 'never asked' },
    );
    const run = startCli(['run', 'charge 7', '--mcp', mcp, ...scriptedFlags(provider, dir.dataDir)], {
      cwd: dir.workspace,
    });
    // The server has the request (T1 is durable before it is sent): kill the CLI mid-call.
    await eventually(() => ledgerLines(join(ledger, 'requests')).length > 0, 60_000);
    run.child.kill('SIGKILL');
    expect((await run.exited).signal).toBe('SIGKILL');
    await untilLeaseExpired(dir.dataDir, dir.workspace);

    // Without the server, nothing can say whether re-running is safe: nothing is re-run.
    const blind = await runCli(['recover', '--apply', '--dir', dir.dataDir], { cwd: dir.workspace });
    expect(blind.code, 'the MCP call is still open').toBe(3);
    expect(blind.stdout).toMatch(/⚠ slow-charge .*: left_uncertain/);
    expect(blind.stdout).toContain('nor one of a configured MCP server');
    expect(ledgerLines(join(ledger, 'requests'))).toHaveLength(1);

    const listed = await runCli(['recover', '--mcp', mcp, '--dir', dir.dataDir], { cwd: dir.workspace });
    expect(listed.code).toBe(3);
    expect(listed.stdout).toMatch(
      /--apply runs it again \(MCP server [^)]+\), which its server says is safe/,
    );
    expect(ledgerLines(join(ledger, 'requests')), 'listing sends nothing').toHaveLength(1);

    const applied = await runCli(['recover', '--apply', '--mcp', mcp, '--dir', dir.dataDir], {
      cwd: dir.workspace,
    });
    expect(applied.stderr).toBe('');
    expect(applied.code).toBe(0);
    expect(applied.stdout).toMatch(/✔ slow-charge .*: succeeded .*attempt 2/);
    expect(applied.stdout).toContain('nothing is left open');
    const requests = ledgerLines(join(ledger, 'requests')).map((line) => JSON.parse(line));
    expect(requests.map((request) => request.attempt)).toEqual([1, 2]);
    expect(new Set(requests.map((request) => request.key)).size, 'one idempotency key').toBe(1);
    expect(ledgerLines(join(ledger, 'effects')), 'the effect happened once').toHaveLength(1);
    // The blind attempt recorded nothing; the re-run is recorded before it is sent.
    const kinds = (await factsIn(dir.dataDir)).map(({ fact }) => fact.kind);
    expect(kinds.filter((kind) => kind.startsWith('tool_'))).toEqual([
      'tool_dispatched',
      'tool_redispatched',
      'tool_reconciled',
    ]);
  }, 120_000);

  it('a configured server that does not start is said on stderr, and the built-in tools are still recovered', async () => {
    using dir = temporaryDirectory();
    const session = 'session-crashed';
    // The demo's crash child: SIGKILLed between T1 and T2 of write_file.
    mkdirSync(join(dir.dataDir, 'demo', session), { recursive: true });
    const crash = await runCli(['demo', '--crash-child', session, '--dir', dir.dataDir], { cwd: dir.path });
    expect(crash.signal).toBe('SIGKILL');
    await untilLeaseExpired(dir.dataDir, dir.path);
    const applied = await runCli(
      ['recover', '--apply', '--mcp', 'no-such-mcp-server --flag', '--dir', dir.dataDir],
      { cwd: dir.path },
    );
    expect(applied.stderr).toMatch(
      /the MCP servers' tools were left out: .*no-such-mcp-server did not start/,
    );
    expect(applied.code).toBe(0);
    expect(applied.stdout).toMatch(/✔ write_file .*: succeeded \(reconcile\)/);
    expect(applied.stdout).toContain('nothing is left open');
  }, 60_000);
});
