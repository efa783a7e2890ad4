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

  /**
   * The secrets of a provider: its API key, the values of headers that look like
   * credentials, and what `baseUrl` carries besides its address (user info, and every
   * query value: `?key=…` is how some gateways take their key). URL parts are kept both
   * as written and decoded, since an error body may echo either.
   */
  static forProvider(
    apiKey: string | undefined,
    headers: Readonly<Record<string, string>> = {},
    baseUrl?: string,
  ): SecretRedactor {
    const secrets = Object.entries(headers)
      .filter(([name]) => sensitiveHeader.test(name))
      .map(([, value]) => value);
    if (apiKey !== undefined) secrets.push(apiKey);
    if (baseUrl !== undefined) secrets.push(...urlSecrets(baseUrl));
    return new SecretRedactor(secrets);
  }

  redact(text: string): string {
    let result = text;
    for (const secret of this.#secrets) result = result.replaceAll(secret, placeholder);
    return result;
  }
}

function urlSecrets(baseUrl: string): string[] {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    return [];
  }
  const secrets: string[] = [];
  for (const raw of [url.username, url.password]) {
    if (raw !== '') secrets.push(raw, safeDecode(raw));
  }
  if (url.search.length > 1) {
    for (const pair of url.search.slice(1).split('&')) {
      const raw = pair.slice(pair.indexOf('=') + 1);
      if (pair.includes('=') && raw !== '') secrets.push(raw, safeDecode(raw.replaceAll('+', ' ')));
    }
    for (const value of url.searchParams.values()) secrets.push(value, encodeURIComponent(value));
  }
  return secrets;
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
