import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { FactumError } from '@factum/agent-facts';
import type { ProviderConfig, ProviderKind } from '@factum/model';
import { z } from 'zod';

/** Where provider settings come from, highest precedence first: flags, environment, config files. */
export type ProviderFlags = {
  readonly baseUrl?: string;
  readonly model?: string;
  readonly apiKey?: string;
  readonly kind?: ProviderKind;
};

const kindSchema = z.enum(['openai_chat_completions', 'openai_responses', 'anthropic_messages']);

/** The user's own file, outside every workspace: it may say where keys go and which variable holds one. */
const userFileSchema = z.strictObject({
  baseUrl: z.string().url().optional(),
  model: z.string().min(1).optional(),
  kind: kindSchema.optional(),
  /** The name of an environment variable holding the key: the file never holds the key itself. */
  apiKeyEnv: z
    .string()
    .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name')
    .optional(),
  /**
   * MCP servers whose tools runs offer; parsed by the run command (commands/mcp-options.ts).
   * Only here: a server is a command Factum starts, which no workspace file may choose.
   */
  mcpServers: z.array(z.unknown()).optional(),
  /** Tools whose every call waits for a person's approval, in every run of this user. */
  requireApproval: z.array(z.string().min(1).max(256)).optional(),
});

/**
 * The data directory's file: it may live in a workspace the model (or a cloned
 * repository) can write, so it may choose the model, never where the key is sent.
 */
const dataDirFileSchema = z.strictObject({
  model: z.string().min(1).optional(),
  kind: kindSchema.optional(),
  /**
   * Tools that need a person's approval in this data directory's runs. A workspace may
   * only add approvals: nothing in this file can take one away.
   */
  requireApproval: z.array(z.string().min(1).max(256)).optional(),
});

/** A setting is missing or malformed; the message says where to set it. */
export class ProviderSettingsError extends FactumError {
  constructor(message: string) {
    super('provider_settings', message);
  }
}

/**
 * The user-level configuration file: `$XDG_CONFIG_HOME/factum/config.json`, else
 * `~/.config/factum/config.json`. It is outside every workspace unless a workspace
 * contains the home directory — and then the built-in tools and the shell's sandbox
 * still keep it out of the model's reach.
 */
export function userConfigFile(env: NodeJS.ProcessEnv = process.env): string {
  const xdg = env.XDG_CONFIG_HOME;
  const base = xdg !== undefined && isAbsolute(xdg) ? xdg : join(env.HOME || homedir(), '.config');
  return join(base, 'factum', 'config.json');
}

/** The user-level file's settings (`{}` when it is absent); a malformed file is one line naming it. */
export function userSettings(env: NodeJS.ProcessEnv = process.env): z.output<typeof userFileSchema> {
  const where = userConfigFile(env);
  return readSettings(where, userFileSchema, where) ?? {};
}

/**
 * Resolves the provider: flags, then `FACTUM_BASE_URL` / `FACTUM_MODEL` /
 * `FACTUM_API_KEY` (or the variable the user file's `apiKeyEnv` names, or
 * `OPENAI_API_KEY`), then the user file, then `<dataDir>/config.json` (model and kind
 * only). The base URL and the key's source come only from places the model cannot
 * write; a data-directory file that names them is refused. The key is read, never
 * written anywhere.
 */
export function resolveProvider(
  flags: ProviderFlags,
  options: { env?: NodeJS.ProcessEnv; configFile?: string; userConfigFile?: string } = {},
): ProviderConfig {
  const env = options.env ?? process.env;
  const where = options.userConfigFile ?? userConfigFile(env);
  const user = readSettings(where, userFileSchema, where) ?? {};
  const local =
    (options.configFile === undefined
      ? undefined
      : readSettings(options.configFile, dataDirFileSchema, where)) ?? {};
  const baseUrl = flags.baseUrl ?? env.FACTUM_BASE_URL ?? user.baseUrl;
  const model = flags.model ?? env.FACTUM_MODEL ?? user.model ?? local.model;
  const apiKey =
    flags.apiKey ??
    env.FACTUM_API_KEY ??
    (user.apiKeyEnv ? env[user.apiKeyEnv] : undefined) ??
    env.OPENAI_API_KEY;
  if (!baseUrl) {
    throw new ProviderSettingsError(
      `no base URL: pass --base-url, set FACTUM_BASE_URL, or add baseUrl to ${where}`,
    );
  }
  if (!model) {
    throw new ProviderSettingsError(`no model: pass --model, set FACTUM_MODEL, or add model to ${where}`);
  }
  return {
    kind: flags.kind ?? user.kind ?? local.kind ?? 'openai_chat_completions',
    baseUrl,
    model,
    auth: apiKey ? { apiKey } : { none: true },
  };
}

/**
 * The tools the configuration files say need approval: the user file's
 * `requireApproval`, plus the data directory's (which can only add to it).
 */
export function approvalsFromFiles(
  options: { env?: NodeJS.ProcessEnv; configFile?: string; userConfigFile?: string } = {},
): string[] {
  const env = options.env ?? process.env;
  const where = options.userConfigFile ?? userConfigFile(env);
  const user = readSettings(where, userFileSchema, where) ?? {};
  const local =
    (options.configFile === undefined
      ? undefined
      : readSettings(options.configFile, dataDirFileSchema, where)) ?? {};
  return [...new Set([...(user.requireApproval ?? []), ...(local.requireApproval ?? [])])];
}

/** A settings file parsed, `undefined` when absent; anything else wrong is one line naming the file. */
function readSettings<S extends z.ZodType>(
  file: string,
  schema: S,
  userFile: string,
): z.output<S> | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new ProviderSettingsError(`${file} cannot be read: ${(error as Error).message}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new ProviderSettingsError(`${file} is not valid JSON: ${oneLine((error as Error).message)}`);
  }
  const parsed = schema.safeParse(json);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const keys = issue?.code === 'unrecognized_keys' ? issue.keys : [];
  if (
    (schema as z.ZodType) === dataDirFileSchema &&
    keys.some((key) => key === 'baseUrl' || key === 'apiKeyEnv' || key === 'mcpServers')
  ) {
    throw new ProviderSettingsError(
      `${file} sets ${keys.join(', ')}, which a data-directory file may not (a workspace must not choose where the key is sent, nor what Factum starts): use --base-url, FACTUM_BASE_URL or ${userFile}`,
    );
  }
  const at = issue === undefined || issue.path.length === 0 ? '' : `${issue.path.join('.')}: `;
  throw new ProviderSettingsError(`${file} is malformed: ${at}${oneLine(issue?.message ?? 'invalid')}`);
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}
