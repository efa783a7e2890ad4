import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { EventWrite, type Fact, RuntimeEvent } from '@factum/agent-facts';
import { EventLog } from '@factum/event-log';
import { testStores } from '@factum/event-log/testing';
import { startScriptedProvider } from '@factum/model/testing';
import { describe, expect, it } from 'vitest';
import { CopyOutputSchema, LogOutputSchema, VerifyOutputSchema } from '../src/index.ts';
import { runCli, scriptedFlags, temporaryDirectory } from './cli-harness.ts';

const [sqlite, postgres] = testStores();

/** `factum copy --json` with `args`, its document parsed by its schema. */
async function copy(cwd: string, ...args: string[]) {
  const result = await runCli(['copy', '--json', ...args], { cwd });
  expect(result.stderr).toBe('');
  return { code: result.code, output: CopyOutputSchema.parse(JSON.parse(result.stdout)) };
}

async function verify(cwd: string, ...args: string[]) {
  const result = await runCli(['verify', '--json', ...args], { cwd });
  return { code: result.code, report: VerifyOutputSchema.parse(JSON.parse(result.stdout)) };
}

async function listed(cwd: string, dataDir: string) {
  const result = await runCli(['log', '--json', '--dir', dataDir], { cwd });
  expect(result.code).toBe(0);
  return LogOutputSchema.parse(JSON.parse(result.stdout)).invocations;
}

