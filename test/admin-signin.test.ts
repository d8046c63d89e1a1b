// The admin page's sign-in with the other credentials an app takes: a bearer JWT (the jwt()
// plugin) and the browser's own session cookie (an app's identify reading it, as better-auth's
// does); the navigation of an app with many resources, grouped and searchable; every input kind; a
// stream told to reset; and a history whose redacted values stay redacted, even when restored.

import { createResource, crudkit, databaseFromUrl, withId } from "crudkit-api";
import { serve } from "crudkit-api/node";
import { audit, jwt } from "crudkit-api/plugins";
import { SignJWT } from "jose";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { chromiumPresent, launchChromium, streamOpened } from "./chromium.ts";

const SECRET = "admin-signin-test-secret-of-enough-length";
const suite = chromiumPresent || process.env.CI ? describe : describe.skip;
const signedIn = ({ user }: { user: unknown }) => user !== null;
const things = Array.from({ length: 10 }, (_, i) =>
  createResource({
    name: `thing${i}`,
    schema: withId({ title: z.string().max(50) }),
    access: { list: signedIn, read: signedIn, create: signedIn },
  }),
);
// Every input kind: a switch, a JSON editor that validates, a date and time.
const gadget = createResource({
  name: "gadget",
  schema: withId({
    label: z.string().max(40),
    active: z.boolean(),
    specs: z.record(z.string(), z.unknown()).optional(),
    madeAt: z.date().optional(),
  }),
  access: { list: signedIn, read: signedIn, create: signedIn, update: signedIn },
});
const app = crudkit({
  database: databaseFromUrl("file::memory:"),
  autoMigrate: true,
  resources: [...things, gadget],
  admin: true,
  // A short history: a stream that was away for more than 5 changes is told to start over (reset).
  realtime: { history: 5 },
  // The session a host's sign-in set: a cookie the browser sends by itself.
  identify: (request) =>
    /(?:^|;\s*)sid=good(?:;|$)/.test(request.headers.get("cookie") ?? "") ? { id: "cookie-user" } : null,
  plugins: [jwt({ secret: SECRET }), audit({ access: { read: signedIn }, redact: ["gadget.label"] })],
});

let browser: Browser | undefined;
let origin = "";
let close = async () => {};
beforeAll(async () => {
  await app.ready;
  const running = await serve(app, { port: 0, hostname: "127.0.0.1" });
  origin = running.url;
  close = () => running.close();
  if (chromiumPresent || process.env.CI) browser = await launchChromium();
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await close();
  await app.close();
});

