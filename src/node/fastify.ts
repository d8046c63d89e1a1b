// Fastify 5: a crudkit app as a plugin. Registered under a prefix, it takes every method on every
// path below it, keeps Fastify's body parsers off (crudkit streams the body itself, uploads
// included) and hands the raw request and response to crudkit, whose routes use the full path.

import type { IncomingMessage, ServerResponse } from "node:http";
import { type ListenerOptions, type Servable, toNodeListener } from "./listener.ts";

/** The little of Fastify's instance the plugin uses, typed here so crudkit never imports Fastify. */
interface FastifyLike {
  removeAllContentTypeParsers(): void;
  addContentTypeParser(
    type: string,
    parser: (request: unknown, payload: unknown, done: (error: Error | null, body?: unknown) => void) => void,
  ): void;
  all(path: string, handler: (request: { raw: IncomingMessage }, reply: FastifyReply) => unknown): void;
}

interface FastifyReply {
  raw: ServerResponse;
  hijack(): void;
}

/**
 * A Fastify plugin serving a crudkit app. Register it with the app's basePath as prefix.
 *
 * @example
 * import Fastify from "fastify";
 * const server = Fastify();
 * await server.register(crudkitFastify(app), { prefix: "/api" });
 * await server.listen({ port: 3000 });
 */
export function crudkitFastify(app: Servable, options: ListenerOptions = {}) {
  const listener = toNodeListener(app, options);
  const plugin = async (fastify: FastifyLike) => {
    // Inside this plugin only (Fastify encapsulates it): leave bodies unread for crudkit.
    fastify.removeAllContentTypeParsers();
    fastify.addContentTypeParser("*", (_request, _payload, done) => done(null));
    const handle = (request: { raw: IncomingMessage }, reply: FastifyReply) => {
      reply.hijack();
      return listener(request.raw, reply.raw);
    };
    fastify.all("/", handle);
    fastify.all("/*", handle);
  };
  return plugin;
}
