/**
 * WGSL kernels for fill, cast, unary and binary elementwise ops, `where` and strided copy: one
 * invocation per output element, 256 per workgroup.
 *
 * Design: broadcasting and strided views use stride vectors in the params uniform, walked by
 * dividing the flat output index by each dimension (up to 8 dims after merging dimensions that
 * are contiguous in every operand and dropping size-1 dimensions, so most higher-rank views
 * still fit). Shaders are specialised on the op and the operand dtypes only. `fill`, `where` and
 * `copy` move raw 32-bit words, so they serve every dtype with one shader each. Arithmetic runs in
 * f32 when an operand is f32 and in wrapping i32 otherwise; results are stored with JavaScript
 * typed-array semantics (`to_i32` is ToInt32), matching the CPU oracle.
 *
 * @module
 */

import type { DType } from "../../../dtype.ts";
import type { BinaryOp, UnaryOp } from "../../types.ts";
import { bind, type GpuKernel, groupsFor, memo, Params, shader, type ShaderSpec } from "./_wgsl.ts";

const WG = 256;
/** Most dimensions a strided kernel takes after merging. */
export const MAX_DIMS = 8;

const INDEX = "  let i = wid * WG + li;\n  if (i >= pu(0)) { return; }\n";

/**
 * Drops size-1 dimensions and merges neighbours that are contiguous in every operand, giving an
 * equivalent iteration of at most the same rank.
 */
export function collapseDims(
  shape: readonly number[],
  strides: readonly (readonly number[])[],
): { shape: number[]; strides: number[][] } {
  const keep = shape.map((_, d) => d).filter((d) => shape[d] !== 1);
  const outShape: number[] = [];
  const outStrides: number[][] = strides.map(() => []);
  for (const d of keep) {
    const last = outShape.length - 1;
    const n = shape[d]!;
    if (
      last >= 0 &&
      strides.every((s, k) => outStrides[k]![last] === s[d]! * n)
    ) {
      outShape[last] = outShape[last]! * n;
      strides.forEach((s, k) => (outStrides[k]![last] = s[d]!));
    } else {
      outShape.push(n);
      strides.forEach((s, k) => outStrides[k]!.push(s[d]!));
    }
  }
  return { shape: outShape, strides: outStrides };
}

function rankCheck(kernel: string, shape: readonly number[]): void {
  if (shape.length > MAX_DIMS) {
    throw new RangeError(
      `webgpu.${kernel}: ${shape.length} dimensions remain after merging contiguous ones; ` +
        `the WebGPU kernels take at most ${MAX_DIMS} (reshape the operands)`,
    );
  }
}

/** WGSL that walks `shape` (params from word `at`) accumulating offsets `names` (i32). */
function walk(names: readonly string[], shapeAt: number, strideAt: readonly number[]): string {
  const adds = names.map((v, k) => `    ${v} += c * pi(${strideAt[k]}u + ax);`).join("\n");
  return `  var rem = i;
  for (var d = pu(1); d > 0u; d--) {
    let ax = d - 1u;
    let s = pu(${shapeAt}u + ax);
    let c = i32(rem % s);
    rem = rem / s;
${adds}
  }
`;
}

// ---- fill ----

const fillShader = memo(() =>
  shader("fill", [bind("Y", "read_write", "u32")], WG, INDEX + "  Y[i] = pu(1);")
);

const BITS = new DataView(new ArrayBuffer(4));

/** The 32-bit word a typed array of `dtype` stores for `value` (ToInt32, ToUint8, fround). */
export function storedBits(value: number, dtype: DType): number {
  if (dtype === "f32") BITS.setFloat32(0, value, true);
  else if (dtype === "i32") BITS.setInt32(0, value, true);
  else BITS.setUint32(0, new Uint8Array([value])[0]!, true);
  return BITS.getUint32(0, true);
}

/** `fill`: every element set to the value as the output dtype stores it. */
export const fill: GpuKernel<"fill"> = (_, [y], p) => [{
  shader: fillShader(),
  bindings: [y!],
  params: new Params().u32(y!.size).bits(storedBits(p.value, y!.dtype)).finish(),
  groups: groupsFor(y!.size, WG),
}];

