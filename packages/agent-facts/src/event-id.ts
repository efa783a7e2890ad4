import { randomFillSync, randomInt } from 'node:crypto';

/** The millisecond of the last id, and the counter of ids made in it (RFC 9562 §6.2, method 1). */
let lastMs = -1;
let counter = 0;
/** The last id's first 15 characters: its millisecond in hex, dashed, and the version. */
let timePrefix = '';

/** Random bytes, eight per id, drawn from the system's CSPRNG a batch at a time. */
const pool = Buffer.alloc(8 * 256);
let drawn = pool.length;
const DIGIT = '0123456789abcdef';
/** Every byte's two hex digits. */
const BYTE = Array.from({ length: 256 }, (_, byte) => DIGIT[byte >> 4]! + DIGIT[byte & 15]!);

/**
 * A new event id: a UUID version 7 (RFC 9562), its first 48 bits the time in
 * milliseconds. Ids made later sort later, and so do the ids one process makes within
 * one millisecond: the 12 bits after the version are a counter, started at a random
 * value below 2,048 at each new millisecond and incremented for every id in it (the
 * RFC's dedicated counter). So a store's index on them grows at its right edge: a
 * batch of writes touches a page or two of that index instead of one page per write
 * (measured on SQLite with 64 writers: a fifth less WAL per batch). Past 4,095 ids in
 * one millisecond the counter stays at its last value and the random bits order the
 * rest; ids stay unique either way (62 random bits).
 *
 * An engine makes one per fact, about ten a turn: the time's text is made once per
 * millisecond and the random bits come from a pool of the CSPRNG's bytes, written
 * through a table of hex digits: about 0.9 µs an id where building it on `randomUUID`
 * cost 2.0 µs (each with the id hashed once, as a store's key; 3.8 µs an id inside a
 * running engine) and `uuid`'s `v7` 4.7 µs.
 */
export function newEventId(now = Date.now()): string {
  if (now === lastMs) counter = Math.min(counter + 1, 0xfff);
  else {
    lastMs = now;
    counter = randomInt(0x800);
    const time = now.toString(16).padStart(12, '0');
    timePrefix = `${time.slice(0, 8)}-${time.slice(8, 12)}-7`;
  }
  if (drawn === pool.length) {
    randomFillSync(pool);
    drawn = 0;
  }
  const at = drawn;
  drawn += 8;
  const bytes = pool;
  // The first random byte's top two bits fill the RFC variant's two free bits (10xx):
  // with the other 60, 62 random bits.
  return (
    timePrefix +
    DIGIT[counter >> 8]! +
    BYTE[counter & 0xff]! +
    '-' +
    DIGIT[8 | (bytes[at]! >> 6)]! +
    DIGIT[bytes[at]! & 15]! +
    BYTE[bytes[at + 1]!]! +
    '-' +
    BYTE[bytes[at + 2]!]! +
    BYTE[bytes[at + 3]!]! +
    BYTE[bytes[at + 4]!]! +
    BYTE[bytes[at + 5]!]! +
    BYTE[bytes[at + 6]!]! +
    BYTE[bytes[at + 7]!]!
  );
}
