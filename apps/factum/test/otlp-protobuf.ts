// A reader for the OTLP trace request in protobuf (opentelemetry/proto/collector/trace/v1
// ExportTraceServiceRequest), for the loopback receiver only: it turns the wire format
// into the shape the OTLP/JSON encoding has, so one decoder of spans serves both. The
// field numbers are those of the .proto files; nothing else is decoded.

/** One decoded field: its number, and its varint, 64-bit or length-delimited value. */
type Field = {
  readonly number: number;
  readonly varint?: bigint;
  readonly fixed64?: Buffer;
  readonly bytes?: Buffer;
};

function varint(buffer: Buffer, at: { pos: number }): bigint {
  let value = 0n;
  for (let shift = 0n; ; shift += 7n) {
    const byte = buffer[at.pos++];
    if (byte === undefined) throw new Error('truncated varint');
    value |= BigInt(byte & 0x7f) << shift;
    if ((byte & 0x80) === 0) return value;
  }
}

function fields(buffer: Buffer): Field[] {
  const at = { pos: 0 };
  const out: Field[] = [];
  while (at.pos < buffer.length) {
    const tag = Number(varint(buffer, at));
    const number = tag >>> 3;
    switch (tag & 7) {
      case 0:
        out.push({ number, varint: varint(buffer, at) });
        break;
      case 1:
        out.push({ number, fixed64: buffer.subarray(at.pos, at.pos + 8) });
        at.pos += 8;
        break;
      case 2: {
        const length = Number(varint(buffer, at));
        out.push({ number, bytes: buffer.subarray(at.pos, at.pos + length) });
        at.pos += length;
        break;
      }
      case 5:
        at.pos += 4;
        break;
      default:
        throw new Error(`unexpected wire type ${tag & 7}`);
    }
  }
  return out;
}

const all = (list: Field[], number: number) => list.filter((field) => field.number === number);
const one = (list: Field[], number: number) => list.find((field) => field.number === number);
const text = (field: Field | undefined) => field?.bytes?.toString('utf8');
const hex = (field: Field | undefined) => (field?.bytes?.length ? field.bytes.toString('hex') : undefined);

function anyValue(buffer: Buffer): Record<string, unknown> {
  const list = fields(buffer);
  const [field] = list;
  if (field === undefined) return {};
  switch (field.number) {
    case 1:
      return { stringValue: text(field) };
    case 2:
      return { boolValue: field.varint !== 0n };
    case 3:
      return { intValue: BigInt.asIntN(64, field.varint ?? 0n).toString() };
    case 4:
      return { doubleValue: field.fixed64?.readDoubleLE(0) };
    case 5:
      return { arrayValue: { values: all(fields(field.bytes!), 1).map((value) => anyValue(value.bytes!)) } };
    default:
      return {};
  }
}

function keyValues(list: Field[], number: number) {
  return all(list, number).map((field) => {
    const pair = fields(field.bytes!);
    return { key: text(one(pair, 1)), value: anyValue(one(pair, 2)?.bytes ?? Buffer.alloc(0)) };
  });
}

const nanos = (field: Field | undefined) => (field?.fixed64?.readBigUInt64LE(0) ?? 0n).toString();

function span(buffer: Buffer): Record<string, unknown> {
  const list = fields(buffer);
  const status = one(list, 15)?.bytes;
  return {
    traceId: hex(one(list, 1)),
    spanId: hex(one(list, 2)),
    parentSpanId: hex(one(list, 4)),
    name: text(one(list, 5)),
    kind: Number(one(list, 6)?.varint ?? 0n),
    startTimeUnixNano: nanos(one(list, 7)),
    endTimeUnixNano: nanos(one(list, 8)),
    attributes: keyValues(list, 9),
    events: all(list, 11).map((event) => {
      const parts = fields(event.bytes!);
      return { name: text(one(parts, 2)), attributes: keyValues(parts, 3) };
    }),
    status: status === undefined ? undefined : { code: Number(one(fields(status), 3)?.varint ?? 0n) },
  };
}

/** An `ExportTraceServiceRequest` in protobuf, in the shape of its OTLP/JSON encoding. */
export function decodeTraceRequest(buffer: Buffer): unknown {
  return {
    resourceSpans: all(fields(buffer), 1).map((resourceSpans) => {
      const parts = fields(resourceSpans.bytes!);
      const resource = one(parts, 1)?.bytes;
      return {
        resource: { attributes: resource === undefined ? [] : keyValues(fields(resource), 1) },
        scopeSpans: all(parts, 2).map((scope) => ({
          spans: all(fields(scope.bytes!), 2).map((value) => span(value.bytes!)),
        })),
      };
    }),
  };
}
