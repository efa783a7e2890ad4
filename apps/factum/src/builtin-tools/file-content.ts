/** Bytes of a binary file `read_file` returns at most, as base64 (a third more in the result). */
export const BINARY_LIMIT_BYTES = 48 * 1024;

/** A file's content as a tool result: text, or a labelled, bounded encoding of a binary's head. */
export type FileContent = {
  readonly path: string;
  /** The file's size on disk. */
  readonly bytes: number;
  readonly encoding: 'utf8' | 'base64';
  readonly content: string;
  readonly truncated: boolean;
  readonly note?: string;
};

const decoder = new TextDecoder('utf-8', { fatal: true });

/**
 * Text when the bytes are UTF-8 with few control characters; otherwise base64 of at
 * most `BINARY_LIMIT_BYTES`, labelled. JSON writes a control character as six bytes,
 * so 256 KiB of NUL read as text would become 1.5 MB in the log and the prompt.
 */
export function fileContent(path: string, head: Buffer, size: number): FileContent {
  const text = asText(head, head.length < size);
  if (text !== undefined) {
    return { path, bytes: size, encoding: 'utf8', content: text, truncated: size > head.length };
  }
  const kept = head.subarray(0, BINARY_LIMIT_BYTES);
  return {
    path,
    bytes: size,
    encoding: 'base64',
    content: kept.toString('base64'),
    truncated: size > kept.length,
    note: `binary file: base64 of its first ${kept.length} of ${size} bytes`,
  };
}

function asText(bytes: Buffer, cut: boolean): string | undefined {
  let controls = 0;
  for (const byte of bytes) {
    if (byte === 0) return undefined;
    // Tab, newline, carriage return and form feed are ordinary in text.
    if ((byte < 0x20 && byte !== 9 && byte !== 10 && byte !== 13 && byte !== 12) || byte === 0x7f)
      controls += 1;
  }
  if (controls * 32 > bytes.length) return undefined;
  try {
    return decoder.decode(cut ? trimPartialCharacter(bytes) : bytes);
  } catch {
    return undefined;
  }
}

/** A head cut inside a multi-byte character ends with its first bytes: drop them, not the file. */
function trimPartialCharacter(bytes: Buffer): Buffer {
  for (let back = 1; back <= Math.min(3, bytes.length); back += 1) {
    const byte = bytes[bytes.length - back]!;
    if ((byte & 0xc0) === 0x80) continue;
    const width = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    return width > back ? bytes.subarray(0, bytes.length - back) : bytes;
  }
  return bytes;
}
