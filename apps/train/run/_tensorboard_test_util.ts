// An event-file reader for the tests, independent of the writer in @rlvr/infra: the TFRecord
// framing is walked here from the public format description, the CRCs are checked with npm's
// @aws-crypto/crc32c, and the Event protos are decoded by protobufjs from the message
// definitions in testdata/tensorboard_event.proto (not exported).
//
// npm's only TFRecord reader, @roboflow/tfrecords 1.0.4, decodes every record as its own
// image-example message and fails ("Assertion failed") on Event records, so it cannot read event
// files; see the README's Trackers section.

import { crc32c } from "@aws-crypto/crc32c";
import protobuf from "protobufjs";
import { join } from "node:path";

const PROTO = new URL("./testdata/tensorboard_event.proto", import.meta.url);
const root = protobuf.parse(await Deno.readTextFile(PROTO), { keepCase: true }).root;
const EventType = root.lookupType("tensorboard.Event");

/** One decoded Event, as plain data (64-bit steps as numbers, bytes as Uint8Array). */
export interface DecodedEvent {
  wall_time?: number;
  step?: number;
  file_version?: string;
  session_log?: { status?: number };
  summary?: {
    value?: {
      tag: string;
      simple_value?: number;
      metadata?: { plugin_data?: { plugin_name?: string }; data_class?: number };
      tensor?: { dtype?: number; tensor_shape?: { dim?: unknown[] }; string_val?: Uint8Array[] };
    }[];
  };
}

function masked(bytes: Uint8Array): number {
  const c = crc32c(bytes);
  return ((((c >>> 15) | (c << 17)) >>> 0) + 0xa282ead8) % 2 ** 32;
}

/** The records of a TFRecord file; throws when a CRC does not verify or the file is cut. */
export function tfRecords(bytes: Uint8Array, where: string): Uint8Array[] {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out: Uint8Array[] = [];
  let at = 0;
  while (at < bytes.length) {
    if (at + 12 > bytes.length) throw new Error(`${where}: cut header at byte ${at}`);
    const length = Number(view.getBigUint64(at, true));
    if (view.getUint32(at + 8, true) !== masked(bytes.subarray(at, at + 8))) {
      throw new Error(`${where}: bad length CRC at byte ${at}`);
    }
    const end = at + 12 + length;
    if (end + 4 > bytes.length) throw new Error(`${where}: cut record at byte ${at}`);
    const data = bytes.subarray(at + 12, end);
    if (view.getUint32(end, true) !== masked(data)) {
      throw new Error(`${where}: bad data CRC at byte ${at}`);
    }
    out.push(data);
    at = end + 4;
  }
  return out;
}

/** Decodes one serialized Event. */
export function decodeEvent(bytes: Uint8Array): DecodedEvent {
  const message = EventType.decode(bytes);
  return EventType.toObject(message, { longs: Number, bytes: Uint8Array }) as DecodedEvent;
}

/** The event files of a log directory, in name order (the order TensorBoard reads them). */
export async function eventFiles(dir: string): Promise<string[]> {
  const names: string[] = [];
  for await (const e of Deno.readDir(dir)) if (e.name.includes("tfevents")) names.push(e.name);
  return names.sort().map((n) => join(dir, n));
}

/** Every event of every file of a log directory, in reading order. */
export async function readEvents(dir: string): Promise<DecodedEvent[]> {
  const events: DecodedEvent[] = [];
  for (const path of await eventFiles(dir)) {
    for (const r of tfRecords(await Deno.readFile(path), path)) events.push(decodeEvent(r));
  }
  return events;
}

/** Tag → step → value of the scalar summaries (a later value for the same step wins). */
export function scalarsByTag(events: DecodedEvent[]): Map<string, Map<number, number>> {
  const out = new Map<string, Map<number, number>>();
  for (const e of events) {
    for (const v of e.summary?.value ?? []) {
      if (v.simple_value === undefined) continue;
      let m = out.get(v.tag);
      if (m === undefined) out.set(v.tag, m = new Map());
      m.set(e.step ?? 0, v.simple_value);
    }
  }
  return out;
}

/** Step → text of the text summaries of `tag`. */
export function textsOf(events: DecodedEvent[], tag: string): Map<number, string> {
  const out = new Map<number, string>();
  for (const e of events) {
    for (const v of e.summary?.value ?? []) {
      if (v.tag !== tag || v.tensor === undefined) continue;
      const s = v.tensor.string_val?.[0];
      out.set(e.step ?? 0, s === undefined ? "" : new TextDecoder().decode(s));
    }
  }
  return out;
}
