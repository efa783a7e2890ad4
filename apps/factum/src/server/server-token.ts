import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FactumError } from '@factum/agent-facts';

/** The file in the data directory that holds the token's SHA-256, never the token. */
export const TOKEN_FILE = 'server-token';

const prefix = 'sha256:';

/** Checks bearer tokens against a stored digest in constant time. */
export class ServerToken {
  readonly #digest: Buffer;

  private constructor(digest: Buffer) {
    this.#digest = digest;
  }

  /** A verifier for a token held in memory (tests, embedding). */
  static fromToken(token: string): ServerToken {
    return new ServerToken(digestOf(token));
  }

  /**
   * Opens the token of `dataDir`. On first start it stores the SHA-256 of `token` (or
   * of a new random one) in `<dataDir>/server-token` with mode 0600 and returns the
   * plain token as `created` when it made one, to be shown once (a token the caller
   * gave is not echoed back). Later starts read the digest; a given `token` must then
   * match it.
   */
  static open(options: { dataDir: string; token?: string }): { token: ServerToken; created?: string } {
    const path = join(options.dataDir, TOKEN_FILE);
    const stored = readDigest(path);
    if (stored !== undefined) {
      const token = new ServerToken(stored);
      if (options.token !== undefined && !token.verify(options.token)) {
        throw new FactumError(
          'token_mismatch',
          `the given token does not match ${path}: pass the token printed at first start, or delete the file to make a new one`,
        );
      }
      return { token };
    }
    const plain = options.token ?? randomBytes(32).toString('base64url');
    mkdirSync(options.dataDir, { recursive: true, mode: 0o700 });
    // `wx` fails if another process created the file meanwhile: never overwrite a token.
    writeFileSync(path, `${prefix}${digestOf(plain).toString('hex')}\n`, { mode: 0o600, flag: 'wx' });
    const token = new ServerToken(digestOf(plain));
    return options.token === undefined ? { token, created: plain } : { token };
  }

  /** Whether `candidate` is the token; the comparison takes the same time either way. */
  verify(candidate: string): boolean {
    return timingSafeEqual(digestOf(candidate), this.#digest);
  }
}

function digestOf(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}

function readDigest(path: string): Buffer | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8').trim();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  const hex = text.startsWith(prefix) ? text.slice(prefix.length) : '';
  if (!/^[0-9a-f]{64}$/.test(hex)) {
    throw new FactumError(
      'token_file_malformed',
      `${path} does not hold a token digest: delete it to make a new token`,
    );
  }
  // A file someone loosened is tightened again: the digest still helps an attacker guess offline.
  if ((statSync(path).mode & 0o077) !== 0) chmodSync(path, 0o600);
  return Buffer.from(hex, 'hex');
}
