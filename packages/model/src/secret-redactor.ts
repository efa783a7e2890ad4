const sensitiveHeader = /auth|key|token|secret|cookie|session/i;
const placeholder = '[redacted]';

/**
 * Removes every secret of one provider configuration from text that may have come
 * back from the provider (error bodies echo keys more often than one would hope).
 */
export class SecretRedactor {
  readonly #secrets: readonly string[];

  constructor(secrets: readonly string[]) {
    // Longest first, so a key that contains another secret is removed whole.
    this.#secrets = [...new Set(secrets.filter((secret) => secret.length >= 4))].sort(
      (a, b) => b.length - a.length,
    );
  }

  /** The secrets of a provider: its API key and the values of headers that look like credentials. */
  static forProvider(
    apiKey: string | undefined,
    headers: Readonly<Record<string, string>> = {},
  ): SecretRedactor {
    const secrets = Object.entries(headers)
      .filter(([name]) => sensitiveHeader.test(name))
      .map(([, value]) => value);
    if (apiKey !== undefined) secrets.push(apiKey);
    return new SecretRedactor(secrets);
  }

  redact(text: string): string {
    let result = text;
    for (const secret of this.#secrets) result = result.replaceAll(secret, placeholder);
    return result;
  }
}
