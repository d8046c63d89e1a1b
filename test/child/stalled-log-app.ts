// A child for test/request-logs.test.ts: an app with request logs to stderr (the default sink),
// answering 3,000 requests while its parent never reads that stderr. It prints "done" to stdout
// when they are answered; a log that blocked on the full pipe would never get there.

import { crudkit } from "../../src/index.ts";
import { openProduct } from "../fixtures.ts";

const app = crudkit({
  database: { provider: "sqlite", url: ":memory:" },
  autoMigrate: true,
  resources: [openProduct],
  requestLogs: true,
});
await app.ready;
const started = Date.now();
for (let i = 0; i < 3000; i++) {
  const response = await app.handler(new Request(`http://localhost/api/product/missing-${i}`));
  await response.arrayBuffer();
}
process.stdout.write(`done ${Date.now() - started}\n`);
// The queued lines cannot be written while the parent is not reading: leave without them.
process.exit(0);
