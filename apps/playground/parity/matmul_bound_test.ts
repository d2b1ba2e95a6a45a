import assert from "node:assert/strict";
import { matmulLimits } from "./matmul_bound.ts";

Deno.test("matmulLimits: matches a direct evaluation of (K + 1)·2⁻²³·Σ|x·y| for every layout", () => {
  const u = 2 ** -23;
  let s = 7;
  const rnd = () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32) * 2 - 1;
  for (const [batchA, batchB] of [[1, 1], [3, 1], [1, 3], [3, 3]] as const) {
    for (const transA of [false, true]) {
      for (const transB of [false, true]) {
        const m = 2, n = 3, k = 4, batch = Math.max(batchA, batchB);
        const a = Array.from({ length: batchA * m * k }, rnd);
        const b = Array.from({ length: batchB * k * n }, rnd);
        const g = Array.from({ length: batch * m * n }, rnd);
        const A = (bi: number, i: number, kk: number) =>
          a[(batchA === 1 ? 0 : bi) * m * k + (transA ? kk * m + i : i * k + kk)]!;
        const B = (bi: number, kk: number, j: number) =>
          b[(batchB === 1 ? 0 : bi) * k * n + (transB ? j * k + kk : kk * n + j)]!;
        const lim = matmulLimits({ batchA, batchB, m, n, k, transA, transB }, a, b, g);
        const what = JSON.stringify({ batchA, batchB, transA, transB });
        // out[b, i, j]
        let mag = 0;
        for (let kk = 0; kk < k; kk++) mag += Math.abs(A(batch - 1, 1, kk) * B(batch - 1, kk, 2));
        assert.ok(
          Math.abs(lim.out[((batch - 1) * m + 1) * n + 2]! - (k + 1) * u * mag) < 1e-20,
          what,
        );
        // dA at op(a)[bA=0, i=1, kk=2]: Σ over the batches using it and over j of |g|·|op(b)|
        let ga = 0;
        for (let bi = 0; bi < batch; bi++) {
          if (batchA !== 1 && bi !== 0) continue;
          for (let j = 0; j < n; j++) ga += Math.abs(g[(bi * m + 1) * n + j]! * B(bi, 2, j));
        }
        const kA = n * (batchA === 1 ? batch : 1);
        const ia = transA ? 2 * m + 1 : 1 * k + 2;
        assert.ok(Math.abs(lim.gradA[ia]! - (kA + 1) * u * ga) < 1e-20, `${what} dA`);
        // dB at op(b)[bB=0, kk=3, j=0]
        let gb = 0;
        for (let bi = 0; bi < batch; bi++) {
          if (batchB !== 1 && bi !== 0) continue;
          for (let i = 0; i < m; i++) gb += Math.abs(A(bi, i, 3) * g[(bi * m + i) * n]!);
        }
        const kB = m * (batchB === 1 ? batch : 1);
        const ib = transB ? 0 * k + 3 : 3 * n + 0;
        assert.ok(Math.abs(lim.gradB[ib]! - (kB + 1) * u * gb) < 1e-20, `${what} dB`);
      }
    }
  }
});

Deno.test("matmulLimits: wrong sizes fail naming the operand", () => {
  const geo = { batchA: 1, batchB: 1, m: 2, n: 2, k: 2, transA: false, transB: false };
  assert.throws(
    () => matmulLimits(geo, [1], [1, 2, 3, 4], [1, 2, 3, 4]),
    /a has 1 elements, expected 4/,
  );
  assert.throws(
    () => matmulLimits({ ...geo, batchA: 2, batchB: 3 }, [], [], []),
    /batchA must be 1 or 3, got 2/,
  );
});
