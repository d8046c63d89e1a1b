// The plugin contract: a plain object that adds endpoints, tables, hooks and identity.

import type { Kysely } from "kysely";
import type { DialectName } from "../db/dialect.ts";
import type { TableDefinition } from "../db/table-definition.ts";
import type { AnyResourceHooks, HookChain } from "../resource/hooks.ts";
import type { Endpoint } from "./endpoint.ts";
import type { Identify, MaybePromise } from "./identity.ts";

/** What a plugin may read from the app it is added to. */
export interface PluginContext {
  readonly db: Kysely<any>;
  readonly dialect: DialectName;
  /** Every plugin's hooks, for plugins whose own operations (an upload, say) other plugins record. */
  readonly hooks: HookChain;
  readonly basePath: string;
  readonly log: (message: string, error?: unknown) => void;
}

export interface CrudkitPlugin {
  /** Unique name, for example `audit`. */
  id: string;
  /** Endpoints under the app's basePath. */
  endpoints?:
    | readonly Endpoint<any, any, any, any>[]
    | ((app: PluginContext) => readonly Endpoint<any, any, any, any>[]);
  /** Tables the plugin needs; created by the same migration path as resources. */
  tables?: readonly TableDefinition[];
  /** Hooks run for every resource, after the resource's own hooks. */
  hooks?: AnyResourceHooks;
  /** Identifies callers; asked after the app's `identify` option. */
  identify?: Identify;
  /** Runs once, after migrations, before the first request. */
  init?: (app: PluginContext) => MaybePromise<void>;
}
