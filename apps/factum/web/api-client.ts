/** A refusal from the API: its HTTP status, the error's stable code and message. */
export class ApiError extends Error {
  readonly status: number;
  readonly code: string | undefined;

  constructor(status: number, code: string | undefined, message: string) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

/** Calls the server's JSON API with the bearer token. */
export class ApiClient {
  readonly #token: string;
  readonly #onUnauthorized: () => void;

  constructor(token: string, onUnauthorized: () => void) {
    this.#token = token;
    this.#onUnauthorized = onUnauthorized;
  }

  get token(): string {
    return this.#token;
  }

  /** `GET` (or the given method with a JSON body); resolves to the parsed body, rejects with `ApiError`. */
  async call<T>(
    path: string,
    options: { method?: string; body?: unknown; headers?: Record<string, string> } = {},
  ): Promise<T> {
    const headers: Record<string, string> = { ...options.headers, authorization: `Bearer ${this.#token}` };
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    const response = await fetch(path, {
      method: options.method ?? 'GET',
      headers,
      ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
    });
    const body = (await response.json().catch(() => ({}))) as {
      error?: { code?: string; message?: string };
    };
    if (response.status === 401) this.#onUnauthorized();
    if (!response.ok) {
      throw new ApiError(response.status, body.error?.code, body.error?.message ?? response.statusText);
    }
    return body as T;
  }
}
