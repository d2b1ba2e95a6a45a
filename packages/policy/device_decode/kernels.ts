/**
 * WGSL of the device decode loop ({@link DeviceDecoder}): one decode step of a Llama / Qwen2 /
 * Qwen3 decoder as fixed dispatches over fixed buffers, with the step's varying numbers (the cache
 * column, the token index) read from a small state buffer on the GPU, so the same dispatches serve
 * every step and no host value enters a step.
 *
 * Design decisions:
 * - **Sizes are compiled in** (string templates, one pipeline per shape), so loops have constant
 *   bounds and no params uniform is written per dispatch.
 * - **GEMV for the projections**: 32 invocations per output feature read its weight row as
 *   `vec4`s (coalesced), every batch row of a block of `RB` at once, so a weight is read once per
 *   block of rows; the 32 partial sums are added in lane order through workgroup memory. Decoding
 *   at small batch is bound by reading the weights, which this reads once.
 * - **Attention reads the cache in blocks of 128 keys** with an online softmax (running max and
 *   sum), so the workgroup memory is fixed whatever the context length.
 * - **Sampling on the GPU**: the keyed uniforms are drawn on the host (the same Philox draws as
 *   `@rlvr/sampling`'s sampler) and the inverse CDF runs in f32 over chunks of the vocabulary in
 *   index order; the token feeds the next step's embedding lookup directly.
 *
 * @module
 */

/** Exact WGSL spelling of an f32 constant (its bits, so no decimal rounding creeps in). */
export function f32Literal(x: number): string {
  const bits = new Uint32Array(new Float32Array([x]).buffer)[0]!;
  return `bitcast<f32>(${bits}u)`;
}

/**
 * WGSL of `fn <name>(v: f32, li: u32) -> f32`: a tree reduction of one value per invocation
 * over a workgroup of `size` (a power of two) with `combine` (of `a` and `b`), in its own
 * workgroup array; every invocation gets the result. Call it from uniform control flow. (The
 * shape of `@rlvr/tensor`'s internal `wgReduce`, which a package outside it cannot import.)
 */
function treeReduce(name: string, size: number, combine: string): string {
  return `
var<workgroup> red_${name}: array<f32, ${size}>;
fn ${name}(v: f32, li: u32) -> f32 {
  red_${name}[li] = v;
  workgroupBarrier();
  for (var k = ${size / 2}u; k > 0u; k >>= 1u) {
    if (li < k) {
      let a = red_${name}[li];
      let b = red_${name}[li + k];
      red_${name}[li] = ${combine};
    }
    workgroupBarrier();
  }
  let r = red_${name}[0];
  workgroupBarrier();
  return r;
}`;
}

/** State words read by every step: `pos` (the cache column written now), `step` (token index). */
const STATE = `struct State { pos: u32, step: u32, pad0: u32, pad1: u32 }`;

/** `x[b] = E[tok[b]]`, one workgroup per row. */
export function embedWgsl(hidden: number): string {
  return `
@group(0) @binding(0) var<storage, read> tok: array<u32>;
@group(0) @binding(1) var<storage, read> E: array<f32>;
@group(0) @binding(2) var<storage, read_write> x: array<f32>;
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
  let b = wid.x;
  let t = tok[b];
  for (var i = lid.x; i < ${hidden}u; i += 256u) { x[b * ${hidden}u + i] = E[t * ${hidden}u + i]; }
}`;
}

/** RMSNorm of each row: `out = x · rsqrt(mean(x²) + eps) · w`, one workgroup per row. */
export function rmsNormWgsl(hidden: number, eps: number): string {
  return `
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> w: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;
${treeReduce("sum", 256, "a + b")}
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
  let base = wid.x * ${hidden}u;
  var s = 0.0;
  for (var i = lid.x; i < ${hidden}u; i += 256u) { let v = x[base + i]; s += v * v; }
  let inv = inverseSqrt(sum(s, lid.x) / f32(${hidden}u) + ${f32Literal(eps)});
  for (var i = lid.x; i < ${hidden}u; i += 256u) { out[base + i] = x[base + i] * inv * w[i]; }
}`;
}

