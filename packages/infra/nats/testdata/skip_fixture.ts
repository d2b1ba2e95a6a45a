// Run by server_test.ts with NATS_SERVER_BIN pointing nowhere: its NATS tests are skipped, and
// the file must say how many (the line natsTest prints).
import { natsTest } from "../server.ts";

natsTest("fixture: one", async () => {});
natsTest("fixture: two", async () => {});
natsTest("fixture: three", async () => {});
Deno.test("fixture: a plain test runs", () => {});
