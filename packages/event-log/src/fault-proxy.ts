import { connect, createServer, type Server, type Socket } from 'node:net';

/** What the proxy does with the bytes it carries. */
export type ProxyMode = 'pass' | 'stall' | 'hold_answers';

type Pair = {
  readonly client: Socket;
  readonly server: Socket;
  /** Bytes held on their way to the server, and on their way back, in order. */
  readonly up: Buffer[];
  readonly down: Buffer[];
  /** The server hung up while its replies were held: the client learns it on heal. */
  serverGone: boolean;
};

/**
 * A TCP proxy on loopback between a process and its store, for partition tests. It
 * passes bytes through; `stall()` holds them both ways with every socket kept open (a
 * network that stops delivering, nobody hanging up); `holdAnswers()` delivers what the
 * client sends and holds only the replies; `heal()` delivers what it held, in order, and
 * passes again; `cut()` drops every connection at once (a reset). New connections are
 * accepted in any mode and treated like the others.
 *
 * @example
 * await using proxy = await FaultProxy.start({ host: '127.0.0.1', port: 5432 });
 * const log = await EventLog.open({ postgres: proxy.rewrite(url) });
 * proxy.stall();
 */
export class FaultProxy implements AsyncDisposable {
  readonly #server: Server;
  readonly #target: { readonly host: string; readonly port: number };
  readonly #pairs = new Set<Pair>();
  #mode: ProxyMode = 'pass';

  private constructor(server: Server, target: { host: string; port: number }) {
    this.#server = server;
    this.#target = target;
    server.on('connection', (client) => this.#accept(client));
  }

  /** Starts a proxy on a free loopback port that forwards to `target`. */
  static async start(target: { readonly host: string; readonly port: number }): Promise<FaultProxy> {
    const server = createServer();
    const proxy = new FaultProxy(server, { ...target });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    return proxy;
  }

  /** The port it listens on. */
  get port(): number {
    const address = this.#server.address();
    if (address === null || typeof address === 'string') throw new Error('the proxy is not listening');
    return address.port;
  }

  /** What it does now. */
  get mode(): ProxyMode {
    return this.#mode;
  }

  /** `url` (a `postgres://` connection string) pointed at this proxy instead. */
  rewrite(url: string): string {
    const parsed = new URL(url);
    parsed.hostname = '127.0.0.1';
    parsed.port = String(this.port);
    return parsed.toString();
  }

  /** Holds every byte both ways from now on; sockets stay open. */
  stall(): void {
    this.#mode = 'stall';
  }

  /** Delivers what clients send, holds every reply. */
  holdAnswers(): void {
    this.#mode = 'hold_answers';
  }

  /** Delivers everything held, in order, and passes bytes again. */
  heal(): void {
    this.#mode = 'pass';
    for (const pair of this.#pairs) {
      if (!pair.serverGone) for (const chunk of pair.up.splice(0)) pair.server.write(chunk);
      for (const chunk of pair.down.splice(0)) pair.client.write(chunk);
      if (pair.serverGone) pair.client.end(() => this.#drop(pair));
    }
  }

  /** Resets every connection it carries now; what was held is lost. */
  cut(): void {
    for (const pair of this.#pairs) this.#drop(pair);
  }

  /**
   * Chunks it holds now on their way to the server (`up`) and back (`down`): a test
   * waits for `up` to know a statement left the client before it cuts.
   */
  get held(): { readonly up: number; readonly down: number } {
    let up = 0;
    let down = 0;
    for (const pair of this.#pairs) {
      up += pair.up.length;
      down += pair.down.length;
    }
    return { up, down };
  }

  /** Connections it carries now. */
  get connections(): number {
    return this.#pairs.size;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  /** Drops every connection and stops listening. */
  async close(): Promise<void> {
    this.cut();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  #accept(client: Socket): void {
    const server = connect(this.#target.port, this.#target.host);
    const pair: Pair = { client, server, up: [], down: [], serverGone: false };
    this.#pairs.add(pair);
    client.on('data', (chunk) => {
      if (this.#mode === 'stall') pair.up.push(chunk);
      else server.write(chunk);
    });
    server.on('data', (chunk) => {
      if (this.#mode === 'pass') client.write(chunk);
      else pair.down.push(chunk);
    });
    const drop = () => this.#drop(pair);
    client.on('error', drop);
    client.on('close', drop);
    const serverGone = () => {
      if (this.#mode === 'pass') drop();
      else pair.serverGone = true;
    };
    server.on('error', serverGone);
    server.on('close', serverGone);
  }

  #drop(pair: Pair): void {
    if (!this.#pairs.delete(pair)) return;
    pair.up.length = 0;
    pair.down.length = 0;
    pair.client.resetAndDestroy();
    pair.server.destroy();
  }
}