// ---- accumulate ----

const accumulateShader = memo(() =>
  shader(
    "accumulate",
    [bind("S", "read", "f32"), bind("Y", "read_write", "f32")],
    WG,
    INDEX + "  Y[i] = Y[i] + S[i];",
  )
);

/** `accumulate`: `y[i] += src[i]` in place. */
export const accumulate: GpuKernel<"accumulate"> = ([src], [y], p) => [{
  shader: accumulateShader(),
  bindings: [src!, y!],
  params: new Params().u32(p.n).finish(),
  groups: groupsFor(p.n, WG),
}];

// ---- cast ----

function castExpr(from: DType, to: DType, v: string): string {
  if (to === "bool") {
    const truthy = from === "f32" ? `truthy_f(${v})` : from === "i32" ? `${v} != 0` : `${v} != 0u`;
    return `select(0u, 1u, ${truthy})`;
  }
  if (from === to) return v;
  if (to === "i32") return from === "f32" ? `to_i32(${v})` : `i32(${v})`;
  return `f32(${v})`;
}

const castShader = memo((from: DType, to: DType) =>
  shader(
    `cast_${from}_${to}`,
    [bind("X", "read", from), bind("Y", "read_write", to)],
    WG,
    INDEX + `  Y[i] = ${castExpr(from, to, "X[i]")};`,
  )
);

/** `cast`: dtype conversion (f32 → i32 truncates toward zero; to bool is JavaScript truthiness). */
export const cast: GpuKernel<"cast"> = ([x], [y]) => [{
  shader: castShader(x!.dtype, y!.dtype),
  bindings: [x!, y!],
  params: new Params().u32(y!.size).finish(),
  groups: groupsFor(y!.size, WG),
}];

// ---- unary ----

const UNARY_F32: Record<Exclude<UnaryOp, "not">, string> = {
  neg: "-x",
  exp: "exp(x)",
  log: "log(x)",
  sqrt: "sqrt(x)",
  rsqrt: "1.0 / sqrt(x)",
  abs: "abs(x)",
  sign: "select(select(select(x, 0.0, x == 0.0), -1.0, x < 0.0), 1.0, x > 0.0)",
  tanh: "tanh_s(x)",
  sigmoid: "sigmoid_s(x)",
  relu: "select(0.0, x, x > 0.0)",
  silu: "x * sigmoid_s(x)",
  gelu: "gelu_s(x)",
  square: "x * x",
  reciprocal: "1.0 / x",
};

const UNARY_I32: Partial<Record<UnaryOp, string>> = {
  neg: "-x",
  abs: "abs(x)",
  sign: "sign(x)",
  square: "x * x",
};

/** Converts a compute value (`f32` or `i32`) to what a store of `to` holds. */
function storeExpr(compute: "f32" | "i32", to: DType, v: string): string {
  if (to === "f32") return compute === "f32" ? v : `f32(${v})`;
  if (to === "i32") return compute === "f32" ? `to_i32(${v})` : v;
  return compute === "f32" ? `(u32(to_i32(${v})) & 0xffu)` : `(u32(${v}) & 0xffu)`;
}

function loadExpr(from: DType, compute: "f32" | "i32", v: string): string {
  if (compute === "f32") return from === "f32" ? v : `f32(${v})`;
  return from === "i32" ? v : `i32(${v})`;
}

const unaryShader = memo((op: UnaryOp, from: DType, to: DType) => {
  let body: string;
  if (op === "not") {
    body = `  Y[i] = select(0u, 1u, ${loadExpr(from, "i32", "X[i]")} == 0);`;
  } else {
    const intOp = from !== "f32" && UNARY_I32[op] !== undefined;
    const compute = intOp ? "i32" : "f32";
    const expr = intOp ? UNARY_I32[op]! : UNARY_F32[op];
    body = `  let x = ${loadExpr(from, compute, "X[i]")};\n  Y[i] = ${
      storeExpr(compute, to, expr)
    };`;
  }
  return shader(
    `unary_${op}_${from}_${to}`,
    [bind("X", "read", from), bind("Y", "read_write", to)],
    WG,
    INDEX + body,
  );
});

