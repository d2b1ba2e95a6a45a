/**
 * Elementwise ops: arithmetic with broadcasting and dtype promotion, unary math, activations,
 * comparisons, `where`, clamping and casts, each with its backward.
 *
 * Number operands adopt the tensor's dtype (a fractional number promotes to f32); mixed dtypes
 * promote bool < i32 < f32, division and float math always give f32. Ties in `minimum`/`maximum`
 * split the gradient evenly and `clamp` passes it where `min <= x <= max`, both as in PyTorch:
 * PPO-style clipped objectives depend on these subgradients.
 *
 * @module
 */

import { record } from "../autograd.ts";
import { noGrad } from "../runtime.ts";
import type { BinaryOp, UnaryOp } from "../backend/types.ts";
import type { DType } from "../dtype.ts";
import { broadcastShapes, broadcastStrides } from "../shape.ts";
import type { Tensor } from "../tensor.ts";
import { backendOf, castTo, empty, promoteTypes, scalarLike, unbroadcast } from "./_util.ts";

/** An operand of a binary op: a tensor or a plain number (which adopts the tensor's dtype). */
export type Operand = Tensor | number;

function isTensor(x: Operand): x is Tensor {
  return typeof x !== "number";
}

/** Resolves two operands to tensors of one dtype; `temps` must be disposed by the caller. */
function operands(
  op: string,
  a: Operand,
  b: Operand,
  floatOnly: boolean,
): [Tensor, Tensor, Tensor[]] {
  if (!isTensor(a) && !isTensor(b)) {
    throw new TypeError(`${op}: at least one operand must be a Tensor`);
  }
  const like = (isTensor(a) ? a : b) as Tensor;
  const typeOf = (x: Operand, other: Operand): DType =>
    isTensor(x)
      ? x.dtype
      : Number.isInteger(x) && isTensor(other) && other.dtype !== "bool"
      ? other.dtype
      : Number.isInteger(x)
      ? "i32"
      : "f32";
  let dtype = promoteTypes(typeOf(a, b), typeOf(b, a));
  if (floatOnly || dtype === "bool") dtype = floatOnly ? "f32" : "i32";
  const temps: Tensor[] = [];
  const resolve = (x: Operand): Tensor => {
    const t = isTensor(x) ? castTo(x, dtype) : scalarLike(x, like, dtype);
    if (t !== x) temps.push(t);
    return t;
  };
  const A = resolve(a);
  const B = resolve(b);
  backendOf(op, A, B);
  return [A, B, temps];
}

function runBinary(op: BinaryOp, A: Tensor, B: Tensor, outDtype: DType, name: string): Tensor {
  const shape = broadcastShapes(A.shape, B.shape, name);
  const out = empty(A.backend, shape, outDtype);
  A.backend.run("binary", [A.buffer, B.buffer], [out.buffer], {
    op,
    shape,
    aStrides: broadcastStrides(A.shape, shape),
    bStrides: broadcastStrides(B.shape, shape),
  });
  return out;
}

function scalarPair(a: number, b: number, like: Tensor): [Tensor, Tensor, Tensor[]] {
  const A = scalarLike(a, like, "f32");
  const B = scalarLike(b, like, "f32");
  return [A, B, [A, B]];
}

type BinaryGrad = (g: Tensor, a: Tensor, b: Tensor, out: Tensor) => [Tensor | null, Tensor | null];

function arith(op: BinaryOp, a: Operand, b: Operand, grad: BinaryGrad, floatOnly = false): Tensor {
  const [A, B, temps] = operands(op, a, b, floatOnly);
  const out = runBinary(op, A, B, A.dtype, op);
  record(op, out, [A, B], [A, B, out], (g, [sa, sb, so]) => {
    const [ga, gb] = grad(g, sa!, sb!, so!);
    return [
      ga && A.requiresGrad ? unbroadcast(ga, A.shape) : null,
      gb && B.requiresGrad ? unbroadcast(gb, B.shape) : null,
    ];
  });
  for (const t of temps) t.dispose();
  return out;
}

/**
 * `a + b` with broadcasting.
 *
 * @example Usage
 * ```ts
 * import { add, tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * assert.deepEqual(await add(tensor([[1], [2]]), tensor([10, 20])).toArray(), [[11, 21], [12, 22]]);
 * ```
 */
