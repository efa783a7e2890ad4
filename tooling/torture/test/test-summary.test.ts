import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';

// The closing line of the root `pnpm test` (tooling/test-summary.mjs), run on reports written here.
const summary = resolve(dirname(fileURLToPath(import.meta.url)), '../../test-summary.mjs');
const roots: string[] = [];
afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

type Test = { readonly fullName: string; readonly status: string };

function runSummary(packages: Record<string, readonly Test[]>) {
  const root = mkdtempSync(join(tmpdir(), 'factum-summary-'));
  roots.push(root);
  for (const [name, tests] of Object.entries(packages)) {
    const dir = join(root, 'packages', name);
    mkdirSync(join(dir, 'test-results'), { recursive: true });
    writeFileSync(join(dir, 'vitest.config.ts'), '');
    const count = (status: string) => tests.filter((test) => test.status === status).length;
    const report = {
      numPassedTests: count('passed'),
      numFailedTests: count('failed'),
      numPendingTests: count('pending') + count('skipped'),
      numTodoTests: count('todo'),
      testResults: [
        {
          name: join(dir, 'test', 'a.test.ts'),
          status: count('failed') > 0 ? 'failed' : 'passed',
          assertionResults: tests.map((test) => ({ ...test, failureMessages: [] })),
        },
      ],
    };
    writeFileSync(join(dir, 'test-results', 'vitest.json'), JSON.stringify(report));
  }
  const run = spawnSync(process.execPath, [summary], { cwd: root, encoding: 'utf8' });
  return { code: run.status, lines: run.stdout.trim().split('\n') };
}

describe('the test summary', () => {
  it('passes a run where every test ran and passed', () => {
    const run = runSummary({ a: [{ fullName: 'one', status: 'passed' }] });
    expect(run).toEqual({ code: 0, lines: ['1 passed, 0 failed, 0 skipped'] });
  });

  it('fails a run with a skipped test, naming it, even when nothing failed', () => {
    const run = runSummary({
      a: [
        { fullName: 'runs', status: 'passed' },
        { fullName: 'the shell runs in a sandbox', status: 'pending' },
      ],
      b: [{ fullName: 'later', status: 'todo' }],
    });
    expect(run.code).toBe(1);
    expect(run.lines).toContain('SKIPPED packages/a: the shell runs in a sandbox');
    expect(run.lines).toContain('SKIPPED packages/b: later');
    expect(run.lines).toContain('1 passed, 0 failed, 2 skipped');
  });

  it('fails a run with a failed test', () => {
    const run = runSummary({ a: [{ fullName: 'breaks', status: 'failed' }] });
    expect(run.code).toBe(1);
    expect(run.lines.at(-1)).toBe('0 passed, 1 failed, 0 skipped');
  });
});
