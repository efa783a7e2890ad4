/**
 * Collects a stream's output up to a byte limit, keeping the head and counting what
 * it dropped, so a chatty command cannot fill memory or the log.
 */
export class BoundedOutput {
  readonly #limit: number;
  readonly #chunks: Buffer[] = [];
  #kept = 0;
  #dropped = 0;

  constructor(limitBytes: number) {
    this.#limit = limitBytes;
  }

  push(chunk: Buffer): void {
    const room = this.#limit - this.#kept;
    if (room > 0) {
      const kept = chunk.subarray(0, room);
      this.#chunks.push(kept);
      this.#kept += kept.length;
    }
    this.#dropped += Math.max(0, chunk.length - Math.max(room, 0));
  }

  /** The kept text, with a marker when something was dropped. */
  text(): string {
    const text = Buffer.concat(this.#chunks).toString('utf8');
    return this.#dropped === 0 ? text : `${text}\n[truncated: ${this.#dropped} more bytes]`;
  }

  get truncated(): boolean {
    return this.#dropped > 0;
  }
}
