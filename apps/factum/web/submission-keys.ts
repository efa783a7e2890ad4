/**
 * One idempotency key per message the composer sends. The key of a message not yet
 * accepted is kept: a second click, a resend after a dropped connection or a retry of
 * the same text in the same session carries the same key, so the server starts the turn
 * once. Once the server has answered for it, the next message gets a new key.
 */
export class SubmissionKeys {
  #pending: { readonly sessionId: string; readonly message: string; readonly key: string } | undefined;

  /** The key for sending `message` in `sessionId`: the pending one if it is that message. */
  keyFor(sessionId: string, message: string): string {
    const pending = this.#pending;
    if (pending !== undefined && pending.sessionId === sessionId && pending.message === message) {
      return pending.key;
    }
    const key = `web-${crypto.randomUUID()}`;
    this.#pending = { sessionId, message, key };
    return key;
  }

  /** The server answered for `key` (started or replayed): a new message gets a new key. */
  accepted(key: string): void {
    if (this.#pending?.key === key) this.#pending = undefined;
  }
}
