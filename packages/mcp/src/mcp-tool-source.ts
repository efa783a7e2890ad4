import { type ToolCallContext, ToolError, type ToolExecutor } from '@factum/agent-facts';
import { ToolCatalog, ToolHandler, type ToolRegistration } from '@factum/tools';
import { ErrorCode, McpError as SdkError } from '@modelcontextprotocol/sdk/types.js';
import { mapMcpResult } from './map-mcp-result.js';
import {
  connectMcp,
  type McpConnection,
  type McpConnectOptions,
  type McpProgress,
  redact,
} from './mcp-connection.js';
import { McpError } from './mcp-error.js';
import {
  type McpServerConfig,
  mcpServerLabel,
  type ParsedMcpServerConfig,
  parseMcpServerConfig,
} from './mcp-server-config.js';
import {
  catalogName,
  defaultApproval,
  defaultRecovery,
  hintsOf,
  type McpTool,
  recoveryPolicyOf,
  semanticsOf,
} from './mcp-tool.js';

/** Options of `McpToolSource.connect`. */
export type McpSourceOptions = McpConnectOptions & {
  /**
   * Catalog names already taken (built-in tools, other servers): a tool of this server
   * whose name is one of them is named `${label}_${name}` instead.
   */
  readonly reserved?: Iterable<string>;
  /**
   * How long one call may go with neither an answer nor a progress notification before
   * it is cancelled and left uncertain (default 10 minutes).
   */
  readonly callTimeoutMs?: number;
};

// The call's own idle timer decides when it has waited too long; the SDK's would not
// see progress that is routed past it.
const NO_SDK_TIMEOUT = 2 ** 31 - 1;

/** The `_meta` keys every call carries: the idempotency key and the attempt. */
export const IDEMPOTENCY_META_KEY = 'factum/idempotency-key';
export const ATTEMPT_META_KEY = 'factum/attempt';

/**
 * An MCP server as a source of tools. Its tools are listed once, at connect, with
 * their JSON Schemas compiled (a tool whose schema does not compile is left out and
 * named in `skipped`); `registrations()` puts them in a `ToolCatalog`, where every call
 * goes through the same protocol as a native tool: checked input (an invalid one is a
 * recorded rejection and never reaches the server), T1, the MCP call, T2.
 *
 * Each call carries `context.idempotencyKey` and `context.attempt` in its `_meta`,
 * records the server's progress notifications as `tool_notified`, and turns the run's
 * cancellation into an MCP cancellation. A call whose server dies, times out or is
 * cancelled mid-call (unless the tool is read-only) is `outcome_unknown`: it stays
 * uncertain, and is never retried blindly.
 *
 * @example
 * await using everything = await McpToolSource.connect({ kind: 'stdio', command: 'npx', args: ['-y', '@modelcontextprotocol/server-everything'] });
 * const catalog = new ToolCatalog(everything.registrations());
 */
export class McpToolSource implements AsyncDisposable {
  readonly label: string;
  readonly tools: readonly McpTool[];
  /** Tools the server listed that cannot be offered, and why. */
  readonly skipped: readonly { readonly name: string; readonly reason: string }[];
  readonly #connection: McpConnection;
  readonly #config: ParsedMcpServerConfig;
  readonly #byName: ReadonlyMap<string, McpTool>;
  readonly #callTimeoutMs: number;
  #closed = false;
  #tokens = 0;

  private constructor(init: {
    label: string;
    config: ParsedMcpServerConfig;
    connection: McpConnection;
    tools: McpTool[];
    skipped: { name: string; reason: string }[];
    callTimeoutMs: number;
  }) {
    this.label = init.label;
    this.#config = init.config;
    this.#connection = init.connection;
    this.tools = init.tools;
    this.skipped = init.skipped;
    this.#byName = new Map(init.tools.map((tool) => [tool.name, tool]));
    this.#callTimeoutMs = init.callTimeoutMs;
  }

