/**
 * `items.map(fn)` that always returns a packed array. V8's optimized code inlines `map`
 * and makes a holey array where the builtin makes a packed one, so an array made by `map`
 * changes kind once the function making it is optimized; every optimized function it then
 * reaches was compiled for the other kind and is thrown away and compiled again. The
 * commit path hands its batches through a chain of such functions: on a sequential
 * SQLite log that recompiled about ten of them (some 300 ms of compiling) a few hundred
 * turns into a process's life.
 */
export function packedMap<T, U>(items: readonly T[], fn: (item: T, index: number) => U): U[] {
  const out: U[] = [];
  for (let index = 0; index < items.length; index += 1) out.push(fn(items[index]!, index));
  return out;
}
