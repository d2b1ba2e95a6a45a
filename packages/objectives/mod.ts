/**
 * @module
 *
 * `@rlvr/objectives`: policy losses (PPO clip, clip-higher, dual-clip, GSPO, CISPO, TIS ...), KL estimators, entropy bonus and loss aggregation modes, built on `@rlvr/tensor` autograd.
 *
 * Nothing is exported yet: this package is planned in issue #3 and gets its first export
 * when that issue lands. It exists now so the workspace, its checks and its imports are fixed.
 */