export function add(a: Operand, b: Operand): Tensor {
  return arith("add", a, b, (g) => [g, g]);
}

/**
 * `a − b` with broadcasting.
 *
 * @example Usage
 * ```ts
 * import { sub, tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * assert.deepEqual(await sub(tensor([5, 6]), 1).toArray(), [4, 5]);
 * ```
 */
export function sub(a: Operand, b: Operand): Tensor {
  return arith("sub", a, b, (g) => [g, g.neg()]);
}

/**
 * `a · b` with broadcasting.
 *
 * @example Usage
 * ```ts
 * import { mul, tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * assert.deepEqual(await mul(tensor([1, 2]), tensor([3, 4])).toArray(), [3, 8]);
 * ```
 */
export function mul(a: Operand, b: Operand): Tensor {
  return arith("mul", a, b, (g, x, y) => [g.mul(y), g.mul(x)]);
}

/**
 * `a / b` with broadcasting (true division: always f32).
 *
 * @example Usage
 * ```ts
 * import { div, tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * assert.deepEqual(await div(tensor([1, 3], { dtype: "i32" }), 2).toArray(), [0.5, 1.5]);
 * ```
 */
export function div(a: Operand, b: Operand): Tensor {
  return arith("div", a, b, (g, _x, y, out) => [g.div(y), g.mul(out).div(y).neg()], true);
}

/**
 * `a ^ b` with broadcasting (f32). The exponent's gradient is 0 where `a == 0`, as in PyTorch.
 *
 * @example Usage
 * ```ts
 * import { pow, tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * assert.deepEqual(await pow(tensor([2, 3]), 2).toArray(), [4, 9]);
 * ```
 */
export function pow(a: Operand, b: Operand): Tensor {
  return arith("pow", a, b, (g, x, y, out) => {
    const gx = g.mul(y).mul(x.pow(y.sub(1)));
    const gy = where(x.eq(0), 0, g.mul(out).mul(x.log()));
    return [gx, gy];
  }, true);
}

function tieWeights(a: Tensor, b: Tensor, op: "gt" | "lt"): Tensor {
  // 1 where `a` wins, 0.5 on ties, 0 where `b` wins.
  return (op === "gt" ? a.gt(b) : a.lt(b)).cast("f32").add(a.eq(b).cast("f32").mul(0.5));
}

/**
 * Elementwise minimum; a tie sends half the gradient to each side. NaN propagates.
 *
 * @example Usage
 * ```ts
 * import { minimum, tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * assert.deepEqual(await minimum(tensor([1, 5]), 3).toArray(), [1, 3]);
 * ```
 */
export function minimum(a: Operand, b: Operand): Tensor {
  return arith("minimum", a, b, (g, x, y) => {
    const w = tieWeights(x, y, "lt");
    return [g.mul(w), g.mul(w.neg().add(1))];
  });
}

/**
 * Elementwise maximum; a tie sends half the gradient to each side. NaN propagates.
 *
 * @example Usage
 * ```ts
 * import { maximum, tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * assert.deepEqual(await maximum(tensor([1, 5]), 3).toArray(), [3, 5]);
 * ```
 */
export function maximum(a: Operand, b: Operand): Tensor {
  return arith("maximum", a, b, (g, x, y) => {
    const w = tieWeights(x, y, "gt");
    return [g.mul(w), g.mul(w.neg().add(1))];
  });
}

function compare(op: BinaryOp, a: Operand, b: Operand): Tensor {
  const [A, B, temps] = operands(op, a, b, false);
  const out = runBinary(op, A, B, "bool", op);
  for (const t of temps) t.dispose();
  return out;
}

/**
 * `a == b` as a bool tensor (no gradient).
 *
 * @example Usage
 * ```ts
 * import { eq, tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * assert.deepEqual(await eq(tensor([1, 2]), 2).toArray(), [false, true]);
 * ```
 */
export function eq(a: Operand, b: Operand): Tensor {
  return compare("eq", a, b);
}
/**
 * `a != b` as bool.
 *
 * @example Usage
 * ```ts
 * import { ne, tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * assert.deepEqual(await ne(tensor([1, 2]), 2).toArray(), [true, false]);
 * ```
 */
export function ne(a: Operand, b: Operand): Tensor {
  return compare("ne", a, b);
}
/**
 * `a < b` as bool.
 *
 * @example Usage
 * ```ts
 * import { lt, tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * assert.deepEqual(await lt(tensor([1, 2]), 2).toArray(), [true, false]);
 * ```
 */
