import { defineConfig } from "tsdown";

export default defineConfig({
  entry: {
    index: "src/index.ts",
    "client/index": "src/client/index.ts",
    "node/index": "src/node/index.ts",
    "cli/main": "src/cli/main.ts",
  },
  format: "esm",
  dts: true,
  platform: "node",
  target: "node20",
  clean: true,
});
