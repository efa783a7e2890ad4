import { type ChildProcessByStdio, spawn } from 'node:child_process';
import { join } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { bundleTestScripts } from '../../../../tooling/test-scripts.ts';

const packageRoot = fileURLToPath(new URL('../..', import.meta.url));

/**
 * Bundles a child script and the log's sources it imports into one ESM file, so that
 * each child is a plain `node` process: a loader that compiles TypeScript costs several
 * times a child's whole start-up, and the opening tests start a few hundred children.
 * The file lives inside the package's `node_modules`, where `better-sqlite3` and `pg`
 * (left outside the bundle: a native addon, and a driver only PostgreSQL logs load)
 * resolve as they do for the package itself.
 */
export async function bundleChild(entry: URL, name: string): Promise<string> {
  const outDir = join(packageRoot, 'node_modules', '.cache', 'factum-test-children');
  await bundleTestScripts({ [name]: fileURLToPath(entry) }, outDir, {
    external: ['better-sqlite3', 'pg'],
    noExternal: [/^(?!better-sqlite3|pg)/],
    esbuildOptions(options) {
      options.conditions = ['@factum/source'];
    },
    banner: {
      js: "import { createRequire as bundleRequire } from 'node:module';const require = bundleRequire(import.meta.url);",
    },
  });
  return join(outDir, `${name}.mjs`);
}

/** How a child process ended, with everything it printed (stdout and stderr together). */
export type ChildEnd = { code: number | null; signal: NodeJS.Signals | null; output: string };

/** A bundled child running: `ready` once it printed `ready` (or ended), `done` once it closed. */
export type RunningChild = {
  process: ChildProcessByStdio<Writable, Readable, Readable>;
  ready: Promise<void>;
  done: Promise<ChildEnd>;
};

/** Starts `node <script> <args>` with pipes on every stream. */
export function startChild(script: string, args: readonly string[]): RunningChild {
  const process = spawn('node', [script, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
  let output = '';
  let markReady = () => {};
  const ready = new Promise<void>((resolve) => {
    markReady = resolve;
  });
  const collect = (chunk: Buffer) => {
    output += chunk.toString('utf8');
    if (output.includes('ready\n')) markReady();
  };
  process.stdout.on('data', collect);
  process.stderr.on('data', collect);
  const done = new Promise<ChildEnd>((resolve, reject) => {
    process.on('error', reject);
    process.on('close', (code, signal) => {
      markReady();
      resolve({ code, signal, output });
    });
  });
  return { process, ready, done };
}