export function lt(a: Operand, b: Operand): Tensor {
  return compare("lt", a, b);
}
/**
 * `a <= b` as bool.
 *
 * @example Usage
 * ```ts
 * import { le, tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * assert.deepEqual(await le(tensor([1, 3]), 2).toArray(), [true, false]);
 * ```
 */
export function le(a: Operand, b: Operand): Tensor {
  return compare("le", a, b);
}
/**
 * `a > b` as bool.
 *
 * @example Usage
 * ```ts
 * import { gt, tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * assert.deepEqual(await gt(tensor([1, 3]), 2).toArray(), [false, true]);
 * ```
 */
export function gt(a: Operand, b: Operand): Tensor {
  return compare("gt", a, b);
}
/**
 * `a >= b` as bool.
 *
 * @example Usage
 * ```ts
 * import { ge, tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * assert.deepEqual(await ge(tensor([1, 2]), 2).toArray(), [false, true]);
 * ```
 */
export function ge(a: Operand, b: Operand): Tensor {
  return compare("ge", a, b);
}

/**
 * Logical and of two bool tensors.
 *
 * @example Usage
 * ```ts
 * import { logicalAnd, tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * assert.deepEqual(await logicalAnd(tensor([true, true]), tensor([true, false])).toArray(), [true, false]);
 * ```
 */
export function logicalAnd(a: Tensor, b: Tensor): Tensor {
  return logical("and", a, b, "logicalAnd");
}

/**
 * Logical or of two bool tensors.
 *
 * @example Usage
 * ```ts
 * import { logicalOr, tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * assert.deepEqual(await logicalOr(tensor([false, true]), tensor([false, false])).toArray(), [false, true]);
 * ```
 */
export function logicalOr(a: Tensor, b: Tensor): Tensor {
  return logical("or", a, b, "logicalOr");
}

function logical(op: "and" | "or", a: Tensor, b: Tensor, name: string): Tensor {
  const A = castTo(a, "bool");
  const B = castTo(b, "bool");
  backendOf(name, A, B);
  const out = runBinary(op, A, B, "bool", name);
  if (A !== a) A.dispose();
  if (B !== b) B.dispose();
  return out;
}

/**
 * Logical not of a bool tensor.
 *
 * @example Usage
 * ```ts
 * import { logicalNot, tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * assert.deepEqual(await logicalNot(tensor([false, true])).toArray(), [true, false]);
 * ```
 */
export function logicalNot(a: Tensor): Tensor {
  const x = castTo(a, "bool");
  const out = empty(x.backend, x.shape, "bool");
  x.backend.run("unary", [x.buffer], [out.buffer], { op: "not" });
  if (x !== a) x.dispose();
  return out;
}

type UnaryGrad = (g: Tensor, x: Tensor, out: Tensor) => Tensor;

function unary(op: UnaryOp, a: Tensor, grad: UnaryGrad | null, keepInt = false): Tensor {
  const x = keepInt && a.dtype === "i32" ? a : castTo(a, "f32");
  const out = empty(x.backend, x.shape, x.dtype);
  x.backend.run("unary", [x.buffer], [out.buffer], { op });
  if (grad !== null) record(op, out, [x], [x, out], (g, [sx, so]) => [grad(g, sx!, so!)]);
  if (x !== a) x.dispose();
  return out;
}

function fused(op: BinaryOp, x: Tensor, g: Tensor): Tensor {
  return runBinary(op, x, g, "f32", op);
}

/**
 * `−x`.
 *
 * @example Usage
 * ```ts
 * import { neg, tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * assert.deepEqual(await neg(tensor([1, -2])).toArray(), [-1, 2]);
 * ```
 */
export function neg(x: Tensor): Tensor {
  return unary("neg", x, (g) => g.neg(), true);
}
/**
 * `eˣ`.
 *
 * @example Usage
 * ```ts
 * import { exp, tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * assert.deepEqual(await exp(tensor([0])).toArray(), [1]);
 * ```
 */
export function exp(x: Tensor): Tensor {
  return unary("exp", x, (g, _x, y) => g.mul(y));
}
/**
 * Natural logarithm.
 *
 * @example Usage
 * ```ts
 * import { log, tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * assert.deepEqual(await log(tensor([1])).toArray(), [0]);
 * ```
 */