/** `unary`: same-size elementwise op. */
export const unary: GpuKernel<"unary"> = ([x], [y], p) => [{
  shader: unaryShader(p.op, x!.dtype, y!.dtype),
  bindings: [x!, y!],
  params: new Params().u32(y!.size).finish(),
  groups: groupsFor(y!.size, WG),
}];

// ---- binary ----

type Expr = { kind: "value" | "bool"; expr: string };

const FLOAT_ONLY = new Set<BinaryOp>([
  "div",
  "relu_backward",
  "silu_backward",
  "gelu_backward",
  "tanh_backward",
  "sigmoid_backward",
]);

function binaryExpr(op: BinaryOp, compute: "f32" | "i32"): Expr {
  const f = compute === "f32";
  const notNan = f ? "!(is_nan(a) || is_nan(b)) && " : "";
  const truthy = (v: string) => (f ? `truthy_f(${v})` : `(${v} != 0)`);
  switch (op) {
    case "add":
      return { kind: "value", expr: "a + b" };
    case "sub":
      return { kind: "value", expr: "a - b" };
    case "mul":
      return { kind: "value", expr: "a * b" };
    case "div":
      return { kind: "value", expr: "a / b" };
    case "pow":
      return { kind: "value", expr: f ? "pow_js(a, b)" : "pow_i(a, b)" };
    case "minimum":
      return { kind: "value", expr: f ? "min_nan(a, b)" : "min(a, b)" };
    case "maximum":
      return { kind: "value", expr: f ? "max_nan(a, b)" : "max(a, b)" };
    case "eq":
      return { kind: "bool", expr: `${notNan}a == b` };
    case "ne":
      return { kind: "bool", expr: f ? "is_nan(a) || is_nan(b) || a != b" : "a != b" };
    case "lt":
      return { kind: "bool", expr: `${notNan}a < b` };
    case "le":
      return { kind: "bool", expr: `${notNan}a <= b` };
    case "gt":
      return { kind: "bool", expr: `${notNan}a > b` };
    case "ge":
      return { kind: "bool", expr: `${notNan}a >= b` };
    case "and":
      return { kind: "bool", expr: `${truthy("a")} && ${truthy("b")}` };
    case "or":
      return { kind: "bool", expr: `${truthy("a")} || ${truthy("b")}` };
    case "relu_backward":
      return { kind: "value", expr: "select(0.0, b, !is_nan(a) && a > 0.0)" };
    case "silu_backward":
      return {
        kind: "value",
        expr: "b * sigmoid_s(a) * (1.0 + a * (1.0 - sigmoid_s(a)))",
      };
    case "gelu_backward":
      return {
        kind: "value",
        expr: "b * (0.5 * (1.0 + tanh_s(SQRT_2_OVER_PI * (a + GELU_C * a * a * a))) + " +
          "0.5 * a * (1.0 - tanh_s(SQRT_2_OVER_PI * (a + GELU_C * a * a * a)) * " +
          "tanh_s(SQRT_2_OVER_PI * (a + GELU_C * a * a * a))) * " +
          "SQRT_2_OVER_PI * (1.0 + 3.0 * GELU_C * a * a))",
      };
    case "tanh_backward":
      return { kind: "value", expr: "b * (1.0 - a * a)" };
    case "sigmoid_backward":
      return { kind: "value", expr: "b * a * (1.0 - a)" };
  }
}

