// How an app's audit entries join the hash chain: plainly (`chain: false`), linked in their write
// (MariaDB, SQLite, and PostgreSQL without the seal function), or queued and sealed after commit
// (PostgreSQL). The writer is made once, on the first entry; the sealer at init.

import type { PluginContext } from "../../core/plugin.ts";
import { type ChainWriter, chainWriter, insertingWriter } from "./audit-chain.ts";
import { type EntrySource, logAndQueue, logOnly } from "./audit-entries.ts";
import { pendingWriter } from "./audit-pending-writer.ts";
import { ensureSealFunction, mayQueue, orderSequence, warnOfStranded } from "./audit-seal-function.ts";
import { type ChainSealer, chainSealer } from "./audit-sealer.ts";

export interface ChainKeeping {
  /** Makes the sealer on PostgreSQL, when the seal function is there or could be made. */
  init(app: PluginContext): Promise<void>;
  /** The writer of this app's entries (its statements compiled once). */
  writer(app: PluginContext): ChainWriter;
  /** Where readers read entries from: the log, and its queue when this app's writes queue them. */
  entries: EntrySource;
  /** Entries committed: seal soon (PostgreSQL). */
  wake(): void;
  /**
   * Seals what committed before the call. With `what`, a failure is logged under that name and
   * the caller goes on with what is sealed; without, it is thrown.
   */
  sealFirst(app: PluginContext, what?: string): Promise<void>;
  close(): Promise<void>;
}

export function chainKeeping(chained: boolean): ChainKeeping {
  let writer: ChainWriter | undefined;
  let sealer: ChainSealer | undefined;
  // The order sequence, when this role may use it: writes then place their entries themselves.
  let order: string | undefined;
  return {
    async init(app) {
      if (app.profile.name !== "postgres") return;
      if (chained && (await ensureSealFunction(app.db, app.log))) {
        const placing = await orderSequence(app.db);
        if (await mayQueue(app.db, app.log, placing !== undefined)) {
          sealer = chainSealer(app.db, app.log, app.profile.errors.unavailable);
          order = placing;
          return;
        }
      }
      await warnOfStranded(app.db, app.log);
    },
    entries: (db) => (sealer ? logAndQueue(db) : logOnly(db)),
    writer(app) {
      writer ??= !chained ? insertingWriter(app) : sealer ? pendingWriter(app, order) : chainWriter(app);
      return writer;
    },
    wake: () => sealer?.wake(),
    async sealFirst(app, what) {
      if (!sealer) return;
      if (what === undefined) return sealer.drain();
      await sealer
        .drain()
        .catch((error) => app.log(`audit(): ${what} could not seal pending entries first`, error));
    },
    close: async () => sealer?.close(),
  };
}
