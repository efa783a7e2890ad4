import { z } from 'zod';

/**
 * `z.strictObject` with its shape's keys in canonical order (RFC 8785: by UTF-16 code
 * units, as `canonicalJson` writes them). A zod parse builds its output in the shape's
 * order, so an event `RuntimeEvent.create` parses comes out with every object's keys
 * already canonical, and the log writes its canonical text without copying any of
 * them. Schemas read in their natural order (`kind` first); only the order of the
 * built objects changes, which JSON and every reader here ignore.
 */
export function factObject<const T extends z.core.$ZodLooseShape>(shape: T): z.ZodObject<T, z.core.$strict> {
  const sorted: z.core.$ZodLooseShape = {};
  for (const key of Object.keys(shape).sort()) sorted[key] = shape[key];
  return z.strictObject(sorted as T);
}