// Params: n, nd, shape[8] @2, aStrides[8] @10, bStrides[8] @18.
const binaryShader = memo((op: BinaryOp, at: DType, bt: DType, ot: DType) => {
  const compute = at === "f32" || bt === "f32" || FLOAT_ONLY.has(op) ? "f32" : "i32";
  const e = binaryExpr(op, compute);
  const value = e.kind === "bool"
    ? storeExpr("i32", ot, `select(0, 1, ${e.expr})`)
    : storeExpr(compute, ot, e.expr);
  return shader(
    `binary_${op}_${at}_${bt}_${ot}`,
    [bind("A", "read", at), bind("B", "read", bt), bind("Y", "read_write", ot)],
    WG,
    INDEX + "  var oa = 0;\n  var ob = 0;\n" + walk(["oa", "ob"], 2, [10, 18]) +
      `  let a = ${loadExpr(at, compute, "A[oa]")};\n  let b = ${
        loadExpr(bt, compute, "B[ob]")
      };\n` +
      `  Y[i] = ${value};`,
  );
});

/** `binary`: elementwise op with broadcasting strides. */
export const binary: GpuKernel<"binary"> = ([a, b], [y], p) => {
  const c = collapseDims(p.shape, [p.aStrides, p.bStrides]);
  rankCheck("binary", c.shape);
  const params = new Params().u32(y!.size).u32(c.shape.length).i32s(c.shape, MAX_DIMS)
    .i32s(c.strides[0]!, MAX_DIMS).i32s(c.strides[1]!, MAX_DIMS).finish();
  return [{
    shader: binaryShader(p.op, a!.dtype, b!.dtype, y!.dtype),
    bindings: [a!, b!, y!],
    params,
    groups: groupsFor(y!.size, WG),
  }];
};

// ---- where ----

// Params: n, nd, shape[8] @2, cond @10, a @18, b @26.
const whereShader = memo((): ShaderSpec =>
  shader(
    "where",
    [
      bind("C", "read", "u32"),
      bind("A", "read", "u32"),
      bind("B", "read", "u32"),
      bind("Y", "read_write", "u32"),
    ],
    WG,
    INDEX + "  var oc = 0;\n  var oa = 0;\n  var ob = 0;\n" +
      walk(["oc", "oa", "ob"], 2, [10, 18, 26]) +
      "  Y[i] = select(B[ob], A[oa], C[oc] != 0u);",
  )
);

/** `where`: `cond ? a : b` with broadcasting strides (raw words: any dtype). */
export const where: GpuKernel<"where"> = ([c, a, b], [y], p) => {
  const k = collapseDims(p.shape, [p.condStrides, p.aStrides, p.bStrides]);
  rankCheck("where", k.shape);
  const params = new Params().u32(y!.size).u32(k.shape.length).i32s(k.shape, MAX_DIMS)
    .i32s(k.strides[0]!, MAX_DIMS).i32s(k.strides[1]!, MAX_DIMS).i32s(k.strides[2]!, MAX_DIMS)
    .finish();
  return [{
    shader: whereShader(),
    bindings: [c!, a!, b!, y!],
    params,
    groups: groupsFor(y!.size, WG),
  }];
};

// ---- copy ----

// Params: n, nd, shape[8] @2, inStrides @10, outStrides @18, inOffset @26, outOffset @27.
const copyShader = memo(() =>
  shader(
    "copy",
    [bind("X", "read", "u32"), bind("Y", "read_write", "u32")],
    WG,
    INDEX + "  var ox = pi(26u);\n  var oy = pi(27u);\n" + walk(["ox", "oy"], 2, [10, 18]) +
      "  Y[oy] = X[ox];",
  )
);

/** `copy`: strided read, strided write of raw words (other elements of y are kept). */
export const copy: GpuKernel<"copy"> = ([x], [y], p) => {
  const k = collapseDims(p.shape, [p.inStrides, p.outStrides]);
  rankCheck("copy", k.shape);
  const n = p.shape.reduce((s, d) => s * d, 1);
  const params = new Params().u32(n).u32(k.shape.length).i32s(k.shape, MAX_DIMS)
    .i32s(k.strides[0]!, MAX_DIMS).i32s(k.strides[1]!, MAX_DIMS).i32(p.inOffset).i32(p.outOffset)
    .finish();
  return [{ shader: copyShader(), bindings: [x!, y!], params, groups: groupsFor(n, WG) }];
};
