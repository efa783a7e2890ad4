import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { createServer } from './create-server.js';
import { InvocationRegistry } from './invocation-registry.js';
import type { ServerOptions } from './server-options.js';

/** How long `close` lets running requests finish before it cuts their connections. */
const CLOSE_GRACE_MS = 2_000;

/** Options of `startServer`: those of `createServer`, and where to listen. */
export type StartServerOptions = Omit<ServerOptions, 'signal'> & {
  /** The port (default 0: a free one). */
  readonly port?: number;
  /** The address (default `127.0.0.1`: only this machine can connect). */
  readonly hostname?: string;
};

/** A listening server. Closing it ends live streams and releases held handoffs; runs go on. */
export type RunningServer = AsyncDisposable & {
  /** `http://host:port`, with the port actually bound. */
  readonly url: string;
  /** The runs this server started: cancel or await them before closing the runtime. */
  readonly registry: InvocationRegistry;
  close(): Promise<void>;
};

/**
 * Listens with `createServer`'s app on a loopback port.
 *
 * @example
 * await using server = await startServer({ runtime, token, provider, port: 0 });
 * console.log(server.url);
 */
export async function startServer(options: StartServerOptions): Promise<RunningServer> {
  const closing = new AbortController();
  const registry = options.registry ?? new InvocationRegistry();
  const app = createServer({ ...options, registry, signal: closing.signal });
  const hostname = options.hostname ?? '127.0.0.1';
  const server = await new Promise<ReturnType<typeof serve>>((resolve, reject) => {
    const listening = serve({ fetch: app.fetch, port: options.port ?? 0, hostname }, () =>
      resolve(listening),
    );
    listening.once('error', reject);
  });
  const http = server as Server;
  const { port } = http.address() as AddressInfo;
  const host = hostname.includes(':') ? `[${hostname}]` : hostname;
  let closed: Promise<void> | undefined;
  const close = () => {
    closed ??= new Promise<void>((resolve, reject) => {
      // Streams end first; their connections then idle and are closed as soon as they
      // do, instead of lingering for the keep-alive timeout. A request still running
      // after the grace period is cut off.
      closing.abort();
      const sweep = setInterval(() => http.closeIdleConnections(), 25);
      const cutoff = setTimeout(() => http.closeAllConnections(), CLOSE_GRACE_MS);
      http.close((error) => {
        clearInterval(sweep);
        clearTimeout(cutoff);
        if (error) reject(error);
        else resolve();
      });
      http.closeIdleConnections();
    });
    return closed;
  };
  return { url: `http://${host}:${port}`, registry, close, [Symbol.asyncDispose]: close };
}