/** What a {@link gemvWgsl} kernel adds to `x · Wᵀ`. */
export interface GemvOptions {
  /** Output features (rows of `W`). */
  n: number;
  /** Input features (columns of `W`), a multiple of 4. */
  k: number;
  /** Batch rows in all. */
  rows: number;
  /** Batch rows per workgroup (1 to 8). */
  rowBlock: number;
  /** Adds `bias[n]`. */
  bias: boolean;
  /** `out += x · Wᵀ` (a residual connection) instead of `out = x · Wᵀ`. */
  accumulate: boolean;
  /** SwiGLU: `out = silu(x · Wgᵀ) · (x · Wuᵀ)` with a second weight `Wu`. */
  swiglu: boolean;
}

/** Output features per workgroup of {@link gemvWgsl} (one per 32 invocations). */
export const GEMV_OUTPUTS_PER_GROUP = 4;

/**
 * `out[r, n] = Σ_k x[r, k] · W[n, k]` (+ bias, + out, or SwiGLU with a second weight), for rows
 * `r` of the block `wid.y`; grid `(ceil(n / 4), ceil(rows / rowBlock))`.
 */
export function gemvWgsl(o: GemvOptions): string {
  const K4 = o.k / 4;
  const RB = o.rowBlock;
  const sw = o.swiglu;
  let b = 0;
  const decl = (name: string, type: string, access = "read") =>
    `@group(0) @binding(${b++}) var<storage, ${access}> ${name}: ${type};`;
  const lines = [
    decl("x", "array<vec4<f32>>"),
    decl("W", "array<vec4<f32>>"),
    sw ? decl("Wu", "array<vec4<f32>>") : "",
    o.bias ? decl("bias", "array<f32>") : "",
    decl("out", "array<f32>", "read_write"),
  ];
  const accs = sw ? 2 : 1;
  return `
${lines.filter((l) => l !== "").join("\n")}
var<workgroup> red: array<f32, ${RB * accs * 128}>;
@compute @workgroup_size(128)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
  let lane = lid.x % 32u;
  let group = lid.x / 32u;
  let n = wid.x * 4u + group;
  let r0 = wid.y * ${RB}u;
  var acc: array<f32, ${RB}>;
  ${sw ? `var accu: array<f32, ${RB}>;` : ""}
  for (var r = 0u; r < ${RB}u; r++) { acc[r] = 0.0; ${sw ? "accu[r] = 0.0;" : ""} }
  if (n < ${o.n}u) {
    let wrow = n * ${K4}u;
    for (var k = lane; k < ${K4}u; k += 32u) {
      let w = W[wrow + k];
      ${sw ? "let wu = Wu[wrow + k];" : ""}
      for (var r = 0u; r < ${RB}u; r++) {
        if (r0 + r < ${o.rows}u) {
          let xv = x[(r0 + r) * ${K4}u + k];
          acc[r] += dot(w, xv);
          ${sw ? "accu[r] += dot(wu, xv);" : ""}
        }
      }
    }
  }
  for (var r = 0u; r < ${RB}u; r++) {
    red[r * 128u + lid.x] = acc[r];
    ${sw ? `red[${RB * 128}u + r * 128u + lid.x] = accu[r];` : ""}
  }
  workgroupBarrier();
  if (lid.x < ${4 * RB}u) {
    let g = lid.x / ${RB}u;
    let r = lid.x % ${RB}u;
    let nn = wid.x * 4u + g;
    if (nn < ${o.n}u && r0 + r < ${o.rows}u) {
      var s = 0.0;
      ${sw ? "var su = 0.0;" : ""}
      for (var j = 0u; j < 32u; j++) {
        s += red[r * 128u + g * 32u + j];
        ${sw ? `su += red[${RB * 128}u + r * 128u + g * 32u + j];` : ""}
      }
      ${o.bias ? "s += bias[nn];" : ""}
      let at = (r0 + r) * ${o.n}u + nn;
      ${
    sw
      ? "out[at] = s / (1.0 + exp(-s)) * su;"
      : o.accumulate
      ? "out[at] = out[at] + s;"
      : "out[at] = s;"
  }
    }
  }
}`;
}

