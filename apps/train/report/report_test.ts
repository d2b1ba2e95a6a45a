import assert from "node:assert/strict";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { mulberry32 } from "@rlvr/common";
import { createImage, toDataUrl } from "@rlvr/image";
import { RunDir } from "../run/run_dir.ts";
import { findChromium, inspectPage } from "./_chromium.ts";
import { readReportData, renderReport, REPORT_PLOTS, writeReport } from "./report.ts";

/** mulberry32 (`@rlvr/common`): a small seeded generator, so the synthetic run is the same every time. */
const rng = mulberry32;

/**
 * Writes a synthetic run of `steps` steps through RunDir (so the records pass the same checks
 * as a real run): a noisy rising reward, decaying entropy, growing KL, evals every 5 steps and
 * samples at steps 1 and `steps`, with text that needs escaping.
 */
async function syntheticRun(root: string, steps: number, seed = 1): Promise<RunDir> {
  const r = rng(seed);
  const run = await RunDir.create(root, "synthetic");
  await run.writeConfig(`algorithm:\n  estimator: grpo\n# <b>not bold</b> & "quoted"\n`);
  for (let step = 1; step <= steps; step++) {
    const progress = step / steps;
    const reward = Math.min(1, 0.1 + 0.6 * progress + 0.1 * (r() - 0.5));
    await run.appendMetrics({
      step,
      "reward/mean": reward,
      "reward/std": 0.2 + 0.1 * r(),
      frac_zero_std_groups: r() * 0.5,
      "response_length/mean": 20 + 10 * progress + 3 * r(),
      entropy: 1.5 * (1 - 0.5 * progress) + 0.05 * r(),
      // KL is absent at step 1 (null), as when no reference step exists yet: a gap, not a 0
      kl: step === 1 ? null : 0.01 * progress + 0.002 * r(),
      "clip_frac/low": 0.02 * r(),
      "clip_frac/high": 0.05 * r(),
      grad_norm: 0.5 + r(),
      lr: 1e-5 * Math.min(1, step / 5),
      "ratio/max": 1 + 0.3 * r(),
      ppo_kl: 0.01 * r(),
      "sampling/difficulty_mean": 1 + step / 30,
      "replay/items": step % 4,
      "rollout/staleness": step % 3,
      "rollout/queue_depth": step % 2,
      tokens_per_s: 800 + 100 * r(),
      "time/rollout_s": 1 + r(),
      "time/train_s": 0.5 + r(),
    });
    if (step % 5 === 0) {
      const p1 = Math.min(1, 0.1 + 0.5 * progress * r());
      await run.appendEval({ step, "pass@1": p1, "pass@k": Math.min(1, p1 * 1.8), k: 4, n: 8 });
    }
    if (step === 1 || step === steps) {
      // The same two held-out problems (with an image each) at the first and last evaluation.
      for (let i = 0; i < 2; i++) {
        const image = createImage(8, 6, { fill: [200, 40 * i, 30] });
        await run.appendEvalSample({
          step: step === 1 ? 0 : step,
          problem: i,
          prompt: `count <b>${i}</b>?`,
          completion: step === 1 ? "<answer>0</answer>" : `<answer>${i + 1}</answer>`,
          reward: step === 1 ? 0 : 1,
          answer: String(i + 1),
          images: [toDataUrl(image), 'data:image/png;base64,AAAA" onerror="alert(1)'],
        });
      }
      for (let i = 0; i < 2; i++) {
        await run.appendSample({
          step,
          prompt: `What is ${i} + ${step}? Answer in <answer></answer>.`,
          completion: `<think>${i} plus ${step}</think><answer>${i + step}</answer> </pre><script>`,
          reward: step === 1 ? 0 : 1,
        });
      }
    }
  }
  await run.close();
  return run;
}

