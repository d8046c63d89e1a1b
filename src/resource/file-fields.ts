// A resource's `fileRef` fields in its writes: a create claims the files it names, an update
// claims new ones and releases the ones it replaces, a delete releases them all, each in the
// write's transaction. The released files' bytes go after the commit.

import type { Kysely } from "kysely";
import type { EndpointContext } from "../core/endpoint.ts";
import type { OwnedFiles } from "../core/plugin.ts";
import type { Field } from "../schema/field-model.ts";
import type { AnyResource } from "./types.ts";

type Row = Record<string, unknown>;

export interface FileFields {
  readonly files: OwnedFiles;
  readonly fields: readonly Field[];
}

/** The resource's file fields and who keeps their files, or undefined when it has none. */
export function fileFieldsOf(resource: AnyResource, files: OwnedFiles | undefined): FileFields | undefined {
  const fields = resource.fields.filter((f) => f.file);
  return fields.length > 0 && files ? { files, fields } : undefined;
}

/** Whether a change names a file field (an update must then read the record before it). */
export function touchesFiles(owned: FileFields | undefined, changes: Row): boolean {
  return owned?.fields.some((f) => f.name in changes) === true;
}

/**
 * In the write's transaction: claims the files `after` holds that `before` did not, releases the
 * ones `before` held that `after` does not. Returns the released ids, to collect after commit.
 */
export async function syncFiles(
  owned: FileFields,
  db: Kysely<any>,
  ctx: EndpointContext,
  resource: string,
  before: Row | undefined,
  after: Row | undefined,
): Promise<string[]> {
  const released: string[] = [];
  const id = String((after ?? before)!.id);
  for (const field of owned.fields) {
    const previous = before?.[field.name];
    const next = after?.[field.name];
    if (previous === next) continue;
    const owner = { resource, id, field: field.name };
    if (typeof next === "string") await owned.files.claim(db, ctx, next, owner, field.file!);
    if (typeof previous === "string") {
      await owned.files.release(db, previous, owner);
      released.push(previous);
    }
  }
  return released;
}