/** Shapes of the attention-side kernels. */
export interface AttentionShape {
  /** Batch rows. */
  rows: number;
  /** Query heads. */
  heads: number;
  /** Key/value heads (divides `heads`). */
  kvHeads: number;
  /** Head dimension (divides 128). */
  headDim: number;
  /** Rotated dimensions (even, at most `headDim`): twice the RoPE tables' width. */
  rotary: number;
  /** Cache columns allocated per row. */
  maxLen: number;
}

/**
 * Per (row, head) workgroup: optional per-head RMSNorm (Qwen3's QK-norm), RoPE at the row's
 * position `state.pos + shift[row]` (`-pad`, or a multimodal model's delta), queries rotated in
 * place, keys and values written into the
 * cache column `state.pos`. Grid: `rows · (heads + kvHeads)`.
 */
export function ropeKvWgsl(s: AttentionShape, qkNorm: boolean, eps: number): string {
  const D = s.headDim;
  const half = s.rotary / 2;
  const H = s.heads + s.kvHeads;
  return `
${STATE}
@group(0) @binding(0) var<storage, read_write> q: array<f32>;
@group(0) @binding(1) var<storage, read> k: array<f32>;
@group(0) @binding(2) var<storage, read> v: array<f32>;
@group(0) @binding(3) var<storage, read_write> kc: array<f32>;
@group(0) @binding(4) var<storage, read_write> vc: array<f32>;
@group(0) @binding(5) var<storage, read> cosT: array<f32>;
@group(0) @binding(6) var<storage, read> sinT: array<f32>;
@group(0) @binding(7) var<storage, read> shift: array<i32>;
@group(0) @binding(8) var<storage, read> state: State;
${
    qkNorm
      ? `@group(0) @binding(9) var<storage, read> qn: array<f32>;
@group(0) @binding(10) var<storage, read> kn: array<f32>;`
      : ""
  }
var<workgroup> buf: array<f32, ${D}>;
${treeReduce("sum", 64, "a + b")}
@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
  let b = wid.x / ${H}u;
  let hh = wid.x % ${H}u;
  let isQ = hh < ${s.heads}u;
  let kvh = hh - ${s.heads}u;
  var src = 0u;
  if (isQ) { src = (b * ${s.heads}u + hh) * ${D}u; } else { src = (b * ${s.kvHeads}u + kvh) * ${D}u; }
  for (var d = lid.x; d < ${D}u; d += 64u) { if (isQ) { buf[d] = q[src + d]; } else { buf[d] = k[src + d]; } }
  workgroupBarrier();
  ${
    qkNorm
      ? `var ss = 0.0;
  for (var d = lid.x; d < ${D}u; d += 64u) { ss += buf[d] * buf[d]; }
  let inv = inverseSqrt(sum(ss, lid.x) / f32(${D}u) + ${f32Literal(eps)});
  for (var d = lid.x; d < ${D}u; d += 64u) {
    var w = 0.0;
    if (isQ) { w = qn[d]; } else { w = kn[d]; }
    buf[d] = buf[d] * inv * w;
  }
  workgroupBarrier();`
      : ""
  }
  let pos = u32(i32(state.pos) + shift[b]);
  var dst = 0u;
  if (!isQ) { dst = ((b * ${s.kvHeads}u + kvh) * ${s.maxLen}u + state.pos) * ${D}u; }
  for (var d = lid.x; d < ${D}u; d += 64u) {
    var y = buf[d];
    if (d < ${s.rotary}u) {
      let j = d % ${half}u;
      let c = cosT[pos * ${half}u + j];
      let sn = sinT[pos * ${half}u + j];
      if (d < ${half}u) { y = buf[d] * c - buf[d + ${half}u] * sn; }
      else { y = buf[d] * c + buf[d - ${half}u] * sn; }
    }
    if (isQ) { q[src + d] = y; } else { kc[dst + d] = y; vc[dst + d] = v[src + d]; }
  }
}`;
}

/**
 * Attention of one new query per (row, head) workgroup over the cache columns
 * `[pad[row], state.pos]`, online softmax over blocks of 128 keys. Grid: `rows · heads`.
 */
