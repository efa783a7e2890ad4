import { constants, existsSync, type Stats } from 'node:fs';
import { type FileHandle, lstat, mkdir, open, readlink, realpath } from 'node:fs/promises';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { WorkspaceError } from './workspace-error.js';

/** What was opened: the descriptor, where it really is, and what it is. */
export type OpenedEntry = {
  readonly handle: FileHandle;
  /** The descriptor's real path, read back from the kernel after the open. */
  readonly real: string;
  readonly stats: Stats;
};

/** What to open and how. */
export type OpenRequest = {
  readonly kind: 'file' | 'directory';
  /** Files only: open for writing, creating the file and missing parent directories. */
  readonly write?: boolean;
  /** Follow symbolic links that stay inside the root; walks pass false and skip links. */
  readonly followLinks: boolean;
  /** The path as the caller gave it, for messages. */
  readonly display: string;
};

/** Decides whether an opened entry may be used; throws a `WorkspaceError` to refuse. */
export type EntryGuard = (
  entry: { readonly real: string; readonly stats: Stats },
  display: string,
) => Promise<void>;

/** Symbolic links followed in one resolution before giving up (as the kernel's ELOOP). */
const MAX_LINK_HOPS = 40;
/** `/proc/self/fd/N/name` is openat(N, name): the kernel resolves N as the directory it is, not by path. */
const PROC_FD = '/proc/self/fd';
const READ = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY;
const WRITE = constants.O_WRONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY;
const DIRECTORY = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;

/**
 * Opens entries beneath a root so that what is used is what was checked. On Linux
 * each component is opened relative to the descriptor of its parent
 * (`/proc/self/fd/N/name`) with `O_NOFOLLOW`; a symbolic link is read and its target
 * resolved the same way, never by the kernel; every descriptor's real path is read
 * back from `/proc/self/fd/N` and its identity compared with `fstat` before a byte is
 * read or written. Swapping a directory for a link between checks cannot redirect an
 * open: at worst the open is refused. Elsewhere it falls back to realpath checks and
 * an identity comparison after the open.
 */
export class ConfinedOpener {
  readonly #root: string;
  readonly #guard: EntryGuard;
  readonly #descriptorPaths: boolean;

  constructor(root: string, guard: EntryGuard) {
    this.#root = root;
    this.#guard = guard;
    this.#descriptorPaths = existsSync(`${PROC_FD}/0`) || existsSync(PROC_FD);
  }