suite("admin sign-in and navigation in headless Chromium", () => {
  async function sessionPage() {
    const context = await browser!.newContext({ timezoneId: "UTC" });
    await context.addCookies([{ name: "sid", value: "good", url: origin }]);
    const page = await context.newPage();
    page.setDefaultTimeout(5000);
    await page.goto(`${origin}/api/admin`);
    await page.getByLabel("Credential").selectOption("session");
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("navigation", { name: "Resources" }).waitFor();
    return { context, page };
  }
  const user = { headers: { cookie: "sid=good" } };

  it("a bearer JWT signs in; a forged one shows the 401's message", async () => {
    const token = await new SignJWT({ sub: "jwt-user" })
      .setProtectedHeader({ alg: "HS256" })
      .setExpirationTime("1h")
      .sign(new TextEncoder().encode(SECRET));
    const context = await browser!.newContext();
    const page = await context.newPage();
    page.setDefaultTimeout(5000);
    await page.goto(`${origin}/api/admin`);
    await page.getByLabel("Credential").selectOption("bearer");
    await page.getByLabel("Key or token").fill(`${token.slice(0, -4)}AAAA`);
    await page.getByRole("button", { name: "Sign in" }).click();
    await expect.poll(() => page.getByRole("alert").textContent()).toMatch(/token/i);
    await page.getByLabel("Credential").selectOption("bearer");
    await page.getByLabel("Key or token").fill(token);
    await page.getByRole("button", { name: "Sign in" }).click();
    const nav = page.getByRole("navigation", { name: "Resources" });
    await nav.waitFor();
    expect(await nav.getByRole("list", { name: "Data" }).getByRole("link").count()).toBe(11);
    // Many resources: a search narrows the list.
    await nav.getByLabel("Find a resource").fill("thing3");
    await expect.poll(() => nav.getByRole("link").allTextContents()).toEqual(["thing3s"]);
    await nav.getByRole("link", { name: "thing3s" }).click();
    await page.getByRole("heading", { name: "thing3s" }).waitFor();
    await context.close();
  });

  it("a switch for a boolean, a JSON editor that refuses what does not parse, a date and time", async () => {
    const { context, page } = await sessionPage();
    await page.goto(`${origin}/api/admin#/gadget/`);
    await page.getByLabel("label *").fill("Lamp");
    await page.getByRole("switch", { name: "active" }).check();
    const specs = page.getByLabel("specs");
    await specs.fill("{bad");
    expect(await specs.getAttribute("aria-invalid")).toBe("true");
    let posted = 0;
    page.on("request", (r) => {
      if (r.method() === "POST") posted++;
    });
    await page.getByRole("button", { name: "Create" }).click();
    await page.waitForTimeout(200);
    expect(posted).toBe(0);
    await specs.fill('{"watts": 40}');
    expect(await specs.getAttribute("aria-invalid")).toBeNull();
    await page.getByLabel("madeAt").fill("2026-01-02T03:04:05");
    await page.getByRole("button", { name: "Create" }).click();
    await page.getByRole("heading", { name: /^gadget / }).waitFor();
    const id = decodeURIComponent(page.url().split("/").at(-1)!);
    const stored = await app.api.readGadget({ params: { id }, overrideAccess: true });
    expect([stored.active, stored.specs, new Date(stored.madeAt!).toISOString()]).toEqual([
      true,
      { watts: 40 },
      "2026-01-02T03:04:05.000Z",
    ]);
    // Someone else moves the date meanwhile: her save meets a conflict that shows both dates in
    // full local time, the instants in the markup.
    await app.api.updateGadget({
      params: { id },
      body: { madeAt: "2027-03-04T05:06:07.000Z" },
      overrideAccess: true,
    });
    await page.getByLabel(/^label/).fill("Desk lamp");
    await page.getByRole("button", { name: "Save" }).click();
    const madeAt = page
      .getByRole("region", { name: "Changed by someone else" })
      .locator("tbody tr", { has: page.getByRole("rowheader", { name: "madeAt" }) });
    await madeAt.waitFor();
    const versions = await madeAt
      .locator("time")
      .evaluateAll((times) =>
        times.map((time) => [time.getAttribute("datetime"), time.textContent] as const),
      );
    expect(versions.map(([instant]) => instant)).toEqual([
      "2026-01-02T03:04:05.000Z",
      "2027-03-04T05:06:07.000Z",
    ]);
    // The browser runs in UTC here (its context's timezoneId), in English: the local times are
    // these (spaces compared as spaces: ICU puts a narrow one before AM).
    const plain = (text: string | null) => text?.replace(/\s/g, " ");
    expect(versions.map(([, text]) => plain(text))).toEqual(
      ["2026-01-02T03:04:05.000Z", "2027-03-04T05:06:07.000Z"].map((instant) =>
        plain(new Date(instant).toLocaleString("en-US", { timeZone: "UTC" })),
      ),
    );
    await context.close();
  });

  it("the browser's session cookie signs in; without it she may list nothing", async () => {
    const { context, page } = await sessionPage();
    await page
      .getByRole("navigation", { name: "Resources" })
      .getByRole("link", { name: "thing0s" })
      .waitFor();
    await context.clearCookies();
    await page.reload();
    await page.getByText("Your rules let you list no resource.").waitFor();
    await context.close();
  });

  it("a stream away for longer than the server's history is told to reset, and the list reloads", async () => {
    const { context, page } = await sessionPage();
    const listening = streamOpened(page);
    await page.goto(`${origin}/api/admin#/gadget`);
    await page.getByRole("heading", { name: "gadgets" }).waitFor();
    await listening;
    await app.api.createGadget({ body: { label: "First", active: true }, ...user });
    await page.getByRole("button", { name: /1 new row/ }).waitFor();
    // Away (the server ended the stream) while more changes than it keeps happen.
    await app.endStreams();
    for (let n = 0; n < 8; n++)
      await app.api.createGadget({ body: { label: `Burst ${n}`, active: true }, ...user });
    // Back: told to reset, the list reads itself again (no "new rows" to count).
    await expect.poll(() => page.getByRole("grid").textContent(), { timeout: 5000 }).toContain("Burst 7");
    expect(await page.getByRole("button", { name: /new row/ }).count()).toBe(0);
    await context.close();
  });

  it("history keeps a redacted value redacted, and restoring a version never writes it back", async () => {
    const gadget = await app.api.createGadget({ body: { label: "Secret A", active: true }, ...user });
    await app.api.updateGadget({
      params: { id: gadget.id },
      body: { label: "Secret B", active: false },
      ...user,
    });
    const { context, page } = await sessionPage();
    await page.goto(`${origin}/api/admin#/gadget/${gadget.id}`);
    const history = page.getByRole("region", { name: "History" });
    await expect.poll(() => history.locator("> ol > li").count()).toBe(2);
    const text = (await history.textContent())!;
    expect(text).toContain("active: Yes → No");
    expect(text).not.toMatch(/Secret A/);
    await history.getByRole("button", { name: "Restore this version" }).last().click();
    await page.getByRole("status").filter({ hasText: "Saved." }).waitFor();
    const stored = await app.api.readGadget({ params: { id: gadget.id }, overrideAccess: true });
    expect([stored.label, stored.active]).toEqual(["Secret B", true]);
    await context.close();
  });
});