export function attentionWgsl(s: AttentionShape, scale: number): string {
  const D = s.headDim;
  const slices = 128 / D;
  const group = s.heads / s.kvHeads;
  return `
${STATE}
@group(0) @binding(0) var<storage, read> q: array<f32>;
@group(0) @binding(1) var<storage, read> kc: array<f32>;
@group(0) @binding(2) var<storage, read> vc: array<f32>;
@group(0) @binding(3) var<storage, read> pad: array<u32>;
@group(0) @binding(4) var<storage, read> state: State;
@group(0) @binding(5) var<storage, read_write> out: array<f32>;
var<workgroup> qs: array<f32, ${D}>;
var<workgroup> p: array<f32, 128>;
${treeReduce("blockMax", 128, "max(a, b)")}
${treeReduce("blockSum", 128, "a + b")}
var<workgroup> accs: array<f32, 128>;
@compute @workgroup_size(128)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
  let b = wid.x / ${s.heads}u;
  let h = wid.x % ${s.heads}u;
  let kvh = h / ${group}u;
  let qb = (b * ${s.heads}u + h) * ${D}u;
  let cb = (b * ${s.kvHeads}u + kvh) * ${s.maxLen}u * ${D}u;
  for (var d = lid.x; d < ${D}u; d += 128u) { qs[d] = q[qb + d]; }
  workgroupBarrier();
  let start = pad[b];
  let end = state.pos + 1u;
  let d = lid.x % ${D}u;
  let slice = lid.x / ${D}u;
  var m = -3.0e38;
  var l = 0.0;
  var acc = 0.0;
  for (var base = start; base < end; base += 128u) {
    let j = base + lid.x;
    var sc = -3.0e38;
    if (j < end) {
      var dotv = 0.0;
      for (var e = 0u; e < ${D}u; e++) { dotv += qs[e] * kc[cb + j * ${D}u + e]; }
      sc = dotv * ${f32Literal(scale)};
    }
    let mNew = max(m, blockMax(sc, lid.x));
    var pj = 0.0;
    if (j < end) { pj = exp(sc - mNew); }
    p[lid.x] = pj;
    // blockSum's first barrier also makes every p[jj] visible to the accumulation below.
    let corr = exp(m - mNew);
    l = l * corr + blockSum(pj, lid.x);
    acc = acc * corr;
    let n = min(128u, end - base);
    for (var jj = slice; jj < n; jj += ${slices}u) {
      acc += p[jj] * vc[cb + (base + jj) * ${D}u + d];
    }
    m = mNew;
    workgroupBarrier();
  }
  accs[lid.x] = acc;
  workgroupBarrier();
  if (lid.x < ${D}u) {
    var s = 0.0;
    for (var t = 0u; t < ${slices}u; t++) { s += accs[t * ${D}u + lid.x]; }
    out[qb + lid.x] = s / l;
  }
}`;
}

/**
 * Top-k / top-p / min-p of the device sampler, applied in `order` after the temperature, as the
 * host sampler applies them (`@rlvr/sampling`'s `SAMPLING_ORDERS`); 0, 1 and 0 turn each off.
 */
export interface DeviceFilters {
  /** Keep the values at least the k-th largest (ties kept); 0: off. */
  topK: number;
  /** Keep the shortest prefix (value descending, index ascending) before which the mass is < p·Z; 1: off. */
  topP: number;
  /** Keep `exp(v − max) ≥ minP`; 0: off. */
  minP: number;
  /** `"hf"`: top-k, top-p, min-p; `"vllm"`: min-p, top-k, top-p. */
  order: "hf" | "vllm";
}

/** No filter: plain temperature sampling. */
export const NO_FILTERS: DeviceFilters = Object.freeze({ topK: 0, topP: 1, minP: 0, order: "hf" });

/**
 * WGSL of the filters: every stage keeps a prefix of the row's tokens in the order (value
 * descending, index ascending), so the kept set after each stage is `key(v) > kStar`, or
 * `key(v) == kStar` and `i <= iStar` (`key` maps f32 to u32 monotonically), narrowed stage by
 * stage; min-p is a predicate on `exp(v − max)`. Top-k's threshold (the largest key with at
 * least k kept values at or above it) and top-p's (the smallest key above which the kept mass is
 * below p·Z) are found by bisection over the 2³² keys, one reduction per halving; top-p's tied
 * values at its threshold are kept in index order while the mass before them stays below p·Z.
 */
