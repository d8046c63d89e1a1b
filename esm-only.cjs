// crudkit-api is an ES module. require() lands here to say so, instead of Node's
// ERR_PACKAGE_PATH_NOT_EXPORTED.
throw new Error(
  'crudkit-api is ESM-only: load it with `import { crudkit } from "crudkit-api"` (or `await import("crudkit-api")` from CommonJS), and set "type": "module" or use .mjs/.mts files.',
);
