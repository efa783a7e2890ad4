import { canonicalJson, contentDigest } from './canonical-json.js';
import type { ResultReference } from './tool-call-schema.js';

/**
 * A tool's whole result, kept out of line beside the log. The fact that settles the
 * call carries only `reference()`: its digest and size.
 */
export class ToolResult {
  readonly #value: unknown;
  readonly #text: string;
  #reference: ResultReference | undefined;

  private constructor(value: unknown, text: string) {
    this.#value = value;
    this.#text = text;
  }

  /** A result from any JSON value. */
  static of(value: unknown): ToolResult {
    const text = canonicalJson(value);
    return new ToolResult(JSON.parse(text), text);
  }

  /** A result from its stored canonical text. */
  static fromText(text: string): ToolResult {
    return new ToolResult(JSON.parse(text), text);
  }

  /** The result as a JSON value (a fresh copy each call). */
  json(): unknown {
    return structuredClone(this.#value);
  }

  /** The canonical JSON text, as stored. */
  text(): string {
    return this.#text;
  }

  /**
   * Digest and size, as the settling fact carries them. Computed once: a result of
   * megabytes is hashed when its fact is built, and again by every reader otherwise.
   */
  reference(): ResultReference {
    this.#reference ??= { digest: contentDigest(this.#text), bytes: Buffer.byteLength(this.#text) };
    return { ...this.#reference };
  }
}
