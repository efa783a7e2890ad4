import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FactumError } from '@factum/agent-facts';

type Claim = { readonly pid: number; readonly startedAt: string };

/**
 * Which process serves a data directory. A long-running `factum serve` claims it;
 * every other command that opens the directory checks the claim and, while the
 * claiming process lives, leaves its unfinished invocations alone instead of ending
 * them as interrupted — they are not dead, they are running in the server.
 */
export class HostClaim {
  readonly #file: string;

  private constructor(file: string) {
    this.#file = file;
  }

  /** The live process serving `dataDir`, if any (never this process). */
  static holder(dataDir: string): number | undefined {
    const claim = read(join(dataDir, 'host.json'));
    return claim !== undefined && claim.pid !== process.pid && alive(claim.pid) ? claim.pid : undefined;
  }

  /** Claims `dataDir` for this process; refused while another live process holds it. */
  static take(dataDir: string): HostClaim {
    const holder = HostClaim.holder(dataDir);
    if (holder !== undefined) {
      throw new FactumError(
        'directory_served',
        `process ${holder} already serves ${dataDir}: stop it or use another --dir`,
      );
    }
    const file = join(dataDir, 'host.json');
    writeFileSync(
      file,
      JSON.stringify({ pid: process.pid, startedAt: new Date().toISOString() } satisfies Claim),
    );
    return new HostClaim(file);
  }

  release(): void {
    if (read(this.#file)?.pid === process.pid) rmSync(this.#file, { force: true });
  }
}

function read(file: string): Claim | undefined {
  try {
    const value = JSON.parse(readFileSync(file, 'utf8')) as Partial<Claim>;
    return typeof value.pid === 'number' ? { pid: value.pid, startedAt: String(value.startedAt) } : undefined;
  } catch {
    return undefined;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
