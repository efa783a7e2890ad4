import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import type { McpServerConfig } from '../../src/index.ts';

const require = createRequire(import.meta.url);
const binOf = (name: string) => join(dirname(require.resolve(`${name}/package.json`)), 'dist', 'index.js');

/** The registry's `server-everything`, started by Node over stdio. */
export function everything(extra: Partial<McpServerConfig> = {}): McpServerConfig {
  return {
    kind: 'stdio',
    command: process.execPath,
    args: [binOf('@modelcontextprotocol/server-everything'), 'stdio'],
    name: 'everything',
    ...extra,
  } as McpServerConfig;
}

/** The registry's `server-filesystem`, allowed to touch `dir` only. */
export function filesystem(dir: string): McpServerConfig {
  return {
    kind: 'stdio',
    command: process.execPath,
    args: [binOf('@modelcontextprotocol/server-filesystem'), dir],
    name: 'filesystem',
  };
}

/** The path of the everything server's entry point, to start it as an HTTP server. */
export const everythingBin = binOf('@modelcontextprotocol/server-everything');

/** A loopback port that was free a moment ago. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

const keyedServer = join(dirname(new URL(import.meta.url).pathname), 'keyed-server.ts');

/** The keyed test server (the SDK's McpServer) writing its ledgers to `dir`. */
export function keyed(dir: string, flags: string[] = []): McpServerConfig {
  return {
    kind: 'stdio',
    command: process.execPath,
    args: ['--import', 'tsx', keyedServer, dir, ...flags],
    name: 'keyed',
  };
}
