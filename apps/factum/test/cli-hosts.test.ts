import { startScriptedProvider } from '@factum/model/testing';
import { describe, expect, it } from 'vitest';
import { eventually, factsIn, runCli, startCli, temporaryDirectory } from './cli-harness.ts';

const providerArgs = (baseUrl: string, dataDir: string) => [
  '--base-url',
  baseUrl,
  '--model',
  'test',
  '--dir',
  dataDir,
];

const ends = (facts: Awaited<ReturnType<typeof factsIn>>) =>
  facts.flatMap(({ fact }) => (fact.kind === 'invocation_ended' ? [fact.outcome] : []));

describe('several live processes on one data directory', () => {
  it('two factum run in one directory both complete: the second never ends the first live run', async () => {
    using dir = temporaryDirectory();
    await using slow = await startScriptedProvider();
    await using fast = await startScriptedProvider();
    const [held] = slow.script({ text: 'first, after a while', hold: true });
    fast.script({ text: 'second' });
    const first = startCli(['run', 'take your time', ...providerArgs(slow.baseUrl, dir.dataDir)], {
      cwd: dir.workspace,
    });
    // The first run is live: its invocation is open and its model request is in flight.
    await held!.arrived();
    const second = await runCli(['run', 'be quick', ...providerArgs(fast.baseUrl, dir.dataDir)], {
      cwd: dir.workspace,
    });
    expect(second.code, second.stderr).toBe(0);
    held!.release();
    const result = await first.exited;
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('first, after a while');
    expect(ends(await factsIn(dir.dataDir)).map((outcome) => outcome.kind)).toEqual([
      'completed',
      'completed',
    ]);
  }, 90_000);

  it('recover --apply leaves a live serve run alone, says whose it is, and the run completes', async () => {
    using dir = temporaryDirectory();
    await using provider = await startScriptedProvider();
    const [held] = provider.script({ text: 'served at last', hold: true });
    const server = startCli(['serve', '--port', '0', ...providerArgs(provider.baseUrl, dir.dataDir)], {
      cwd: dir.workspace,
    });
    await eventually(
      () => /token\s+\S+/.test(server.output.stdout) && /timeline\s+http/.test(server.output.stdout),
      60_000,
    );
    const url = /timeline\s+(http:\S+)\//.exec(server.output.stdout)![1]!;
    const token = /token\s+(\S+)/.exec(server.output.stdout)![1]!;
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const turn = await fetch(`${url}/api/sessions/s-live/turns`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ message: 'hold on' }),
    });
    expect(turn.status).toBe(202);
    await held!.arrived();

    const recovered = await runCli(['recover', '--apply', '--dir', dir.dataDir], { cwd: dir.workspace });
    expect(recovered.stdout).toContain('ended 0 unfinished invocations');
    expect(recovered.stdout).toMatch(
      /running on host \S+ \(pid \d+ on .+\), lease live until .+: left alone/,
    );
    const listed = await runCli(['log', '--dir', dir.dataDir], { cwd: dir.workspace });
    expect(listed.stdout, 'factum log shows the live owner').toMatch(/unfinished[\s\S]*running on host/);

    held!.release();
    let outcomes: string[] = [];
    for (let tries = 0; tries < 200 && outcomes.length === 0; tries += 1) {
      outcomes = ends(await factsIn(dir.dataDir)).map((outcome) => outcome.kind);
      if (outcomes.length === 0) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(outcomes).toEqual(['completed']);
    server.child.kill('SIGINT');
    expect((await server.exited).code).toBe(0);
  }, 90_000);
});
