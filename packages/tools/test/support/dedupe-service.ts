import { createServer, type Server } from 'node:http';

/**
 * A loopback HTTP service that deduplicates on the `Idempotency-Key` header, as
 * Stripe-style APIs do: the first request with a key performs the effect (a new charge
 * id); a repeat returns the same answer and performs nothing.
 */
export class DedupeService implements AsyncDisposable {
  readonly requests: string[] = [];
  readonly effects: string[] = [];
  readonly #answers = new Map<string, string>();
  readonly #server: Server;
  url = '';

  private constructor() {
    this.#server = createServer((request, response) => {
      const key = request.headers['idempotency-key'];
      if (typeof key !== 'string' || key.length === 0) {
        response.writeHead(400).end('an Idempotency-Key header is required');
        return;
      }
      this.requests.push(key);
      let answer = this.#answers.get(key);
      if (answer === undefined) {
        answer = `charge-${this.effects.length + 1}`;
        this.effects.push(key);
        this.#answers.set(key, answer);
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ id: answer }));
    });
  }

  static async start(): Promise<DedupeService> {
    const service = new DedupeService();
    await new Promise<void>((resolve) => service.#server.listen(0, '127.0.0.1', resolve));
    const address = service.#server.address();
    if (address === null || typeof address === 'string') throw new Error('no port');
    service.url = `http://127.0.0.1:${address.port}/charges`;
    return service;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}

/** What a keyed tool does: one POST carrying the call's idempotency key. */
export async function charge(url: string, key: string, signal: AbortSignal): Promise<{ id: string }> {
  const response = await fetch(url, { method: 'POST', headers: { 'idempotency-key': key }, signal });
  if (!response.ok) throw new Error(`the service answered ${response.status}`);
  return (await response.json()) as { id: string };
}
