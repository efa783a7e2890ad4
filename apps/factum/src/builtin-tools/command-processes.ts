/**
 * The commands the shell tool has running, so that whoever decides the process must
 * go now (a second Ctrl-C, a forced server stop) can kill every one of them first:
 * a command that ignores SIGTERM must not go on writing after Factum has exited.
 *
 * @example
 * const processes = new CommandProcesses();
 * const tools = builtinCatalog({ workspace, allowShell: true, processes });
 * // on the second Ctrl-C:
 * processes.killAll();
 */
export class CommandProcesses {
  readonly #kills = new Set<() => void>();

  /** Registers how to kill one running command; returns how to unregister it. */
  add(kill: () => void): () => void {
    this.#kills.add(kill);
    return () => this.#kills.delete(kill);
  }

  /** Kills (SIGKILL) every registered command's whole process tree, at once. */
  killAll(): number {
    const count = this.#kills.size;
    for (const kill of this.#kills) kill();
    return count;
  }

  /** How many commands are running. */
  get size(): number {
    return this.#kills.size;
  }
}
