import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { EventLog } from '@factum/event-log';
import { describe, expect, it } from 'vitest';
import { runCli, temporaryDirectory } from './cli-harness.ts';

/** What a command must not load to start: the runtime's packages and their native and network parts. */
const RUNTIME = [
  '/packages/engine/',
  '/packages/model/',
  '/packages/code-runtime/',
  '/packages/mcp/',
  '/packages/tools/',
  '/node_modules/undici/',
  '/node_modules/quickjs-emscripten',
  '/node_modules/@modelcontextprotocol/',
];

/**
 * Runs `factum <args>` with a module hook that writes down every module it resolves,
 * and returns them with the outcome.
 */
async function modulesLoadedBy(args: readonly string[], options: { readonly withLog?: boolean } = {}) {
  using dir = temporaryDirectory();
  if (options.withLog === true) {
    // A log to read: in a directory without one, `log` opens nothing at all.
    mkdirSync(dir.dataDir);
    await (await EventLog.open(join(dir.dataDir, 'events.sqlite'))).close();
  }
  const record = join(dir.path, 'modules.txt');
  writeFileSync(record, '');
  const hooks = join(dir.path, 'hooks.mjs');
  writeFileSync(
    hooks,
    `import { appendFileSync } from 'node:fs';
export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  appendFileSync(${JSON.stringify(record)}, resolved.url + '\\n');
  return resolved;
}\n`,
  );
  const register = join(dir.path, 'register.mjs');
  writeFileSync(
    register,
    `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(hooks).href)});\n`,
  );
  const outcome = await runCli([...args, '--dir', dir.dataDir], {
    cwd: dir.workspace,
    nodeArgs: ['--import', pathToFileURL(register).href],
    // What the sources load, module by module: the bundle would be a few chunks.
    sources: true,
  });
  const modules = readFileSync(record, 'utf8')
    .split('\n')
    .filter((line) => line !== '');
  return { outcome, modules };
}

const loadedOf = (modules: readonly string[], parts: readonly string[]) =>
  parts.filter((part) => modules.some((url) => url.includes(part)));

describe('what a command loads to start', () => {
  it('`factum --help` loads none of the runtime: no engine, log, model client, code runtime or MCP', async () => {
    const { outcome, modules } = await modulesLoadedBy(['--help']);
    expect(outcome.code, outcome.stderr).toBe(0);
    expect(outcome.stdout).toContain('serve');
    // The hook saw the CLI's own modules, so an empty list below means something.
    expect(modules.some((url) => url.includes('/apps/factum/src/commands/create-cli.ts'))).toBe(true);
    expect(loadedOf(modules, [...RUNTIME, '/packages/event-log/', '/node_modules/better-sqlite3/'])).toEqual(
      [],
    );
  }, 60_000);

  it('`factum log` opens the log alone: SQLite, but no engine, model client, code runtime or MCP', async () => {
    const { outcome, modules } = await modulesLoadedBy(['log'], { withLog: true });
    expect(outcome.code, outcome.stderr).toBe(0);
    expect(loadedOf(modules, ['/packages/event-log/', '/node_modules/better-sqlite3/'])).toHaveLength(2);
    expect(loadedOf(modules, RUNTIME)).toEqual([]);
  }, 60_000);
});
