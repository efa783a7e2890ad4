import type { Stats } from 'node:fs';
import { lstat, readdir, realpath, stat } from 'node:fs/promises';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { ConfinedOpener, type OpenedEntry } from './confined-open.js';
import { WorkspaceError } from './workspace-error.js';

/** Options of a workspace. */
export type WorkspaceOptions = {
  /**
   * Factum's own state — its data directory, its user configuration — which no tool
   * may read, write, list or search, whatever path leads there. `<root>/.factum` is
   * always protected.
   */
  readonly protect?: readonly string[];
};

/**
 * The directory built-in tools may touch. Paths a model gives are opened beneath the
 * root component by component (see `ConfinedOpener`): what a tool reads or writes is
 * the entry it opened and verified, not a path it checked earlier. Entries inside
 * Factum's protected state are refused as `protected_path`.
 *
 * @example
 * const workspace = await Workspace.open(process.cwd(), { protect: ['/home/me/project/.factum'] });
 * const opened = await workspace.openFile('src/index.ts'); // throws WorkspaceError outside
 * await opened.handle.close();
 */
export class Workspace {
  /** The real path of the workspace root. */
  readonly root: string;
  readonly #opener: ConfinedOpener;
  readonly #protect: readonly string[];
  readonly #identities = new Map<string, { real: string; stats: Stats } | undefined>();

  private constructor(root: string, protect: readonly string[]) {
    this.root = root;
    this.#protect = protect;
    this.#opener = new ConfinedOpener(root, (entry, display) => this.#guard(entry, display));
  }

  /** Opens a workspace at `directory`, which must exist and be a directory. */
  static async open(directory: string, options: WorkspaceOptions = {}): Promise<Workspace> {
    let root: string;
    try {
      root = await realpath(directory);
    } catch (error) {
      throw new WorkspaceError('not_found', `the workspace ${directory} does not exist`, { cause: error });
    }
    if (!(await stat(root)).isDirectory()) {
      throw new WorkspaceError('not_a_directory', `the workspace ${directory} is not a directory`);
    }
    const protect = [join(root, '.factum'), ...(options.protect ?? []).map((path) => resolve(path))];
    return new Workspace(root, [...new Set(protect)]);
  }

  /** The paths no tool may reach (as given; each is also compared by its real path and identity). */
  get protectedPaths(): readonly string[] {
    return this.#protect;
  }

  /** The real paths of the protected state (a walk neither lists nor enters them). */
  async protectedRealPaths(): Promise<string[]> {
    const reals = await Promise.all(this.#protect.map((path) => realpath(path).catch(() => path)));
    return [...new Set([...this.#protect, ...reals])];
  }

  /** Opens an existing regular file for reading. The caller closes the handle. */
  openFile(path: string, options: { readonly write?: boolean } = {}): Promise<OpenedEntry> {
    return this.#opener.open(path, {
      kind: 'file',
      followLinks: true,
      display: path,
      ...(options.write === true ? { write: true } : {}),
    });
  }

  /** Opens an existing directory. The caller closes the handle. */
  openDirectory(path: string): Promise<OpenedEntry> {
    return this.#opener.open(path, { kind: 'directory', followLinks: true, display: path });
  }

  /** Opens one entry of an opened directory without following links (for walks). */
  openChild(directory: OpenedEntry, name: string, kind: 'file' | 'directory'): Promise<OpenedEntry> {
    const display = this.relative(join(directory.real, name));
    return this.#opener.openChild(directory, name, { kind, followLinks: false, display });
  }

  /** Where a walk reads an opened directory's entries. */
  listingPath(directory: OpenedEntry): string {
    return this.#opener.listingPath(directory);
  }

  /** A path relative to the root, `.` for the root itself, as tools report it. */
  relative(real: string): string {
    return relative(this.root, real) || '.';
  }

  /** Whether a real path is the root or inside it. */
  contains(real: string): boolean {
    return this.#opener.contains(real);
  }

  /** Whether an entry is (or is inside, or is another name of a file in) Factum's protected state. */
  async isProtected(entry: { readonly real: string; readonly stats: Stats }): Promise<boolean> {
    for (const path of this.#protect) {
      const known = await this.#identity(path);
      if (within(path, entry.real) || (known !== undefined && within(known.real, entry.real))) return true;
      if (known === undefined) continue;
      if (sameEntry(known.stats, entry.stats)) return true;
      // A hard link elsewhere to a file of the data directory is the same file.
      if (entry.stats.isFile() && entry.stats.nlink > 1 && known.stats.isDirectory()) {
        for (const name of await readdir(known.real).catch(() => [])) {
          const file = await lstat(join(known.real, name)).catch(() => undefined);
          if (file !== undefined && sameEntry(file, entry.stats)) return true;
        }
      }
    }
    return false;
  }

  /**
   * A protected path's real path and identity, looked up once (Factum's state exists
   * before a tool runs and does not move). A path absent then stays protected by name;
   * only the identity comparison (hard links, bind mounts) needs it to exist.
   */
  async #identity(path: string): Promise<{ real: string; stats: Stats } | undefined> {
    if (this.#identities.has(path)) return this.#identities.get(path);
    const real = await realpath(path).catch(() => undefined);
    const stats = real === undefined ? undefined : await stat(real).catch(() => undefined);
    const identity = real === undefined || stats === undefined ? undefined : { real, stats };
    this.#identities.set(path, identity);
    return identity;
  }

  async #guard(entry: { readonly real: string; readonly stats: Stats }, display: string): Promise<void> {
    if (await this.isProtected(entry)) {
      throw new WorkspaceError(
        'protected_path',
        `${display} is Factum's own state (its log, configuration or token): tools may not read, write, list or search it`,
      );
    }
  }
}

function within(parent: string, child: string): boolean {
  const rel = relative(parent, child);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
}

function sameEntry(a: Stats, b: Stats): boolean {
  return a.dev === b.dev && a.ino === b.ino;
}