Deno.test("renderReport: one svg.plot per REPORT_PLOTS entry, no scripts or external loads, text escaped", async () => {
  const root = await Deno.makeTempDir();
  try {
    const run = await syntheticRun(root, 20);
    const html = renderReport(await readReportData(run.path));
    assert.equal((html.match(/<svg class="plot"/g) ?? []).length, REPORT_PLOTS.length);
    assert.equal(REPORT_PLOTS.length, 11);
    assert.ok(!/<script/i.test(html.replace(/&lt;script&gt;/g, "")), "no script element");
    // The only URL is the SVG namespace; nothing is fetched.
    const urls = html.match(/(?:https?:)?\/\/[^\s"'<>)]+/g) ?? [];
    assert.deepEqual([...new Set(urls)], ["http://www.w3.org/2000/svg"]);
    assert.ok(!/url\(/.test(html), "no CSS url()");
    assert.ok(html.includes("&lt;/pre&gt;&lt;script&gt;"), "completion text escaped");
    assert.ok(html.includes("# &lt;b&gt;not bold&lt;/b&gt; &amp; &quot;quoted&quot;"));
    assert.match(html, /<h3>before: step 1<\/h3>/);
    assert.match(html, /<h3>after: step 20<\/h3>/);
    // The same run directory gives the same bytes (no timestamp).
    assert.equal(renderReport(await readReportData(run.path)), html);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("renderReport: an empty run still renders every plot, with a no-data note", () => {
  const html = renderReport({ name: "empty", config: null, metrics: [], evals: [], samples: [] });
  assert.equal((html.match(/<svg class="plot"/g) ?? []).length, REPORT_PLOTS.length);
  assert.equal((html.match(/class="empty"/g) ?? []).length, REPORT_PLOTS.length);
  assert.match(html, /no samples were logged/);
  assert.match(html, /no config\.yaml/);
});

Deno.test({
  name: "report.html in real headless Chromium: no console errors, every plot rendered, screenshot",
  // The browser's stderr is drained by a background read that ends when the browser exits;
  // the op sanitizer cannot tell that apart from a leak.
  sanitizeOps: false,
  sanitizeResources: false,
  async fn(t) {
    const chromium = await findChromium();
    if (chromium === null) {
      if (Deno.env.get("CI") === "true") {
        assert.fail(
          "chromium not found but CI=true: .ci/run installs it with apt-get (set CHROMIUM_BIN to use another binary)",
        );
      }
      console.warn(
        "skipping the headless Chromium test: no chromium on PATH (apt-get install chromium)",
      );
      return;
    }
    const root = await Deno.makeTempDir();
    try {
      await t.step("the error collection works (a page with deliberate errors)", async () => {
        const bad = join(root, "bad.html");
        await Deno.writeTextFile(
          bad,
          `<!doctype html><title>bad</title><script>console.error("deliberate console error");</script><script>throw new Error("deliberate exception");</script>`,
        );
        const r = await inspectPage(chromium, pathToFileURL(bad).href, "document.title");
        assert.equal(r.value, "bad");
        assert.ok(
          r.errors.some((e) => e.includes("deliberate console error")),
          r.errors.join("\n"),
        );
        assert.ok(r.errors.some((e) => e.includes("deliberate exception")), r.errors.join("\n"));
      });

      await t.step(
        "the report's Content-Security-Policy turns an external load into an error",
        async () => {
          const html = renderReport({
            name: "csp",
            config: null,
            metrics: [],
            evals: [],
            samples: [],
          })
            .replace("</body>", `<img src="https://example.invalid/x.png"></body>`);
          const page = join(root, "csp.html");
          await Deno.writeTextFile(page, html);
          const r = await inspectPage(chromium, pathToFileURL(page).href, "document.title");
          assert.equal(r.value, "rlvr run csp");
          assert.ok(
            r.errors.some((e) => /example\.invalid.*Content Security Policy/.test(e)),
            r.errors.join("\n"),
          );
        },
      );

      await t.step("the report", async () => {
        const run = await syntheticRun(root, 30, 7);
        const path = await writeReport(run.path);
        const expression = `JSON.stringify({
          plots: document.querySelectorAll("svg.plot").length,
          sizes: [...document.querySelectorAll("svg.plot")].map((s) => {
            const b = s.getBoundingClientRect();
            return [b.width, b.height];
          }),
          lines: [...document.querySelectorAll("svg.plot")].map((s) => s.querySelectorAll("path.line").length),
          bands: document.querySelectorAll("svg.plot polygon.band").length,
          title: document.title,
          heldOut: [...document.querySelectorAll("table.heldout img")].map((i) => i.naturalWidth),
          heldOutCells: [...document.querySelectorAll("table.heldout tr")].map((r) => r.children.length),
        })`;
        const r = await inspectPage(chromium, pathToFileURL(path).href, expression);
        assert.deepEqual(r.errors, [], `browser errors:\n${r.errors.join("\n")}`);
        const info = JSON.parse(String(r.value));
        assert.equal(info.plots, REPORT_PLOTS.length);
        assert.equal(info.title, "rlvr run synthetic");
        for (const [w, h] of info.sizes) assert.ok(w > 100 && h > 100, `plot size ${w}x${h}`);
        // Every plot has data in this run, so every plot draws at least one line; clip
        // fractions and pass@1/pass@k draw two; reward has its ± std band.
        assert.ok(info.lines.every((n: number) => n >= 1), JSON.stringify(info.lines));
        assert.equal(info.lines[1], 2);
        assert.equal(info.lines[5], 2);
        assert.ok(info.bands >= 1);
        // Two held-out problems, each image decoded (8 px wide); the forged URL is not written.
        assert.deepEqual(info.heldOut, [8, 8]);
        assert.deepEqual(info.heldOutCells, [3, 3, 3]);
        // A real PNG of a page taller than one plot row.
        assert.deepEqual([...r.screenshot.subarray(0, 8)], [137, 80, 78, 71, 13, 10, 26, 10]);
        const height = new DataView(r.screenshot.buffer, r.screenshot.byteOffset).getUint32(20);
        assert.ok(height > 600, `screenshot height ${height}`);
        const shot = await Deno.makeTempFile({ prefix: "rlvr-report-", suffix: ".png" });
        await Deno.writeFile(shot, r.screenshot);
        console.log(`screenshot: ${shot} (${r.screenshot.length} bytes; not committed)`);
      });
    } finally {
      await Deno.remove(root, { recursive: true });
    }
  },
});
