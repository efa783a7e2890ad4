import { basename, dirname, extname } from 'node:path';
import { parse } from 'shell-quote';
import { z } from 'zod';
import { McpError } from './mcp-error.js';

/** How per-tool recovery may be overridden by the user, whatever the server's hints say. */
export const McpRecoveryOverrideSchema = z.enum(['read_only', 'idempotent', 'never_auto_retry']);
export type McpRecoveryOverride = z.infer<typeof McpRecoveryOverrideSchema>;

/** Whether a tool's calls need approval, whatever the server's hints say. */
export const McpApprovalOverrideSchema = z.enum(['always', 'never']);
export type McpApprovalOverride = z.infer<typeof McpApprovalOverrideSchema>;

const common = {
  /** A short label for the server, shown beside its tools (default: derived from the command or URL). */
  name: z.string().min(1).max(64).optional(),
  /** A prefix for the catalog names of its tools, to keep two servers' tools apart. */
  prefix: z.string().max(32).optional(),
  /** Per tool (by its MCP name): the recovery policy to use instead of the annotations' default. */
  recovery: z.record(z.string(), McpRecoveryOverrideSchema).optional(),
  /**
   * Per tool (by its MCP name): whether calls need a person's approval, instead of the
   * default (`always` for a tool whose annotations state `destructiveHint: true`).
   */
  approval: z.record(z.string(), McpApprovalOverrideSchema).optional(),
  /**
   * How long one call may go with neither an answer nor a progress notification before
   * it is cancelled and left uncertain (default: the source's `callTimeoutMs`, 10 minutes).
   */
  callTimeoutMs: z
    .number()
    .int()
    .positive()
    .max(2 ** 31 - 1)
    .optional(),
};

/**
 * An MCP server to take tools from: a command started as a child process speaking
 * MCP over stdio, or a Streamable HTTP endpoint. `env` and `headers` go to the server
 * only: they never reach the log, an error message or output.
 */
export const McpServerConfigSchema = z.discriminatedUnion('kind', [
  z.strictObject({
    kind: z.literal('stdio'),
    command: z.string().min(1),
    args: z.array(z.string()).default([]),
    /** Added to the small default environment the SDK passes (PATH, HOME, …): nothing else leaks. */
    env: z.record(z.string(), z.string()).optional(),
    cwd: z.string().optional(),
    ...common,
  }),
  z.strictObject({
    kind: z.literal('http'),
    url: z.url({ protocol: /^https?$/ }),
    headers: z.record(z.string(), z.string()).optional(),
    ...common,
  }),
]);
export type McpServerConfig = z.input<typeof McpServerConfigSchema>;
export type ParsedMcpServerConfig = z.output<typeof McpServerConfigSchema>;

/** Parses a configuration, or throws `McpError('invalid_config')` naming the bad field. */
export function parseMcpServerConfig(value: unknown): ParsedMcpServerConfig {
  const result = McpServerConfigSchema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  throw new McpError(
    'invalid_config',
    `invalid MCP server configuration at ${issue?.path.join('.') || '(root)'}: ${issue?.message ?? 'invalid'}`,
  );
}

/**
 * A stdio server from one command line, split as a POSIX shell would (quotes,
 * escapes) but never run through a shell: `npx -y @modelcontextprotocol/server-everything`.
 * Operators (`|`, `;`, `&&`, redirections) and globs are refused.
 */
export function mcpCommand(line: string): ParsedMcpServerConfig {
  const words = parse(line, (name) => `$${name}`);
  const args: string[] = [];
  for (const word of words) {
    if (typeof word !== 'string') {
      throw new McpError(
        'invalid_config',
        `the MCP command ${JSON.stringify(line)} has a shell operator; give one program and its arguments`,
      );
    }
    args.push(word);
  }
  const [command, ...rest] = args;
  if (command === undefined) throw new McpError('invalid_config', 'the MCP command is empty');
  return parseMcpServerConfig({ kind: 'stdio', command, args: rest });
}

/** A label for a server that says where it is without any secret: the program, or the URL's origin and path. */
export function mcpServerLabel(config: ParsedMcpServerConfig): string {
  if (config.name !== undefined) return config.name;
  if (config.kind === 'http') {
    const url = new URL(config.url);
    return `${url.host}${url.pathname === '/' ? '' : url.pathname}`;
  }
  const runner = runners.has(basename(config.command));
  const program = runner
    ? (config.args.find((word) => !word.startsWith('-')) ?? config.command)
    : config.command;
  return nameOfProgram(program);
}

const runners = new Set(['npx', 'node', 'bunx', 'bun', 'deno', 'uvx', 'python', 'python3', 'pnpm', 'tsx']);
const generic = new Set(['index', 'main', 'cli', 'server', 'dist', 'build', 'bin', 'src']);

/** `@modelcontextprotocol/server-everything` → `everything`; `…/server-filesystem/dist/index.js` → `filesystem`. */
function nameOfProgram(program: string): string {
  let path = program;
  let name = basename(path, extname(path));
  while (generic.has(name) && dirname(path) !== path) {
    path = dirname(path);
    name = basename(path);
  }
  return name.replace(/^(mcp-)?server-/, '').replace(/-mcp$/, '') || 'mcp';
}
