// A second process for the run-lock tests (not part of the package):
//   hold <dir>: takes the lock of run directory <dir> through RunDir (as a training run does),
//               prints "locked <pid>", and releases it when its stdin closes;
//   try <dir>:  tries to take it; prints the error and exits 2 when it is held;
//   create <root> <name> <n>: creates n runs named <name> at once and prints their paths.

import { RunDir } from "../run_dir.ts";
import { RunLockedError } from "../run_lock.ts";

const [mode, dir] = Deno.args;
if (mode === "hold") {
  const run = await RunDir.open(dir!, { lock: true, warn: (line) => console.error(line) });
  console.log(`locked ${Deno.pid}`);
  // Held until the test closes our stdin (or kills us).
  for await (const _ of Deno.stdin.readable) { /* wait for EOF */ }
  await run.unlock();
} else if (mode === "try") {
  try {
    const run = await RunDir.open(dir!, { lock: true });
    await run.unlock();
    console.log("acquired");
  } catch (e) {
    if (!(e instanceof RunLockedError)) throw e;
    console.error(e.message);
    Deno.exit(2);
  }
} else if (mode === "create") {
  const n = Number(Deno.args[3]);
  const runs = await Promise.all(
    Array.from({ length: n }, () => RunDir.create(dir!, Deno.args[2]!)),
  );
  console.log(runs.map((r) => r.path).join("\n"));
} else {
  throw new Error(
    `usage: hold_lock.ts hold|try <dir> | create <root> <name> <n>, got ${Deno.args.join(" ")}`,
  );
}
