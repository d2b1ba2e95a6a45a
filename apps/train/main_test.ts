import assert from "node:assert/strict";
import { main } from "./main.ts";

Deno.test("train placeholder: prints usage and exits 0; an unknown flag exits 2", () => {
  const logs: string[] = [];
  const log = console.log;
  const err = console.error;
  console.log = (m: string) => logs.push(m);
  console.error = (m: string) => logs.push(m);
  try {
    assert.equal(main([]), 0);
    assert.match(logs.join("\n"), /Status: not yet/);
    assert.equal(main(["--bogus"]), 2);
    assert.match(logs.at(-1)!, /Unknown option '--bogus'/);
  } finally {
    console.log = log;
    console.error = err;
  }
});
