// Fields that point at other records: `references(...)` for a record of a resource, `fileRef(...)`
// for an uploaded file. Both are string schemas (the id) that carry what they point at, read by the
// field model at startup; the types carry it too, for `expand`.

import { z } from "zod";
import { checkOptionKeys, optionKeys } from "../core/option-keys.ts";
import { type FileRefSpec, markField, type OnDelete, type ReferenceSpec } from "../schema/field-marks.ts";

export type { OnDelete };

/** How the records pointing at one record are expanded from it (`expand=comments`). */
export interface ReverseOptions<Name extends string | undefined = string> {
  /** @default the plural of the referencing resource */
  name?: Name;
  /** Records expanded per parent. @default 10 */
  limit?: number;
  /** @default "createdAt" (or "id" without timestamps) */
  sortBy?: string;
  /** @default "desc" */
  sortOrder?: "asc" | "desc";
}

export interface ReferenceOptions<As extends string | undefined, Reverse extends string | undefined> {
  /**
   * What deleting the referenced record does: refuse while this record points at it (409),
   * delete this record too, or set this field to null (the field must then accept null).
   * @default "restrict"
   */
  onDelete?: OnDelete;
  /**
   * Whether a create or update may only name a record its caller may read under the target's
   * `read` rule (an unreadable id gets the same 400 as a missing one). `false` accepts any existing
   * record: the caller learns which ids exist, and with `onDelete: "restrict"` she can keep the
   * target's owner from deleting it. Use it only where pointing at records you cannot read is the
   * model (assigning a task to a user you cannot list).
   * @default true
   */
  requireRead?: boolean;
  /** The name this field expands under. @default the field's name without its "Id" ending */
  as?: As;
  /** The reverse relation on the referenced resource: a name, or its name, limit and order. */
  // `ReverseOptions<Reverse>`, not of `NonNullable<Reverse>`: TypeScript infers a name given in
  // the object (`{ name: "edited", limit: 3 }`) only through a plain type parameter.
  reverse?: Reverse | ReverseOptions<Reverse>;
}

export interface FileRefOptions {
  /** Types the file may have, such as `image/*` or `application/pdf`. @default any */
  mimeTypes?: readonly string[];
  /** Largest file size in bytes. @default no limit beyond the upload plugin's */
  maxSize?: number;
}

/**
 * Type-level marks, never present at runtime: what the id points at. Their keys are strings, not
 * unique symbols, so that a client's own install of crudkit-api (even another version) reads the
 * marks of the server's schemas: two copies of a `unique symbol` are two different symbols. The
 * "~" prefix sorts them after a schema's own members, as Zod's "~standard".
 */
export interface ReferenceBrand<Mark> {
  readonly "~crudkitReference"?: Mark;
}
export interface FileBrand {
  readonly "~crudkitFile"?: true;
}

export type ReferenceSchema<
  Target extends string,
  As extends string | undefined,
  Reverse extends string | undefined,
> = z.ZodString & ReferenceBrand<{ target: Target; as: As; reverse: Reverse }>;

export type FileRefSchema = z.ZodString & FileBrand;

// A schema without the mark matches the optional key too, inferring `unknown`: that is no mark.
export type ReferenceMark<S> =
  S extends ReferenceBrand<infer M> ? (unknown extends M ? never : NonNullable<M>) : never;
export type IsFileRef<S> = "~crudkitFile" extends keyof S ? true : false;

const ID = z.string().min(1).max(255);

const REFERENCE_OPTION_KEYS = optionKeys<ReferenceOptions<string | undefined, string | undefined>>()(
  "onDelete requireRead as reverse",
);

/**
 * A field that holds the id of a record of another resource (or of its own). The migration
 * creates a foreign key; a create or update naming a record that is missing, or that its caller
 * may not read, answers 400, and deleting a referenced record follows `onDelete`. `expand=<name>` returns the record beside the id.
 *
 * @example
 * const post = createResource({
 *   name: "post",
 *   schema: withId({
 *     title: z.string(),
 *     authorId: references("user", { onDelete: "cascade" }),        // expand=author
 *     editorId: references("user", { onDelete: "setNull", reverse: "edited" }).nullable(),
 *   }),
 * });
 */
export function references<
  const Target extends string,
  const As extends string | undefined = undefined,
  const Reverse extends string | undefined = undefined,
>(
  target: Target | { readonly name: Target },
  options: ReferenceOptions<As, Reverse> = {},
): ReferenceSchema<Target, As, Reverse> {
  checkOptionKeys(options, REFERENCE_OPTION_KEYS, "references()");
  const reverse = reverseOptions(options.reverse);
  const spec: ReferenceSpec = {
    target: typeof target === "string" ? target : target.name,
    onDelete: options.onDelete ?? "restrict",
    requireRead: options.requireRead ?? true,
    as: options.as,
    reverse,
  };
  const schema = ID.clone();
  markField(schema, { reference: spec });
  return schema as ReferenceSchema<Target, As, Reverse>;
}