function filterWgsl(f: DeviceFilters, vocab: number, scaled: (v: string) => string): string {
  const stages = f.order === "hf" ? ["topK", "topP", "minP"] : ["minP", "topK", "topP"];
  const topK = f.topK > 0 && f.topK < vocab;
  const code: string[] = [];
  let minPOn = false;
  const keep = () => `kept(i, v, kStar, iStar${minPOn ? ", true" : ", false"}, gmax)`;
  for (const stage of stages) {
    if (stage === "minP" && f.minP > 0) minPOn = true;
    if (stage === "topK" && topK) {
      code.push(`
  // top-k: the largest key t with at least k kept values at or above it.
  {
    var lo = 0u;
    var hi = 0xffffffffu;
    for (var it = 0u; it < 32u; it++) {
      let mid = lo + ((hi - lo) >> 1u) + select(0u, 1u, hi > lo);
      var c = 0u;
      for (var i = lo0; i < hi0; i++) {
        let v = ${scaled("logits[base + i]")};
        if (${keep()} && fkey(v) >= mid) { c += 1u; }
      }
      let total = countAll(c, lid.x);
      if (hi > lo) { if (total >= ${f.topK}u) { lo = mid; } else { hi = mid - 1u; } }
    }
    let n = countAll(countKept(lo0, hi0, base, kStar, iStar, ${minPOn}, gmax), lid.x);
    if (n > ${f.topK}u) { narrow(&kStar, &iStar, lo, 0xffffffffu); }
  }`);
    }
    if (stage === "topP" && f.topP < 1) {
      code.push(`
  // top-p: the smallest key t above which the kept mass is below p·Z.
  {
    var z = 0.0;
    for (var i = lo0; i < hi0; i++) {
      let v = ${scaled("logits[base + i]")};
      if (${keep()}) { z += exp(v - gmax); }
    }
    let goalMass = ${f32Literal(f.topP)} * sumAll(z, lid.x);
    var lo = 0u;
    var hi = 0xffffffffu;
    for (var it = 0u; it < 32u; it++) {
      let mid = lo + ((hi - lo) >> 1u);
      var m = 0.0;
      for (var i = lo0; i < hi0; i++) {
        let v = ${scaled("logits[base + i]")};
        if (${keep()} && fkey(v) > mid) { m += exp(v - gmax); }
      }
      let above = sumAll(m, lid.x);
      if (hi > lo) { if (above < goalMass) { hi = mid; } else { lo = mid + 1u; } }
    }
    // Values tied at key lo: kept in index order while the mass before them is below target.
    var m = 0.0;
    var tied = 0.0;
    for (var i = lo0; i < hi0; i++) {
      let v = ${scaled("logits[base + i]")};
      if (${keep()}) {
        let k = fkey(v);
        if (k > lo) { m += exp(v - gmax); } else if (k == lo) { tied += exp(v - gmax); }
      }
    }
    let above = sumAll(m, lid.x);
    pre[lid.x + 1u] = tied;
    workgroupBarrier();
    if (lid.x == 0u) {
      pre[0] = 0.0;
      for (var t = 1u; t <= 256u; t++) { pre[t] = pre[t] + pre[t - 1u]; }
      atomicStore(&lastTie, 0u);
    }
    workgroupBarrier();
    var before = above + pre[lid.x];
    for (var i = lo0; i < hi0; i++) {
      let v = ${scaled("logits[base + i]")};
      if (${keep()} && fkey(v) == lo) {
        if (before >= goalMass) { break; }
        atomicMax(&lastTie, i + 1u);
        before += exp(v - gmax);
      }
    }
    workgroupBarrier();
    if (lid.x == 0u) { cntOut = atomicLoad(&lastTie); }
    let last = workgroupUniformLoad(&cntOut);
    // No value at key lo (then lo + 1 starts the same set): keep the keys above it.
    if (last > 0u) { narrow(&kStar, &iStar, lo, last - 1u); } else { narrow(&kStar, &iStar, lo + 1u, 0xffffffffu); }
  }`);
    }
  }
  return `
  var kStar = 0u;
  var iStar = 0xffffffffu;${code.join("")}
  let minPOn = ${minPOn};`;
}

