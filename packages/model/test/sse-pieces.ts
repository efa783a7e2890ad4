import type { ModelObservation, ModelStep } from '@factum/agent-facts';
import type { ProviderKind } from '../src/index.js';
import { SecretRedactor } from '../src/secret-redactor.js';
import { SseReader } from '../src/sse-reader.js';
import { StepBuilder } from '../src/step-builder.js';
import { adapterFor } from '../src/wire-request.js';

/** Feeds a stream's bytes, piece by piece, through the framing and the wire's decoder. */
export function parsePieces(
  kind: ProviderKind,
  pieces: readonly Uint8Array[],
): { observations: ModelObservation[]; step: ModelStep } {
  const observations: ModelObservation[] = [];
  const context = {
    baseUrl: 'http://x',
    kind,
    model: 'test',
    hasApiKey: false,
    redactor: new SecretRedactor([]),
  };
  const decoder = adapterFor(kind).decoder(new StepBuilder((o) => observations.push(o)), context);
  const reader = new SseReader((event) => decoder.event(event));
  for (const piece of pieces) reader.push(piece);
  reader.end();
  return { observations, step: decoder.finish() };
}

/** Cuts `bytes` at the given offsets (taken modulo its length, deduplicated). */
export function splitAt(bytes: Uint8Array, cuts: readonly number[]): Uint8Array[] {
  const points = [...new Set(cuts.map((cut) => cut % (bytes.length + 1)))].sort((a, b) => a - b);
  const pieces: Uint8Array[] = [];
  let start = 0;
  for (const point of [...points, bytes.length]) {
    pieces.push(bytes.subarray(start, point));
    start = point;
  }
  return pieces;
}
