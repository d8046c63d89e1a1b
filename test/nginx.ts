// A real shared cache for tests: Debian's nginx as a caching reverse proxy on 127.0.0.1, every
// file of it (config, pid, logs, temp and cache directories) in one temporary directory.

import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "./helpers.ts";

export const NGINX = "/usr/sbin/nginx";
export const nginxPresent = existsSync(NGINX);

export interface RunningNginx {
  /** The proxy's address, for example `http://127.0.0.1:40123`. */
  url: string;
  /** Stops nginx (by its pid) and removes its directory. */
  stop(): Promise<void>;
}

/**
 * nginx in front of `upstream` (`http://127.0.0.1:PORT`), caching as aggressively as a careless
 * operator would: every 200 for ten minutes, keyed on the URL alone, so only the origin's own
 * `Cache-Control` (private, no-store) or `Vary` keeps an answer out of it or apart.
 * `X-Cache-Status` tells each answer's fate (MISS, HIT, …).
 */
export async function startNginx({ upstream }: { upstream: string }): Promise<RunningNginx> {
  if (!existsSync(NGINX)) throw new Error(`${NGINX} is missing: install Debian's nginx package.`);
  const dir = mkdtempSync(join(tmpdir(), "crudkit-nginx-"));
  const port = await freePort();
  const at = (name: string) => join(dir, name);
  // Without a path, proxy_pass passes each request's URI on unchanged.
  const origin = upstream.replace(/\/+$/, "");
  // Workers of a root master drop to `nobody`, who cannot write in the 0700 temporary directory;
  // run as anyone else, nginx ignores `user` (with a warning), so it is only written for root.
  const user = process.getuid?.() === 0 ? "user root;" : "";
  writeFileSync(
    at("nginx.conf"),
    `${user}
worker_processes 1;
pid ${at("nginx.pid")};
error_log ${at("error.log")} warn;
events { worker_connections 64; }
http {
  access_log ${at("access.log")};
  client_body_temp_path ${at("body")};
  proxy_temp_path ${at("proxy")};
  fastcgi_temp_path ${at("fastcgi")};
  uwsgi_temp_path ${at("uwsgi")};
  scgi_temp_path ${at("scgi")};
  proxy_cache_path ${at("cache")} levels=1:2 keys_zone=crudkit:1m max_size=10m inactive=10m use_temp_path=off;
  server {
    listen 127.0.0.1:${port};
    location / {
      proxy_pass ${origin};
      proxy_cache crudkit;
      proxy_cache_key $scheme$proxy_host$request_uri;
      proxy_cache_valid 200 10m;
      add_header X-Cache-Status $upstream_cache_status always;
    }
  }
}
`,
  );
  // `-e`: the error log from the start, before the config is read (the built-in one may be a
  // system path the test cannot write).
  const child = spawn(
    NGINX,
    ["-p", dir, "-e", at("error.log"), "-c", at("nginx.conf"), "-g", "daemon off;"],
    {
      stdio: ["ignore", "ignore", "pipe"],
    },
  );
  let stderr = "";
  // Without it, a missing binary (CI without nginx) would crash the test run instead of failing.
  child.once("error", (error) => {
    stderr += `${error.message}\n`;
  });
  child.stderr.on("data", (chunk) => {
    stderr += chunk;
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null && child.pid !== undefined) {
      // SIGTERM to the master: a fast shutdown, its workers and cache processes with it.
      process.kill(child.pid, "SIGTERM");
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  };
  for (let i = 0; i < 200; i++) {
    if (child.exitCode !== null || child.pid === undefined) break;
    if (await answers(port)) return { url: `http://127.0.0.1:${port}`, stop };
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const log = existsSync(at("error.log")) ? readFileSync(at("error.log"), "utf8") : "";
  await stop();
  throw new Error(`nginx did not start on 127.0.0.1:${port}:\n${stderr}${log}`);
}

function answers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}
