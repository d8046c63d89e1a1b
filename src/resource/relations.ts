// The relations between an app's resources, read once from their `references()` and `fileRef()`
// fields: what each resource can expand, and which records point at it (for onDelete).

import { ConfigError } from "../core/errors.ts";
import type { OnDelete } from "../schema/field-marks.ts";
import type { Field } from "../schema/field-model.ts";
import { junctionName } from "./many-fields.ts";
import type { AnyResource } from "./types.ts";

/** `post.authorId → user`: expands as `author`. */
export interface ForwardRelation {
  kind: "forward";
  name: string;
  /** The field holding the id. */
  field: string;
  target: string;
  onDelete: OnDelete;
}

/**
 * `user ← post.authorId`: expands as `posts`, a few records per parent, in an order. Also
 * `tag ← post.tagIds` (a list of ids), `through` its junction table.
 */
export interface ReverseRelation {
  kind: "reverse";
  name: string;
  /** The referencing resource, and its field holding the parent's id (or a list of them). */
  source: string;
  field: string;
  /** For a list of ids: the junction table holding it (owner, target). */
  through?: string;
  onDelete: OnDelete;
  limit: number;
  sortBy: string;
  sortOrder: "asc" | "desc";
}

/** `product.image → uploaded file`: expands as `image` (in place) or `avatar` for `avatarId`. */
export interface FileRelation {
  kind: "file";
  name: string;
  field: string;
}

/** `post.tagIds → tag[]` (`referencesMany`): expands as `tags`, the records in the list's order. */
export interface ListRelation {
  kind: "list";
  name: string;
  /** The field holding the list of ids. */
  field: string;
  target: string;
}

export type Relation = ForwardRelation | ReverseRelation | FileRelation | ListRelation;

export interface RelationGraph {
  /** What `expand` may name on a resource, by name. */
  expandable(resource: string): ReadonlyMap<string, Relation>;
  /** The references that point at a resource: what deleting one of its records must handle. */
  dependents(resource: string): readonly ReverseRelation[];
  /** The lists of ids (`referencesMany`) that may name a resource's records: deleting one leaves them. */
  listedBy(resource: string): readonly { source: string; field: string }[];
  /** Whether any resource has a `fileRef` field. */
  readonly ownsFiles: boolean;
  /** A resource of the app, by name. */
  resource(name: string): AnyResource | undefined;
}

const DEFAULT_REVERSE_LIMIT = 10;
const MAX_REVERSE_LIMIT = 100;
const NAME = /^[A-Za-z][A-Za-z0-9_]{0,62}$/;

/** The name a reference expands under: `as`, or the field's name without its "Id" ending. */
export function expansionName(field: Field): string {
  // A list of ids: `tagIds` expands as `tags`.
  if (field.many)
    return field.name.length > 3 && field.name.endsWith("Ids") ? `${field.name.slice(0, -3)}s` : field.name;
  const given = field.reference?.as;
  if (given !== undefined) return given;
  return field.name.length > 2 && field.name.endsWith("Id") ? field.name.slice(0, -2) : field.name;
}

