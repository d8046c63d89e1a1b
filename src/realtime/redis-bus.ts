// Change events through Redis pub/sub, for apps that run as several instances. A subscribed Redis
// connection can do nothing else, so it takes two: one publishes, one listens.

import { type ChangeEvent, type RealtimeBus, readEvent } from "./bus.ts";

/** The commands used, as ioredis provides them. */
export interface RedisPublisher {
  publish(channel: string, message: string): Promise<unknown>;
}
export interface RedisSubscriber {
  subscribe(channel: string): Promise<unknown>;
  unsubscribe(channel: string): Promise<unknown>;
  on(event: "message", listener: (channel: string, message: string) => void): unknown;
  off(event: "message", listener: (channel: string, message: string) => void): unknown;
}

/**
 * Events between instances through Redis pub/sub: two connections to the same Redis.
 *
 * @example
 * realtime: { bus: redisBus({ publisher: new Redis(url), subscriber: new Redis(url) }) }
 */
export function redisBus(options: {
  publisher: RedisPublisher;
  subscriber: RedisSubscriber;
  /** @default "crudkit:events" */
  channel?: string;
}): RealtimeBus {
  const channel = options.channel ?? "crudkit:events";
  let listener: ((from: string, text: string) => void) | undefined;
  return {
    kind: "redis",
    async publish(event: ChangeEvent) {
      await options.publisher.publish(channel, JSON.stringify(event));
    },
    async start(deliver) {
      listener = (from, text) => {
        if (from !== channel) return;
        const event = readEvent(text);
        if (event) deliver(event);
      };
      options.subscriber.on("message", listener);
      await options.subscriber.subscribe(channel);
    },
    async close() {
      if (!listener) return;
      options.subscriber.off("message", listener);
      await options.subscriber.unsubscribe(channel).catch(() => {});
      listener = undefined;
    },
  };
}
