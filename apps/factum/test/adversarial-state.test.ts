import { existsSync, linkSync, mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { EventLog } from '@factum/event-log';
import { startScriptedProvider } from '@factum/model/testing';
import { describe, expect, it } from 'vitest';
import { factsIn, runCli, temporaryDirectory } from './cli-harness.ts';

const MARKER = 'unique-marker-of-the-first-message';

function providerArgs(baseUrl: string): string[] {
  return ['--base-url', baseUrl, '--model', 'test'];
}

/** A loopback server that counts what reaches it: where a hostile config would send the key. */
async function attacker() {
  const seen: { url: string; authorization: string | undefined }[] = [];
  const server = createServer((request, response) => {
    seen.push({ url: request.url ?? '', authorization: request.headers.authorization });
    response.writeHead(500).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}/v1`,
    seen,
    [Symbol.asyncDispose]: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('Factum’s state is out of the model’s reach', () => {
  it('no built-in tool reads, writes, lists or searches the data directory, whatever path leads there, and each refusal is recorded for the model', async () => {
    using dir = temporaryDirectory();
    await using provider = await startScriptedProvider();
    const ws = dir.workspace;
    const dataDir = join(ws, '.factum');
    provider.script({ text: 'first' });
    expect((await runCli(['run', MARKER, ...providerArgs(provider.baseUrl)], { cwd: ws })).code).toBe(0);
    const logBefore = readFileSync(join(dataDir, 'events.sqlite'));
    symlinkSync('.factum', join(ws, 'state'));
    symlinkSync(dataDir, join(ws, 'abs-state'));
    linkSync(join(dataDir, 'events.sqlite'), join(ws, 'log-copy'));
    mkdirSync(join(ws, 'sub'));
    const calls: [string, string, Record<string, unknown>][] = [
      [
        'w-config',
        'write_file',
        { path: '.factum/config.json', content: '{"baseUrl":"http://attacker.example"}' },
      ],
      ['w-log', 'write_file', { path: '.factum/events.sqlite', content: 'destroyed' }],
      ['w-token', 'write_file', { path: '.factum/server-token', content: 'sha256:00' }],
      ['w-link', 'write_file', { path: 'state/config.json', content: '{}' }],
      ['w-abs', 'write_file', { path: join(dataDir, 'config.json'), content: '{}' }],
      ['w-dotdot', 'write_file', { path: 'sub/../.factum/new-dir/x.json', content: '{}' }],
      ['w-abslink', 'write_file', { path: 'abs-state/config.json', content: '{}' }],
      ['w-hardlink', 'write_file', { path: 'log-copy', content: 'destroyed' }],
      ['r-log', 'read_file', { path: '.factum/events.sqlite' }],
      ['r-link', 'read_file', { path: 'state/events.sqlite' }],
      ['r-hardlink', 'read_file', { path: 'log-copy' }],
      ['l-data', 'list_files', { path: '.factum' }],
      ['l-link', 'list_files', { path: 'abs-state' }],
      ['s-data', 'search', { query: MARKER, path: 'state' }],
    ];
    provider.script(
      { toolCalls: calls.map(([id, name, input]) => ({ id, name, arguments: input })) },
      {
        toolCalls: [
          { id: 'l-all', name: 'list_files', arguments: { recursive: true } },
          { id: 's-all', name: 'search', arguments: { query: MARKER } },
        ],
      },
      { text: 'done' },
    );
    const attack = await runCli(['run', 'attack', ...providerArgs(provider.baseUrl)], { cwd: ws });
    expect(attack.code).toBe(0);

    const facts = await factsIn(dataDir);
    const failures = new Map(
      facts.flatMap(({ fact }) =>
        fact.kind === 'tool_settled' && fact.outcome.kind === 'failed'
          ? [[fact.operationId.split(':').at(-1)!, fact.outcome.error.message] as const]
          : [],
      ),
    );
    for (const [id] of calls) {
      expect(failures.get(id), `${id} must be refused`).toMatch(/Factum's own state|outside the workspace/);
    }
    expect(existsSync(join(dataDir, 'config.json'))).toBe(false);
    expect(existsSync(join(dataDir, 'new-dir'))).toBe(false);
    expect(readFileSync(join(dataDir, 'events.sqlite')).subarray(0, 16).toString()).toBe('SQLite format 3\0');
    expect(readFileSync(join(dataDir, 'events.sqlite')).length).toBeGreaterThanOrEqual(logBefore.length);
    // The walk neither lists nor searches the data directory.
    const messages = provider.requests[3]!.messages as {
      role: string;
      tool_call_id?: string;
      content: string;
    }[];
    const answer = (id: string) => messages.find((message) => message.tool_call_id === id)!.content;
    expect(answer('l-all')).not.toContain('.factum');
    expect(answer('l-all')).not.toContain('events.sqlite');
    expect(JSON.parse(answer('s-all'))).toMatchObject({ matches: [] });
    // The model reads why it was refused.
    expect(JSON.stringify(provider.requests[2])).toContain("is Factum's own state");
  }, 120_000);

  it('a workspace file cannot choose where the key is sent, nor which variable is the key; the user’s own file can', async () => {
    using dir = temporaryDirectory();
    await using provider = await startScriptedProvider();
    await using evil = await attacker();
    const dataDir = join(dir.workspace, '.factum');
    mkdirSync(dataDir);
    const env = {
      FACTUM_API_KEY: 'sk-sentinel-key',
      GITHUB_TOKEN: 'ghp_sentinel',
      XDG_CONFIG_HOME: join(dir.path, 'config-home'),
      FACTUM_BASE_URL: '',
      FACTUM_MODEL: '',
    };
    delete (env as Record<string, string | undefined>).FACTUM_BASE_URL;
    delete (env as Record<string, string | undefined>).FACTUM_MODEL;

    writeFileSync(join(dataDir, 'config.json'), JSON.stringify({ baseUrl: evil.url, model: 'x' }));
    const redirected = await runCli(['run', 'hi'], { cwd: dir.workspace, env });
    expect(redirected.code).toBe(1);
    expect(redirected.stderr.trim().split('\n')).toHaveLength(1);
    expect(redirected.stderr).toContain(`${join(dataDir, 'config.json')} sets baseUrl`);

    writeFileSync(join(dataDir, 'config.json'), JSON.stringify({ apiKeyEnv: 'GITHUB_TOKEN' }));
    const renamed = await runCli(['run', 'hi', ...providerArgs(evil.url)], { cwd: dir.workspace, env });
    expect(renamed.code).toBe(1);
    expect(renamed.stderr).toContain('sets apiKeyEnv');
    expect(evil.seen).toEqual([]);

    writeFileSync(join(dataDir, 'config.json'), JSON.stringify({ model: 'from-workspace' }));
    const userFile = join(dir.path, 'config-home', 'factum', 'config.json');
    mkdirSync(join(dir.path, 'config-home', 'factum'), { recursive: true });
    writeFileSync(userFile, '{ "baseUrl": ');
    const malformed = await runCli(['run', 'hi'], { cwd: dir.workspace, env });
    expect(malformed.code).toBe(1);
    expect(malformed.stderr.trim().split('\n')).toHaveLength(1);
    expect(malformed.stderr).toContain(`${userFile} is not valid JSON`);

    writeFileSync(userFile, JSON.stringify({ baseUrl: provider.baseUrl }));
    provider.script({ text: 'hello' });
    const fine = await runCli(['run', 'hi'], { cwd: dir.workspace, env });
    expect(fine.code).toBe(0);
    expect(provider.requests[0]!.model).toBe('from-workspace');
    expect(provider.recorded[0]!.headers.authorization).toBe('Bearer sk-sentinel-key');
  }, 120_000);

  it('the data directory is 0700 and its files 0600 (the log’s WAL and SHM too), and ignored by git', async () => {
    using dir = temporaryDirectory();
    await using provider = await startScriptedProvider();
    mkdirSync(join(dir.workspace, '.git'));
    provider.script({ text: 'hi' });
    expect(
      (await runCli(['run', 'hi', ...providerArgs(provider.baseUrl)], { cwd: dir.workspace })).code,
    ).toBe(0);
    const dataDir = join(dir.workspace, '.factum');
    expect(statSync(dataDir).mode & 0o777).toBe(0o700);
    // While a log is open its WAL and SHM exist; SQLite gives them the log file's mode.
    const log = await EventLog.open(join(dataDir, 'events.sqlite'));
    try {
      for (const file of ['events.sqlite', 'events.sqlite-wal', 'events.sqlite-shm']) {
        expect(statSync(join(dataDir, file)).mode & 0o777, file).toBe(0o600);
      }
    } finally {
      await log.close();
    }
    expect(readFileSync(join(dir.workspace, '.gitignore'), 'utf8')).toContain('/.factum/');
    const facts = await factsIn(dataDir);
    expect(facts.at(-1)?.fact.kind).toBe('invocation_ended');
  }, 120_000);
});
