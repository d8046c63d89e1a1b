// The tail every write runs, written once: the statement and the hooks that must commit with it
// in one transaction, then what may only happen once it committed (files let go of, `after<Op>Commit`,
// `afterWriteCommit`). Creates, updates, deletes, uploads and the changes a delete cascades to all
// run through `runWrite`; each states only its statements and the changes they made.

import { type Kysely, sql } from "kysely";
import { serverApiOn } from "../core/server-api.ts";
import { type HookChain, type HookContext, runAfterCommit, runAll } from "./hooks.ts";
import { extend } from "./runtime.ts";

/** Who is told of a change: a resource's (or a plugin's) hook chain and its log. */
export interface ChangeListener {
  readonly hooks: HookChain;
  readonly log: (message: string, error?: unknown) => void;
}

/** What a change tells its hooks: the record after it, the record before it, or both. */
export interface Told {
  record?: object;
  previous?: object;
}

const INSIDE = { create: "afterCreate", update: "afterUpdate", delete: "afterDelete" } as const;
const COMMITTED = {
  create: "afterCreateCommit",
  update: "afterUpdateCommit",
  delete: "afterDeleteCommit",
} as const;

/**
 * A write under way: its transaction (when it has one), and what is left for after commit. After
 * commit, the changes it made to other resources come first (a delete's cascades: their commit
 * hooks, then their resources' `afterWriteCommit`), then its own change's commit hooks, then its
 * own resource's `afterWriteCommit`: so a cache has forgotten the children before the parent's
 * event goes out. Its own change is the last one made (a delete's cascades run before it).
 */
export class Write {
  private readonly committed: { chain: HookChain | undefined; work: () => Promise<unknown> }[] = [];
  /** One `afterWriteCommit` per resource written. */
  private readonly written = new Map<HookChain, { context: HookContext; log: ChangeListener["log"] }>();
  private own: HookChain | undefined;

  constructor(
    /** The write's transaction, or the database when the write needs none. */
    readonly db: Kysely<any>,
    /** The database outside any transaction: what commit hooks get once it is over. */
    readonly root: Kysely<any>,
  ) {}

  /**
   * The write made a change: its `after<Op>` hooks run now, inside the transaction (throwing rolls
   * everything back); its `after<Op>Commit` and the resource's `afterWriteCommit` run once it committed.
   */
  async changed(listener: ChangeListener, context: HookContext, told: Told): Promise<void> {
    const { hooks, log } = listener;
    const operation = context.operation as keyof typeof INSIDE;
    const inside = hooks[INSIDE[operation]];
    if (inside.length)
      await runAll(inside, extend(context, { db: this.db, api: serverApiOn(context.api, this.db), ...told }));
    // A write made from a hook has the transaction as its context's database; once it committed,
    // its commit hooks get the database itself.
    const after =
      context.db === this.root
        ? context
        : extend(context, { db: this.root, api: serverApiOn(context.api, this.root) });
    const committed = hooks[COMMITTED[operation]];
    if (committed.length)
      this.committed.push({
        chain: hooks,
        work: () => runAfterCommit(committed, extend(after, told), log),
      });
    this.written.set(hooks, { context: after, log });
    this.own = hooks;
  }

  /** Work for after commit, before the commit hooks: files let go of, say. */
  afterCommit(work: () => Promise<unknown>): void {
    this.committed.push({ chain: undefined, work });
  }

  /** @internal Runs what waited for the commit (see the class). */
  async settle(): Promise<void> {
    const own = this.own;
    for (const { chain, work } of this.committed) if (chain !== own) await work();
    for (const [hooks, told] of this.written) if (hooks !== own) await this.toldWritten(hooks, told);
    for (const { chain, work } of this.committed) if (chain === own) await work();
    if (own) await this.toldWritten(own, this.written.get(own)!);
  }

  private async toldWritten(
    hooks: HookChain,
    { context, log }: { context: HookContext; log: ChangeListener["log"] },
  ) {
    if (hooks.afterWriteCommit.length) await runAfterCommit(hooks.afterWriteCommit, context, log);
  }
}

/**
 * Runs `statements` in a transaction when `transaction` says one is needed (`after<Op>` hooks,
 * a locked read, several statements), then what waits for the commit. A lone statement without
 * atomic hooks runs on `db` as it is.
 *
 * @example
 * const record = await runWrite(ctx.db, rt.hooks.afterCreate.length > 0, async (write) => {
 *   const created = await rt.store.insert(write.db, row);
 *   await write.changed(rt, hookContext(ctx, rt, "create", user), { record: created });
 *   return created;
 * });
 */
export async function runWrite<T>(
  db: Kysely<any>,
  transaction: boolean,
  statements: (write: Write) => Promise<T>,
  options?: {
    /** Inside another write, whose failure undoes this one too (a batch's step): no savepoint. */
    wholeOrNothing?: boolean | undefined;
  },
): Promise<T> {
  // A write made inside another's transaction (a hook's `ctx.api`): it joins that transaction,
  // and what waits for a commit waits for that one.
  if (db.isTransaction) {
    const outer = openWrites.get(db);
    const write = new Write(db, outer?.root ?? db);
    // A batch's own step: its failure undoes the whole batch, so it needs no savepoint (two
    // statements a write, a third of a batched create's work). Writes its hooks make keep theirs.
    if (options?.wholeOrNothing && outer) {
      const result = await statements(write);
      outer.afterCommit(() => write.settle());
      return result;
    }
    // Its own savepoint: a nested write that fails (refused after its statement ran, say) leaves
    // nothing behind, even when the hook that made it goes on.
    const savepoint = sql.raw(`ck_nested_${++nestedWrites}`);
    await sql`savepoint ${savepoint}`.execute(db);
    let result: T;
    try {
      result = await statements(write);
    } catch (error) {
      // When the database already undid the whole transaction (InnoDB's deadlock victim), the
      // savepoint went with it: the error that matters is the one that undid it.
      await sql`rollback to savepoint ${savepoint}`.execute(db).catch(() => {});
      throw error;
    }
    await sql`release savepoint ${savepoint}`.execute(db);
    if (outer) outer.afterCommit(() => write.settle());
    else await write.settle();
    return result;
  }
  let write: Write | undefined;
  let open: Kysely<any> | undefined;
  const run = (executor: Kysely<any>) => {
    write = new Write(executor, db);
    if (executor.isTransaction) {
      open = executor;
      openWrites.set(executor, write);
    }
    return statements(write);
  };
  let result: T;
  try {
    result = transaction ? await db.transaction().execute(run) : await run(db);
  } finally {
    if (open) openWrites.delete(open);
  }
  await write!.settle();
  return result;
}

/** Names each nested write's savepoint. */
let nestedWrites = 0;

/** The write each open transaction belongs to, for the writes its hooks make. */
// A Map, emptied as each transaction ends: a WeakMap left its dead keys to the garbage collector's
// slower pass for weak tables, measured at about 30 µs of CPU per audited update under load.
const openWrites = new Map<Kysely<any>, Write>();
