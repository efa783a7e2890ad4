/**
 * What the trust boundary costs: a descriptor-checked read against a plain read of the
 * same file, and a sandboxed shell command against the same command unsandboxed.
 * One JSON line per measure (see tooling/bench/harness.ts).
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { report } from '../../../tooling/bench/harness.ts';
import { probeSandbox, SANDBOX_BACKENDS, sandboxCommand } from '../src/builtin-tools/shell-sandbox.ts';
import { Workspace } from '../src/builtin-tools/workspace.ts';

async function timeAsync(runs: number, body: () => Promise<unknown>): Promise<number> {
  for (let i = 0; i < Math.min(50, runs); i += 1) await body();
  const started = process.hrtime.bigint();
  for (let i = 0; i < runs; i += 1) await body();
  return Number(process.hrtime.bigint() - started) / 1e3 / runs;
}

function timeSync(runs: number, body: () => unknown): number {
  body();
  const started = process.hrtime.bigint();
  for (let i = 0; i < runs; i += 1) body();
  return Number(process.hrtime.bigint() - started) / 1e3 / runs;
}

const root = mkdtempSync(join(tmpdir(), 'factum-bench-'));
try {
  const nested = join(root, 'a', 'b', 'c');
  mkdirSync(nested, { recursive: true });
  writeFileSync(join(nested, 'file.txt'), 'x'.repeat(4096));
  mkdirSync(join(root, '.factum'));
  const workspace = await Workspace.open(root);
  const plain = await timeAsync(2_000, () => readFile(join(nested, 'file.txt')));
  const confined = await timeAsync(2_000, async () => {
    const opened = await workspace.openFile('a/b/c/file.txt');
    try {
      const buffer = Buffer.alloc(opened.stats.size);
      await opened.handle.read(buffer, 0, buffer.length, 0);
    } finally {
      await opened.handle.close();
    }
  });
  report({
    measure: 'read 4 KiB at depth 4, opened beneath the workspace and verified',
    unit: 'µs/read',
    value: confined,
    baseline: 'fs.promises.readFile of the same path',
    baselineValue: plain,
  });

  const env = { PATH: '/usr/bin:/bin' };
  const direct = timeSync(30, () => spawnSync('/bin/sh', ['-c', 'true'], { env }));
  // Each sandbox this machine can make, measured against the same command run directly.
  for (const backend of SANDBOX_BACKENDS) {
    const probe = probeSandbox({ ...env, FACTUM_SANDBOX: backend });
    if (probe.kind !== 'found') continue;
    const [file, args] = sandboxCommand(
      probe.isolation,
      { workspace: root, hidden: [join(root, '.factum')], allowNetwork: false },
      ['/bin/sh', '-c', 'true'],
      env,
    );
    const boxed = timeSync(30, () => spawnSync(file, args, { env }));
    report({
      measure: `shell command \`true\` in the ${backend} sandbox`,
      unit: 'µs/command',
      value: boxed,
      baseline: 'the same command with /bin/sh directly',
      baselineValue: direct,
    });
  }
} finally {
  rmSync(root, { recursive: true, force: true });
}
