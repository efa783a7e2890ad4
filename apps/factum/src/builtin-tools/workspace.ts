import { lstat, realpath, stat } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { WorkspaceError } from './workspace-error.js';

/**
 * The directory built-in tools may touch. Every path a model gives is resolved
 * against it and then through `realpath`, so `..`, absolute paths and symlinks that
 * lead elsewhere are refused before any file is opened.
 *
 * @example
 * const workspace = await Workspace.open(process.cwd());
 * const file = await workspace.existing('src/index.ts'); // throws WorkspaceError outside
 */
export class Workspace {
  /** The real path of the workspace root. */
  readonly root: string;

  private constructor(root: string) {
    this.root = root;
  }

  /** Opens a workspace at `directory`, which must exist and be a directory. */
  static async open(directory: string): Promise<Workspace> {
    let root: string;
    try {
      root = await realpath(directory);
    } catch (error) {
      throw new WorkspaceError('not_found', `the workspace ${directory} does not exist`, { cause: error });
    }
    if (!(await stat(root)).isDirectory()) {
      throw new WorkspaceError('not_a_directory', `the workspace ${directory} is not a directory`);
    }
    return new Workspace(root);
  }

  /** The real path of an existing entry inside the workspace. */
  async existing(path: string): Promise<string> {
    const lexical = this.#lexical(path);
    let real: string;
    try {
      real = await realpath(lexical);
    } catch (error) {
      throw new WorkspaceError('not_found', `${path} does not exist in the workspace`, { cause: error });
    }
    this.#confine(path, real);
    return real;
  }

  /**
   * Where a file may be written: the nearest existing ancestor is resolved through
   * `realpath` and must be inside; an existing target that is a symlink must point inside.
   */
  async writable(path: string): Promise<string> {
    const lexical = this.#lexical(path);
    const existing = await lstat(lexical).catch(() => undefined);
    if (existing !== undefined) {
      const real = await realpath(lexical).catch(() => undefined);
      // A dangling symlink could be created later pointing anywhere: refuse it outright.
      if (real === undefined) throw this.#outside(path);
      this.#confine(path, real);
      return real;
    }
    let ancestor = dirname(lexical);
    const rest = [basename(lexical)];
    for (;;) {
      const real = await realpath(ancestor).catch(() => undefined);
      if (real !== undefined) {
        this.#confine(path, real);
        return join(real, ...rest);
      }
      rest.unshift(basename(ancestor));
      const parent = dirname(ancestor);
      if (parent === ancestor) throw this.#outside(path);
      ancestor = parent;
    }
  }

  /** A path relative to the root, `.` for the root itself, as tools report it. */
  relative(real: string): string {
    return relative(this.root, real) || '.';
  }

  /** Whether a real path is the root or inside it. */
  contains(real: string): boolean {
    const rel = relative(this.root, real);
    return rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
  }

  #lexical(path: string): string {
    if (path.includes('\0')) throw this.#outside(path);
    const lexical = resolve(this.root, path);
    // Refuse before touching the disk, so probing outside paths reveals nothing.
    if (!this.contains(lexical)) throw this.#outside(path);
    return lexical;
  }

  #confine(path: string, real: string): void {
    if (!this.contains(real)) throw this.#outside(path, true);
  }

  #outside(path: string, viaLink = false): WorkspaceError {
    const how = viaLink ? ' (through a symbolic link)' : '';
    return new WorkspaceError(
      'outside_workspace',
      `${path} is outside the workspace ${this.root}${how}: tools may only use paths inside it`,
    );
  }
}