export function log(x: Tensor): Tensor {
  return unary("log", x, (g, v) => g.div(v));
}
/**
 * Square root.
 *
 * @example Usage
 * ```ts
 * import { sqrt, tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * assert.deepEqual(await sqrt(tensor([4])).toArray(), [2]);
 * ```
 */
export function sqrt(x: Tensor): Tensor {
  return unary("sqrt", x, (g, _x, y) => g.mul(0.5).div(y));
}
/**
 * `1/√x`.
 *
 * @example Usage
 * ```ts
 * import { rsqrt, tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * assert.deepEqual(await rsqrt(tensor([4])).toArray(), [0.5]);
 * ```
 */
export function rsqrt(x: Tensor): Tensor {
  return unary("rsqrt", x, (g, _x, y) => g.mul(y.mul(y).mul(y)).mul(-0.5));
}
/**
 * Absolute value (gradient `sign(x)`, 0 at 0).
 *
 * @example Usage
 * ```ts
 * import { abs, tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * assert.deepEqual(await abs(tensor([-3, 2])).toArray(), [3, 2]);
 * ```
 */
export function abs(x: Tensor): Tensor {
  return unary("abs", x, (g, v) => g.mul(sign(v)), true);
}
/**
 * Sign: −1, 0 or 1 (gradient 0).
 *
 * @example Usage
 * ```ts
 * import { sign, tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * assert.deepEqual(await sign(tensor([-3, 0, 2])).toArray(), [-1, 0, 1]);
 * ```
 */
export function sign(x: Tensor): Tensor {
  return unary("sign", x, (g) => g.mul(0), true);
}
/**
 * `x²`.
 *
 * @example Usage
 * ```ts
 * import { square, tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * assert.deepEqual(await square(tensor([-3])).toArray(), [9]);
 * ```
 */
export function square(x: Tensor): Tensor {
  return unary("square", x, (g, v) => g.mul(v).mul(2), true);
}
/**
 * Hyperbolic tangent.
 *
 * @example Usage
 * ```ts
 * import { tanh, tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * assert.deepEqual(await tanh(tensor([0])).toArray(), [0]);
 * ```
 */
export function tanh(x: Tensor): Tensor {
  return unary("tanh", x, (g, _x, y) => fused("tanh_backward", y, g));
}
/**
 * Logistic sigmoid `1/(1+e^−x)`.
 *
 * @example Usage
 * ```ts
 * import { sigmoid, tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * assert.deepEqual(await sigmoid(tensor([0])).toArray(), [0.5]);
 * ```
 */
export function sigmoid(x: Tensor): Tensor {
  return unary("sigmoid", x, (g, _x, y) => fused("sigmoid_backward", y, g));
}
/**
 * `max(x, 0)` (gradient 0 at 0, as in PyTorch).
 *
 * @example Usage
 * ```ts
 * import { relu, tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * assert.deepEqual(await relu(tensor([-1, 2])).toArray(), [0, 2]);
 * ```
 */
export function relu(x: Tensor): Tensor {
  return unary("relu", x, (g, v) => fused("relu_backward", v, g));
}
/**
 * SiLU / swish `x · sigmoid(x)` (the SwiGLU gate of Llama and Qwen).
 *
 * @example Usage
 * ```ts
 * import { silu, tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * assert.deepEqual(await silu(tensor([0])).toArray(), [0]);
 * ```
 */
export function silu(x: Tensor): Tensor {
  return unary("silu", x, (g, v) => fused("silu_backward", v, g));
}
/**
 * GELU with the tanh approximation (GPT-2's `gelu_new`).
 *
 * @example Usage
 * ```ts
 * import { gelu, tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * assert.deepEqual(await gelu(tensor([0])).toArray(), [0]);
 * ```
 */
export function gelu(x: Tensor): Tensor {
  return unary("gelu", x, (g, v) => fused("gelu_backward", v, g));
}
/**
 * `1/x`.
 *
 * @example Usage
 * ```ts
 * import { reciprocal, tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * assert.deepEqual(await reciprocal(tensor([4])).toArray(), [0.25]);
 * ```
 */
export function reciprocal(x: Tensor): Tensor {
  return unary("reciprocal", x, (g, _x, y) => g.mul(y.mul(y)).neg());
}

