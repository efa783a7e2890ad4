import { existsSync, readFileSync } from 'node:fs';
import { FactumError } from '@factum/agent-facts';
import type { ProviderConfig, ProviderKind } from '@factum/model';
import { z } from 'zod';

/** Where provider settings come from, highest precedence first: flags, environment, config file. */
export type ProviderFlags = {
  readonly baseUrl?: string;
  readonly model?: string;
  readonly apiKey?: string;
  readonly kind?: ProviderKind;
};

const fileSchema = z.strictObject({
  baseUrl: z.string().url().optional(),
  model: z.string().min(1).optional(),
  kind: z.enum(['openai_chat_completions', 'openai_responses', 'anthropic_messages']).optional(),
  /** The name of an environment variable holding the key: the file never holds the key itself. */
  apiKeyEnv: z.string().optional(),
  /** MCP servers whose tools runs offer; parsed by the run command (commands/mcp-options.ts). */
  mcpServers: z.array(z.unknown()).optional(),
});

/** A setting is missing or malformed; the message says where to set it. */
export class ProviderSettingsError extends FactumError {
  constructor(message: string) {
    super('provider_settings', message);
  }
}

/**
 * Resolves the provider from flags, then `FACTUM_BASE_URL` / `FACTUM_MODEL` /
 * `FACTUM_API_KEY` (or `OPENAI_API_KEY`), then `.factum/config.json` in the data
 * directory. The key is read, never written anywhere.
 */
export function resolveProvider(
  flags: ProviderFlags,
  options: { env?: NodeJS.ProcessEnv; configFile?: string } = {},
): ProviderConfig {
  const env = options.env ?? process.env;
  let file: z.infer<typeof fileSchema> = {};
  if (options.configFile !== undefined && existsSync(options.configFile)) {
    const parsed = fileSchema.safeParse(JSON.parse(readFileSync(options.configFile, 'utf8')));
    if (!parsed.success) {
      throw new ProviderSettingsError(
        `${options.configFile} is malformed: ${parsed.error.issues[0]?.message ?? ''}`,
      );
    }
    file = parsed.data;
  }
  const baseUrl = flags.baseUrl ?? env.FACTUM_BASE_URL ?? file.baseUrl;
  const model = flags.model ?? env.FACTUM_MODEL ?? file.model;
  const apiKey =
    flags.apiKey ??
    env.FACTUM_API_KEY ??
    (file.apiKeyEnv ? env[file.apiKeyEnv] : undefined) ??
    env.OPENAI_API_KEY;
  if (!baseUrl) {
    throw new ProviderSettingsError(
      'no base URL: pass --base-url, set FACTUM_BASE_URL, or add baseUrl to .factum/config.json',
    );
  }
  if (!model)
    throw new ProviderSettingsError(
      'no model: pass --model, set FACTUM_MODEL, or add model to .factum/config.json',
    );
  return {
    kind: flags.kind ?? file.kind ?? 'openai_chat_completions',
    baseUrl,
    model,
    auth: apiKey ? { apiKey } : { none: true },
  };
}
