// The example's web page: `/` serves public/index.html and `/client.js` the browser bundle of
// crudkit/client; everything else goes to the API.

import { readFile } from "node:fs/promises";
import { bundleClient } from "../scripts/bundle-client.ts";

export async function withSite(app: {
  handler: (request: Request) => Promise<Response>;
  ready: Promise<void>;
}) {
  const page = await readFile(new URL("./public/index.html", import.meta.url), "utf8");
  const { code } = await bundleClient();
  return {
    ready: app.ready,
    handler(request: Request): Promise<Response> {
      // A slice, not new URL(): this runs in front of every API request the benchmark sends.
      const url = request.url;
      const path = url.slice(url.indexOf("/", url.indexOf("://") + 3));
      if (path === "/")
        return Promise.resolve(
          new Response(page, { headers: { "content-type": "text/html; charset=utf-8" } }),
        );
      if (path === "/client.js") {
        return Promise.resolve(
          new Response(code, { headers: { "content-type": "text/javascript; charset=utf-8" } }),
        );
      }
      return app.handler(request);
    },
  };
}
