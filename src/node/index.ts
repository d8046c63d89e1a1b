// crudkit-api/node: serving a crudkit app on Node.

export { toExpressHandler } from "./express.ts";
export { crudkitFastify } from "./fastify.ts";
export { type NodeListener, type Servable, toNodeListener } from "./listener.ts";
export { toNextHandler } from "./next.ts";
export { type RunningServer, type ServeOptions, serve } from "./serve.ts";
