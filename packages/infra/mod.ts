/**
 * @module
 *
 * `@rlvr/infra`: asynchronous rollout workers with bounded staleness, weight synchronisation, resumable checkpoints, metrics and multi-machine transport (NATS).
 *
 * Nothing is exported yet: this package is planned in issue #9 and gets its first export
 * when that issue lands. It exists now so the workspace, its checks and its imports are fixed.
 */