/** WGSL helpers of {@link filterWgsl} (module scope). */
function filterHelpers(minP: number, scaled: (v: string) => string): string {
  return `
var<workgroup> cnt: array<u32, 256>;
var<workgroup> lastTie: atomic<u32>;
var<workgroup> sumOut: f32;
var<workgroup> cntOut: u32;
// A u32 key in the order of the f32 values (negatives reversed).
fn fkey(v: f32) -> u32 {
  let b = bitcast<u32>(v);
  return select(b | 0x80000000u, ~b, (b & 0x80000000u) != 0u);
}
fn kept(i: u32, v: f32, kStar: u32, iStar: u32, minPOn: bool, gmax: f32) -> bool {
  let k = fkey(v);
  let prefix = k > kStar || (k == kStar && i <= iStar);
  return prefix && (!minPOn || exp(v - gmax) >= ${f32Literal(minP)});
}
fn narrow(kStar: ptr<function, u32>, iStar: ptr<function, u32>, k: u32, i: u32) {
  if (k > *kStar) { *kStar = k; *iStar = i; } else if (k == *kStar) { *iStar = min(*iStar, i); }
}
fn countAll(c: u32, l: u32) -> u32 {
  cnt[l] = c;
  workgroupBarrier();
  for (var k = 128u; k > 0u; k >>= 1u) {
    if (l < k) { cnt[l] = cnt[l] + cnt[l + k]; }
    workgroupBarrier();
  }
  if (l == 0u) { cntOut = cnt[0]; }
  return workgroupUniformLoad(&cntOut);
}
fn sumAll(x: f32, l: u32) -> f32 {
  red[l] = x;
  workgroupBarrier();
  for (var k = 128u; k > 0u; k >>= 1u) {
    if (l < k) { red[l] = red[l] + red[l + k]; }
    workgroupBarrier();
  }
  if (l == 0u) { sumOut = red[0]; }
  return workgroupUniformLoad(&sumOut);
}
fn countKept(lo0: u32, hi0: u32, base: u32, kStar: u32, iStar: u32, minPOn: bool, gmax: f32) -> u32 {
  var c = 0u;
  for (var i = lo0; i < hi0; i++) {
    if (kept(i, ${scaled("logits[base + i]")}, kStar, iStar, minPOn, gmax)) { c += 1u; }
  }
  return c;
}`;
}

/**
 * The token of each row from its logits: greedy (`temperature` 0: the first maximum) or the
 * inverse CDF of `softmax(logits / T)`, restricted to what `filters` keep (top-k / top-p /
 * min-p, see {@link DeviceFilters}), at the host-drawn uniform `u[step · rows + row]`. Writes
 * the token (for the next step's lookup), and per drawn token its id and two log-probs (the
 * sampling distribution's, and `log softmax(logits / T)` unfiltered; greedy: 0 and
 * `log softmax(logits)`). One workgroup per row, the vocabulary in 256 contiguous chunks.
 */