describe('factum copy', () => {
  it('copies a workspace’s log to a new directory, where the anchors hold and the next turn goes on', async () => {
    using dir = temporaryDirectory();
    await using provider = await startScriptedProvider();
    provider.script({ text: 'first' }, { text: 'second' }, { text: 'third' });
    const turn = (message: string, dataDir: string) =>
      runCli(['run', message, ...scriptedFlags(provider, dataDir)], {
        cwd: dir.workspace,
        env: { FACTUM_API_KEY: 'k' },
      });
    expect((await turn('one', dir.dataDir)).code).toBe(0);
    expect((await turn('two', dir.dataDir)).code).toBe(0);
    const source = (await verify(dir.path, '--dir', dir.dataDir)).report;

    const moved = join(dir.path, 'moved');
    const text = await runCli(['copy', '--dir', dir.dataDir, '--to', moved], { cwd: dir.path });
    expect(text.code).toBe(0);
    expect(text.stdout).toContain(`✔ copied ${source.events} events to ${moved} (2 invocations`);
    expect(text.stdout).toContain(`head  ${source.head!.sequence}:${source.head!.digest}`);

    const anchor = `${source.head!.sequence}:${source.head!.digest}`;
    expect(await verify(dir.path, '--dir', moved, '--anchor', anchor)).toMatchObject({
      code: 0,
      report: { ok: true, events: source.events, head: source.head },
    });
    expect(await listed(dir.path, moved)).toEqual(await listed(dir.path, dir.dataDir));
    // The copy is a log like any other: the next turn appends to it, the source stays.
    expect((await turn('three', moved)).code).toBe(0);
    const grown = await verify(dir.path, '--dir', moved, '--anchor', anchor);
    expect(grown.code).toBe(0);
    expect(grown.report.events).toBeGreaterThan(source.events);
    expect((await verify(dir.path, '--dir', dir.dataDir)).report).toEqual(source);
  }, 60_000);

  it('refuses a target that holds a log, a missing source and no --to, and writes nothing', async () => {
    using dir = temporaryDirectory();
    await using provider = await startScriptedProvider();
    provider.script({ text: 'one' }, { text: 'two' });
    const other = join(dir.path, 'other');
    for (const dataDir of [dir.dataDir, other]) {
      const run = await runCli(['run', 'hello', ...scriptedFlags(provider, dataDir)], {
        cwd: dir.workspace,
        env: { FACTUM_API_KEY: 'k' },
      });
      expect(run.code).toBe(0);
    }
    const before = (await verify(dir.path, '--dir', other)).report;
    const refused = await runCli(['copy', '--dir', dir.dataDir, '--to', other], { cwd: dir.path });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('already holds rows');
    expect((await verify(dir.path, '--dir', other)).report).toEqual(before);

    const nowhere = join(dir.path, 'nowhere');
    const missing = await runCli(['copy', '--dir', join(dir.path, 'absent'), '--to', nowhere], {
      cwd: dir.path,
    });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('nothing to copy');
    expect(existsSync(nowhere)).toBe(false);
    const usage = await runCli(['copy', '--dir', dir.dataDir], { cwd: dir.path });
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain('copy needs --to');
  }, 60_000);

  it('moves a log to PostgreSQL and back, the same head throughout, and never prints the URL’s password', async () => {
    using dir = temporaryDirectory();
    await using store = await postgres!.create();
    const url = (store.target as { postgres: string }).postgres;
    await using provider = await startScriptedProvider();
    provider.script({ text: 'kept' });
    const run = await runCli(['run', 'hello', ...scriptedFlags(provider, dir.dataDir)], {
      cwd: dir.workspace,
      env: { FACTUM_API_KEY: 'k' },
    });
    expect(run.code).toBe(0);
    const source = (await verify(dir.path, '--dir', dir.dataDir)).report;

    const there = await copy(dir.path, '--dir', dir.dataDir, '--to', url);
    expect(there).toMatchObject({ code: 0, output: { verified: { ok: true, head: source.head } } });
    expect(there.output.rows.events).toBe(source.events);
    const back = join(dir.path, 'back');
    const home = await copy(dir.path, '--postgres', url, '--to', back);
    expect(home.output).toEqual(there.output);
    expect(await listed(dir.path, back)).toEqual(await listed(dir.path, dir.dataDir));

    const unreachable = 'postgres://mover:s3cret-pw@127.0.0.1:9/none';
    const failed = await runCli(['copy', '--dir', dir.dataDir, '--to', unreachable], { cwd: dir.path });
    expect(failed.code).toBe(1);
    expect(failed.stdout + failed.stderr).not.toContain('s3cret-pw');
    // A directory the copy made for a log it could not read is not left behind.
    const nowhere = join(dir.path, 'nowhere');
    const unread = await runCli(['copy', '--postgres', unreachable, '--to', nowhere], { cwd: dir.path });
    expect(unread.code).toBe(1);
    expect(unread.stdout + unread.stderr).not.toContain('s3cret-pw');
    expect(existsSync(nowhere)).toBe(false);
  }, 60_000);

  it('copies a damaged log as stored, and says the copy breaks where the source does (exit 3)', async () => {
    using dir = temporaryDirectory();
    await using store = await sqlite!.create();
    const at = { sessionId: 'session', turnId: 'turn', runId: 'run', invocationId: 'invocation' };
    const opened: Fact = {
      kind: 'invocation_opened',
      configuration: { cwd: '/', toolMode: 'direct' },
      input: { kind: 'message', content: 'hello', sourceMessages: [] },
    };
    {
      await using log = await EventLog.open(store.target);
      for (const fact of [opened, { kind: 'invocation_ended', outcome: { kind: 'completed' } } as Fact])
        await log.commit(EventWrite.plain(RuntimeEvent.create(at, fact)));
    }
    await store.raw(`update events set body = replace(body, 'hello', 'HELLO') where sequence = 1`);
    const copied = await runCli(
      ['copy', '--json', '--dir', dirname(store.target as string), '--to', join(dir.path, 'copy')],
      {
        cwd: dir.path,
      },
    );
    expect(copied.code).toBe(3);
    const output = CopyOutputSchema.parse(JSON.parse(copied.stdout));
    expect(output.rows.events).toBe(2);
    expect(output.verified).toMatchObject({ ok: false, events: 0, broken: { sequence: 1 } });
  }, 60_000);
});
