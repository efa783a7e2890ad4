import { spawn } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { newestFile } from '../../../../tooling/test-freshness.ts';
import { bundleTestScripts } from '../../../../tooling/test-scripts.ts';

/**
 * How the engine's tests start their child processes. A child is a TypeScript script
 * that imports the engine's sources and the other packages; through tsx it costs about
 * three seconds of CPU to start (2 s of wall time), compiling every package's sources,
 * and the crash, lease, handoff and submission tests start some fifty. When every
 * package it loads beside the engine was built after its last source change (as the
 * test command builds them first), the script and the engine's sources are bundled
 * into one file and run by plain `node`, the other packages from their builds: 0.7 s
 * of CPU. Otherwise — a source changed since the last build — it runs through tsx, as
 * before, so a child never runs older code than the test.
 */

const engineRoot = fileURLToPath(new URL('../..', import.meta.url));
/** The workspace packages a child loads beside the engine. */
const dependencies = ['agent-facts', 'code-runtime', 'event-log', 'model', 'tools'];
const bundles = new Map<string, string>();
let current: boolean | undefined;

/** When `dist` was last built: its oldest module (0 when there is none). */
function builtAt(dist: string): number {
  if (!existsSync(dist)) return 0;
  const modules = readdirSync(dist).filter((name) => name.endsWith('.js'));
  return modules.length === 0 ? 0 : Math.min(...modules.map((name) => statSync(join(dist, name)).mtimeMs));
}

function buildsAreCurrent(): boolean {
  current ??= dependencies.every((name) => {
    const root = join(engineRoot, '..', name);
    const built = builtAt(join(root, 'dist'));
    return built > 0 && newestFile(join(root, 'src')) <= built;
  });
  return current;
}

/**
 * Bundles `scripts` (absolute paths) for `nodeArgs`, once a process, when the other
 * packages' builds are current; does nothing otherwise.
 */
export async function bundleChildren(...scripts: string[]): Promise<void> {
  const missing = scripts.filter((script) => !bundles.has(script));
  if (missing.length === 0 || !buildsAreCurrent()) return;
  // Inside the package, where its dependencies resolve.
  const outDir = join(engineRoot, 'node_modules', '.cache', 'factum-engine-children');
  await bundleTestScripts(
    Object.fromEntries(missing.map((script) => [basename(script, '.ts'), script])),
    outDir,
    // Every package stays outside, the other workspace packages resolving to their builds.
    { external: [/^[^./]/] },
  );
  for (const script of missing) bundles.set(script, join(outDir, `${basename(script, '.ts')}.mjs`));
}

/** `node`'s arguments that run `script` with `args`: its bundle if it has one, else its source through tsx. */
export function nodeArgs(script: string, args: readonly string[]): string[] {
  const bundle = bundles.get(script);
  return bundle === undefined
    ? ['--conditions=@factum/source', '--import', 'tsx', script, ...args]
    : [bundle, ...args];
}

export const crashChild = fileURLToPath(new URL('./crash-child.ts', import.meta.url));

/** Runs the crash child's `scenario` on the log `file` to its end: the signal that ended it, if any. */
export function runCrashChild(file: string, scenario: string, ledger: string): Promise<string | null> {
  return new Promise((resolve, reject) => {
    const child = spawn('node', nodeArgs(crashChild, [file, scenario, ledger]), {
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    child.on('error', reject);
    child.on('close', (_code, signal) => resolve(signal));
  });
}
