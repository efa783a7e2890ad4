import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { HostClaim } from '../src/host-claim.ts';

describe('host claim', () => {
  it('a live server’s claim is seen by others and refused to a second server; a dead one is ignored', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'factum-claim-'));
    try {
      const sleeper = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], { stdio: 'ignore' });
      writeFileSync(join(dir, 'host.json'), JSON.stringify({ pid: sleeper.pid, startedAt: 'now' }));
      expect(HostClaim.holder(dir)).toBe(sleeper.pid);
      expect(() => HostClaim.take(dir)).toThrow(/already serves/);
      sleeper.kill('SIGKILL');
      await new Promise((resolve) => sleeper.on('close', resolve));
      expect(HostClaim.holder(dir), 'a dead holder does not count').toBeUndefined();
      const claim = HostClaim.take(dir);
      expect(HostClaim.holder(dir), 'this process never counts as another holder').toBeUndefined();
      claim.release();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
