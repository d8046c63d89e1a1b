// The documentation site: VitePress, built offline. Local search, no fonts or scripts from other
// origins, no analytics, no edit links. A link to a page that does not exist fails the build.
import { defineConfig } from "vitepress";

const plugins = [
  ["Overview and writing a plugin", "/plugins/"],
  ["apiKey()", "/plugins/api-key"],
  ["jwt()", "/plugins/jwt"],
  ["betterAuth()", "/plugins/better-auth"],
  ["upload()", "/plugins/upload"],
  ["audit()", "/plugins/audit"],
  ["webhooks()", "/plugins/webhooks"],
  ["cache()", "/plugins/cache"],
  ["idempotency()", "/plugins/idempotency"],
  ["rateLimit()", "/plugins/rate-limit"],
];

const modules = ["", "/client", "/plugins", "/plugin-kit", "/node", "/storage/s3"];

export default defineConfig({
  title: "crudkit",
  description:
    "Resource definitions (a name and a Zod schema) become a REST API on SQLite, PostgreSQL or MySQL/MariaDB.",
  lang: "en-US",
  // docs/README.md is not a page of the site (there is none; kept in case one is added for GitHub).
  srcExclude: ["README.md"],
  // Code colours with at least 4.5:1 contrast on the code background (the default themes' comments
  // and some tokens fall under it).
  markdown: { theme: { light: "github-light-high-contrast", dark: "github-dark-high-contrast" } },
  vite: { build: { chunkSizeWarningLimit: 2000 } },
  themeConfig: {
    search: { provider: "local" },
    outline: [2, 3],
    // The 404 page in the docs' own voice (VitePress's default is a quotation).
    notFound: {
      title: "PAGE NOT FOUND",
      quote: "No page of the crudkit docs has this address. Search (Ctrl K) or start again from the home page.",
      linkText: "Back to the docs home",
    },
    nav: [
      { text: "Guide", link: "/getting-started" },
      { text: "Plugins", link: "/plugins/" },
      { text: "Recipes", link: "/recipes" },
      { text: "API reference", link: "/api/" },
    ],
    sidebar: [
      {
        text: "Introduction",
        items: [
          { text: "Getting started", link: "/getting-started" },
          { text: "Walk-through", link: "/walk-through" },
          { text: "Recipes", link: "/recipes" },
        ],
      },
      {
        text: "Concepts",
        items: [
          { text: "Resources", link: "/resources" },
          { text: "Access and rules", link: "/access" },
          { text: "Identity", link: "/identity" },
          { text: "Filtering lists", link: "/filtering" },
          { text: "Aggregates", link: "/aggregates" },
          { text: "Batches", link: "/batch" },
          { text: "Relations", link: "/relations" },
          { text: "Hooks", link: "/hooks" },
          { text: "In-process API", link: "/in-process-api" },
          { text: "Client", link: "/client" },
          { text: "Live data", link: "/live-data" },
          { text: "Admin page", link: "/admin" },
          { text: "Databases", link: "/databases" },
          { text: "Migrations", link: "/migrations" },
          { text: "Serving and deploying", link: "/serving" },
          { text: "Deploying: the pieces", link: "/deploying" },
          { text: "Operating", link: "/operating" },
          { text: "CORS and CSRF", link: "/cors" },
          { text: "Limits", link: "/limits" },
        ],
      },
      { text: "Plugins", items: plugins.map(([text, link]) => ({ text, link })) },
      {
        text: "Reference",
        items: [
          { text: "Options", link: "/options" },
          { text: "HTTP contract", link: "/http" },
          { text: "OpenAPI", link: "/openapi" },
          {
            text: "API reference",
            link: "/api/",
            collapsed: true,
            items: modules.map((path) => ({ text: `crudkit-api${path}`, link: `/api/crudkit-api${path}/` })),
          },
        ],
      },
      { text: "Contributing", items: [{ text: "Development", link: "/development" }] },
    ],
  },
});
