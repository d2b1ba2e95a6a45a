/**
 * `@rlvr/infra`: the foundations of asynchronous RLVR training, on one machine or over NATS
 * JetStream.
 *
 * - **Weight sync** (`weights.ts`): versioned snapshots of `model.params` as safetensors bytes
 *   with a SHA-256 checksum; a corrupted snapshot is refused with a `WeightChecksumError` and
 *   never half applied.
 * - **Bounded staleness** (`staleness.ts`): a `StalenessGate` that lets a sample into the
 *   trainer only when `trainerVersion - policyVersion <= η` (sync η = 0, one-step-off η = 1,
 *   async η = k), counting dropped / regenerated samples in a staleness histogram.
 * - **Backpressure** (`bounded_queue.ts`, `limiter.ts`): an async bounded queue and a
 *   concurrency limiter for reward workers.
 * - **Metrics** (`metrics/`): console, JSONL, CSV and TensorBoard sinks with one write per
 *   record (TensorBoard event files written without TensorFlow: TFRecord framing with masked
 *   CRC32C around hand-encoded `Event` protos), and a fixed-bin `Histogram`.
 * - **NATS JetStream** (`nats/`): a durable prompt work queue with acks and redelivery, a
 *   trajectory stream deduplicated by id whose publisher refuses stale weights, weights in the
 *   object store by version with checksum verification, and a real `nats-server` launcher for
 *   tests.
 *
 * Design decision: every piece is usable on its own and none of them imports the model: the
 * trainer and the rollout workers (next step of issue #9) compose them. The guarantee "no sample
 * is used with staleness > η" lives in one place, the gate at the trainer's input; the NATS
 * pieces make delivery at-least-once and the ids make consumption exactly-once.
 *
 * @example Usage
 * ```ts
 * import { applySnapshot, snapshot, StalenessGate } from "@rlvr/infra";
 * import { tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * // the trainer publishes version 3; a worker loads it (checksum verified) and generates
 * const trainer = new Map([["w", tensor([1, 2])]]);
 * const worker = new Map([["w", tensor([0, 0])]]);
 * const version = await applySnapshot(worker, await snapshot(trainer, 3));
 * const sample = { policyVersion: version, text: "5" };
 * // by the time the sample arrives the trainer is at version 4: one step off is allowed
 * const gate = StalenessGate.forMode("one-step-off");
 * assert.equal(gate.decide(sample, 4), "use");
 * assert.equal(gate.decide(sample, 5), "drop");
 * ```
 *
 * @module
 */

// `Tensor` (and the types its public methods mention) come from `@rlvr/tensor`; they are
// re-exported as types so that this package's API documentation is complete on its own.
export type * from "@rlvr/tensor/types";
export {
  applySnapshot,
  sha256Hex,
  snapshot,
  verifySnapshot,
  VERSION_METADATA_KEY,
  WeightChecksumError,
  WeightMismatchError,
} from "./weights.ts";
export type { ApplySnapshotOptions, WeightParams, WeightSnapshot } from "./weights.ts";
export { Histogram } from "./metrics/histogram.ts";
export type { HistogramState } from "./metrics/histogram.ts";
export type { MetricsRecord, MetricsSink, MetricValue } from "./metrics/types.ts";
export { ConsoleSink, formatMetric } from "./metrics/console.ts";
export type { ConsoleSinkOptions } from "./metrics/console.ts";
export { JsonlSink, parseJsonlMetrics } from "./metrics/jsonl.ts";
export { csvCell, CsvSchemaError, CsvSink, parseCsv, parseCsvLine } from "./metrics/csv.ts";
export type { CsvContent, CsvSinkOptions } from "./metrics/csv.ts";
export {
  crc32c,
  encodeTfRecord,
  maskedCrc32c,
  readTfRecords,
  TfRecordError,
} from "./metrics/tfrecord.ts";
export type { TfRecords } from "./metrics/tfrecord.ts";
export {
  isEventFileName,
  TensorBoardSink,
  TensorBoardWriter,
  truncateEventFiles,
} from "./metrics/tensorboard.ts";
export type {
  EventTruncation,
  TensorBoardSinkOptions,
  TensorBoardWriterOptions,
} from "./metrics/tensorboard.ts";
export { StalenessGate } from "./staleness.ts";
export type {
  RolloutMode,
  StalenessCounts,
  StalenessDecision,
  StalenessGateOptions,
  StalenessGateState,
  StalenessPartition,
  StalePolicy,
  VersionedSample,
} from "./staleness.ts";
export { BoundedQueue, QueueClosedError } from "./bounded_queue.ts";
export { ConcurrencyLimiter } from "./limiter.ts";
export {
  findNatsServer,
  NatsServer,
  NatsServerMissingError,
  natsTest,
  startNatsServer,
  withNatsServer,
} from "./nats/server.ts";
export type { NatsServerOptions, NatsTestOptions } from "./nats/server.ts";
export { WorkQueue } from "./nats/work_queue.ts";
export type {
  PromptJob,
  ReceivedJob,
  WorkQueueDepth,
  WorkQueueOptions,
} from "./nats/work_queue.ts";
export { StaleWeightsError, TrajectoryConsumer, TrajectoryPublisher } from "./nats/trajectories.ts";
export type {
  LatestVersionSource,
  ReceivedTrajectory,
  Trajectory,
  TrajectoryConsumerOptions,
  TrajectoryPublisherOptions,
  TrajectoryStreamOptions,
} from "./nats/trajectories.ts";
export { WeightsStore } from "./nats/weights_store.ts";
export type { WeightsStoreOptions } from "./nats/weights_store.ts";
export { ObjectChangedError, readObject } from "./nats/objects.ts";
export type { ObjectMeta, ObjectSource, ReadObjectOptions } from "./nats/objects.ts";
