import type { ToolSemantics } from './tool-registration.js';

type Waiter = { readonly semantics: ToolSemantics; readonly grant: () => void };

/**
 * A readers-writer lock over one run's tools: `parallel` calls overlap, an `exclusive`
 * call waits for every running call and holds back those after it. Waiters are served
 * in arrival order, so an exclusive call is never starved.
 */
export class ToolLock {
  #shared = 0;
  #exclusive = false;
  readonly #waiters: Waiter[] = [];

  async acquire(semantics: ToolSemantics): Promise<() => void> {
    if (this.#waiters.length === 0 && this.#free(semantics)) this.#take(semantics);
    else await new Promise<void>((grant) => this.#waiters.push({ semantics, grant }));
    let released = false;
    return () => {
      if (released) return;
      released = true;
      if (semantics === 'exclusive') this.#exclusive = false;
      else this.#shared -= 1;
      this.#wake();
    };
  }

  #free(semantics: ToolSemantics): boolean {
    return semantics === 'exclusive' ? !this.#exclusive && this.#shared === 0 : !this.#exclusive;
  }

  #take(semantics: ToolSemantics): void {
    if (semantics === 'exclusive') this.#exclusive = true;
    else this.#shared += 1;
  }

  #wake(): void {
    while (this.#waiters.length > 0 && this.#free(this.#waiters[0]!.semantics)) {
      const next = this.#waiters.shift()!;
      this.#take(next.semantics);
      next.grant();
    }
  }
}