export interface ReferencesManyOptions<Reverse extends string | undefined = string | undefined> {
  /** Ids the list may hold; more is a 400 naming the field. @default 100 */
  maxItems?: number;
  /** As for `references()`: every id must name a record the caller may read. @default true */
  requireRead?: boolean;
  /**
   * The reverse relation on the listed resource (`expand=posts` on a tag: the records whose list
   * names it): a name, or its name, limit and order.
   */
  reverse?: Reverse | ReverseOptions<Reverse>;
}

/** Type-level mark of a list of ids: what they point at, and its reverse relation's name. */
export interface ManyBrand<Mark> {
  readonly "~crudkitMany"?: Mark;
}
export type ReferencesManySchema<
  Target extends string,
  Reverse extends string | undefined = undefined,
> = z.ZodArray<z.ZodString> & ManyBrand<{ target: Target; reverse: Reverse }>;

const MANY_OPTION_KEYS = optionKeys<ReferencesManyOptions>()("maxItems requireRead reverse");

/**
 * A field that lists ids of another resource's records, in the order given (many-to-many). The
 * list is kept in a junction table the migrations create (`<resource>_<field>`: owner, target,
 * position), with foreign keys that cascade both ways: deleting a target takes it out of every
 * list. A write sets the whole list in its transaction; every id must name a record the caller
 * may read (the same 400 as a missing id), none twice, at most `maxItems`.
 *
 * @example
 * const post = createResource({
 *   name: "post",
 *   schema: withId({ title: z.string(), tagIds: referencesMany("tag", { maxItems: 20 }) }),
 *   access: { read: true, list: true, create: true, update: true },
 * });
 * // GET /posts?expand=tags, and on a tag GET /tags/:id?expand=posts (name it with `reverse`)
 */
export function referencesMany<
  const Target extends string,
  const Reverse extends string | undefined = undefined,
>(
  target: Target | { readonly name: Target },
  options: ReferencesManyOptions<Reverse> = {},
): ReferencesManySchema<Target, Reverse> {
  checkOptionKeys(options, MANY_OPTION_KEYS, "referencesMany()");
  const maxItems = options.maxItems ?? 100;
  if (!Number.isInteger(maxItems) || maxItems < 1 || maxItems > 10_000)
    throw new Error("referencesMany(): maxItems must be a whole number from 1 to 10000.");
  const schema = z
    .array(ID)
    .max(maxItems)
    .refine((ids) => new Set(ids).size === ids.length, { message: "The same id appears twice." });
  markField(schema, {
    many: {
      target: typeof target === "string" ? target : target.name,
      requireRead: options.requireRead ?? true,
      maxItems,
      reverse: reverseOptions(options.reverse),
    },
  });
  return schema as unknown as ReferencesManySchema<Target, Reverse>;
}

/** `reverse: "edited"` or `reverse: { name, limit, … }`, as options of their own (a copy). */
function reverseOptions(
  given: string | ReverseOptions<string | undefined> | undefined,
): ReverseOptions<string | undefined> {
  return typeof given === "string" ? { name: given } : Object.assign({}, given);
}

const FILE_REF_OPTION_KEYS = optionKeys<FileRefOptions>()("mimeTypes maxSize");

/**
 * A field that holds the id of an uploaded file (the upload plugin's). Setting it checks that the
 * file exists, that the caller may read it and that its type fits, and makes this record the
 * file's owner: deleting the record, or replacing the file, deletes the file.
 *
 * @example
 * schema: withId({ name: z.string(), image: fileRef({ mimeTypes: ["image/*"] }).optional() })
 */
export function fileRef(options: FileRefOptions = {}): FileRefSchema {
  checkOptionKeys(options, FILE_REF_OPTION_KEYS, "fileRef()");
  const schema = ID.clone();
  const file: FileRefSpec = { mimeTypes: options.mimeTypes, maxSize: options.maxSize };
  markField(schema, { file });
  return schema as FileRefSchema;
}

/** An uploaded file as `expand` gives it: the upload plugin's file record. */
export interface FileRecord {
  id: string;
  /** The stored name. */
  filename: string;
  /** The name as uploaded. */
  originalName: string;
  mimeType: string;
  size: number;
  url: string | null;
  uploadedBy: string | null;
  /** ISO 8601. */
  uploadedAt: string;
  metadata: Record<string, unknown> | null;
}

/** Every key of a FileRecord, in its order: its OpenAPI schema's, and what webhooks may send of it. */
export const FILE_RECORD_FIELDS = [
  "id",
  "filename",
  "originalName",
  "mimeType",
  "size",
  "url",
  "uploadedBy",
  "uploadedAt",
  "metadata",
] as const satisfies readonly (keyof FileRecord)[];
