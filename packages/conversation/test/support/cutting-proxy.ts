import { connect, createServer, type Server, type Socket } from 'node:net';

/**
 * A loopback TCP proxy in front of a server that can cut the connections carrying the
 * event stream (`GET /event`) while every other exchange goes on: how a network blip
 * looks to an observer whose prompt is still running.
 */
export class CuttingProxy implements AsyncDisposable {
  readonly #server: Server;
  readonly #events = new Set<Socket>();
  readonly #all = new Set<Socket>();
  #port = 0;
  #subscriptions = 0;

  private constructor(target: URL) {
    this.#server = createServer((client) => {
      const upstream = connect(Number(target.port), target.hostname);
      this.#all.add(client);
      this.#all.add(upstream);
      const forget = () => {
        this.#all.delete(client);
        this.#all.delete(upstream);
        this.#events.delete(client);
        client.destroy();
        upstream.destroy();
      };
      client.on('close', forget);
      upstream.on('close', forget);
      client.on('error', forget);
      upstream.on('error', forget);
      client.on('data', (chunk: Buffer) => {
        if (chunk.subarray(0, 11).toString('latin1') === 'GET /event ') {
          this.#events.add(client);
          this.#subscriptions += 1;
        }
      });
      client.pipe(upstream);
      upstream.pipe(client);
    });
  }

  static async start(target: string): Promise<CuttingProxy> {
    const proxy = new CuttingProxy(new URL(target));
    await new Promise<void>((resolve) => proxy.#server.listen(0, '127.0.0.1', resolve));
    const address = proxy.#server.address();
    if (address === null || typeof address === 'string') throw new Error('no port');
    proxy.#port = address.port;
    return proxy;
  }

  get url(): string {
    return `http://127.0.0.1:${this.#port}`;
  }

  /** Event-stream subscriptions seen so far. */
  get subscriptions(): number {
    return this.#subscriptions;
  }

  /** Cuts every connection that carries an event stream; returns how many. */
  cutEventStreams(): number {
    const cut = this.#events.size;
    for (const socket of this.#events) socket.destroy();
    return cut;
  }

  async close(): Promise<void> {
    for (const socket of this.#all) socket.destroy();
    await new Promise((resolve) => this.#server.close(resolve));
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }
}