export function readRelations(resources: readonly AnyResource[]): RelationGraph {
  const byName = new Map(resources.map((r) => [r.name, r]));
  const expandable = new Map<string, Map<string, Relation>>(resources.map((r) => [r.name, new Map()]));
  const dependents = new Map<string, ReverseRelation[]>(resources.map((r) => [r.name, []]));
  let ownsFiles = false;
  const add = (resource: string, relation: Relation, origin: string) => {
    const own = expandable.get(resource)!;
    const taken = own.get(relation.name);
    const clash = taken
      ? `the relation from ${describe(resource, taken)}`
      : [...byName.get(resource)!.fields, ...byName.get(resource)!.many].some(
            (f) => f.name === relation.name && f.name !== fieldOf(relation),
          )
        ? `the field "${resource}.${relation.name}"`
        : undefined;
    if (clash)
      throw new ConfigError(
        `${origin} expands as "${relation.name}" on "${resource}", the name of ${clash}; give it another with \`as\` or \`reverse\`.`,
      );
    if (!NAME.test(relation.name))
      throw new ConfigError(`${origin}: "${relation.name}" is not a valid relation name.`);
    own.set(relation.name, relation);
  };

  for (const resource of resources) {
    for (const field of resource.fields) {
      const origin = `"${resource.name}.${field.name}"`;
      if (field.file) {
        ownsFiles = true;
        add(resource.name, { kind: "file", name: expansionName(field), field: field.name }, origin);
        continue;
      }
      const spec = field.reference;
      if (!spec) continue;
      const target = byName.get(spec.target);
      if (!target)
        throw new ConfigError(`${origin} references "${spec.target}", which is not a resource of this app.`);
      if (spec.onDelete === "setNull" && !field.nullable && !field.optional)
        throw new ConfigError(
          `${origin} is set to null when its ${spec.target} is deleted, so its schema must accept null (.nullable()).`,
        );
      add(
        resource.name,
        {
          kind: "forward",
          name: expansionName(field),
          field: field.name,
          target: spec.target,
          onDelete: spec.onDelete,
        },
        origin,
      );
      const reverse = reverseOf(resource, field.name, spec.reverse, origin, spec.onDelete);
      add(target.name, reverse, `The reverse of ${origin}`);
      dependents.get(target.name)!.push(reverse);
    }
  }
  const listedBy = new Map<string, { source: string; field: string }[]>();
  for (const resource of resources)
    for (const field of resource.many) {
      const origin = `"${resource.name}.${field.name}"`;
      // Its junction table's name: no resource's, and short enough for its index names to stay
      // whole (so two tables never share one).
      const junction = junctionName(resource, field);
      if (byName.has(junction) || junction.length > 45)
        throw new ConfigError(
          `${origin} keeps its list in a table named "${junction}", which ${byName.has(junction) ? "is a resource's name" : "is longer than 45 characters"}: rename the field.`,
        );
      if (!byName.has(field.many!.target))
        throw new ConfigError(
          `${origin} lists ids of "${field.many!.target}", which is not a resource of this app.`,
        );
      add(
        resource.name,
        { kind: "list", name: expansionName(field), field: field.name, target: field.many!.target },
        origin,
      );
      // `expand=posts` on a tag; not a dependent: deleting a tag takes it out of the lists (unlist).
      // Under its default name only while that name is free (a reference from the same resource
      // has it, or a second list): a name given with `reverse` must be free.
      const reverse = reverseOf(resource, field.name, field.many!.reverse, origin, "cascade");
      const target = byName.get(field.many!.target)!;
      const taken =
        expandable.get(target.name)!.has(reverse.name) ||
        [...target.fields, ...target.many].some((f) => f.name === reverse.name);
      if (field.many!.reverse.name !== undefined || !taken)
        add(target.name, { ...reverse, through: junction }, `The reverse of ${origin}`);
      const listing = listedBy.get(field.many!.target) ?? [];
      listing.push({ source: resource.name, field: field.name });
      listedBy.set(field.many!.target, listing);
    }
  return {
    expandable: (resource) => expandable.get(resource) ?? new Map(),
    dependents: (resource) => dependents.get(resource) ?? [],
    listedBy: (resource) => listedBy.get(resource) ?? [],
    ownsFiles,
    resource: (name) => byName.get(name),
  };
}

function reverseOf(
  source: AnyResource,
  field: string,
  options: NonNullable<Field["reference"]>["reverse"],
  origin: string,
  onDelete: OnDelete,
): ReverseRelation {
  const limit = options.limit ?? DEFAULT_REVERSE_LIMIT;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_REVERSE_LIMIT)
    throw new ConfigError(`${origin}: reverse.limit must be a whole number from 1 to ${MAX_REVERSE_LIMIT}.`);
  const sortBy = options.sortBy ?? (source.timestamps ? "createdAt" : "id");
  const sortField = source.fields.find((f) => f.name === sortBy);
  if (!sortField || sortField.kind === "json")
    throw new ConfigError(
      `${origin}: reverse.sortBy "${sortBy}" is not a sortable field of "${source.name}".`,
    );
  return {
    kind: "reverse",
    name: options.name ?? source.plural,
    source: source.name,
    field,
    onDelete,
    limit,
    sortBy,
    sortOrder: options.sortOrder ?? "desc",
  };
}

function fieldOf(relation: Relation): string | undefined {
  return relation.kind === "reverse" ? undefined : relation.field;
}

function describe(resource: string, relation: Relation): string {
  return relation.kind === "reverse"
    ? `"${relation.source}.${relation.field}"`
    : `"${resource}.${relation.field}"`;
}
