import assert from "node:assert/strict";
import { tensor, zeros } from "../creation.ts";
import { AdamW } from "./adamw.ts";
import { defaultNoDecay, paramGroupsNoDecay } from "./param_groups.ts";

Deno.test("paramGroupsNoDecay: 1-D tensors and bias/norm/ln_ names go to the weightDecay 0 group", () => {
  const named = {
    "wte.weight": zeros([10, 4]),
    "h.0.ln_1.weight": zeros([4]),
    "h.0.attn.c_attn.weight": zeros([4, 12]),
    "h.0.attn.c_attn.bias": zeros([12]),
    "h.0.post_attention_layernorm.weight": zeros([4]),
    "h.0.norm_scale2d": zeros([2, 2]), // 2-D but named like a norm
    "lm_head.weight": zeros([4, 10]),
    "scalar_gate": zeros([]), // 0-D
  };
  const [decay, noDecay] = paramGroupsNoDecay(named, { weightDecay: 0.1 });
  assert.deepEqual(decay.params, [
    named["wte.weight"],
    named["h.0.attn.c_attn.weight"],
    named["lm_head.weight"],
  ]);
  assert.equal(decay.weightDecay, 0.1);
  assert.deepEqual(noDecay.params, [
    named["h.0.ln_1.weight"],
    named["h.0.attn.c_attn.bias"],
    named["h.0.post_attention_layernorm.weight"],
    named["h.0.norm_scale2d"],
    named["scalar_gate"],
  ]);
  assert.equal(noDecay.weightDecay, 0);
  for (const t of Object.values(named)) t.dispose();
});

Deno.test("paramGroupsNoDecay: [name, tensor] pairs, a custom predicate, the optimizer default", async () => {
  const w = tensor([[1, 1]], { requiresGrad: true });
  const b = tensor([1], { requiresGrad: true });
  const groups = paramGroupsNoDecay([["w", w], ["b", b]], { noDecay: (name) => name === "w" });
  assert.deepEqual(groups[0].params, [b]);
  assert.equal("weightDecay" in groups[0], false); // inherits the optimizer's weightDecay
  const opt = new AdamW(groups, { lr: 0.1, weightDecay: 0.5 });
  assert.equal(opt.paramGroups[0]!.weightDecay, 0.5);
  assert.equal(opt.paramGroups[1]!.weightDecay, 0);
  // zero gradients: only decoupled decay acts, and only on the decay group (b)
  w.grad = zeros([1, 2]);
  b.grad = zeros([1]);
  opt.step();
  assert.deepEqual(Array.from(await w.data()), [1, 1]);
  assert.ok(Math.abs((await b.data())[0]! - 0.95) < 1e-7);
  assert.equal(defaultNoDecay("x", w), false);
  assert.throws(
    () => paramGroupsNoDecay({ w }, { weightDecay: -1 }),
    /paramGroupsNoDecay: options.weightDecay must be a finite number >= 0, got -1/,
  );
  opt.dispose();
  w.dispose();
  b.dispose();
});
