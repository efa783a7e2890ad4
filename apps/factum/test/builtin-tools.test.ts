import { execFileSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { builtinCatalog } from '../src/builtin-tools/builtin-catalog.ts';
import { reconcileWrite } from '../src/builtin-tools/file-tools.ts';
import { findSandbox, probeSandbox, type ShellIsolation } from '../src/builtin-tools/shell-sandbox.ts';
import { Workspace } from '../src/builtin-tools/workspace.ts';
import { WorkspaceError } from '../src/builtin-tools/workspace-error.ts';
import { MACHINE_SANDBOXES } from './sandboxes.ts';

let root: string;
let workspace: Workspace;
let outside: string;

beforeEach(async () => {
  root = mkdtempSync(join(tmpdir(), 'factum-tools-'));
  mkdirSync(join(root, 'ws'));
  outside = join(root, 'outside');
  mkdirSync(outside);
  writeFileSync(join(outside, 'secret.txt'), 'outside secret');
  symlinkSync(outside, join(root, 'ws', 'escape-dir'));
  symlinkSync(join(outside, 'secret.txt'), join(root, 'ws', 'escape-file'));
  symlinkSync(join(outside, 'not-yet.txt'), join(root, 'ws', 'dangling'));
  workspace = await Workspace.open(join(root, 'ws'));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

type InvokeOptions = { allowShell?: boolean; isolation?: ShellIsolation; signal?: AbortSignal };

function invoke(name: string, input: unknown, options: InvokeOptions = {}) {
  const catalog = builtinCatalog({
    workspace,
    allowShell: options.allowShell ?? false,
    ...(options.isolation === undefined ? {} : { isolation: options.isolation }),
  });
  const entry = catalog.get(name);
  if (entry === undefined) throw new Error(`no tool ${name}`);
  const check = entry.checkInput(input);
  if (!check.ok) throw new Error(check.message);
  const signal = options.signal ?? new AbortController().signal;
  const context = {
    operationId: 'op',
    idempotencyKey: 'factum-test',
    signal,
    attempt: 1,
    sessionId: 's',
    invocationId: 'i',
    notify: async () => {},
  };
  return entry.registration.handler.executor.invoke(name, input, context);
}

async function refusal(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  return WorkspaceError.isInstance(error) ? error.code : `not refused: ${String(error)}`;
}

describe('built-in tools stay inside the workspace', () => {
  it('refuses ../ escapes, absolute paths outside and symlinks that lead out, for reads and writes', async () => {
    expect(await refusal(invoke('read_file', { path: '../outside/secret.txt' }))).toBe('outside_workspace');
    expect(await refusal(invoke('read_file', { path: join(outside, 'secret.txt') }))).toBe(
      'outside_workspace',
    );
    expect(await refusal(invoke('read_file', { path: 'escape-file' }))).toBe('outside_workspace');
    expect(await refusal(invoke('read_file', { path: 'escape-dir/secret.txt' }))).toBe('outside_workspace');
    expect(await refusal(invoke('list_files', { path: 'escape-dir' }))).toBe('outside_workspace');
    expect(await refusal(invoke('search', { query: 'secret', path: '..' }))).toBe('outside_workspace');
    expect(await refusal(invoke('write_file', { path: 'escape-dir/new.txt', content: 'x' }))).toBe(
      'outside_workspace',
    );
    expect(await refusal(invoke('write_file', { path: 'dangling', content: 'x' }))).toBe('outside_workspace');
    expect(await refusal(invoke('write_file', { path: '../../x.txt', content: 'x' }))).toBe(
      'outside_workspace',
    );
    expect(existsSync(join(outside, 'new.txt'))).toBe(false);
    expect(existsSync(join(outside, 'not-yet.txt'))).toBe(false);
    expect(readFileSync(join(outside, 'secret.txt'), 'utf8')).toBe('outside secret');
  });

  it('the error says what happened and how to fix it', async () => {
    const error = await invoke('read_file', { path: '../outside/secret.txt' }).catch(
      (caught: unknown) => caught,
    );
    expect((error as Error).message).toMatch(/outside the workspace .*: tools may only use paths inside it/);
  });

  it('write_file creates directories, read_file reads back, list_files lists without following links, search finds lines', async () => {
    await expect(
      invoke('write_file', { path: 'docs/a.md', content: 'one\nFactum here\n' }),
    ).resolves.toMatchObject({
      path: join('docs', 'a.md'),
      bytes: 16,
    });
    await expect(invoke('read_file', { path: 'docs/a.md' })).resolves.toMatchObject({
      content: 'one\nFactum here\n',
      truncated: false,
    });
    await expect(invoke('read_file', { path: 'docs/a.md', maxBytes: 3 })).resolves.toMatchObject({
      content: 'one',
      truncated: true,
    });
    const listed = (await invoke('list_files', { recursive: true })) as {
      entries: { path: string; type: string }[];
    };
    expect(listed.entries).toContainEqual({ path: 'escape-dir', type: 'symlink' });
    expect(listed.entries).toContainEqual({ path: join('docs', 'a.md'), type: 'file' });
    expect(listed.entries.some((entry) => entry.path.includes('secret'))).toBe(false);
    const found = (await invoke('search', { query: 'factum' })) as { matches: unknown[] };
    expect(found.matches).toEqual([{ path: join('docs', 'a.md'), line: 2, text: 'Factum here' }]);
    const many = Array.from({ length: 30 }, (_, i) => `hit ${i}`).join('\n');
    await invoke('write_file', { path: 'many.txt', content: many });
    await expect(invoke('search', { query: 'hit', maxResults: 5 })).resolves.toMatchObject({
      truncated: true,
    });
  });

  it('write_file reconciles by digest: succeeded when the content is there, failed when absent, unknown when it differs', async () => {
    const input = { path: 'plan.md', content: 'the plan' };
    expect(await reconcileWrite(workspace, input)).toMatchObject({
      kind: 'failed',
      error: { code: 'not_applied' },
    });
    writeFileSync(join(workspace.root, 'plan.md'), 'the plan');
    expect(await reconcileWrite(workspace, input)).toMatchObject({
      kind: 'succeeded',
      value: { reconciled: true },
    });
    writeFileSync(join(workspace.root, 'plan.md'), 'something else');
    expect(await reconcileWrite(workspace, input)).toMatchObject({ kind: 'unknown' });
  });

  it('declares semantics and recovery: writes exclusive and reconciled, reads parallel, idempotent and read-only', () => {
    // The shell's shape does not depend on how it is isolated.
    const catalog = builtinCatalog({ workspace, allowShell: true, isolation: { kind: 'none' } });
    const shape = (name: string) => {
      const entry = catalog.get(name)!;
      return [entry.registration.semantics, entry.recovery.kind, entry.registration.readOnly === true];
    };
    // Only the reads skip the wait for their T1: a write or a command keeps it before it runs.
    expect(shape('write_file')).toEqual(['exclusive', 'reconcile', false]);
    expect(shape('read_file')).toEqual(['parallel', 'idempotent', true]);
    expect(shape('list_files')).toEqual(['parallel', 'idempotent', true]);
    expect(shape('search')).toEqual(['parallel', 'idempotent', true]);
    expect(shape('shell')).toEqual(['exclusive', 'never_auto_retry', false]);
    expect(catalog.get('read_file')!.checkInput({ path: 7 }).ok).toBe(false);
  });
});

describe('built-in tools follow links that stay inside, and open nothing that is not what it claims', () => {
  it('reads and writes through relative and absolute links inside the workspace, and resolves .. within it', async () => {
    mkdirSync(join(workspace.root, 'pkg', 'src'), { recursive: true });
    writeFileSync(join(workspace.root, 'pkg', 'src', 'a.txt'), 'through a link');
    symlinkSync(join('pkg', 'src'), join(workspace.root, 'src'));
    symlinkSync(join(workspace.root, 'pkg'), join(workspace.root, 'abs-pkg'));
    await expect(invoke('read_file', { path: 'src/a.txt' })).resolves.toMatchObject({
      path: join('pkg', 'src', 'a.txt'),
      content: 'through a link',
    });
    await expect(invoke('read_file', { path: 'abs-pkg/src/../src/a.txt' })).resolves.toMatchObject({
      content: 'through a link',
    });
    await invoke('write_file', { path: 'src/new/b.txt', content: 'made' });
    expect(readFileSync(join(workspace.root, 'pkg', 'src', 'new', 'b.txt'), 'utf8')).toBe('made');
    expect(await refusal(invoke('read_file', { path: 'src/../../../outside/secret.txt' }))).toBe(
      'outside_workspace',
    );
  });

  it('refuses a FIFO at once instead of waiting for a writer, and protects the data directory by default', async () => {
    execFileSync('mkfifo', [join(workspace.root, 'pipe')]);
    expect(await refusal(invoke('read_file', { path: 'pipe' }))).toBe('not_a_file');
    mkdirSync(join(workspace.root, '.factum'));
    writeFileSync(join(workspace.root, '.factum', 'events.sqlite'), 'log');
    expect(await refusal(invoke('read_file', { path: '.factum/events.sqlite' }))).toBe('protected_path');
    expect(await refusal(invoke('write_file', { path: '.factum/config.json', content: '{}' }))).toBe(
      'protected_path',
    );
    expect(existsSync(join(workspace.root, '.factum', 'config.json'))).toBe(false);
  });
});

describe('the shell tool', () => {
  it('is not in the catalog without --allow-shell', () => {
    expect(builtinCatalog({ workspace }).names()).toEqual([
      'read_file',
      'write_file',
      'list_files',
      'search',
    ]);
  });

  it('is not in the catalog where no sandbox can be made, unless the isolation says none', () => {
    const env = { ...process.env, FACTUM_SANDBOX: 'none' };
    expect(builtinCatalog({ workspace, allowShell: true, env }).names()).not.toContain('shell');
    expect(
      builtinCatalog({ workspace, allowShell: true, env, isolation: { kind: 'none' } }).names(),
    ).toContain('shell');
  });

  const isolations: [string, ShellIsolation][] = [
    ...MACHINE_SANDBOXES.map(({ backend, isolation }): [string, ShellIsolation] => [backend, isolation]),
    ['unsandboxed', { kind: 'none' }],
  ];
  for (const [name, isolation] of isolations) {
    it(`runs in the workspace without secret environment variables, and stops on the run’s abort (${name})`, async () => {
      process.env.FACTUM_API_KEY = 'sk-secret-value';
      try {
        const result = await invoke(
          'shell',
          { command: 'pwd; echo "key=$FACTUM_API_KEY"' },
          { allowShell: true, isolation },
        );
        expect(result).toMatchObject({
          exitCode: 0,
          stdout: `${workspace.root}\nkey=\n`,
          sandboxed: isolation.kind !== 'none',
        });
      } finally {
        delete process.env.FACTUM_API_KEY;
      }
      const controller = new AbortController();
      const running = invoke(
        'shell',
        { command: 'echo started > started.txt; sleep 20' },
        { allowShell: true, isolation, signal: controller.signal },
      );
      await eventually(() => existsSync(join(workspace.root, 'started.txt')));
      controller.abort();
      await expect(running).resolves.toMatchObject({ cancelled: true, killed: false, signal: 'SIGTERM' });
    }, 30_000);

    it(`bounds output of control characters by its JSON size, so the command’s result is still recorded (${name})`, async () => {
      const result = await invoke(
        'shell',
        { command: "head -c 65536 /dev/zero | tr '\\0' '\\1'" },
        { allowShell: true, isolation },
      );
      expect(result).toMatchObject({ exitCode: 0, stdout: expect.stringContaining('[truncated:') });
      expect(JSON.stringify(result).length).toBeLessThan(300 * 1024);
    }, 30_000);
  }
});

describe('finding a sandbox', () => {
  it('FACTUM_SANDBOX=none finds none, and says so', () => {
    const env = { ...process.env, FACTUM_SANDBOX: 'none' };
    expect(probeSandbox(env)).toEqual({
      kind: 'unavailable',
      reason: expect.stringContaining('FACTUM_SANDBOX=none'),
    });
    expect(findSandbox(env)).toBeUndefined();
  });

  it('an unknown FACTUM_SANDBOX finds none and names the values it takes', () => {
    expect(probeSandbox({ ...process.env, FACTUM_SANDBOX: 'docker' })).toEqual({
      kind: 'unavailable',
      reason: 'FACTUM_SANDBOX must be bwrap, unshare or none, not "docker"',
    });
  });

  it('a forced backend is that one or none: bwrap off PATH is not replaced by unshare', () => {
    const probe = probeSandbox({ ...process.env, PATH: '/nonexistent', FACTUM_SANDBOX: 'bwrap' });
    expect(probe).toEqual({ kind: 'unavailable', reason: expect.stringContaining('bwrap is not on PATH') });
  });

  it('without FACTUM_SANDBOX it finds one of the sandboxes this machine has, bubblewrap first', () => {
    const { FACTUM_SANDBOX: _, ...env } = process.env;
    const probe = probeSandbox(env);
    if (MACHINE_SANDBOXES.length === 0) expect(probe.kind).toBe('unavailable');
    else expect(probe).toEqual({ kind: 'found', isolation: MACHINE_SANDBOXES[0]!.isolation });
  });
});

async function eventually(check: () => boolean): Promise<void> {
  for (let i = 0; i < 300 && !check(); i++) await new Promise((resolve) => setTimeout(resolve, 50));
  expect(check(), 'the condition held in time').toBe(true);
}