  /** Connects to a server and lists its tools. Throws `McpError` (`invalid_config`, `connect_failed`, `list_failed`). */
  static async connect(server: McpServerConfig, options: McpSourceOptions = {}): Promise<McpToolSource> {
    const config = parseMcpServerConfig(server);
    const label = mcpServerLabel(config);
    const connection = await connectMcp(config, label, options);
    try {
      const { tools, skipped } = await listTools(connection, config, label, new Set(options.reserved ?? []));
      return new McpToolSource({
        label,
        config,
        connection,
        tools,
        skipped,
        callTimeoutMs: config.callTimeoutMs ?? options.callTimeoutMs ?? 600_000,
      });
    } catch (error) {
      await connection.client.close().catch(() => undefined);
      throw error;
    }
  }

  /** The server's process id, for a stdio server. */
  get pid(): number | undefined {
    return this.#connection.pid;
  }

  /** The tools as catalog registrations: nestable, recovery and semantics from the hints (or overrides). */
  registrations(): ToolRegistration[] {
    const executor: ToolExecutor = {
      names: () => this.tools.map((tool) => tool.name),
      invoke: (name, input, context) => this.#call(name, input, context),
    };
    return this.tools.map((tool) => registrationOf(tool, executor));
  }

  /** Ends the connection (a stdio server's process is stopped). */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#connection.client.close();
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  async #call(name: string, input: unknown, context: ToolCallContext): Promise<unknown> {
    const tool = this.#byName.get(name);
    if (tool === undefined) throw new ToolError('unavailable', `${this.label} has no tool ${name}`);
    // Nothing was sent: a plain failure is the truth.
    if (this.#closed || !this.#connection.connected()) {
      throw new ToolError(
        'failed',
        `the MCP server ${this.label} is not connected (it exited or was closed)`,
      );
    }
    let notes: Promise<void> | undefined;
    // One controller per call carries both the run's cancellation and the idle timeout
    // to the SDK (which never removes the abort listener it adds, so it must not see the
    // run's long-lived signal). `AbortSignal.any` would do the same at several times
    // the cost of the whole loopback call's own work, on every call.
    const abort = new AbortController();
    let idled = false;
    let broken: Error | undefined;
    // No answer and no progress for callTimeoutMs: the call is cancelled, its outcome unknown.
    const arm = () =>
      setTimeout(() => {
        idled = true;
        abort.abort();
      }, this.#callTimeoutMs);
    let timer = arm();
    const cancel = () => abort.abort(context.signal.reason);
    if (context.signal.aborted) cancel();
    else context.signal.addEventListener('abort', cancel, { once: true });
    this.#tokens += 1;
    const token = `factum-${this.#tokens}`;
    // The transport broke under the call: no answer will come, so it ends now, uncertain.
    const unwatch = this.#connection.onBroken((error) => {
      broken ??= error;
      abort.abort();
    });
    const unsubscribe = this.#connection.onProgress(token, (progress) => {
      clearTimeout(timer);
      timer = arm();
      // Progress is recorded in order, and all of it before the settlement.
      notes = (notes ?? Promise.resolve())
        .then(() => context.notify(progressText(progress)))
        .catch(() => undefined);
    });
    try {
      const raw = await this.#connection.client.callTool(
        {
          name: tool.mcpName,
          arguments: (input ?? {}) as Record<string, unknown>,
          _meta: {
            progressToken: token,
            [IDEMPOTENCY_META_KEY]: context.idempotencyKey,
            [ATTEMPT_META_KEY]: context.attempt,
          },
        },
        undefined,
        { signal: abort.signal, timeout: NO_SDK_TIMEOUT },
      );
      if (notes !== undefined) await notes;
      return mapMcpResult(raw, tool.name);
    } catch (error) {
      if (notes !== undefined) await notes;
      throw this.#failure(error, tool, context, { idle: idled, broken });
    } finally {
      clearTimeout(timer);
      context.signal.removeEventListener('abort', cancel);
      unsubscribe();
      unwatch();
    }
  }

  #failure(
    error: unknown,
    tool: McpTool,
    context: ToolCallContext,
    why: { readonly idle: boolean; readonly broken: Error | undefined },
  ): ToolError {
    if (ToolError.isInstance(error)) return error;
    const { idle, broken } = why;
    const where = `${tool.name} on ${this.label}`;
    if (broken !== undefined && !context.signal.aborted) {
      return new ToolError(
        'outcome_unknown',
        `${where}: the connection to the server broke mid-call (${redact(broken, this.#config)}): the effect may or may not have happened`,
        { cause: broken },
      );
    }
    if (idle && !context.signal.aborted) {
      return new ToolError(
        'outcome_unknown',
        `${where} neither answered nor reported progress for ${this.#callTimeoutMs} ms: it was cancelled, and the effect may or may not have happened`,
        { cause: error },
      );
    }
    if (context.signal.aborted) {
      return tool.recovery === 'read_only'
        ? new ToolError('cancelled', `${where} was cancelled (an MCP cancellation was sent)`)
        : new ToolError(
            'outcome_unknown',
            `${where} was cancelled mid-call: an MCP cancellation was sent, and the server may or may not have completed the effect`,
            { cause: error },
          );
    }
    if (
      error instanceof SdkError &&
      error.code !== ErrorCode.ConnectionClosed &&
      error.code !== ErrorCode.RequestTimeout
    ) {
      // The server answered the call with an error: it says the call failed.
      return new ToolError('failed', `${where}: ${redact(error, this.#config)}`);
    }
    return new ToolError(
      'outcome_unknown',
      `${where} did not answer (${redact(error, this.#config)}): the effect may or may not have happened`,
      { cause: error },
    );
  }
}

