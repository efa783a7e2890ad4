#!/usr/bin/env node
import { createRequire } from 'node:module';
import { main } from './commands/create-cli.js';
import { Terminal } from './terminal/terminal.js';

// src/cli.ts and dist/cli.js both sit one level below the package root.
const manifest = createRequire(import.meta.url)('../package.json') as { version?: string };
const terminal = new Terminal({ stdout: process.stdout, stderr: process.stderr, env: process.env });
const code = await main(process.argv, {
  cwd: process.cwd(),
  env: process.env,
  terminal,
  self: { execPath: process.execPath, args: [...process.execArgv, process.argv[1] ?? ''] },
  signals: process,
  version: manifest.version ?? '0.0.0',
});
// Exit explicitly: idle keep-alive sockets to a provider must not hold the prompt.
process.exit(code);
