/**
 * Hand-written protobuf encoding of the TensorBoard messages the writer needs (internal).
 *
 * Field numbers, from the public `tensorflow/core/util/event.proto`,
 * `tensorflow/core/framework/summary.proto`, `tensor.proto` and `tensor_shape.proto`:
 *
 * | message                      | fields used                                                                 |
 * | ---------------------------- | --------------------------------------------------------------------------- |
 * | `Event`                      | 1 `wall_time` double, 2 `step` int64, 3 `file_version` string, 5 `summary`, 7 `session_log` |
 * | `SessionLog`                 | 1 `status` enum (START = 1)                                                 |
 * | `Summary`                    | 1 `value` repeated `Summary.Value`                                          |
 * | `Summary.Value`              | 1 `tag` string, 2 `simple_value` float, 8 `tensor`, 9 `metadata`            |
 * | `SummaryMetadata`            | 1 `plugin_data`, 4 `data_class` enum (DATA_CLASS_TENSOR = 2)                 |
 * | `SummaryMetadata.PluginData` | 1 `plugin_name` string                                                      |
 * | `TensorProto`                | 1 `dtype` enum (DT_STRING = 7), 2 `tensor_shape`, 8 `string_val` repeated bytes |
 *
 * Proto3 rules: scalar fields equal to their default (0, "") are omitted; messages are
 * length-delimited (wire type 2), varints wire type 0, double wire type 1, float wire type 5.
 *
 * @module
 */

const encoder = new TextEncoder();

/** Bytes being assembled. */
class Out {
  #parts: Uint8Array[] = [];
  #length = 0;

  push(bytes: Uint8Array): void {
    this.#parts.push(bytes);
    this.#length += bytes.length;
  }

  varint(n: number): void {
    const b: number[] = [];
    while (n >= 0x80) {
      b.push((n % 0x80) | 0x80);
      n = Math.floor(n / 0x80);
    }
    b.push(n);
    this.push(Uint8Array.from(b));
  }

  key(field: number, wire: number): void {
    this.varint(field * 8 + wire);
  }

  bytesField(field: number, bytes: Uint8Array): void {
    this.key(field, 2);
    this.varint(bytes.length);
    this.push(bytes);
  }

  finish(): Uint8Array {
    const out = new Uint8Array(this.#length);
    let at = 0;
    for (const p of this.#parts) {
      out.set(p, at);
      at += p.length;
    }
    return out;
  }
}

/** One `Summary.Value`: a float scalar or a string tensor for the text plugin. */
export type SummaryValue =
  | { tag: string; simpleValue: number }
  | { tag: string; text: string };

function encodeValue(v: SummaryValue): Uint8Array {
  const o = new Out();
  o.bytesField(1, encoder.encode(v.tag));
  if ("simpleValue" in v) {
    o.key(2, 5);
    const f = new Uint8Array(4);
    new DataView(f.buffer).setFloat32(0, v.simpleValue, true);
    o.push(f);
  } else {
    // TensorProto { dtype: DT_STRING, tensor_shape: {} (a scalar), string_val: [text] }
    const tensor = new Out();
    tensor.key(1, 0);
    tensor.varint(7);
    tensor.bytesField(2, new Uint8Array(0));
    tensor.bytesField(8, encoder.encode(v.text));
    o.bytesField(8, tensor.finish());
    // SummaryMetadata { plugin_data: { plugin_name: "text" }, data_class: DATA_CLASS_TENSOR }
    const plugin = new Out();
    plugin.bytesField(1, encoder.encode("text"));
    const meta = new Out();
    meta.bytesField(1, plugin.finish());
    meta.key(4, 0);
    meta.varint(2);
    o.bytesField(9, meta.finish());
  }
  return o.finish();
}

/** What one `Event` carries besides its time and step. */
export type EventBody =
  | { fileVersion: string }
  | { summary: readonly SummaryValue[] }
  | { sessionStart: true };

/** Encodes an `Event` (wall time in seconds, a non-negative integer step). */
export function encodeEvent(wallTime: number, step: number, body: EventBody): Uint8Array {
  const o = new Out();
  if (wallTime !== 0) {
    o.key(1, 1);
    const d = new Uint8Array(8);
    new DataView(d.buffer).setFloat64(0, wallTime, true);
    o.push(d);
  }
  if (step !== 0) {
    o.key(2, 0);
    o.varint(step);
  }
  if ("fileVersion" in body) o.bytesField(3, encoder.encode(body.fileVersion));
  else if ("summary" in body) {
    const s = new Out();
    for (const v of body.summary) s.bytesField(1, encodeValue(v));
    o.bytesField(5, s.finish());
  } else {
    const log = new Out();
    log.key(1, 0);
    log.varint(1); // SessionLog.START
    o.bytesField(7, log.finish());
  }
  return o.finish();
}

/**
 * The `step` (field 2) of an encoded `Event`, 0 when absent; throws on bytes that are not a
 * well-formed message.
 */
export function eventStep(bytes: Uint8Array, where: string): number {
  let at = 0;
  let step = 0;
  const varint = (): number => {
    let n = 0;
    let scale = 1;
    for (;;) {
      if (at >= bytes.length) throw new RangeError(`${where}: a varint runs past the event's end`);
      const b = bytes[at++]!;
      n += (b & 0x7f) * scale;
      if (b < 0x80) return n;
      scale *= 0x80;
    }
  };
  while (at < bytes.length) {
    const key = varint();
    const field = Math.floor(key / 8);
    const wire = key % 8;
    if (wire === 0) {
      const v = varint();
      if (field === 2) step = v;
    } else if (wire === 1) at += 8;
    else if (wire === 5) at += 4;
    else if (wire === 2) {
      const length = varint(); // read first: `at += varint()` would add to the old `at`
      at += length;
    } else throw new RangeError(`${where}: wire type ${wire} of field ${field} is not an Event's`);
    if (at > bytes.length) {
      throw new RangeError(`${where}: field ${field} runs past the event's end`);
    }
  }
  return step;
}
