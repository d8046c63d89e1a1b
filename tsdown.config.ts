import { defineConfig } from "tsdown";

export default defineConfig({
  entry: {
    index: "src/index.ts",
    "client/index": "src/client/index.ts",
    "node/index": "src/node/index.ts",
    "cli/main": "src/cli/main.ts",
    "plugins/index": "src/plugins/index.ts",
    "plugin-kit/index": "src/kit/index.ts",
    "storage/s3/index": "src/storage/s3/index.ts",
  },
  format: "esm",
  dts: true,
  platform: "node",
  target: "node20",
  clean: true,
});
