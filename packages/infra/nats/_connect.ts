/**
 * Connecting to NATS from Deno (internal: the tests and the worker fixture use it; the public API
 * takes a `NatsConnection` that callers make with `connect` from `@nats-io/transport-node`).
 *
 * Design decision: the client is npm `@nats-io/transport-node`, run through Deno's Node
 * compatibility (`node:net`). `@nats-io/transport-deno` is published only on JSR (npm answers 404
 * for it) and JSR is not reachable from this project's machines; the Node transport is the same
 * `@nats-io/nats-core` protocol client over a different socket, and works unchanged on Deno.
 * Everything else (`@nats-io/jetstream`, `@nats-io/obj`) is transport-independent. This file is
 * the only place that names the transport, so switching to the Deno one later is a one-line
 * change. Not exported from `mod.ts`: its return type is the npm package's `NatsConnection`,
 * whose type graph `deno doc --lint` cannot check, and callers can as well call `connect`.
 *
 * @module
 */

import { connect, type NatsConnection } from "@nats-io/transport-node";

export type { NatsConnection };

/** Options of {@link connectNats}. */
export interface ConnectNatsOptions {
  /** Client name shown in the server's monitoring (e.g. the worker id). */
  name?: string;
  /** Connection timeout in ms (default 5000). */
  timeoutMs?: number;
  /**
   * Reconnect after the server goes away (default true: a restarted server is picked up again,
   * and unacknowledged work is redelivered by JetStream either way).
   */
  reconnect?: boolean;
}

/**
 * Connects to a NATS server (`nats://host:port`).
 *
 * @param url Server URL, e.g. `nats://127.0.0.1:4222`.
 * @param options Client name, timeout, reconnect.
 * @returns The connection; close it with `await nc.close()` (or `await using`).
 */
export async function connectNats(
  url: string,
  options: ConnectNatsOptions = {},
): Promise<NatsConnection> {
  if (typeof url !== "string" || url === "") {
    throw new TypeError(
      `connectNats: url must be a NATS URL like nats://127.0.0.1:4222, got ${url}`,
    );
  }
  try {
    return await connect({
      servers: url,
      ...(options.name === undefined ? {} : { name: options.name }),
      timeout: options.timeoutMs ?? 5000,
      reconnect: options.reconnect ?? true,
    });
  } catch (e) {
    throw new Error(
      `connectNats: cannot connect to ${url} (${(e as Error).message}); is nats-server ` +
        `running there with JetStream (-js)?`,
      { cause: e },
    );
  }
}