  /** Opens `path` (relative to the root or absolute inside it). The caller closes the handle. */
  async open(path: string, request: OpenRequest): Promise<OpenedEntry> {
    const lexical = resolve(this.#root, path);
    if (path.includes('\0') || !this.contains(lexical)) throw this.outside(request.display);
    if (!this.#descriptorPaths) return this.#openByPath(lexical, request);
    const components = relative(this.#root, lexical)
      .split(sep)
      .filter((part) => part !== '');
    return this.#walk(components, request);
  }

  /** Opens one entry of an opened directory, never following a link (for walks). */
  async openChild(directory: OpenedEntry, name: string, request: OpenRequest): Promise<OpenedEntry> {
    if (!this.#descriptorPaths) return this.#openByPath(join(directory.real, name), request);
    const handle = await this.#openFinal(
      `${PROC_FD}/${directory.handle.fd}/${name}`,
      request,
      request.display,
    );
    if (handle === 'link') throw new WorkspaceError('not_found', `${request.display} is a symbolic link`);
    return this.#verified(handle, request);
  }

  /** The path a walk lists a directory's entries by (the descriptor itself where possible). */
  listingPath(directory: OpenedEntry): string {
    return this.#descriptorPaths ? `${PROC_FD}/${directory.handle.fd}` : directory.real;
  }

  /** Whether a real path is the root or inside it. */
  contains(real: string): boolean {
    const rel = relative(this.#root, real);
    return rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
  }

  /** The refusal for a path that leads out of the root. */
  outside(display: string, viaLink = false): WorkspaceError {
    const how = viaLink ? ' (through a symbolic link)' : '';
    return new WorkspaceError(
      'outside_workspace',
      `${display} is outside the workspace ${this.#root}${how}: tools may only use paths inside it`,
    );
  }

  async #walk(start: string[], request: OpenRequest): Promise<OpenedEntry> {
    const display = request.display;
    const stack: FileHandle[] = [await open(this.#root, DIRECTORY)];
    const queue = [...start];
    let hops = 0;
    try {
      for (;;) {
        const name = queue.shift();
        if (name === undefined) {
          // The path named the root (or a link to a directory) itself.
          if (request.kind === 'file') throw new WorkspaceError('not_a_file', `${display} is a directory`);
          const top = stack.pop()!;
          return await this.#verified(top, request);
        }
        if (name === '.' || name === '') continue;
        if (name === '..') {
          if (stack.length === 1) throw this.outside(display, true);
          await stack.pop()!.close();
          continue;
        }
        const at = `${PROC_FD}/${stack.at(-1)!.fd}/${name}`;
        const last = queue.length === 0;
        const opened = last
          ? await this.#openFinal(at, request, display)
          : await this.#openDirectory(at, request);
        if (opened === 'link') {
          if (!request.followLinks) throw new WorkspaceError('not_found', `${display} is a symbolic link`);
          hops += 1;
          if (hops > MAX_LINK_HOPS)
            throw new WorkspaceError('too_many_links', `${display}: too many symbolic links`);
          const target = await readlink(at).catch((error: unknown) => {
            // It was a link a moment ago and is not now: the entry is being swapped.
            throw new WorkspaceError(
              'changed_during_open',
              `${display} changed while it was opened: nothing was used`,
              {
                cause: error,
              },
            );
          });
          if (isAbsolute(target)) {
            if (!this.contains(target)) throw this.outside(display, true);
            while (stack.length > 1) await stack.pop()!.close();
            queue.unshift(...relative(this.#root, target).split(sep));
          } else {
            queue.unshift(...target.split('/'));
          }
          continue;
        }
        if (last) return await this.#verified(opened, request);
        stack.push(opened);
        // Before a write, a directory on the way is checked too: nothing is created inside a protected one.
        // A read uses only the final descriptor, which is checked.
        if (request.write === true) await this.#check(opened, display);
      }
    } finally {
      for (const handle of stack) await handle.close().catch(() => {});
    }
  }

  /** Opens an intermediate directory; creates it when writing. `link` when it is a symbolic link. */
  async #openDirectory(at: string, request: OpenRequest): Promise<FileHandle | 'link'> {
    try {
      return await open(at, DIRECTORY);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' && request.write === true) {
        await mkdir(at, { mode: 0o755 }).catch((failure: NodeJS.ErrnoException) => {
          if (failure.code !== 'EEXIST') throw failure;
        });
        return this.#openDirectory(at, { ...request, write: false });
      }
      return this.#classify(at, error, request.display);
    }
  }

  async #openFinal(at: string, request: OpenRequest, display: string): Promise<FileHandle | 'link'> {
    if (request.kind === 'directory') return this.#openDirectory(at, { ...request, write: false });
    try {
      if (request.write !== true) return await open(at, READ);
      try {
        // O_EXCL first: a file this call created is known to be new (and is removed if refused).
        return await open(at, WRITE | constants.O_CREAT | constants.O_EXCL, 0o644);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
        return await open(at, WRITE);
      }
    } catch (error) {
      return this.#classify(at, error, display);
    }
  }

  async #classify(at: string, error: unknown, display: string): Promise<'link'> {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ELOOP' || code === 'ENOTDIR') {
      const info = await lstat(at).catch(() => undefined);
      if (info?.isSymbolicLink()) return 'link';
      if (info !== undefined && code === 'ENOTDIR') {
        throw new WorkspaceError('not_a_directory', `${display}: a part of the path is not a directory`);
      }
    }
    if (code === 'ENOENT') {
      throw new WorkspaceError('not_found', `${display} does not exist in the workspace`, { cause: error });
    }
    if (code === 'EISDIR') throw new WorkspaceError('not_a_file', `${display} is a directory`);
    throw error;
  }

  /** Reads back where the descriptor is and what it is, and refuses it unless it is still the path's entry. */
  async #verified(handle: FileHandle, request: OpenRequest): Promise<OpenedEntry> {
    try {
      const entry = await this.#check(handle, request.display);
      if (request.kind === 'file' && !entry.stats.isFile()) {
        throw new WorkspaceError('not_a_file', `${request.display} is not a regular file`);
      }
      if (request.kind === 'directory' && !entry.stats.isDirectory()) {
        throw new WorkspaceError('not_a_directory', `${request.display} is not a directory`);
      }
      if (request.write === true && entry.stats.nlink > 1) {
        throw new WorkspaceError(
          'hard_link',
          `${request.display} has ${entry.stats.nlink} hard links: writing through it could change a file outside the workspace; write a new file instead`,
        );
      }
      return { handle, ...entry };
    } catch (error) {
      await handle.close().catch(() => {});
      throw error;
    }
  }

  async #check(handle: FileHandle, display: string): Promise<{ real: string; stats: Stats }> {
    const stats = await handle.stat();
    const real = this.#descriptorPaths ? await readlink(`${PROC_FD}/${handle.fd}`) : undefined;
    if (real === undefined)
      throw new WorkspaceError('changed_during_open', `${display} could not be verified`);
    const now = await lstat(real).catch(() => undefined);
    if (now === undefined || now.ino !== stats.ino || now.dev !== stats.dev) {
      throw new WorkspaceError(
        'changed_during_open',
        `${display} changed while it was opened: nothing was used`,
      );
    }
    // A directory moved out while the walk held it: refused before a byte is read or written.
    if (!this.contains(real)) throw this.outside(display, true);
    await this.#guard({ real, stats }, display);
    return { real, stats };
  }

  /** Without descriptor paths: realpath before, identity after. Races are narrowed, not closed. */
  async #openByPath(lexical: string, request: OpenRequest): Promise<OpenedEntry> {
    const real = await realpath(lexical).catch(() => undefined);
    if (real !== undefined && !this.contains(real)) throw this.outside(request.display, true);
    const target = real ?? lexical;
    const flags =
      request.kind === 'directory' ? DIRECTORY : request.write === true ? WRITE | constants.O_CREAT : READ;
    if (request.write === true) await mkdir(join(target, '..'), { recursive: true, mode: 0o755 });
    const handle = await open(target, flags, 0o644).catch((error: unknown) =>
      this.#classify(target, error, request.display),
    );
    if (handle === 'link') throw this.outside(request.display, true);
    const stats = await handle.stat();
    const after = await realpath(target).catch(() => undefined);
    const now = after === undefined ? undefined : await lstat(after);
    if (after === undefined || now?.ino !== stats.ino || !this.contains(after)) {
      await handle.close();
      throw new WorkspaceError('changed_during_open', `${request.display} changed while it was opened`);
    }
    await this.#guard({ real: after, stats }, request.display).catch(async (error: unknown) => {
      await handle.close();
      throw error;
    });
    return { handle, real: after, stats };
  }
}
