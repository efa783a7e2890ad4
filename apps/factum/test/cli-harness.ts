import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Fact } from '@factum/agent-facts';
import { EventLog } from '@factum/event-log';
import { newestFile } from '../../../tooling/test-freshness.ts';

const appRoot = fileURLToPath(new URL('..', import.meta.url));
const cliEntry = join(appRoot, 'src', 'cli.ts');
const builtEntry = join(appRoot, 'dist', 'cli.js');
// An absolute loader URL: children (and the MCP servers they start) run in temporary
// directories where `tsx` is not resolvable.
export const tsxLoader = pathToFileURL(createRequire(join(appRoot, 'package.json')).resolve('tsx')).href;

/**
 * Whether the app's bundle was built after every file it is made of: the app's sources,
 * and the workspace packages' sources and builds it bundles. The README's test command
 * builds it before the tests (turbo: the app's `test` depends on its `build`); a source
 * edited since, or a package built since, sends the children back to the sources. Looked
 * at once, when the first child may use the bundle.
 */
let bundleChecked: boolean | undefined;
function bundleIsCurrent(): boolean {
  if (bundleChecked !== undefined) return bundleChecked;
  bundleChecked = false;
  if (!existsSync(builtEntry)) return bundleChecked;
  const built = statSync(builtEntry).mtimeMs;
  const packages = join(appRoot, '..', '..', 'packages');
  const parts = [
    join(appRoot, 'src'),
    ...readdirSync(packages).flatMap((name) => [join(packages, name, 'src'), join(packages, name, 'dist')]),
  ];
  bundleChecked = parts.every((part) => newestFile(part) <= built);
  return bundleChecked;
}

/**
 * The MCP package's keyed test server (the SDK's McpServer), as an `--mcp` command line,
 * with its ledger directory in `parent`: it appends every request to `<ledger>/requests`
 * and the first request of each idempotency key, the effect, to `<ledger>/effects`.
 */
export function keyedMcpServer(parent: string): { readonly mcp: string; readonly ledger: string } {
  const ledger = join(parent, 'ledger');
  mkdirSync(ledger);
  const server = fileURLToPath(
    new URL('../../../packages/mcp/test/support/keyed-server.ts', import.meta.url),
  );
  return { mcp: `'${process.execPath}' --import '${tsxLoader}' '${server}' '${ledger}'`, ledger };
}

/** The lines of a ledger file, none when it does not exist yet. */
export const ledgerLines = (path: string): string[] =>
  existsSync(path) ? readFileSync(path, 'utf8').split('\n').filter(Boolean) : [];

/** A temporary directory with a workspace and a data directory inside. */
export function temporaryDirectory(): {
  path: string;
  workspace: string;
  dataDir: string;
  [Symbol.dispose](): void;
} {
  const path = mkdtempSync(join(tmpdir(), 'factum-cli-'));
  const workspace = join(path, 'workspace');
  mkdirSync(workspace);
  return {
    path,
    workspace,
    dataDir: join(path, '.factum'),
    [Symbol.dispose]: () => rmSync(path, { recursive: true, force: true }),
  };
}

/** A running CLI child process and everything it has written so far. */
export type CliProcess = {
  readonly child: ChildProcess;
  readonly output: { stdout: string; stderr: string };
  readonly exited: Promise<{
    code: number | null;
    signal: NodeJS.Signals | null;
    stdout: string;
    stderr: string;
  }>;
};

/**
 * How a CLI child starts: where, with which environment, extra flags for `node`, and
 * whether it must run from the sources (`sources: true`) even when the bundle is current.
 */
export type CliStart = {
  cwd: string;
  env?: NodeJS.ProcessEnv;
  nodeArgs?: readonly string[];
  sources?: boolean;
};

/**
 * Starts `factum <args>` as a real child process, without colour: the app's bundle, as
 * users run it, when it is current (see `bundleIsCurrent`), else the sources through tsx,
 * which costs a child about a second more of CPU to start.
 */
export function startCli(args: readonly string[], options: CliStart): CliProcess {
  // A 4 s lease (10 s by default): tests that wait for a SIGKILLed child's runs to become
  // recoverable wait less, and a live child still renews every 1.3 s.
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    NO_COLOR: '1',
    FACTUM_LEASE_TTL_MS: '4000',
    ...options.env,
  };
  delete env.FORCE_COLOR;
  const nodeArgs = options.nodeArgs ?? [];
  const command =
    options.sources !== true && bundleIsCurrent()
      ? [...nodeArgs, builtEntry]
      : ['--conditions=@factum/source', '--import', tsxLoader, ...nodeArgs, cliEntry];
  const child = spawn(process.execPath, [...command, ...args], {
    cwd: options.cwd,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output = { stdout: '', stderr: '' };
  child.stdout?.on('data', (chunk: Buffer) => (output.stdout += chunk.toString('utf8')));
  child.stderr?.on('data', (chunk: Buffer) => (output.stderr += chunk.toString('utf8')));
  const exited = new Promise<{
    code: number | null;
    signal: NodeJS.Signals | null;
    stdout: string;
    stderr: string;
  }>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code, signal) => resolve({ code, signal, ...output }));
  });
  return { child, output, exited };
}

/** The flags that point a command at a scripted provider and a data directory. */
export function scriptedFlags(provider: { readonly baseUrl: string }, dataDir: string): string[] {
  return ['--base-url', provider.baseUrl, '--model', 'test', '--dir', dataDir];
}

/** Runs `factum <args>` to the end. */
export function runCli(args: readonly string[], options: CliStart) {
  return startCli(args, options).exited;
}

/** Every fact in the data directory's log, in order. */
export async function factsIn(
  dataDir: string,
): Promise<{ sequence: number; invocationId: string; fact: Fact }[]> {
  const log = await EventLog.open(join(dataDir, 'events.sqlite'));
  try {
    const events = (await log.prefix({ maxEvents: 100_000, maxBytes: 64 << 20 })).events;
    return events.map(({ sequence, event }) => ({
      sequence,
      invocationId: event.invocation.invocationId,
      fact: event.fact,
    }));
  } finally {
    await log.close();
  }
}

/** Waits until `check` holds, polling; fails after `timeoutMs`. */
export async function eventually(check: () => boolean, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('the condition did not hold in time');
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/**
 * Waits until `factum recover` reports a dead process's run as gone: its lease (1 s for
 * the demo's crashing child) runs out by the database's clock, and until then recovery
 * rightly leaves the run alone.
 */
export async function untilLeaseExpired(dataDir: string, cwd: string): Promise<void> {
  for (let tries = 0; tries < 40; tries += 1) {
    const listed = await runCli(['recover', '--dir', dataDir], { cwd });
    if (listed.stdout.includes('is gone (lease expired')) return;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error('the dead process’s lease never expired');
}
