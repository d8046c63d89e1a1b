// The documentation site (docs/, VitePress): built with `npm run docs:build` (TypeDoc's API pages,
// then VitePress) unless a build newer than its sources is there (CI starts from a clean clone, so
// it always builds), served from docs/.vitepress/dist on 127.0.0.1, and read in headless Chromium
// as a person would: the home page, the local search, every internal link of every page, with no
// request to another origin; axe on the home page and a concept page. Screenshots are kept in
// test-artifacts/docs-site-*.png.

import { spawn } from "node:child_process";
import { createReadStream, existsSync, mkdirSync, readdirSync, statSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { extname, join, normalize } from "node:path";
import { AxeBuilder } from "@axe-core/playwright";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chromiumPresent, launchChromium } from "./chromium.ts";

const root = new URL("..", import.meta.url).pathname;
const dist = join(root, "docs/.vitepress/dist");
const artifacts = join(root, "test-artifacts");

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript",
  ".css": "text/css",
  ".json": "application/json",
  ".png": "image/png",
  ".svg": "image/svg+xml",
  ".woff2": "font/woff2",
};

/** The newest modification time under `path` (docs/ without its build outputs, src/, a file). */
function newest(path: string): number {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let time = 0;
  for (const name of readdirSync(path))
    if (!["dist", "cache", "api", "node_modules"].includes(name))
      time = Math.max(time, newest(join(path, name)));
  return time;
}

/** A build newer than everything it is made from is used as it is; otherwise the site is built. */
function buildIsCurrent(): boolean {
  const built = join(dist, "index.html");
  if (!existsSync(built)) return false;
  const sources = ["docs", "src", "typedoc.json", "package.json"].map((path) => newest(join(root, path)));
  return statSync(built).mtimeMs > Math.max(...sources);
}

/** Runs `npm run docs:build`; rejects with its output when it fails. */
function buildSite(): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn("npm", ["run", "docs:build"], { cwd: root, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (chunk) => {
      output += chunk;
    });
    child.stderr.on("data", (chunk) => {
      output += chunk;
    });
    child.on("exit", (code) => (code === 0 ? resolve() : reject(new Error(`docs:build failed:\n${output}`))));
  });
}

/** A static server for the built site: `/x/` is `/x/index.html`, anything missing a 404. */
function serveSite(): Promise<{ server: Server; origin: string }> {
  const server = createServer((request, response) => {
    const path = decodeURIComponent(new URL(request.url ?? "/", "http://x").pathname);
    let file = normalize(join(dist, path.endsWith("/") ? `${path}index.html` : path));
    if (!file.startsWith(dist)) return response.writeHead(404).end();
    if (!existsSync(file) && existsSync(`${file}.html`)) file = `${file}.html`;
    // A missing page gets the site's own 404 page, as static hosts serve it.
    if (!existsSync(file) || !statSync(file).isFile()) {
      response.writeHead(404, { "content-type": "text/html; charset=utf-8" });
      return createReadStream(join(dist, "404.html")).pipe(response);
    }
    // Hashed assets may be cached, as any host would let them be: the crawl then loads them once.
    const cache = path.startsWith("/assets/") ? "public, max-age=31536000, immutable" : "no-cache";
    response.writeHead(200, {
      "content-type": TYPES[extname(file)] ?? "application/octet-stream",
      "cache-control": cache,
    });
    createReadStream(file).pipe(response);
  });
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      resolve({ server, origin: `http://127.0.0.1:${port}` });
    }),
  );
}

const suite = chromiumPresent || process.env.CI ? describe : describe.skip;

