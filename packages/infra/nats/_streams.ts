/**
 * Idempotent creation of JetStream streams and durable consumers (internal).
 *
 * Design decision: the trainer and every worker call `open` with the same options, in any
 * order, so creation must be idempotent: add the stream, and when it exists with another
 * configuration, update it (JetStream refuses updates it cannot apply, such as a retention
 * change, and that error is passed on with the stream's name).
 *
 * @module
 */

import {
  type ConsumerConfig,
  JetStreamApiError,
  type JetStreamManager,
  type StreamConfig,
} from "@nats-io/jetstream";

/** Creates the stream, or updates it when it exists with another configuration. */
export async function ensureStream(
  jsm: JetStreamManager,
  config: Partial<StreamConfig> & { name: string },
): Promise<void> {
  try {
    await jsm.streams.add(config);
  } catch (e) {
    // 10058: stream name already in use with a different configuration
    if (e instanceof JetStreamApiError && e.code === 10058) {
      const { name, ...rest } = config;
      try {
        await jsm.streams.update(name, rest);
      } catch (u) {
        throw new Error(
          `JetStream stream ${name} exists with a configuration that cannot be changed to ` +
            `this one (${(u as Error).message}); delete the stream or use another name`,
          { cause: u },
        );
      }
      return;
    }
    throw e;
  }
}

/** Creates the durable consumer, or updates it when it exists with another configuration. */
export async function ensureConsumer(
  jsm: JetStreamManager,
  stream: string,
  config: Partial<ConsumerConfig> & { durable_name: string },
): Promise<void> {
  try {
    await jsm.consumers.add(stream, config);
  } catch (e) {
    if (e instanceof JetStreamApiError && (e.code === 10148 || e.code === 10013)) {
      // 10148: consumer already exists (different config); 10013: consumer name already in use
      await jsm.consumers.update(stream, config.durable_name, config);
      return;
    }
    throw e;
  }
}
