import { canonicalJson, contentDigest } from '@factum/agent-facts';
import type { RunInput } from './run-input.js';

/**
 * A digest of what must not change across a handoff: the configuration, the provider's
 * kind, address and model, the provider options, the output limit and the tools.
 * Secrets (the API key, headers) are not part of it, so it is safe to store.
 */
export function executionFingerprint(input: RunInput): string {
  return contentDigest(
    canonicalJson({
      configuration: input.configuration,
      provider: { kind: input.provider.kind, baseUrl: input.provider.baseUrl, model: input.provider.model },
      providerOptions: input.providerOptions ?? {},
      mainOutputLimit: input.mainOutputLimit ?? null,
      tools: input.work.tools.fingerprint(),
      toolMode: input.configuration.toolMode,
    }),
  );
}
