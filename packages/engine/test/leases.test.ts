import { type ChildProcess, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { EventLog, type LogTarget } from '@factum/event-log';
import { type TestStoreFactory, testStores } from '@factum/event-log/testing';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ledgerLines } from './support/after-crash.ts';
import { bounds, temporaryDirectory } from './support/agent-loop.ts';
import { bundleChildren, nodeArgs } from './support/child-node.ts';

const child = fileURLToPath(new URL('./support/lease-child.ts', import.meta.url));
beforeAll(() => bundleChildren(child));
const wide = { ...bounds, maxEvents: 10_000, maxBytes: 16 * 1024 * 1024 };

type Host = {
  readonly process: ChildProcess;
  readonly lines: string[];
  /** Resolves once a line starting with `prefix` has been printed. */
  line(prefix: string): Promise<string>;
  readonly exit: Promise<{ code: number | null; signal: string | null }>;
};

/** Hosts a test started: a test that fails or times out leaves none running (they renew leases). */
const started = new Set<ChildProcess>();
afterEach(() => {
  for (const process of started)
    if (process.exitCode === null && process.signalCode === null) process.kill('SIGKILL');
  started.clear();
});

function host(args: string[]): Host {
  const process = spawn('node', nodeArgs(child, args), {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  started.add(process);
  const lines: string[] = [];
  const waiters: { prefix: string; resolve: (line: string) => void }[] = [];
  let text = '';
  process.stdout!.on('data', (chunk: Buffer) => {
    text += chunk.toString('utf8');
    for (let end = text.indexOf('\n'); end >= 0; end = text.indexOf('\n')) {
      const line = text.slice(0, end);
      text = text.slice(end + 1);
      lines.push(line);
      for (const waiter of waiters.filter((entry) => line.startsWith(entry.prefix))) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(line);
      }
    }
  });
  const exit = new Promise<{ code: number | null; signal: string | null }>((resolve, reject) => {
    process.on('error', reject);
    process.on('close', (code, signal) => resolve({ code, signal }));
  });
  return {
    process,
    lines,
    exit,
    line(prefix) {
      const seen = lines.find((line) => line.startsWith(prefix));
      if (seen !== undefined) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        waiters.push({ prefix, resolve });
        void exit.then(() => reject(new Error(`exited before printing ${prefix}: ${lines.join(' | ')}`)));
      });
    },
  };
}

const args = (
  target: LogTarget,
  ledger: string,
  command: string,
  name: string,
  ttl: number,
  ...rest: string[]
) => [command, JSON.stringify(target), ledger, name, String(ttl), ...rest];

const postgres = testStores().find((factory) => factory.name === 'postgres');