export function samplerWgsl(
  vocab: number,
  rows: number,
  temperature: number,
  filters: DeviceFilters = NO_FILTERS,
): string {
  const chunk = Math.ceil(vocab / 256);
  const greedy = temperature === 0;
  const scaled = (v: string) =>
    temperature === 1 || greedy ? v : `(${v} / ${f32Literal(temperature)})`;
  const filtered = !greedy &&
    ((filters.topK > 0 && filters.topK < vocab) || filters.topP < 1 || filters.minP > 0);
  // The filtered weight of token i (its value v): 0 outside what the filters keep.
  const weight = (v: string) =>
    filtered
      ? `select(0.0, exp(${v} - gmax), kept(i, ${v}, kStar, iStar, minPOn, gmax))`
      : `exp(${v} - gmax)`;
  return `
${STATE}
@group(0) @binding(0) var<storage, read> logits: array<f32>;
@group(0) @binding(1) var<storage, read> u: array<f32>;
@group(0) @binding(2) var<storage, read> state: State;
@group(0) @binding(3) var<storage, read_write> tok: array<u32>;
@group(0) @binding(4) var<storage, read_write> outTok: array<u32>;
@group(0) @binding(5) var<storage, read_write> outLp: array<f32>;
var<workgroup> red: array<f32, 256>;
var<workgroup> idx: array<u32, 256>;
var<workgroup> pre: array<f32, 257>;
var<workgroup> pick: atomic<u32>;
var<workgroup> lastPos: atomic<u32>;${filtered ? filterHelpers(filters.minP, scaled) : ""}
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
  let b = wid.x;
  let base = b * ${vocab}u;
  let lo0 = min(lid.x * ${chunk}u, ${vocab}u);
  let hi0 = min(lo0 + ${chunk}u, ${vocab}u);
  if (lid.x == 0u) { atomicStore(&pick, 0xffffffffu); atomicStore(&lastPos, 0u); }
  var mx = -3.0e38;
  var at = 0xffffffffu;
  for (var i = lo0; i < hi0; i++) {
    let v = ${scaled("logits[base + i]")};
    if (v > mx) { mx = v; at = i; }
  }
  red[lid.x] = mx;
  idx[lid.x] = at;
  workgroupBarrier();
  for (var k = 128u; k > 0u; k >>= 1u) {
    if (lid.x < k) {
      let o = red[lid.x + k];
      let oi = idx[lid.x + k];
      if (o > red[lid.x] || (o == red[lid.x] && oi < idx[lid.x])) { red[lid.x] = o; idx[lid.x] = oi; }
    }
    workgroupBarrier();
  }
  let gmax = workgroupUniformLoad(&red[0]);
  let amax = idx[0];
  workgroupBarrier();${filtered ? filterWgsl(filters, vocab, scaled) : ""}
  // The unfiltered normaliser (the scaled log-prob) and, filtered, the sampling one.
  var sAll = 0.0;
  var s = 0.0;
  for (var i = lo0; i < hi0; i++) {
    let v = ${scaled("logits[base + i]")};
    let e = ${weight("v")};
    s += e;
    ${filtered ? "sAll += exp(v - gmax);" : ""}
    if (e > 0.0) { atomicMax(&lastPos, i); }
  }
  ${filtered ? "let zAll = sumAll(sAll, lid.x);" : ""}
  pre[lid.x + 1u] = s;
  workgroupBarrier();
  if (lid.x == 0u) {
    pre[0] = 0.0;
    for (var t = 1u; t <= 256u; t++) { pre[t] = pre[t] + pre[t - 1u]; }
  }
  workgroupBarrier();
  let Z = pre[256];
  ${filtered ? "" : "let zAll = Z;"}
  let step = state.step;
  ${
    greedy ? "_ = u[0];\n  let token = amax;" : `let goal = u[step * ${rows}u + b] * Z;
  if (goal >= pre[lid.x] && goal < pre[lid.x + 1u]) {
    var cum = pre[lid.x];
    var found = false;
    var lastHere = 0xffffffffu;
    for (var i = lo0; i < hi0; i++) {
      let v = ${scaled("logits[base + i]")};
      let e = ${weight("v")};
      cum += e;
      if (e > 0.0) { lastHere = i; }
      if (goal < cum) { atomicMin(&pick, i); found = true; break; }
    }
    // This chunk's own running sum can round below the goal that its prefix bracketed:
    // the draw then falls on the chunk's last positive weight.
    if (!found && lastHere != 0xffffffffu) { atomicMin(&pick, lastHere); }
  }
  workgroupBarrier();
  var token = atomicLoad(&pick);
  if (token == 0xffffffffu) { token = atomicLoad(&lastPos); }`
  }
  if (lid.x == 0u) {
    let d = ${scaled("logits[base + token]")} - gmax;
    tok[b] = token;
    outTok[step * ${rows}u + b] = token;
    outLp[(step * ${rows}u + b) * 2u] = ${greedy ? "0.0" : "d - log(Z)"};
    outLp[(step * ${rows}u + b) * 2u + 1u] = d - log(zAll);
  }
}`;
}

/** Moves the state to the next step: `pos += 1`, `step += 1`. */
export const ADVANCE_WGSL = `
${STATE}
@group(0) @binding(0) var<storage, read_write> state: State;
@compute @workgroup_size(1)
fn main() { state.pos = state.pos + 1u; state.step = state.step + 1u; }`;
