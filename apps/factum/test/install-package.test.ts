import { spawn } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startScriptedProvider } from '@factum/model/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LogOutputSchema } from '../src/commands/json-output-schemas.ts';

const appRoot = fileURLToPath(new URL('..', import.meta.url));
// node-gyp builds better-sqlite3 against the headers of the Node that runs the install.
const nodePrefix = dirname(dirname(process.execPath));

function run(
  command: string,
  args: readonly string[],
  options: { cwd: string; env?: NodeJS.ProcessEnv },
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: { ...process.env, NO_COLOR: '1', ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/**
 * Offers better-sqlite3's addon as a local prebuild to installs under `root`. The package
 * installs its addon with prebuild-install, which looks in a folder of local prebuilds
 * before it downloads one (from GitHub, out of this machine's reach) and before it compiles
 * SQLite from source, two minutes of one core. The workspace's own install built that
 * addon for this Node already (on a fresh machine from source, so that build stays
 * tested), and it is offered as what a machine that reaches GitHub would download. The
 * folder is named in a `.prebuild-installrc` above the install, where prebuild-install
 * looks for its settings (an `npm_config_` variable would draw an npm warning).
 */
async function offerLocalPrebuild(root: string): Promise<void> {
  const manifest = createRequire(join(appRoot, 'package.json')).resolve('better-sqlite3/package.json');
  const addon = join('build', 'Release', 'better_sqlite3.node');
  if (!existsSync(join(dirname(manifest), addon))) return;
  const { version } = JSON.parse(readFileSync(manifest, 'utf8')) as { version: string };
  const report = process.report.getReport() as { header?: { glibcVersionRuntime?: string } };
  const libc = process.platform === 'linux' && !report.header?.glibcVersionRuntime ? 'musl' : '';
  const name = `better-sqlite3-v${version}-node-v${process.versions.modules}-${process.platform}${libc}-${process.arch}.tar.gz`;
  const folder = join(root, 'prebuilds');
  mkdirSync(folder, { recursive: true });
  const packed = await run('tar', ['-czf', join(folder, name), '-C', dirname(manifest), addon], {
    cwd: root,
  });
  expect(packed.code, packed.stderr).toBe(0);
  writeFileSync(join(root, '.prebuild-installrc'), `local-prebuilds=${folder}\n`);
}

/**
 * The app as a user gets it: `pnpm pack` makes one tarball (the workspace packages are
 * bundled in), `npm install -g` puts it in a fresh prefix, fetching the libraries it
 * needs from the registry (better-sqlite3's addon from a local prebuild, see
 * `offerLocalPrebuild`), and `factum` then runs from directories that have nothing to do with
 * this repository.
 */
describe('the packed app, installed with npm into a temporary prefix', () => {
  const root = mkdtempSync(join(tmpdir(), 'factum-install-'));
  const prefix = join(root, 'prefix');
  const factum = join(prefix, 'bin', 'factum');

  beforeAll(async () => {
    if (!existsSync(join(appRoot, 'dist', 'cli.js')))
      throw new Error(
        'apps/factum/dist is missing: build the app first (turbo runs the build before this test)',
      );
    const packed = await run('npx', ['-y', 'pnpm@12.4.2', 'pack', '--pack-destination', root], {
      cwd: appRoot,
    });
    expect(packed.code, packed.stderr).toBe(0);
    const tarball = readdirSync(root).find((name) => /^factum-\d+\.\d+\.\d+.*\.tgz$/.test(name));
    expect(tarball, 'one tarball named factum-x.y.z.tgz').toBeDefined();
    // `--prefix` moves npm's global config to `<prefix>/etc/npmrc`: keep the machine's own
    // (its registry, proxy and certificate settings), or npm fails TLS and retries each
    // package for a minute before it falls back to its cache.
    // npm's strict install-script check reads the global root before the install
    // creates it (a fresh prefix only: a machine's global prefix has it already).
    mkdirSync(join(prefix, 'lib', 'node_modules'), { recursive: true });
    await offerLocalPrebuild(root);
    const machineConfig = (await run('npm', ['config', 'get', 'globalconfig'], { cwd: root })).stdout.trim();
    const keepConfig = existsSync(machineConfig) ? ['--globalconfig', machineConfig] : [];
    const installed = await run(
      'npm',
      [
        'install',
        '-g',
        '--prefix',
        prefix,
        ...keepConfig,
        '--no-audit',
        '--no-fund',
        // What the README tells users: npm 11 allows better-sqlite3's build by name, and
        // strict mode fails the install if any other dependency had a script to allow.
        '--allow-scripts=better-sqlite3',
        '--strict-allow-scripts',
        join(root, tarball!),
      ],
      {
        cwd: root,
        env: { npm_config_nodedir: nodePrefix, npm_config_update_notifier: 'false' },
      },
    );
    expect(installed.code, installed.stderr).toBe(0);
    expect(installed.stderr, 'no notice of a script that was not allowed').not.toMatch(/allow-?scripts/i);
  }, 900_000);

  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('runs the demo and a scripted run from other directories, and -C points at a project', async () => {
    const version = await run(factum, ['--version'], { cwd: root });
    const manifest = JSON.parse(readFileSync(join(appRoot, 'package.json'), 'utf8')) as { version: string };
    expect(version.stdout).toContain(`factum/${manifest.version}`);

    const demoDir = join(root, 'demo-here');
    mkdirSync(demoDir);
    const demo = await run(factum, ['demo'], { cwd: demoDir });
    expect(demo.code, demo.stderr).toBe(0);
    expect(demo.stdout).toContain('nothing is left open');
    expect(
      existsSync(join(demoDir, '.factum', 'events.sqlite')),
      'the log is in the directory it ran in',
    ).toBe(true);

    await using provider = await startScriptedProvider();
    provider.script(
      { toolCalls: [{ id: 'c1', name: 'write_file', arguments: { path: 'hello.txt', content: 'hello' } }] },
      { text: 'Wrote hello.txt.' },
    );
    const project = join(root, 'project');
    mkdirSync(project);
    const turn = await run(
      factum,
      ['run', 'write hello.txt', '--base-url', provider.baseUrl, '--model', 'm'],
      {
        cwd: project,
        env: { FACTUM_API_KEY: 'sk-installed-test' },
      },
    );
    expect(turn.code, turn.stderr).toBe(0);
    expect(readFileSync(join(project, 'hello.txt'), 'utf8')).toBe('hello');
    const log = await run(factum, ['-C', project, 'log', '--json'], { cwd: demoDir });
    expect(log.code, log.stderr).toBe(0);
    const listed = LogOutputSchema.parse(JSON.parse(log.stdout));
    expect(listed.invocations.map((entry) => entry.status)).toEqual(['completed']);
  }, 120_000);
});
