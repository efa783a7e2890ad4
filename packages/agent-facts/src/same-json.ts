/**
 * Whether two values are the same JSON data: equal primitives, arrays of the same items,
 * plain objects with the same own keys holding the same values — `skip`, a member of the
 * outer objects, left out. Exact for plain data (what facts, messages and results are)
 * and several times cheaper than `isDeepStrictEqual`; anything else that is not the same
 * object (a `Date`, a class instance) is never taken for the same, so a caller that uses
 * a `true` to skip work stays right whatever it is given. Zero and minus zero are the same.
 */
export function sameJson(a: unknown, b: unknown, skip?: string): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let index = 0; index < a.length; index += 1) if (!sameJson(a[index], b[index])) return false;
    return true;
  }
  if (Array.isArray(b) || !isPlain(a) || !isPlain(b)) return false;
  const left = a as Record<string, unknown>;
  const right = b as Record<string, unknown>;
  let keys = 0;
  for (const key in left) {
    if (key === skip) continue;
    if (!Object.hasOwn(right, key) || !sameJson(left[key], right[key])) return false;
    keys += 1;
  }
  for (const key in right) if (key !== skip) keys -= 1;
  return keys === 0;
}

function isPlain(value: object): boolean {
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}
