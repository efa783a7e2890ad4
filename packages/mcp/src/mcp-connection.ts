import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ProgressNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { McpError } from './mcp-error.js';
import type { ParsedMcpServerConfig } from './mcp-server-config.js';

/** The SDK client of one server, and what the source needs to know about its life. */
export type McpConnection = {
  readonly client: Client;
  /** The server's process id (stdio only). */
  readonly pid: number | undefined;
  /** Whether the transport is still open (a server that exited closes it). */
  connected(): boolean;
  /** Listens to the progress notifications of one token; returns the unsubscribe. */
  onProgress(token: string, listener: (progress: McpProgress) => void): () => void;
  /**
   * Listens for a broken transport while calls are in flight; returns the unsubscribe.
   * Streamable HTTP reports a stream that broke (its server died, the network went)
   * only through the SDK's `onerror`: no answer will come to the calls it carried.
   */
  onBroken(listener: (error: Error) => void): () => void;
};

/** One progress notification of a call. */
export type McpProgress = { readonly progress: number; readonly total?: number; readonly message?: string };

/** Options of a connection. */
export type McpConnectOptions = {
  readonly signal?: AbortSignal;
  /** How long the handshake may take (default 30 s: `npx` may install the server first). */
  readonly timeoutMs?: number;
  /** What to do with a stdio server's stderr (default `ignore`). */
  readonly stderr?: 'ignore' | 'inherit';
};

/**
 * Starts (stdio) or reaches (Streamable HTTP) a server and completes the MCP handshake
 * with the SDK's own client. A failure is `McpError('connect_failed')` whose message
 * names the server by its label and never carries a header value or URL credentials.
 */
export async function connectMcp(
  config: ParsedMcpServerConfig,
  label: string,
  options: McpConnectOptions = {},
): Promise<McpConnection> {
  options.signal?.throwIfAborted();
  const transport: Transport & { pid?: number | null } =
    config.kind === 'stdio'
      ? new StdioClientTransport({
          command: config.command,
          args: config.args,
          env: { ...getDefaultEnvironment(), ...config.env },
          ...(config.cwd === undefined ? {} : { cwd: config.cwd }),
          stderr: options.stderr ?? 'ignore',
        })
      : new StreamableHTTPClientTransport(new URL(config.url), {
          requestInit: { headers: config.headers ?? {} },
        });
  const client = new Client({ name: 'factum', version: '0.1.0' }, { capabilities: {} });
  let open = true;
  client.onclose = () => {
    open = false;
  };
  const broken = new Set<(error: Error) => void>();
  // A stdio server that dies closes the transport, which fails its calls; over HTTP the
  // SDK leaves them pending forever and reports the broken stream here only.
  if (config.kind === 'http') {
    client.onerror = (error) => {
      for (const listener of [...broken]) listener(error);
    };
  }
  try {
    await client.connect(transport, {
      timeout: options.timeoutMs ?? 30_000,
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    });
  } catch (error) {
    await client.close().catch(() => undefined);
    throw new McpError(
      'connect_failed',
      `the MCP server ${label} did not start or answer the handshake: ${redact(error, config)}`,
      { cause: error },
    );
  }
  // Progress is routed here rather than through the SDK's per-request `onprogress`: the
  // SDK drops its handler when the answer arrives, and runs notification handlers a
  // microtask later, so the last notifications before an answer were lost. Here a
  // listener lives until the call's own continuation, which runs after them.
  const listeners = new Map<string, (progress: McpProgress) => void>();
  client.setNotificationHandler(ProgressNotificationSchema, (notification) => {
    const { progressToken, progress, total, message } = notification.params;
    listeners.get(String(progressToken))?.({
      progress,
      ...(total === undefined ? {} : { total }),
      ...(message === undefined ? {} : { message }),
    });
  });
  return {
    client,
    pid: transport.pid ?? undefined,
    connected: () => open,
    onProgress(token, listener) {
      listeners.set(token, listener);
      return () => listeners.delete(token);
    },
    onBroken(listener) {
      broken.add(listener);
      return () => broken.delete(listener);
    },
  };
}

/** An error's message with the URL and every header value taken out. */
export function redact(error: unknown, config: ParsedMcpServerConfig): string {
  let message = error instanceof Error ? error.message : String(error);
  const secrets =
    config.kind === 'http'
      ? [config.url, ...Object.values(config.headers ?? {})]
      : Object.values(config.env ?? {});
  for (const secret of secrets) if (secret.length >= 4) message = message.split(secret).join('[redacted]');
  return message;
}
