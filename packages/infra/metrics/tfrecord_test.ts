import assert from "node:assert/strict";
import fc from "fast-check";
import { crc32c as awsCrc32c } from "@aws-crypto/crc32c";
import { crc32c, encodeTfRecord, maskedCrc32c, readTfRecords, TfRecordError } from "./tfrecord.ts";

Deno.test("crc32c: the RFC 3720 (iSCSI) test vectors and the check value", () => {
  const ascending = Uint8Array.from({ length: 32 }, (_, i) => i);
  assert.equal(crc32c(new Uint8Array(32)), 0x8a9136aa);
  assert.equal(crc32c(new Uint8Array(32).fill(0xff)), 0x62a8ab43);
  assert.equal(crc32c(ascending), 0x46dd794e);
  assert.equal(crc32c(ascending.slice().reverse()), 0x113fdb5c);
  assert.equal(crc32c(new TextEncoder().encode("123456789")), 0xe3069283);
  assert.equal(crc32c(new Uint8Array(0)), 0);
});

Deno.test("crc32c: equals npm's @aws-crypto/crc32c on random bytes", () => {
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 300 }), (bytes) => {
      assert.equal(crc32c(bytes), awsCrc32c(bytes));
    }),
    { seed: 18, numRuns: 300 },
  );
});

Deno.test("maskedCrc32c: TensorFlow's mask (rotate right by 15, add 0xa282ead8)", () => {
  const data = new TextEncoder().encode("123456789");
  // 0xe3069283 rotated right by 15 is 0x2507c60d; + 0xa282ead8 = 0xc78ab0e5 (mod 2^32).
  assert.equal(maskedCrc32c(data), 0xc78ab0e5);
});

Deno.test("readTfRecords: a file cut at any byte reads as the complete records before the cut", () => {
  const payloads = [
    new Uint8Array([1]),
    new Uint8Array(0),
    Uint8Array.from({ length: 40 }, (_, i) => i),
  ];
  const framed = payloads.map(encodeTfRecord);
  const whole = new Uint8Array(framed.reduce((n, f) => n + f.length, 0));
  const ends: number[] = [];
  let at = 0;
  for (const f of framed) {
    whole.set(f, at);
    at += f.length;
    ends.push(at);
  }
  for (let cut = 0; cut <= whole.length; cut++) {
    const complete = ends.filter((e) => e <= cut).length;
    const r = readTfRecords(whole.subarray(0, cut));
    assert.deepEqual(r.records, payloads.slice(0, complete), `cut at ${cut}`);
    assert.equal(r.tornBytes, cut - (complete === 0 ? 0 : ends[complete - 1]!), `cut at ${cut}`);
  }
});

Deno.test("readTfRecords: any flipped bit of a complete record is a TfRecordError naming the offset", () => {
  const framed = new Uint8Array([
    ...encodeTfRecord(new Uint8Array([9, 9])),
    ...encodeTfRecord(new Uint8Array([1, 2, 3, 4])),
  ]);
  const second = 2 + 16;
  for (let byte = 0; byte < framed.length; byte++) {
    for (let bit = 0; bit < 8; bit++) {
      const bad = framed.slice();
      bad[byte] = bad[byte]! ^ (1 << bit);
      assert.throws(
        () => readTfRecords(bad, "e.tfevents"),
        (e: unknown) =>
          e instanceof TfRecordError && e.offset === (byte < second ? 0 : second) &&
          /e\.tfevents: the record at byte \d+ has a bad (length|data) checksum/.test(e.message),
        `byte ${byte} bit ${bit}`,
      );
    }
  }
});
