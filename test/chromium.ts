// Headless Chromium for the browser tests: where it is, whether it is there, and how it starts.

import { existsSync } from "node:fs";
import { type Browser, chromium, type Page } from "playwright-core";

export const CHROMIUM = "/usr/bin/chromium";
export const chromiumPresent = existsSync(CHROMIUM);

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
}

/** Resolves once `page` has a live stream (`…/events`) open: changes made after it are heard. */
export function streamOpened(page: Page): Promise<unknown> {
  return page.waitForResponse((r) => r.url().includes("/events") && r.status() === 200, { timeout: 10_000 });
}
