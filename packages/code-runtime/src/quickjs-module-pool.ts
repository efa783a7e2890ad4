import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import ngVariantModule from '@jitl/quickjs-ng-wasmfile-release-sync';
import {
  newQuickJSWASMModuleFromVariant,
  newVariant,
  type QuickJSSyncVariant,
  type QuickJSWASMModule,
} from 'quickjs-emscripten-core';

// The variant package is typed as CommonJS; an ESM import yields the variant itself.
const ngVariant = (
  'default' in ngVariantModule ? ngVariantModule.default : ngVariantModule
) as QuickJSSyncVariant;

/** The part of the WebAssembly API used here (the DOM lib that types it is not loaded). */
interface WasmMemory {
  readonly buffer: ArrayBuffer;
}
interface WasmApi {
  readonly Memory: new (descriptor: { initial: number; maximum: number }) => WasmMemory;
  compile(bytes: Uint8Array): Promise<object>;
}
const wasm = (globalThis as unknown as { readonly WebAssembly: WasmApi }).WebAssembly;

const PAGE = 64 * 1024;
/** The QuickJS build declares 16 MiB of initial memory; less is refused at instantiation. */
const INITIAL_PAGES = 256;
/**
 * QuickJS reports a runtime it cannot free on stderr before throwing; the throw
 * is handled (the instance is dropped), so the print is only noise.
 */
const QUIET = { print: () => undefined, printErr: () => undefined };
/** Idle instances kept for reuse; more would only hold memory nobody uses. */
const MAX_IDLE = 4;

/** One QuickJS WebAssembly instance with its own bounded memory. */
export interface QuickJSInstance {
  readonly module: QuickJSWASMModule;
  readonly memory: WasmMemory;
  readonly memoryBytes: number;
}

/** Counters of a pool, surfaced by `CodeExecutor.stats`. */
export interface QuickJSPoolCounts {
  readonly created: number;
  readonly discarded: number;
  readonly idle: number;
}

/**
 * Hands out QuickJS instances, each with a private `WebAssembly.Memory` whose
 * maximum is the cell's memory limit. QuickJS's own allocation accounting misses
 * memory it obtains through `realloc` in this build (strings, arrays), so the
 * memory limit is enforced by the WebAssembly memory itself; and since every
 * cell has its own instance, a cell that breaks its module breaks nothing else.
 * Healthy instances are kept for the next cell, broken ones are dropped.
 */
export class QuickJSModulePool {
  #compiled: Promise<object> | undefined;
  readonly #idle: QuickJSInstance[] = [];
  #created = 0;
  #discarded = 0;

  get counts(): QuickJSPoolCounts {
    return { created: this.#created, discarded: this.#discarded, idle: this.#idle.length };
  }

  async acquire(memoryBytes: number): Promise<QuickJSInstance> {
    const index = this.#idle.findIndex((instance) => instance.memoryBytes === memoryBytes);
    if (index >= 0) return this.#idle.splice(index, 1)[0]!;
    const wasmModule = await this.#compile();
    const memory = new wasm.Memory({ initial: INITIAL_PAGES, maximum: Math.floor(memoryBytes / PAGE) });
    // The option types name WebAssembly classes from the DOM lib, which is not loaded here.
    const options = { wasmModule, wasmMemory: memory, emscriptenModule: QUIET } as never;
    const module = await newQuickJSWASMModuleFromVariant(newVariant(ngVariant, options));
    this.#created += 1;
    return { module, memory, memoryBytes };
  }

  /** Return an instance after its runtime was freed; `healthy: false` drops it. */
  release(instance: QuickJSInstance, healthy: boolean): void {
    if (healthy && this.#idle.length < MAX_IDLE) this.#idle.push(instance);
    else this.#discarded += 1;
  }

  clear(): void {
    this.#discarded += this.#idle.length;
    this.#idle.length = 0;
  }

  #compile(): Promise<object> {
    if (this.#compiled === undefined) {
      // Compiling once per pool makes a new instance cost a few milliseconds instead of ~25.
      const path = createRequire(import.meta.url).resolve('@jitl/quickjs-ng-wasmfile-release-sync/wasm');
      this.#compiled = readFile(path).then((bytes) => wasm.compile(bytes));
      this.#compiled.catch(() => {
        this.#compiled = undefined;
      });
    }
    return this.#compiled;
  }
}
