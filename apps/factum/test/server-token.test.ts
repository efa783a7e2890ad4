import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FactumError } from '@factum/agent-facts';
import { describe, expect, it } from 'vitest';
import { ServerToken, TOKEN_FILE } from '../src/server/server-token.ts';

function temporaryDir(): { path: string; [Symbol.dispose](): void } {
  const path = mkdtempSync(join(tmpdir(), 'factum-token-'));
  return { path, [Symbol.dispose]: () => rmSync(path, { recursive: true, force: true }) };
}

describe('the server token', () => {
  it('is made on first start, stored only as a SHA-256 digest with mode 0600, and shown once', () => {
    using dir = temporaryDir();
    const first = ServerToken.open({ dataDir: join(dir.path, 'data') });
    expect(first.created).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const file = join(dir.path, 'data', TOKEN_FILE);
    const stored = readFileSync(file, 'utf8');
    expect(stored).toMatch(/^sha256:[0-9a-f]{64}\n$/);
    expect(stored).not.toContain(first.created);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(first.token.verify(first.created!)).toBe(true);

    const second = ServerToken.open({ dataDir: join(dir.path, 'data') });
    expect(second.created, 'later starts never show it again').toBeUndefined();
    expect(second.token.verify(first.created!)).toBe(true);
    expect(second.token.verify(`${first.created}x`)).toBe(false);
    expect(second.token.verify('')).toBe(false);
  });

  it('takes a given token on first start without echoing it, and refuses a different one later', () => {
    using dir = temporaryDir();
    const given = 'a-token-the-operator-chose';
    const first = ServerToken.open({ dataDir: dir.path, token: given });
    expect(first.created).toBeUndefined();
    expect(first.token.verify(given)).toBe(true);
    expect(ServerToken.open({ dataDir: dir.path, token: given }).token.verify(given)).toBe(true);
    const refused = (() => {
      try {
        return ServerToken.open({ dataDir: dir.path, token: 'another-token-entirely' });
      } catch (error) {
        return error;
      }
    })();
    expect(FactumError.isInstance(refused) && refused.code).toBe('token_mismatch');
  });
});
