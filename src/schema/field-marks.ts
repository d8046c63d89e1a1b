// What a field points at (another resource's record, an uploaded file), attached to its schema by
// `references()` and `fileRef()` and read back by the field model.

import { z } from "zod";

/** What happens to the records that point at a deleted record. */
export type OnDelete = "restrict" | "cascade" | "setNull";

export interface ReferenceSpec {
  /** The referenced resource's name. */
  target: string;
  onDelete: OnDelete;
  /** Whether a write must name a record its caller may read (false: any existing record). */
  requireRead: boolean;
  as: string | undefined;
  reverse: { name?: string; limit?: number; sortBy?: string; sortOrder?: "asc" | "desc" };
}

/** A list of ids of another resource's records (`referencesMany()`), kept in a junction table. */
export interface ManySpec {
  /** The referenced resource's name. */
  target: string;
  /** Whether a write must name records its caller may read (false: any existing record). */
  requireRead: boolean;
  /** Ids the list may hold. */
  maxItems: number;
  /** Its reverse relation on the target (`expand=posts` on a tag). */
  reverse: ReferenceSpec["reverse"];
}

export interface FileRefSpec {
  mimeTypes: readonly string[] | undefined;
  maxSize: number | undefined;
}

export interface FieldMarks {
  reference?: ReferenceSpec;
  file?: FileRefSpec;
  many?: ManySpec;
}

// Zod carries a registry's entries to the schemas derived by `.max()`, `.describe()` and the like.
const marks = z.registry<FieldMarks>();

export function markField(schema: z.ZodType, meta: FieldMarks): void {
  marks.add(schema, meta);
}

/** What a schema (not the ones it wraps) was marked with. */
export function marksOf(schema: z.ZodType): FieldMarks | undefined {
  return marks.get(schema);
}