suite(`the docs site in headless Chromium${chromiumPresent ? "" : " (skipped: /usr/bin/chromium is not installed)"}`, () => {
  let browser: Browser | undefined;
  let site: { server: Server; origin: string } | undefined;
  /** Every request a page made to another origin, by the page that made it. */
  const elsewhere: string[] = [];
  /** Requests to the site itself: the check of `elsewhere` is only worth something if pages loaded. */
  let own = 0;

  beforeAll(async () => {
    if (!buildIsCurrent()) await buildSite();
    site = await serveSite();
    browser = await launchChromium();
    mkdirSync(artifacts, { recursive: true });
  }, 300_000);
  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => site?.server.close(resolve));
  });

  /** A page that records, and refuses, every request to another origin. */
  async function openPage(
    colorScheme: "light" | "dark" = "light",
    viewport = { width: 1280, height: 900 },
  ): Promise<Page> {
    // A context of its own: axe opens frames through it.
    const context = await browser!.newContext({ viewport, colorScheme });
    const page = await context.newPage();
    page.on("request", (request) => {
      const url = request.url();
      if (url.startsWith(`${site!.origin}/`)) own++;
      else if (!/^(data|blob):/.test(url)) elsewhere.push(`${page.url()} → ${url}`);
    });
    await page.route(/^https?:/, (route) =>
      route.request().url().startsWith(`${site!.origin}/`) ? route.continue() : route.abort(),
    );
    return page;
  }

  it("renders the home page: its heading, the way in, and the sidebar's sections", async () => {
    const page = await openPage();
    await page.goto(`${site!.origin}/`);
    await expect(page.getByRole("heading", { level: 1 }).textContent()).resolves.toContain("crudkit");
    await page.getByRole("link", { name: "Get started" }).click();
    await page.getByRole("heading", { level: 1, name: "Getting started" }).waitFor();
    const sidebar = page.getByRole("navigation", { name: "Sidebar Navigation" });
    for (const name of ["Resources", "Access and rules", "upload()", "Recipes", "Options"])
      await expect(sidebar.getByRole("link", { name, exact: true }).count()).resolves.toBe(1);
    await page.goto(`${site!.origin}/`);
    await page.screenshot({ path: join(artifacts, "docs-site-home.png"), fullPage: true });
    await page.context().close();
  });

  it('finds "ownedBy" with the local search, and opens the result', async () => {
    const page = await openPage();
    await page.goto(`${site!.origin}/getting-started.html`);
    await page.getByRole("button", { name: "Search" }).click();
    const box = page.getByRole("searchbox");
    await box.fill("ownedBy");
    const results = page.getByRole("listbox").getByRole("option");
    await results.first().waitFor();
    expect(await results.count()).toBeGreaterThan(0);
    const first = (await results.first().textContent()) ?? "";
    expect(first.toLowerCase()).toContain("ownedby");
    await page.screenshot({ path: join(artifacts, "docs-site-search.png") });
    await results.first().getByRole("link").click();
    await page.waitForURL((url) => url.pathname !== "/getting-started.html");
    await expect(page.locator("main").textContent()).resolves.toContain("ownedBy");
    await page.context().close();
  });

  it("has no broken internal link: every page, anchor and asset the pages link to exists", async () => {
    const page = await openPage();
    const origin = site!.origin;
    const queue = [`${origin}/`];
    const seen = new Set(queue);
    const anchors = new Map<string, Set<string>>(); // page → ids linked to on it
    const ids = new Map<string, Set<string>>(); // page → ids it has
    const broken: string[] = [];
    while (queue.length) {
      const url = queue.shift()!;
      // The pages are rendered at build time: their links are there once the HTML is parsed.
      const response = await page.goto(url, { waitUntil: "domcontentloaded" });
      if (response?.status() !== 200) {
        broken.push(`${url}: ${response?.status()}`);
        continue;
      }
      if (!(response.headers()["content-type"] ?? "").startsWith("text/html")) continue;
      if (await page.locator("img").count()) await page.waitForLoadState("load");
      const found = await page.evaluate(() => ({
        links: [...document.querySelectorAll("a[href]")].map((a) => (a as HTMLAnchorElement).href),
        assets: [...document.querySelectorAll("img[src]")].map((img) => (img as HTMLImageElement).src),
        ids: [...document.querySelectorAll("[id]")].map((element) => element.id),
        broken: [...document.querySelectorAll("img")].filter((img) => !img.complete || img.naturalWidth === 0)
          .length,
      }));
      if (found.broken) broken.push(`${url}: ${found.broken} image(s) did not load`);
      ids.set(url, new Set(found.ids));
      for (const link of [...found.links, ...found.assets]) {
        if (!link.startsWith(`${origin}/`)) continue;
        const target = new URL(link);
        const hash = decodeURIComponent(target.hash.slice(1));
        target.hash = "";
        const href = target.href;
        if (hash) anchors.set(href, (anchors.get(href) ?? new Set()).add(hash));
        if (!seen.has(href)) {
          seen.add(href);
          queue.push(href);
        }
      }
    }
    for (const [url, wanted] of anchors)
      for (const hash of wanted)
        if (ids.has(url) && !ids.get(url)!.has(hash)) broken.push(`${url}#${hash}: no such anchor`);
    const pages = [...ids.keys()];
    expect(broken).toEqual([]);
    expect(pages.length).toBeGreaterThan(20);
    // The hand-written pages and the generated API reference are both among them.
    for (const path of ["/getting-started.html", "/plugins/audit.html", "/recipes.html", "/api/"])
      expect(pages, path).toContain(`${origin}${path}`);
    expect(pages.some((url) => url.includes("/api/crudkit-api/functions/crudkit.html"))).toBe(true);
    expect(elsewhere).toEqual([]);
    await page.context().close();
  }, 600_000);

  it("passes axe (no serious or critical violation) on the home page and a concept page, light and dark; screenshots kept", async () => {
    for (const scheme of ["light", "dark"] as const) {
      const page = await openPage(scheme);
      for (const [name, path] of [
        ["home", "/"],
        ["access", "/access.html"],
      ] as const) {
        await page.goto(`${site!.origin}${path}`);
        await page.getByRole("heading", { level: 1 }).first().waitFor();
        const { violations } = await new AxeBuilder({ page }).analyze();
        const bad = violations.filter((v) => v.impact === "serious" || v.impact === "critical");
        expect(
          bad.map((v) => `${v.id}: ${v.nodes.map((n) => n.target).join(", ")}`),
          `${name}, ${scheme}`,
        ).toEqual([]);
        if (name !== "home" || scheme === "dark")
          await page.screenshot({ path: join(artifacts, `docs-site-${name}-${scheme}.png`) });
      }
      await page.context().close();
    }
  }, 120_000);

  it("on a phone: the sidebar opens from the menu and a long page reads without sideways scrolling", async () => {
    const page = await openPage("dark", { width: 390, height: 844 });
    await page.goto(`${site!.origin}/access.html`);
    await page.getByRole("heading", { level: 1, name: "Access and rules" }).waitFor();
    // Text and code wrap or scroll inside their own blocks; the page itself is as wide as the phone.
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await page.screenshot({ path: join(artifacts, "docs-site-access-narrow-dark.png") });
    await page.getByRole("button", { name: /menu/i }).first().click();
    await page.getByRole("link", { name: "Filtering lists" }).first().click();
    await page.getByRole("heading", { level: 1, name: "Filtering lists" }).waitFor();
    await page.context().close();
  }, 60_000);

  it("answers a missing page with the site's 404 page and a way home", async () => {
    const page = await openPage();
    const answer = await page.goto(`${site!.origin}/no-such-page.html`);
    expect(answer?.status()).toBe(404);
    await page.getByRole("heading", { name: /not found/i }).waitFor();
    await page.getByText("No page of the crudkit docs has this address").waitFor();
    await page.screenshot({ path: join(artifacts, "docs-site-404.png") });
    await page.getByRole("link", { name: /home/i }).first().click();
    await page.getByRole("heading", { level: 1 }).first().waitFor();
    expect(new URL(page.url()).pathname).toBe("/");
    await page.context().close();
  }, 60_000);

  it("makes no request to another origin, on any page visited (search and axe included)", () => {
    expect(own).toBeGreaterThan(100);
    expect(elsewhere).toEqual([]);
  });
});
