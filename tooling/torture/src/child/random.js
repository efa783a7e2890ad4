// A small seeded generator (mulberry32): a torture run is replayable from its seed.

export class Random {
  #state;

  /** @param {number} seed */
  constructor(seed) {
    this.#state = seed >>> 0;
  }

  /** A float in [0, 1). */
  next() {
    this.#state = (this.#state + 0x6d2b79f5) >>> 0;
    let t = this.#state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /**
   * An integer in [min, max].
   * @param {number} min
   * @param {number} max
   */
  int(min, max) {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  /**
   * One of `items`.
   * @template T
   * @param {readonly T[]} items
   * @returns {T}
   */
  pick(items) {
    const item = items[Math.floor(this.next() * items.length)];
    if (item === undefined) throw new RangeError('pick() needs at least one item');
    return item;
  }
}
