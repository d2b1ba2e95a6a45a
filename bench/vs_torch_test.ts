import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";

const script = fileURLToPath(new URL("./vs_torch.ts", import.meta.url));

async function run(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", script, ...args],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = (b: Uint8Array) => new TextDecoder().decode(b);
  return { code: out.code, stdout: text(out.stdout), stderr: text(out.stderr) };
}

Deno.test("vs_torch --quick: one child process per --blas choice, JSON with init time, peak RSS and matmul paths; PyTorch missing is said, not faked", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const r = await run([
      "--quick",
      "--models",
      "demo",
      "--blas",
      "wasm,ts",
      "--python",
      "no-such-python",
      "--out",
      dir,
    ]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /PyTorch missing: could not start no-such-python/);
    assert.match(r.stdout, /demo trainStep/);
    assert.match(r.stdout, /demo init s .*\n.*demo init zig s/);
    assert.match(r.stdout, /demo RLVR_BLAS=ts: forward ts, gradients ts/);
    const files = [...Deno.readDirSync(dir)].map((e) => e.name);
    assert.equal(files.length, 1);
    const json = JSON.parse(await Deno.readTextFile(`${dir}/${files[0]}`));
    assert.equal(json.schema, "rlvr-vs-torch/2");
    assert.deepEqual(json.blas, ["wasm", "ts"]);
    const [row] = json.rows;
    assert.equal(row.id, "demo");
    assert.equal(row.torch, null);
    assert.deepEqual(row.ours.map((o: { blas: string }) => o.blas), ["wasm", "ts"]);
    for (const o of row.ours) {
      assert.ok(o.initSeconds > 0 && o.trainStep.seconds > 0 && o.generate.tokensPerS > 0);
      assert.ok(o.initZigguratSeconds > 0);
      if (Deno.build.os === "linux") assert.ok(o.peakRssBytes > 1 << 20);
    }
    assert.equal(row.ours[1].matmul.forward, "ts");
    assert.equal(row.ours[1].matmul.library, null);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("vs_torch --init-only: both inits of each model, each in a fresh process, in a table and vs_torch-init-*.json", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const r = await run(["--init-only", "--models", "demo", "--out", dir]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /model\s+parameters\s+init s\s+init zig s\s+speed-up/);
    assert.match(r.stdout, /demo\s+120000\s+\d+\.\d\d\s+\d+\.\d\d\s+\d+\.\dx/);
    const files = [...Deno.readDirSync(dir)].map((e) => e.name);
    assert.equal(files.length, 1);
    assert.match(files[0]!, /^vs_torch-init-.*\.json$/);
    const json = JSON.parse(await Deno.readTextFile(`${dir}/${files[0]}`));
    assert.equal(json.schema, "rlvr-vs-torch-init/1");
    const [row] = json.rows;
    assert.equal(row.id, "demo");
    assert.ok(row.initSeconds > 0 && row.initZigguratSeconds > 0);
    assert.deepEqual(Object.keys(row.runs), ["box-muller", "ziggurat"]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("vs_torch --help prints the options", async () => {
  const r = await run(["--help"]);
  assert.equal(r.code, 0);
  assert.match(r.stdout, /--init-only/);
});

Deno.test("vs_torch: an unknown model or BLAS choice exits 2 naming it and the choices", async () => {
  const a = await run(["--models", "demo,7b"]);
  assert.equal(a.code, 2);
  assert.match(
    a.stderr,
    /--models: unknown model "7b"; use a comma-separated list of demo, 10m, 0\.5b/,
  );
  const b = await run(["--blas", "mkl"]);
  assert.equal(b.code, 2);
  assert.match(
    b.stderr,
    /--blas: unknown choice "mkl"; use a comma-separated list of auto, openblas, wasm, ts/,
  );
});
