import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CodeExecutor } from '@factum/code-runtime';
import { EventLog } from '@factum/event-log';
import { ModelExecutor } from '@factum/model';
import { startScriptedProvider } from '@factum/model/testing';
import { ToolCatalog } from '@factum/tools';
import { describe, expect, it } from 'vitest';
import { Engine, type ReplayAgent, type ReplayReport } from '../src/index.ts';
import { temporaryDirectory } from './support/agent-loop.ts';
import { agentOf, Ledger, recordRuns } from './support/replay-log.ts';

async function replay(
  file: string,
  agent: ReplayAgent,
  options: { target?: 'all' | string; scratchFile?: string } = {},
): Promise<ReplayReport> {
  await using log = await EventLog.open(file);
  const engine = new Engine({
    log,
    models: new ModelExecutor({ timeoutMs: 5_000 }),
    code: new CodeExecutor(),
  });
  const target =
    options.target === undefined || options.target === 'all'
      ? { kind: 'all' as const }
      : { kind: 'session' as const, sessionId: options.target };
  const scratch = options.scratchFile === undefined ? {} : { scratchFile: options.scratchFile };
  const report = await engine.replay(log, { target, mode: 'verify', agent, ...scratch });
  await engine.close();
  return report;
}

describe('replay in verify mode', () => {
  it('replays every recorded run of the log as recorded: no divergence, no effect, nothing written, the same report twice', async () => {
    using dir = temporaryDirectory();
    await using provider = await startScriptedProvider();
    const ledger = new Ledger();
    const catalog = await recordRuns(dir.file, provider, ledger);
    const ran = ledger.ran.length;
    const before = await factsOf(dir.file);
    const requests = provider.requests.length;

    const report = await replay(dir.file, agentOf(provider, catalog));
    // Log order per session (the session, then the Code mode one, then the handoff's); each
    // compared up to its end: parallel calls, a repeated id and a rejection, a park, its
    // continuation, a cell and its child call, a handoff's pause taken as recorded.
    expect(report.invocations.map((entry) => [entry.invocationId, entry.status, entry.compared])).toEqual([
      ['invocation-parallel', 'same', 9],
      ['invocation-repeated', 'same', 13],
      ['invocation-parked', 'same', 4],
      ['invocation-continued', 'same', 5],
      ['invocation-code', 'same', 11],
      ['invocation-handoff', 'same', 5],
    ]);
    expect(report.summary).toEqual({ invocations: 6, same: 6, diverged: 0 });
    expect(report.invocations.every((entry) => entry.compared > 1)).toBe(true);
    expect(ledger.ran, 'no effect ran again').toHaveLength(ran);
    expect(provider.requests, 'no model was asked').toHaveLength(requests);
    expect(await factsOf(dir.file), 'nothing was written to the source log').toEqual(before);
    const scratchFile = join(dir.path, 'scratch.jsonl');
    const again = await replay(dir.file, agentOf(provider, catalog), { scratchFile });
    expect(JSON.stringify(again)).toBe(JSON.stringify(report));
    // The scratch facts, written where asked: each invocation's opening, then what it produced.
    const scratch = readFileSync(scratchFile, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    const ends = scratch.filter((stored) => stored.event.fact.kind === 'invocation_ended');
    expect(ends.map((stored) => stored.event.invocation.invocationId)).toEqual(
      report.invocations.map((entry) => entry.invocationId),
    );
    expect(scratch.filter((stored) => stored.event.fact.kind === 'tool_settled')).toHaveLength(9);
    await replay(dir.file, agentOf(provider, catalog), { scratchFile });
    expect(readFileSync(scratchFile, 'utf8'), 'replaced, and the same bytes again').toBe(
      scratch.map((line) => `${JSON.stringify(line)}\n`).join(''),
    );
  });

  it('reports a different prompt projection at the first request, with both digests', async () => {
    using dir = temporaryDirectory();
    await using provider = await startScriptedProvider();
    const catalog = await recordRuns(dir.file, provider, new Ledger());
    const report = await replay(dir.file, agentOf(provider, catalog, 'A new system prompt.'), {
      target: 'session',
    });
    expect(report.summary).toEqual({ invocations: 4, same: 0, diverged: 4 });
    const [first] = report.invocations;
    expect(first!.invocationId).toBe('invocation-parallel');
    expect(first!.divergences).toHaveLength(1);
    const divergence = first!.divergences[0]!;
    expect(divergence.kind).toBe('request');
    expect(divergence.index).toBe(0);
    expect(divergence.recorded?.kind).toBe('model_requested');
    expect(divergence.replayed?.kind).toBe('model_requested');
    const digest = (fact: typeof divergence.recorded) =>
      fact?.kind === 'model_requested' ? fact.inputDigest : '';
    expect(digest(divergence.recorded)).not.toBe(digest(divergence.replayed));
  });

  it('reports a tool schema change at the first request that tells the model about it', async () => {
    using dir = temporaryDirectory();
    await using provider = await startScriptedProvider();
    const ledger = new Ledger();
    const catalog = await recordRuns(dir.file, provider, ledger);
    const changed = new ToolCatalog(
      catalog.names().map((name) => {
        const registration = catalog.get(name)!.registration;
        if (name !== 'echo') return registration;
        const inputSchema = {
          type: 'object',
          properties: { value: { type: 'number' } },
          required: ['value'],
        };
        return { ...registration, definition: { ...registration.definition, inputSchema } };
      }),
    );
    const report = await replay(dir.file, agentOf(provider, changed), { target: 'session' });
    const first = report.invocations[0]!;
    expect(first.divergences.map((entry) => [entry.kind, entry.index, entry.recordedSequence])).toEqual([
      ['request', 0, first.divergences[0]!.recordedSequence],
    ]);
    expect(first.divergences[0]!.recordedSequence).toBeGreaterThan(1);
  });

  it('reports a tool that now asks for approval at its call: approval_requested where the recording dispatched', async () => {
    using dir = temporaryDirectory();
    await using provider = await startScriptedProvider();
    const catalog = await recordRuns(dir.file, provider, new Ledger());
    const agent = { ...agentOf(provider, catalog), approvals: { requireApproval: ['echo'] } };
    const report = await replay(dir.file, agent, { target: 'session' });
    const first = report.invocations[0]!;
    expect(first.status).toBe('diverged');
    const [divergence] = first.divergences;
    expect(divergence!.kind).toBe('call');
    expect(divergence!.index).toBe(2);
    expect(divergence!.recorded).toMatchObject({
      kind: 'tool_dispatched',
      operationId: 'invocation-parallel/1:call-1',
    });
    expect(divergence!.replayed).toMatchObject({
      kind: 'approval_requested',
      operationId: 'invocation-parallel/1:call-1',
    });
  });

  it('refuses a target the log does not hold and an aborted replay with typed errors', async () => {
    using dir = temporaryDirectory();
    await using provider = await startScriptedProvider();
    const catalog = await recordRuns(dir.file, provider, new Ledger());
    await using log = await EventLog.open(dir.file);
    const engine = new Engine({
      log,
      models: new ModelExecutor({ timeoutMs: 5_000 }),
      code: new CodeExecutor(),
    });
    const agent = agentOf(provider, catalog);
    await expect(
      engine.replay(log, { target: { kind: 'session', sessionId: 'nope' }, mode: 'verify', agent }),
    ).rejects.toMatchObject({ code: 'invalid_input', message: 'session nope has no facts in this log' });
    await expect(
      engine.replay(log, {
        target: { kind: 'invocation', sessionId: 'session', invocationId: 'invocation-nope' },
        mode: 'verify',
        agent,
      }),
    ).rejects.toMatchObject({ code: 'invalid_input' });
    await expect(
      engine.replay(log, { target: { kind: 'all' }, mode: 'verify', agent, signal: AbortSignal.abort() }),
    ).rejects.toMatchObject({ code: 'cancelled' });
    await engine.close();
  });
});

async function factsOf(file: string) {
  await using log = await EventLog.open(file);
  const prefix = await log.prefix({ maxEvents: 10_000, maxBytes: 64 * 1024 * 1024 });
  return { highWater: prefix.highWater, digest: prefix.digest };
}
