import { existsSync } from 'node:fs';
import { dirname } from 'node:path';
import { EventWrite, type Fact, RuntimeEvent } from '@factum/agent-facts';
import { EventLog } from '@factum/event-log';
import { testStores } from '@factum/event-log/testing';
import { startScriptedProvider } from '@factum/model/testing';
import { describe, expect, it } from 'vitest';
import { VerifyOutputSchema } from '../src/index.ts';
import { runCli, scriptedFlags, temporaryDirectory } from './cli-harness.ts';

const [sqlite, postgres] = testStores();

/** `factum verify --json` with `args`, its document parsed by its schema. */
async function verify(dataDir: string, cwd: string, ...args: string[]) {
  const result = await runCli(['verify', '--json', '--dir', dataDir, ...args], { cwd });
  return { code: result.code, report: VerifyOutputSchema.parse(JSON.parse(result.stdout)) };
}

describe('factum verify', () => {
  it('checks the log turns wrote, prints its head, holds an anchor as the log grows, and catches a cut tail and an edited row', async () => {
    using dir = temporaryDirectory();
    // The store's file is where `--dir` keeps its log (events.sqlite), and `raw` edits it
    // around the log, as someone with the file could.
    await using store = await sqlite!.create();
    const dataDir = dirname(store.target as string);
    await using provider = await startScriptedProvider();
    provider.script({ text: 'first' }, { text: 'second' });
    const turn = (message: string) =>
      runCli(['run', message, ...scriptedFlags(provider, dataDir)], {
        cwd: dir.workspace,
        env: { FACTUM_API_KEY: 'k' },
      });
    expect((await turn('one')).code).toBe(0);

    const text = await runCli(['verify', '--dir', dataDir], { cwd: dir.path });
    expect(text.code).toBe(0);
    const first = await verify(dataDir, dir.path);
    expect(first).toMatchObject({ code: 0, report: { ok: true, broken: null, anchors: [] } });
    const head = first.report.head!;
    expect(head.sequence).toBe(first.report.events);
    expect(text.stdout).toContain(`✔ ${head.sequence} events check out`);
    expect(text.stdout).toContain(`head  ${head.sequence}:${head.digest}`);

    expect((await turn('two')).code).toBe(0);
    const anchored = await runCli(
      ['verify', '--anchor', `${head.sequence}:${head.digest}`, '--dir', dataDir],
      {
        cwd: dir.path,
      },
    );
    expect(anchored.code).toBe(0);
    expect(anchored.stdout).toContain('and 1 anchor held');
    const later = (await verify(dataDir, dir.path)).report.head!;
    expect(later.sequence).toBeGreaterThan(head.sequence);

    // Someone with the file removes the second turn: every remaining link is sound, and
    // only the anchor taken after that turn shows that events are gone.
    await store.raw(`delete from events where sequence > ${head.sequence}`);
    expect((await verify(dataDir, dir.path)).code).toBe(0);
    const cut = await verify(dataDir, dir.path, '--anchor', `${later.sequence}:${later.digest}`);
    expect(cut).toMatchObject({
      code: 3,
      report: {
        ok: false,
        events: head.sequence,
        head,
        broken: {
          sequence: later.sequence,
          reason: `the log ends at sequence ${head.sequence}, before the anchor at ${later.sequence}: events were removed`,
        },
      },
    });

    // An edited row breaks the chain there, in text too.
    await store.raw(`update events set body = replace(body, '"one"', '"ONE"') where sequence = 1`);
    const edited = await verify(dataDir, dir.path);
    expect(edited).toMatchObject({
      code: 3,
      report: {
        ok: false,
        events: 0,
        head: null,
        broken: { sequence: 1, reason: 'the global chain digest does not match' },
      },
    });
    const editedText = await runCli(['verify', '--dir', dataDir], { cwd: dir.path });
    expect(editedText.code).toBe(3);
    expect(editedText.stdout).toContain(
      '✖ the log breaks at sequence 1: the global chain digest does not match',
    );
  });

  it('refuses a malformed anchor (exit 2) and a missing log (exit 1) and creates nothing', async () => {
    using dir = temporaryDirectory();
    for (const anchor of [
      '',
      '7',
      'x:sha256:00',
      `0:sha256:${'a'.repeat(64)}`,
      `3:sha256:${'A'.repeat(64)}`,
    ]) {
      const refused = await runCli(['verify', '--anchor', anchor, '--dir', dir.dataDir], { cwd: dir.path });
      expect(refused.code, anchor).toBe(2);
      expect(refused.stderr).toContain('expected <sequence>:sha256:<64 hex digits>');
    }
    const missing = await runCli(['verify', '--dir', dir.dataDir], { cwd: dir.path });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('nothing to verify');
    expect(existsSync(dir.dataDir)).toBe(false);
  });

  it('verifies a log in PostgreSQL, and never prints the URL’s password', async () => {
    using dir = temporaryDirectory();
    await using store = await postgres!.create();
    const target = store.target as { postgres: string };
    const log = await EventLog.open(target);
    for (const id of ['a', 'b']) {
      const at = {
        sessionId: 'session',
        turnId: `turn-${id}`,
        runId: `run-${id}`,
        invocationId: `invocation-${id}`,
      };
      const opened: Fact = {
        kind: 'invocation_opened',
        configuration: { cwd: '/', toolMode: 'direct' },
        input: { kind: 'message', content: id, sourceMessages: [] },
      };
      for (const fact of [opened, { kind: 'invocation_ended', outcome: { kind: 'completed' } } as Fact])
        await log.commit(EventWrite.plain(RuntimeEvent.create(at, fact)));
    }
    const prefix = await log.prefix({ maxEvents: 100, maxBytes: 1 << 20 });
    await log.close();
    const result = await runCli(['verify', '--json', '--postgres', target.postgres], { cwd: dir.path });
    expect(result.code).toBe(0);
    expect(VerifyOutputSchema.parse(JSON.parse(result.stdout))).toEqual({
      ok: true,
      events: prefix.highWater,
      head: { sequence: prefix.highWater, digest: prefix.digest },
      anchors: [],
      broken: null,
    });

    const unreachable = 'postgres://verifier:s3cret-pw@127.0.0.1:9/none';
    const failed = await runCli(['verify', '--postgres', unreachable], { cwd: dir.path });
    expect(failed.code).toBe(1);
    expect(failed.stdout + failed.stderr).not.toContain('s3cret-pw');
  });
});
