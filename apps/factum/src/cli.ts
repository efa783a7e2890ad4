#!/usr/bin/env node
import { createRequire } from 'node:module';

// src/cli.ts and dist/cli.js both sit one level below the package root.
const manifest = createRequire(import.meta.url)('../package.json') as { version?: string };
const version = manifest.version ?? '0.0.0';
const args = process.argv.slice(2);

// `factum --version` answers before the runtime (SQLite, QuickJS, HTTP) is loaded.
if (args.length === 1 && (args[0] === '--version' || args[0] === '-v')) {
  process.stdout.write(`factum/${version} ${process.platform}-${process.arch} node-${process.version}\n`);
  process.exit(0);
}

const [{ main }, { Terminal }] = await Promise.all([
  import('./commands/create-cli.js'),
  import('./terminal/terminal.js'),
]);
const terminal = new Terminal({ stdout: process.stdout, stderr: process.stderr, env: process.env });
const code = await main(process.argv, {
  cwd: process.cwd(),
  env: process.env,
  terminal,
  self: { execPath: process.execPath, args: [...process.execArgv, process.argv[1] ?? ''] },
  signals: process,
  version,
  stdin: process.stdin,
});
// Exit explicitly: idle keep-alive sockets to a provider must not hold the prompt.
process.exit(code);
