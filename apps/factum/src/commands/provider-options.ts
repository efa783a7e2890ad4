import { join } from 'node:path';
import type { ProviderConfig, ProviderKind } from '@factum/model';
import type { Command } from 'cac';
import { z } from 'zod';
import { resolveProvider } from '../provider-settings.js';
import type { CliContext } from './cli-context.js';
import { CliError } from './cli-error.js';

const ProviderKindSchema = z.enum(['openai_chat_completions', 'openai_responses', 'anthropic_messages']);

/** Provider flags as cac parses them. */
export type ProviderOptions = {
  readonly baseUrl?: string;
  readonly model?: string;
  readonly apiKey?: string;
  readonly provider?: string;
};

/** Adds the provider flags to a command that talks to a model. */
export function withProviderOptions(command: Command): Command {
  return command
    .option('--base-url <url>', 'OpenAI-compatible API root (or FACTUM_BASE_URL)')
    .option('--model <name>', 'model name (or FACTUM_MODEL)')
    .option('--api-key <key>', 'API key (prefer FACTUM_API_KEY or OPENAI_API_KEY: flags show in ps)')
    .option('--provider <kind>', `wire format: ${ProviderKindSchema.options.join(', ')}`);
}

/** The wire format `--provider` names, if given; a usage error if it names none. */
export function providerKindFrom(options: ProviderOptions): ProviderKind | undefined {
  if (options.provider === undefined) return undefined;
  const kind = ProviderKindSchema.safeParse(options.provider);
  if (!kind.success) {
    throw new CliError(
      'usage',
      `--provider must be one of ${ProviderKindSchema.options.join(', ')} (got ${options.provider})`,
    );
  }
  return kind.data;
}

/** The provider from flags, then the environment, then `<dir>/config.json`. */
export function providerFrom(options: ProviderOptions, dataDir: string, context: CliContext): ProviderConfig {
  const kind = providerKindFrom(options);
  return resolveProvider(
    {
      ...(options.baseUrl === undefined ? {} : { baseUrl: String(options.baseUrl) }),
      ...(options.model === undefined ? {} : { model: String(options.model) }),
      ...(options.apiKey === undefined ? {} : { apiKey: String(options.apiKey) }),
      ...(kind === undefined ? {} : { kind }),
    },
    { env: context.env, configFile: join(dataDir, 'config.json') },
  );
}