function progressText(progress: McpProgress): string {
  const count =
    progress.total === undefined ? `${progress.progress}` : `${progress.progress}/${progress.total}`;
  return progress.message ? `${count} ${progress.message}` : count;
}

/**
 * `readOnly` only when the user declared it: the T1 of any other tool of a server is
 * waited for before the call, since a server's `readOnlyHint` is not a promise (it still
 * makes the tool re-runnable by recovery).
 */
function registrationOf(tool: McpTool, executor: ToolExecutor): ToolRegistration {
  return {
    definition: { name: tool.name, description: tool.description, inputSchema: tool.inputSchema },
    handler: ToolHandler.immediate(executor),
    nesting: 'nestable',
    semantics: semanticsOf(tool.recovery),
    recovery: recoveryPolicyOf(tool.recovery),
    ...(tool.approval === 'always' ? { approval: 'always' as const } : {}),
    ...(tool.declaredReadOnly ? { readOnly: true } : {}),
    source: { kind: 'mcp', server: tool.server },
  };
}

async function listTools(
  connection: McpConnection,
  config: ParsedMcpServerConfig,
  label: string,
  reserved: ReadonlySet<string>,
): Promise<{ tools: McpTool[]; skipped: { name: string; reason: string }[] }> {
  const tools: McpTool[] = [];
  const skipped: { name: string; reason: string }[] = [];
  let cursor: string | undefined;
  do {
    let page: Awaited<ReturnType<McpConnection['client']['listTools']>>;
    try {
      page = await connection.client.listTools(cursor === undefined ? {} : { cursor });
    } catch (error) {
      throw new McpError(
        'list_failed',
        `the MCP server ${label} did not list its tools: ${redact(error, config)}`,
        {
          cause: error,
        },
      );
    }
    for (const listed of page.tools) {
      const { $schema: _, ...inputSchema } = listed.inputSchema as Record<string, unknown>;
      const hints = hintsOf(listed.annotations);
      const plain = catalogName(config.prefix ?? '', listed.name);
      const tool: McpTool = {
        name: reserved.has(plain) ? catalogName(`${label}_${config.prefix ?? ''}`, listed.name) : plain,
        mcpName: listed.name,
        server: label,
        description: listed.description ?? listed.title ?? '',
        inputSchema,
        hints,
        recovery: config.recovery?.[listed.name] ?? defaultRecovery(hints),
        declaredReadOnly: config.recovery?.[listed.name] === 'read_only',
        approval: config.approval?.[listed.name] ?? defaultApproval(hints),
      };
      try {
        // The catalog compiles the schema: a tool it would refuse is left out here.
        new ToolCatalog([registrationOf(tool, { names: () => [], invoke: async () => null })]);
        if (tools.some((known) => known.name === tool.name))
          throw new Error(`a second tool is named ${tool.name}`);
        tools.push(tool);
      } catch (error) {
        skipped.push({ name: listed.name, reason: error instanceof Error ? error.message : String(error) });
      }
    }
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return { tools, skipped };
}
