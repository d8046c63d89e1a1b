import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

export default defineConfig({
  resolve: {
    alias: {
      "crudkit-api/node": fileURLToPath(new URL("./src/node/index.ts", import.meta.url)),
      "crudkit-api/client": fileURLToPath(new URL("./src/client/index.ts", import.meta.url)),
      "crudkit-api/plugins": fileURLToPath(new URL("./src/plugins/index.ts", import.meta.url)),
      "crudkit-api/plugin-kit": fileURLToPath(new URL("./src/kit/index.ts", import.meta.url)),
      "crudkit-api/storage/s3": fileURLToPath(new URL("./src/storage/s3/index.ts", import.meta.url)),
      "crudkit-api": fileURLToPath(new URL("./src/index.ts", import.meta.url)),
    },
  },
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 20_000,
    hookTimeout: 30_000,
    // A skipped test would read as green; none is allowed.
    allowOnly: false,
  },
});
