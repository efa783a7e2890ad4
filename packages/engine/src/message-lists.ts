import type { ModelMessage } from '@factum/model';

/** Lists of messages to read one after another: a prompt as a few frozen lists. */
export type MessageLists = readonly (readonly ModelMessage[])[];

/**
 * The lists one after another in one new array: by `concat`, the fastest copy, given the
 * lists a thousand at a time so that a cold start's many segments stay under the limit on
 * a call's arguments.
 */
export function joined(lists: MessageLists): ModelMessage[] {
  let all: ModelMessage[] = [];
  for (let at = 0; at < lists.length; at += 1024) all = all.concat(...lists.slice(at, at + 1024));
  return all;
}

/** Lists of one level that are joined into one list of the next level. */
const RUN = 32;

/** The level of each list `settled` made; any other list is of level 0. */
const levels = new WeakMap<readonly ModelMessage[], number>();

/**
 * `lists` with every run of `RUN` trailing lists of one level joined into one list of the
 * next level, frozen: a lineage that grows by a list at a time stays a few dozen lists
 * per thirty-two-fold of its length, each made once and the same object from then on —
 * so the next prompt adds a list or two, and a digest of it (which knows frozen lists by
 * identity) reads only those.
 */
export function settled(lists: MessageLists): MessageLists {
  let result = [...lists];
  for (;;) {
    const last = result.at(-1);
    if (last === undefined) break;
    const level = levels.get(last) ?? 0;
    let run = 0;
    while (run < result.length && (levels.get(result[result.length - 1 - run]!) ?? 0) === level) run += 1;
    if (run < RUN) break;
    const list = Object.freeze(joined(result.slice(result.length - RUN)));
    levels.set(list, level + 1);
    result = [...result.slice(0, result.length - RUN), list];
  }
  return Object.freeze(result);
}
