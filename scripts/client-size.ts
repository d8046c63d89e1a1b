// `npm run size`: the client bundle's size (minified, minified + gzip) and what went into it.
// Fails when it passes 6 KB gzip or pulls in anything beyond src/client.

import { bundleClient } from "./bundle-client.ts";

const LIMIT = 6 * 1024;
const bundle = await bundleClient();
const foreign = bundle.inputs.filter((input) => !input.startsWith("src/client/"));
console.log(
  `crudkit-api/client: ${bundle.minified} B minified, ${bundle.gzipped} B minified + gzip (limit ${LIMIT} B)`,
);
console.log(`inputs: ${bundle.inputs.join(", ")}`);
if (foreign.length > 0) {
  console.error(`the client bundle pulls in code beyond src/client: ${foreign.join(", ")}`);
  process.exitCode = 1;
}
if (bundle.gzipped > LIMIT) {
  console.error(`the client bundle is over ${LIMIT} B gzip`);
  process.exitCode = 1;
}