/**
 * `cond ? a : b` elementwise with broadcasting; gradients flow to the chosen side only.
 *
 * @example Usage
 * ```ts
 * import { tensor, where } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * assert.deepEqual(await where(tensor([true, false]), tensor([1, 2]), 0).toArray(), [1, 0]);
 * ```
 */
export function where(cond: Tensor, a: Operand, b: Operand): Tensor {
  // Two plain numbers give an f32 result on the condition's backend, as torch.where does.
  const [A, B, temps] = typeof a === "number" && typeof b === "number"
    ? scalarPair(a, b, cond)
    : operands("where", a, b, false);
  const C = castTo(cond, "bool");
  backendOf("where", C, A);
  const shape = broadcastShapes(broadcastShapes(C.shape, A.shape, "where"), B.shape, "where");
  const out = empty(A.backend, shape, A.dtype);
  A.backend.run("where", [C.buffer, A.buffer, B.buffer], [out.buffer], {
    shape,
    condStrides: broadcastStrides(C.shape, shape),
    aStrides: broadcastStrides(A.shape, shape),
    bStrides: broadcastStrides(B.shape, shape),
  });
  record("where", out, [A, B], [C], (g, [c]) => [
    A.requiresGrad ? unbroadcast(where(c!, g, 0), A.shape) : null,
    B.requiresGrad ? unbroadcast(where(c!, 0, g), B.shape) : null,
  ]);
  for (const t of temps) t.dispose();
  if (C !== cond) C.dispose();
  return out;
}

/**
 * Sets `x` to `value` where `mask` is true (e.g. −Infinity on padded logits).
 *
 * @example Usage
 * ```ts
 * import { maskedFill, tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * assert.deepEqual(await maskedFill(tensor([1, 2]), tensor([false, true]), -1).toArray(), [1, -1]);
 * ```
 */
export function maskedFill(x: Tensor, mask: Tensor, value: number): Tensor {
  return where(mask, value, x);
}

/**
 * Clamps `x` into `[min, max]`. The gradient passes where `min <= x <= max` (bounds inclusive,
 * as `torch.clamp`); tensor bounds receive the gradient where they are active.
 *
 * @example Usage
 * ```ts
 * import { clamp, tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * assert.deepEqual(await clamp(tensor([0, 1, 2]), 0.5, 1.5).toArray(), [0.5, 1, 1.5]);
 * ```
 */
export function clamp(x: Tensor, min?: Operand, max?: Operand): Tensor {
  if (min === undefined && max === undefined) {
    throw new TypeError("clamp: give at least one of min and max");
  }
  const out = noGrad(() => {
    const lower = min === undefined ? x.cast("f32") : maximum(x, min);
    if (max === undefined) return lower;
    const both = minimum(lower, max);
    lower.dispose();
    return both;
  });
  const lo = typeof min === "object" ? min : null;
  const hi = typeof max === "object" ? max : null;
  const inputs = [x, ...(lo ? [lo] : []), ...(hi ? [hi] : [])];
  return record("clamp", out, inputs, inputs, (g, saved) => {
    const sx = saved[0]!;
    const loBound = lo ? saved[1]! : min;
    const hiBound = hi ? saved[saved.length - 1]! : max;
    let pass = g;
    if (loBound !== undefined) pass = where(ge(sx, loBound), pass, 0);
    if (hiBound !== undefined) pass = where(le(sx, hiBound), pass, 0);
    const grads: (Tensor | null)[] = [unbroadcast(pass, x.shape)];
    if (lo) {
      grads.push(lo.requiresGrad ? unbroadcast(where(lt(sx, loBound!), g, 0), lo.shape) : null);
    }
    if (hi) {
      grads.push(hi.requiresGrad ? unbroadcast(where(gt(sx, hiBound!), g, 0), hi.shape) : null);
    }
    return grads;
  });
}

/**
 * Converts to `dtype`. Only f32 → f32 carries a gradient; casts to or from integers and bools
 * are not differentiable.
 *
 * @example Usage
 * ```ts
 * import { cast, tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * assert.deepEqual(await cast(tensor([1.7, -1.7]), "i32").toArray(), [1, -1]);
 * ```
 */
export function cast(x: Tensor, dtype: DType): Tensor {
  if (x.dtype === dtype) {
    const out = x.share();
    return record("cast", out, [x], [], (g) => [g.share()]);
  }
  return castTo(x, dtype);
}