describe.each(testStores())('live engines sharing a log on $name', (stores: TestStoreFactory) => {
  it("two live engines running turns never end each other's invocations", async () => {
    await using store = await stores.create();
    using dir = temporaryDirectory();
    const ledger = join(dir.path, 'ledger');
    // The schema first: opening a new log from two processes at once is another matter.
    await (await EventLog.open(store.target)).close();
    const hosts = ['a', 'b'].map((name) =>
      host(args(store.target, ledger, 'turns', name, 3000, `s-${name}`, '4')),
    );
    const exits = await Promise.all(hosts.map((entry) => entry.exit));
    for (const [index, entry] of hosts.entries()) {
      expect(exits[index], entry.lines.join('\n')).toEqual({ code: 0, signal: null });
      expect(
        entry.lines.filter((line) => line.startsWith('turn ')).every((line) => line.endsWith('completed')),
      ).toBe(true);
      expect(entry.lines.filter((line) => line.startsWith('turn '))).toHaveLength(4);
      expect(
        entry.lines.filter((line) => line.startsWith('swept ended=') && !line.startsWith('swept ended=0')),
      ).toEqual([]);
    }
    expect(ledgerLines(ledger)).toHaveLength(8);
    const log = await EventLog.open(store.target);
    const events = (await log.prefix(wide)).events;
    const ends = events.filter(({ event }) => event.fact.kind === 'invocation_ended');
    expect(ends.map(({ event }) => (event.fact as { outcome: { kind: string } }).outcome.kind)).toEqual(
      Array(8).fill('completed'),
    );
    await log.close();
  }, 120_000);

  it('a host stopped mid-effect past its lease is fenced: its T2 and later writes are refused, the effect ran once', async () => {
    await using store = await stores.create();
    using dir = temporaryDirectory();
    const ledger = join(dir.path, 'ledger');
    const gate = join(dir.path, 'gate');
    await (await EventLog.open(store.target)).close();
    const survivor = host(args(store.target, ledger, 'survivor', 'survivor', 1500, 'fence', gate));
    await survivor.line('live');
    const stale = host(args(store.target, ledger, 'effect', 'stale', 1500, 'fence', 'pause'));
    await stale.line('effect');
    stale.process.kill('SIGSTOP');
    writeFileSync(gate, '');
    await survivor.line('admitted');
    stale.process.kill('SIGCONT');
    expect(await survivor.exit).toEqual({ code: 0, signal: null });
    expect(await stale.exit, stale.lines.join('\n')).toEqual({ code: 0, signal: null });
    expect(stale.lines.find((line) => line.startsWith('run '))).toContain('fenced');
    expect(stale.lines.find((line) => line.startsWith('later '))).toContain('fenced');
    expect(ledgerLines(ledger).filter((line) => line.startsWith('stale '))).toHaveLength(1);
    const log = await EventLog.open(store.target);
    const dead = {
      sessionId: 'fence',
      turnId: 'turn-stale',
      runId: 'run-stale',
      invocationId: 'invocation-stale',
    };
    const recovery = await log.invocationRecovery(dead, wide);
    expect(recovery.uncertainOperations, 'the effect stays uncertain until reconciled').toHaveLength(1);
    expect(recovery.ownership?.owner?.hostId).toBe('survivor');
    const kinds = (await log.invocationEvents(dead, wide)).map(({ event }) => event.fact.kind);
    expect(kinds).not.toContain('tool_settled');
    expect(kinds.at(-1)).toBe('invocation_ended');
    await log.close();
  }, 120_000);
});

describe.skipIf(postgres === undefined)('failover on one PostgreSQL log', () => {
  it("a SIGKILLed host's run is recovered by a survivor and its session admits new turns; nothing re-runs", async () => {
    await using store = await postgres!.create();
    using dir = temporaryDirectory();
    const ledger = join(dir.path, 'ledger');
    const gate = join(dir.path, 'gate');
    await (await EventLog.open(store.target)).close();
    const survivors = ['b', 'c'].map((name) =>
      host(args(store.target, ledger, 'survivor', name, 2000, 'dead', gate)),
    );
    await Promise.all(survivors.map((entry) => entry.line('live')));
    const victim = host(args(store.target, ledger, 'effect', 'a', 2000, 'dead', 'hang'));
    await victim.line('effect');
    victim.process.kill('SIGKILL');
    expect((await victim.exit).signal).toBe('SIGKILL');
    writeFileSync(gate, '');
    const exits = await Promise.race([
      Promise.all(survivors.map((entry) => entry.exit)),
      new Promise<never>((_, reject) =>
        setTimeout(
          () =>
            reject(new Error([victim, ...survivors].map((entry) => entry.lines.join(' | ')).join(' // '))),
          60_000,
        ).unref(),
      ),
    ]);
    for (const [index, entry] of survivors.entries()) {
      expect(exits[index], entry.lines.join('\n')).toEqual({ code: 0, signal: null });
      expect(await entry.line('admitted')).toBe('admitted completed');
    }
    expect(
      ledgerLines(ledger).filter((line) => line.startsWith('a ')),
      'nothing re-ran',
    ).toHaveLength(1);
    const log = await EventLog.open(store.target);
    const dead = { sessionId: 'dead', turnId: 'turn-a', runId: 'run-a', invocationId: 'invocation-a' };
    const recovery = await log.invocationRecovery(dead, wide);
    expect(recovery.ended).toBe(true);
    expect(recovery.uncertainOperations).toHaveLength(1);
    expect(['b', 'c']).toContain(recovery.ownership?.owner?.hostId);
    const ended = (await log.invocationEvents(dead, wide)).at(-1)!.event.fact;
    expect(ended).toMatchObject({
      kind: 'invocation_ended',
      outcome: { kind: 'failed', error: { code: 'interrupted' } },
    });
    expect(await log.unfinishedInvocations()).toEqual([]);
    await log.close();
  }, 120_000);
});
