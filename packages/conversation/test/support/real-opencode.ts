import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ScriptedProvider } from '@factum/model/testing';

/** The OpenCode version the package is tested against (its pinned dev dependency). */
export const PINNED_OPENCODE_VERSION = '1.18.33';

const packageRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/**
 * The `opencode` binary: the platform package that `opencode-ai` (a pinned dev
 * dependency) brings, found without running its postinstall. `OPENCODE_VERSION=x.y.z`
 * runs the suite against another release: it is installed once with npm (scripts off)
 * under `node_modules/.cache/opencode-<version>`.
 */
export function opencodeBinary(): string {
  const platform = `opencode-${process.platform === 'win32' ? 'windows' : process.platform}-${process.arch}`;
  const version = process.env.OPENCODE_VERSION;
  let from = join(packageRoot, 'package.json');
  if (version && version !== PINNED_OPENCODE_VERSION) {
    const prefix = join(packageRoot, 'node_modules', '.cache', `opencode-${version}`);
    if (!existsSync(join(prefix, 'node_modules', 'opencode-ai'))) {
      mkdirSync(prefix, { recursive: true });
      execFileSync(
        'npm',
        ['install', '--no-save', '--ignore-scripts', '--prefix', prefix, `opencode-ai@${version}`],
        {
          stdio: 'ignore',
        },
      );
    }
    from = join(prefix, 'package.json');
  }
  const wrapper = createRequire(createRequire(from).resolve('opencode-ai/package.json'));
  const binary = join(dirname(wrapper.resolve(`${platform}/package.json`)), 'bin', 'opencode');
  if (!existsSync(binary)) throw new Error(`no opencode binary at ${binary}: install ${platform}`);
  return binary;
}

/** A port free on 127.0.0.1 right now (`--port 0` would take 4096 when that is free). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

/**
 * A real `opencode serve --pure` on loopback, offline: its `HOME` and `XDG_*` in a temp
 * directory, one provider (`@ai-sdk/openai-compatible`, built into the binary) pointed at
 * a scripted provider, autoupdate, sharing, the model catalogue fetch, LSP downloads and
 * default plugins off, and npm offline so that its background plugin install fails at
 * once instead of reaching a registry. `kill()` is a SIGKILL; `restart()` starts it again
 * on the same data, so sessions and messages survive.
 */
export class RealOpenCode implements AsyncDisposable {
  readonly dir: string;
  #child: ChildProcess | undefined;
  #port = 0;
  #log = '';

  private constructor(dir: string) {
    this.dir = dir;
  }

  /**
   * Starts a server whose providers are the scripted ones given, each with one model
   * `test` (`<name>/test`); the first is the default model and the small model too.
   */
  static async start(providers: Readonly<Record<string, ScriptedProvider>>): Promise<RealOpenCode> {
    const dir = mkdtempSync(join(tmpdir(), 'factum-opencode-'));
    for (const name of ['home', 'config', 'data', 'cache', 'state', 'work']) mkdirSync(join(dir, name));
    const names = Object.keys(providers);
    const provider = Object.fromEntries(
      Object.entries(providers).map(([name, scripted]) => [
        name,
        {
          npm: '@ai-sdk/openai-compatible',
          name,
          options: { baseURL: scripted.baseUrl, apiKey: 'test-key' },
          models: { test: { name: 'test' } },
        },
      ]),
    );
    const config = {
      autoupdate: false,
      share: 'disabled',
      enabled_providers: names,
      model: `${names[0]}/test`,
      small_model: `${names[0]}/test`,
      plugin: [],
      lsp: false,
      formatter: false,
      provider,
    };
    writeFileSync(join(dir, 'opencode.json'), JSON.stringify(config));
    const server = new RealOpenCode(dir);
    try {
      await server.#spawn();
    } catch (error) {
      await server.close();
      throw error;
    }
    return server;
  }

  get url(): string {
    return `http://127.0.0.1:${this.#port}`;
  }

  /** What the server printed so far (for failure messages). */
  get log(): string {
    return this.#log;
  }

  /** SIGKILLs the server and waits until it is gone. */
  async kill(): Promise<void> {
    const child = this.#child;
    this.#child = undefined;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
  }

  /** Starts the server again on the same data (and port). */
  async restart(): Promise<void> {
    await this.kill();
    await this.#spawn(this.#port);
  }

  async close(): Promise<void> {
    await this.kill();
    rmSync(this.dir, { recursive: true, force: true });
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  async #spawn(port?: number): Promise<void> {
    this.#port = port ?? (await freePort());
    const dir = this.dir;
    const child = spawn(
      opencodeBinary(),
      ['serve', '--pure', '--hostname', '127.0.0.1', '--port', String(this.#port)],
      {
        cwd: join(dir, 'work'),
        stdio: ['ignore', 'pipe', 'pipe'],
        env: {
          PATH: process.env.PATH ?? '',
          HOME: join(dir, 'home'),
          XDG_CONFIG_HOME: join(dir, 'config'),
          XDG_DATA_HOME: join(dir, 'data'),
          XDG_CACHE_HOME: join(dir, 'cache'),
          XDG_STATE_HOME: join(dir, 'state'),
          OPENCODE_CONFIG: join(dir, 'opencode.json'),
          OPENCODE_DISABLE_AUTOUPDATE: '1',
          OPENCODE_DISABLE_SHARE: '1',
          OPENCODE_DISABLE_MODELS_FETCH: '1',
          OPENCODE_DISABLE_LSP_DOWNLOAD: '1',
          OPENCODE_DISABLE_DEFAULT_PLUGINS: '1',
          OPENCODE_DISABLE_CLAUDE_CODE: '1',
          OPENCODE_DISABLE_EXTERNAL_SKILLS: '1',
          // Its background `npm install @opencode-ai/plugin` must fail at once, offline.
          npm_config_offline: 'true',
          npm_config_cache: join(dir, 'cache', 'npm'),
        },
      },
    );
    this.#child = child;
    const append = (chunk: Buffer) => {
      this.#log = `${this.#log}${chunk.toString('utf8')}`.slice(-20_000);
    };
    child.stdout?.on('data', append);
    child.stderr?.on('data', append);
    const deadline = Date.now() + 60_000;
    for (;;) {
      if (child.exitCode !== null || child.signalCode !== null) {
        throw new Error(`opencode serve exited before it answered:\n${this.#log}`);
      }
      try {
        const response = await fetch(`${this.url}/session/status`, { signal: AbortSignal.timeout(2000) });
        await response.body?.cancel();
        if (response.ok) return;
      } catch {
        // Not listening yet, or listening but not yet answering.
      }
      if (Date.now() > deadline) throw new Error(`opencode serve did not answer in 60 s:\n${this.#log}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}
