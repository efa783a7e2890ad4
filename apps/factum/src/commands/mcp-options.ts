import type { McpServerConfig, McpToolSource } from '@factum/mcp';
import type { ToolRegistration } from '@factum/tools';
import type { Command } from 'cac';
import { userSettings } from '../provider-settings.js';
import { CliError } from './cli-error.js';

/** MCP flags as cac parses them (a repeated flag is an array). */
export type McpOptions = {
  readonly mcp?: string | string[];
  readonly mcpUrl?: string | string[];
};

/** Adds `--mcp <command>` and `--mcp-url <url>` (each repeatable) to a command. */
export function withMcpOptions(command: Command): Command {
  return command
    .option(
      '--mcp <command>',
      'also offer the tools of an MCP server started by this command (stdio); repeatable',
    )
    .option(
      '--mcp-url <url>',
      'also offer the tools of an MCP server at this Streamable HTTP URL; repeatable',
    );
}

const list = (value: string | string[] | undefined): string[] =>
  value === undefined ? [] : (Array.isArray(value) ? value : [value]).map(String);

/**
 * The MCP servers of a run: `mcpServers` in the user's own config file (each a command
 * line, or an object `{ kind: 'stdio', command, args, env?, recovery? }` / `{ kind:
 * 'http', url, headers?, recovery? }`), then the flags. Never from a workspace's
 * `.factum/config.json`: a server is a command Factum starts, and a cloned repository
 * (or the model) must not choose one.
 */
export async function mcpServersFrom(
  options: McpOptions,
  env: NodeJS.ProcessEnv,
): Promise<McpServerConfig[]> {
  // Loaded when a run starts, not at the CLI's startup.
  const { McpError, mcpCommand, parseMcpServerConfig } = await import('@factum/mcp');
  const configured: unknown[] = userSettings(env).mcpServers ?? [];
  try {
    return [
      ...configured.map((entry) =>
        typeof entry === 'string' ? mcpCommand(entry) : parseMcpServerConfig(entry),
      ),
      ...list(options.mcp).map((line) => mcpCommand(line)),
      ...list(options.mcpUrl).map((url) => parseMcpServerConfig({ kind: 'http', url })),
    ];
  } catch (error) {
    if (McpError.isInstance(error)) throw new CliError('usage', error.message);
    throw error;
  }
}

/** The connected servers of a run: close them with `await using`. */
export type McpSources = AsyncDisposable & {
  readonly registrations: ToolRegistration[];
  /** Which server each MCP tool came from, by catalog name. */
  readonly servers: ReadonlyMap<string, string>;
};

/** Connects every server; a tool whose name is taken (a built-in's, say) gets the server's label as a prefix. */
export async function connectMcpSources(
  configs: McpServerConfig[],
  taken: Iterable<string>,
): Promise<McpSources> {
  const { McpToolSource } = await import('@factum/mcp');
  const sources: McpToolSource[] = [];
  const reserved = new Set(taken);
  const close = async () => {
    await Promise.allSettled(sources.map((source) => source.close()));
  };
  try {
    for (const config of configs) {
      const source = await McpToolSource.connect(config, { reserved });
      sources.push(source);
      for (const tool of source.tools) reserved.add(tool.name);
    }
  } catch (error) {
    await close();
    throw error;
  }
  return {
    registrations: sources.flatMap((source) => source.registrations()),
    servers: new Map(
      sources.flatMap((source) => source.tools.map((tool) => [tool.name, source.label] as const)),
    ),
    [Symbol.asyncDispose]: close,
  };
}
