/**
 * @module
 *
 * `@rlvr/sampling`: token samplers (greedy, temperature, top-k, top-p, min-p) with a counter-based seeded RNG, group and dynamic sampling, curricula, replay buffers, streaming datasets and pass@k metrics.
 *
 * Nothing is exported yet: this package is planned in issue #5 and gets its first export
 * when that issue lands. It exists now so the workspace, its checks and its imports are fixed.
 */
