/**
 * Test-only float64 references shared by the policy tests: random host parameters and Hugging
 * Face's LlamaForCausalLM / Qwen2 / Qwen3 forward written as plain loops (with Qwen2-VL's input
 * embeddings and M-RoPE as options). Not published.
 *
 * @module
 */

import { Rng } from "@rlvr/tensor";
import { type ModelConfig, parameterShapes } from "@rlvr/policy";

// Models with every parameter random (norm weights around 1, biases around 0, so that a norm or
// bias that is ignored or misplaced changes the logits). The host copy is f32-rounded.

export type HostParams = Map<string, Float64Array>;

export function hostParams(config: ModelConfig, seed: number, std = 0.3): HostParams {
  const rng = new Rng(seed);
  const out: HostParams = new Map();
  for (const [name, shape] of parameterShapes(config)) {
    const size = shape.reduce((a, b) => a * b, 1);
    const v = new Float64Array(size);
    for (let i = 0; i < size; i++) {
      const z = rng.normal();
      const x = name.endsWith("norm.weight")
        ? 1 + 0.2 * z
        : name.endsWith(".bias")
        ? 0.2 * z
        : name === "model.embed_tokens.weight"
        ? z
        : std * z;
      v[i] = Math.fround(x);
    }
    out.set(name, v);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// The independent reference: Hugging Face's LlamaForCausalLM / Qwen2 / Qwen3 forward written as
// plain float64 loops over host arrays, one token and one head at a time.

export interface RefInputs {
  ids: number[][];
  /** Position of each token, or with `mrope`, unused (positions come from `mrope`). */
  positions: number[][];
  mask: number[][] | null;
  /** Input embeddings `[batch][t][hidden]` used instead of the embedding rows of `ids`. */
  embeds?: number[][][];
  /** Multimodal positions `[3][batch][t]` and the M-RoPE section (Qwen2-VL). */
  mrope?: { positions: number[][][]; section: [number, number, number] };
}

export function refInvFreq(c: ModelConfig): number[] {
  return Array.from({ length: c.headDim / 2 }, (_, i) => {
    const inv = 1 / c.ropeTheta ** ((2 * i) / c.headDim);
    const s = c.ropeScaling;
    if (s === null) return inv;
    const wavelen = (2 * Math.PI) / inv;
    const lowWavelen = s.originalMaxPositions / s.lowFreqFactor;
    const highWavelen = s.originalMaxPositions / s.highFreqFactor;
    if (wavelen < highWavelen) return inv;
    if (wavelen > lowWavelen) return inv / s.factor;
    const smooth = (s.originalMaxPositions / wavelen - s.lowFreqFactor) /
      (s.highFreqFactor - s.lowFreqFactor);
    return (1 - smooth) * (inv / s.factor) + smooth * inv;
  });
}

export function refLogits(c: ModelConfig, P: HostParams, inp: RefInputs): number[][][] {
  const get = (n: string) => P.get(n)!;
  const linear = (x: number[], name: string): number[] => {
    const w = get(`${name}.weight`);
    const b = P.get(`${name}.bias`);
    const inDim = x.length;
    const outDim = w.length / inDim;
    const y: number[] = [];
    for (let o = 0; o < outDim; o++) {
      let s = b ? b[o]! : 0;
      for (let i = 0; i < inDim; i++) s += w[o * inDim + i]! * x[i]!;
      y.push(s);
    }
    return y;
  };
  const rms = (x: number[], w: Float64Array): number[] => {
    const ms = x.reduce((s, v) => s + v * v, 0) / x.length;
    const r = 1 / Math.sqrt(ms + c.rmsNormEps);
    return x.map((v, i) => v * r * w[i]!);
  };
  const inv = refInvFreq(c);
  const half = c.headDim / 2;
  // Frequency i follows stream 0, 1 or 2 by the M-RoPE section it falls in (one stream without).
  const streamOf = (i: number): number => {
    if (inp.mrope === undefined) return 0;
    const [s0, s1] = inp.mrope.section;
    return i < s0 ? 0 : i < s0 + s1 ? 1 : 2;
  };
  const rotate = (x: number[], b: number, t: number): number[] => {
    const y = x.slice();
    for (let i = 0; i < half; i++) {
      const pos = inp.mrope === undefined
        ? inp.positions[b]![t]!
        : inp.mrope.positions[streamOf(i)]![b]![t]!;
      const a = pos * inv[i]!;
      y[i] = x[i]! * Math.cos(a) - x[i + half]! * Math.sin(a);
      y[i + half] = x[i + half]! * Math.cos(a) + x[i]! * Math.sin(a);
    }
    return y;
  };
  const silu = (v: number) => v / (1 + Math.exp(-v));
  const d = c.headDim;
  const group = c.numHeads / c.numKvHeads;
  return inp.ids.map((row, b) => {
    const T = row.length;
    const embed = get("model.embed_tokens.weight");
    let xs = inp.embeds !== undefined
      ? inp.embeds[b]!.map((r) => r.slice())
      : row.map((id) => Array.from(embed.subarray(id * c.hiddenSize, (id + 1) * c.hiddenSize)));
    for (let l = 0; l < c.numLayers; l++) {
      const p = `model.layers.${l}`;
      const qs: number[][][] = []; // [t][head][d]
      const ks: number[][][] = [];
      const vs: number[][][] = [];
      for (let t = 0; t < T; t++) {
        const h = rms(xs[t]!, get(`${p}.input_layernorm.weight`));
        const split = (v: number[], n: number) =>
          Array.from({ length: n }, (_, j) => v.slice(j * d, (j + 1) * d));
        let q = split(linear(h, `${p}.self_attn.q_proj`), c.numHeads);
        let k = split(linear(h, `${p}.self_attn.k_proj`), c.numKvHeads);
        if (c.qkNorm) {
          q = q.map((v) => rms(v, get(`${p}.self_attn.q_norm.weight`)));
          k = k.map((v) => rms(v, get(`${p}.self_attn.k_norm.weight`)));
        }
        qs.push(q.map((v) => rotate(v, b, t)));
        ks.push(k.map((v) => rotate(v, b, t)));
        vs.push(split(linear(h, `${p}.self_attn.v_proj`), c.numKvHeads));
      }
      xs = xs.map((x, t) => {
        const attn: number[] = [];
        for (let hd = 0; hd < c.numHeads; hd++) {
          const kv = Math.floor(hd / group);
          const visible = [...Array(t + 1).keys()].filter((s) =>
            inp.mask === null || inp.mask[b]![s] === 1
          );
          const out = new Array(d).fill(0);
          if (visible.length > 0) {
            const scores = visible.map((s) =>
              qs[t]![hd]!.reduce((acc, v, i) => acc + v * ks[s]![kv]![i]!, 0) / Math.sqrt(d)
            );
            const m = Math.max(...scores);
            const e = scores.map((s) => Math.exp(s - m));
            const z = e.reduce((a, v) => a + v, 0);
            visible.forEach((s, j) => {
              for (let i = 0; i < d; i++) out[i] += (e[j]! / z) * vs[s]![kv]![i]!;
            });
          }
          attn.push(...out);
        }
        const h1 = linear(attn, `${p}.self_attn.o_proj`).map((v, i) => v + x[i]!);
        const n2 = rms(h1, get(`${p}.post_attention_layernorm.weight`));
        const gate = linear(n2, `${p}.mlp.gate_proj`);
        const up = linear(n2, `${p}.mlp.up_proj`);
        const down = linear(gate.map((g, i) => silu(g) * up[i]!), `${p}.mlp.down_proj`);
        return down.map((v, i) => v + h1[i]!);
      });
    }
    const head = c.tieWordEmbeddings ? "model.embed_tokens" : "lm_head";
    return xs.map((x) => linear(rms(x, get("model.norm.weight")), head));
  });
}
