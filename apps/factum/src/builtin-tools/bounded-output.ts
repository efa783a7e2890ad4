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

  /**
   * The kept text, with a marker when something was dropped. JSON writes a control
   * character as six bytes, so the text is also cut where its JSON form would pass
   * twice the byte limit: output of control characters cannot blow up the result.
   */
  text(): string {
    const decoded = Buffer.concat(this.#chunks).toString('utf8');
    const text = withinJsonBytes(decoded, 2 * this.#limit);
    const dropped = this.#dropped + Buffer.byteLength(decoded) - Buffer.byteLength(text);
    return dropped === 0 ? text : `${text}\n[truncated: ${dropped} more bytes]`;
  }

  get truncated(): boolean {
    return this.#dropped > 0;
  }
}

/** The longest prefix of `text` whose JSON string form takes at most `limit` bytes. */
function withinJsonBytes(text: string, limit: number): string {
  let cost = 2;
  let end = 0;
  for (const character of text) {
    const code = character.codePointAt(0) ?? 0;
    cost += code < 0x20 ? 6 : character === '"' || character === '\\' ? 2 : Buffer.byteLength(character);
    if (cost > limit) break;
    end += character.length;
  }
  return text.slice(0, end);
}
