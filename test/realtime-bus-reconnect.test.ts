// postgresBus() listens on a connection of its own. When the server ends that connection (a
// restart, an operator), the bus listens again on a new one, and events flow between instances
// again (issue 43: no store or bus keeps a broken connection).

import { randomBytes } from "node:crypto";
import { postgresBus } from "crudkit-api";
import pg from "pg";
import { expect, it } from "vitest";
import { postgresErrors } from "../src/db/engines/postgres/errors.ts";
import type { ChangeEvent } from "../src/realtime/bus.ts";
import { DIALECTS } from "./dialects.ts";

const postgres = DIALECTS.find((d) => d.name === "postgres")!;

(postgres.missing && !process.env.CI ? it.skip : it)(
  "postgresBus: its connection ended by the server, it listens again and delivers",
  async () => {
    const url = process.env.CRUDKIT_TEST_POSTGRES_URL!;
    const channel = `ck_${randomBytes(4).toString("hex")}`;
    const received: ChangeEvent[] = [];
    const failures: string[] = [];
    const bus = postgresBus({ url, channel, log: (message) => failures.push(message) });
    await bus.start((event) => received.push(event));
    const event = (id: string): ChangeEvent => ({
      id,
      resource: "product",
      type: "create",
      record: { id },
      recordId: id,
    });
    const admin = new pg.Client(url);
    await admin.connect();
    try {
      // Its last statement names the channel: that finds the bus's own connection among others.
      const { rows } = await admin.query(
        "select pg_terminate_backend(pid) as ended from pg_stat_activity where query = $1",
        [`listen ${channel}`],
      );
      expect(rows).toHaveLength(1);
      // Published while it listens again: refused as the database being away, until it is back.
      let published = false;
      for (let i = 0; i < 100 && !published; i++) {
        published = await bus.publish(event("after")).then(
          () => true,
          (error: unknown) => {
            expect(postgresErrors.unavailable(error), String(error)).toBe(true);
            return new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 50));
          },
        );
      }
      expect(published).toBe(true);
      for (let i = 0; i < 50 && received.length < 1; i++) await new Promise((r) => setTimeout(r, 20));
      expect(received.map((e) => e.id)).toEqual(["after"]);
      expect(failures).toContain("crudkit: the realtime PostgreSQL connection failed");
    } finally {
      await admin.end();
      await bus.close();
    }
  },
  20_000,
);
