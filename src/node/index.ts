// crudkit-api/node: serving a crudkit app on Node.

export type { CompressOptions } from "./compression.ts";
export { toExpressHandler } from "./express.ts";
export { crudkitFastify } from "./fastify.ts";
export { type ListenerOptions, type NodeListener, type Servable, toNodeListener } from "./listener.ts";
export { toNextHandler } from "./next.ts";
export { type RunningServer, type ServeOptions, serve } from "./serve.ts";
