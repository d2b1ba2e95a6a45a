import assert from "node:assert/strict";
import { join } from "node:path";
import { chromiumArgs, launchBrowser, WEBGPU_FLAGS } from "./browser.ts";
import { serveDirectory } from "./static_server.ts";
import { chromiumOrSkip } from "./_test_utils.ts";

const BAD_PAGE = `<!doctype html><title>bad</title>
<script>console.error("deliberate console error");</script>
<script>throw new Error("deliberate exception");</script>
<script>Promise.reject(new Error("deliberate rejection"));</script>
<script src="missing.js"></script>
<p>bad</p>`;

const GOOD_PAGE = `<!doctype html><title>good</title>
<script type="module">
  const adapter = await navigator.gpu?.requestAdapter();
  window.__probe = {
    isolated: crossOriginIsolated,
    sab: typeof SharedArrayBuffer === "function",
    adapter: adapter ? adapter.info.architecture || adapter.info.vendor || "unnamed" : "none",
  };
  console.log("probe done");
</script>`;

Deno.test("chromiumArgs: WebGPU flags only when asked for", () => {
  for (const f of WEBGPU_FLAGS) assert.ok(chromiumArgs({ webgpu: true }).includes(f), f);
  for (const f of WEBGPU_FLAGS) assert.ok(!chromiumArgs({ webgpu: false }).includes(f), f);
  assert.ok(chromiumArgs({ webgpu: false }).includes("--disable-gpu"));
  assert.ok(!chromiumArgs({ webgpu: true }).includes("--disable-gpu"));
});

Deno.test({
  name: "launchBrowser: records console errors, uncaught errors and failed requests; " +
    "pages are cross-origin isolated; WebGPU only with the flags; closes cleanly",
  // Deno's op and resource sanitizers stay on: close() leaves no process, socket or timer.
  async fn(t) {
    const chromium = await chromiumOrSkip("the headless Chromium harness test");
    if (chromium === null) return;
    const dir = await Deno.makeTempDir({ prefix: "rlvr-browser-test-" });
    try {
      await Deno.writeTextFile(join(dir, "bad.html"), BAD_PAGE);
      await Deno.writeTextFile(join(dir, "good.html"), GOOD_PAGE);
      await using server = await serveDirectory(dir);
      for (const webgpu of [true, false]) {
        await t.step(`webgpu: ${webgpu}`, async () => {
          await using browser = await launchBrowser({ webgpu, executablePath: chromium });
          assert.match(await browser.version(), /Chrom/);
          const bad = await browser.openPage(server.url + "bad.html");
          await bad.waitFor("document.readyState === 'complete'");
          // The rejection is reported asynchronously; give it a moment.
          await new Promise((r) => setTimeout(r, 300));
          const problems = bad.problems().join("\n");
          assert.match(problems, /console\.error: deliberate console error/);
          assert.match(problems, /uncaught: .*deliberate exception/);
          assert.match(problems, /uncaught: .*deliberate rejection/);
          assert.match(problems, /request failed: .*missing\.js: HTTP 404/);
          await bad.close();

          const good = await browser.openPage(server.url + "good.html");
          await good.waitFor("window.__probe !== undefined");
          const probe = await good.evaluate<{ isolated: boolean; sab: boolean; adapter: string }>(
            "window.__probe",
          );
          assert.deepEqual(good.problems(), []);
          assert.equal(probe.isolated, true, "COOP/COEP make the page cross-origin isolated");
          assert.equal(probe.sab, true, "SharedArrayBuffer is exposed");
          if (webgpu) assert.notEqual(probe.adapter, "none", "SwiftShader gives an adapter");
          else assert.equal(probe.adapter, "none");
          assert.ok(good.consoleLog.includes("log: probe done"));
          const shot = join(dir, "good.png");
          await good.screenshot(shot);
          const png = await Deno.readFile(shot);
          assert.deepEqual([...png.subarray(1, 4)], [80, 78, 71], "a PNG was written");
          await assert.rejects(() => good.screenshot(join(dir, "x.jpg")), /must end with \.png/);
          const pid = browser.pid;
          assert.ok(pid !== null);
          await browser.close();
          assert.throws(() => Deno.kill(pid, "SIGCONT"), "the browser process is gone");
        });
      }
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test("launchBrowser: a missing executable fails naming it", async () => {
  await assert.rejects(
    () => launchBrowser({ webgpu: false, executablePath: "/surely/not/chromium", timeoutMs: 5000 }),
    /launchBrowser: \/surely\/not\/chromium .* did not start/,
  );
});
