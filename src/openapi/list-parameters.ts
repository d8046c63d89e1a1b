// A resource list's query parameters as the server reads them (query/list-query.ts): each with
// the bounds, values and default the parser enforces, taken from the list's own rules (the app's
// defaultLimit and maxLimit, the sortable and filterable fields) rather than restated here.

import type { JsonSchema } from "../core/endpoint.ts";
import type { RelationGraph } from "../resource/relations.ts";
import type { AnyResource } from "../resource/types.ts";
import type { ListLanguage, ListShape } from "./list-language.ts";

type Parameter = Record<string, unknown>;

const query = (name: string, schema: JsonSchema, description: string): Parameter => ({
  name,
  in: "query",
  schema,
  description,
});

/** More expand paths than this are described by their form rather than listed one by one. */
const MAX_LISTED_PATHS = 300;

export function listParameters(
  resource: AnyResource,
  rules: ListShape,
  language: ListLanguage,
  filter: string,
): Parameter[] {
  const sortable = [...rules.sortable];
  const defaultCount = rules.count ?? "exact";
  const parameters = [
    query(
      "page",
      { type: "integer", minimum: 1, maximum: language.maxPage, default: 1 },
      "Page number, from 1. Not with `cursor`.",
    ),
    query(
      "limit",
      { type: "integer", minimum: 1, maximum: rules.maxLimit, default: rules.defaultLimit },
      `Page size. A larger value is clamped to ${rules.maxLimit} (the app's maxLimit).`,
    ),
    ...(sortable.length > 0
      ? [
          query(
            "sortBy",
            { type: "string", enum: sortable },
            `Field to sort by; id breaks ties. Without it: ${resource.timestamps ? "createdAt" : "id"}.`,
          ),
        ]
      : []),
    query(
      "sortOrder",
      { type: "string", enum: ["asc", "desc"], default: "desc" },
      "Sort direction (read case-insensitively).",
    ),
    query(
      "count",
      { type: "string", enum: [...language.countModes], default: defaultCount },
      "How `pagination.total` is counted: `exact` (count(*)), `estimated` (the database's statistics; exact up to 10,000 when filtered) or `none` (total and totalPages are null).",
    ),
    query(
      "cursor",
      { type: "string", minLength: 1 },
      "Keyset paging: a `nextCursor` or `prevCursor` from a page of this list, with the same sortBy and sortOrder. Opaque; not with `page`.",
    ),
    {
      name: "filter",
      in: "query",
      style: "deepObject",
      explode: true,
      schema: { $ref: `#/components/schemas/${filter}` },
      description:
        "filter[field]=value, or filter[field][operator]=value with the operators of the field's type (lists comma-separated: in=a,b).",
    },
  ];
  if (rules.searchable.length > 0)
    parameters.push(
      query(
        "search",
        { type: "string", maxLength: language.maxSearchLength },
        `Case-insensitive match in ${rules.searchable.join(", ")}.`,
      ),
    );
  return parameters;
}

/**
 * `expand=reviews,author.company`: the relation paths `expand` takes, `depth` deep at most, as an array
 * written comma-separated (`style: form`, `explode: false`).
 */
export function expandParameter(
  resource: AnyResource,
  relations: RelationGraph,
  depth: number,
): Parameter | undefined {
  const paths = expandPaths(resource.name, relations, depth);
  if (paths.length === 0) return undefined;
  const top = [...relations.expandable(resource.name).keys()];
  const items =
    paths.length <= MAX_LISTED_PATHS
      ? { type: "string", enum: paths }
      : {
          type: "string",
          pattern: `^[A-Za-z][A-Za-z0-9_]*(\\.[A-Za-z][A-Za-z0-9_]*){0,${depth - 1}}$`,
        };
  return {
    name: "expand",
    in: "query",
    style: "form",
    explode: false,
    schema: { type: "array", items },
    description: `Related records to return under their names, comma-separated, nested with dots up to ${depth} deep: ${top.join(", ")}. A reference expands to its record (null when missing or not readable), a reverse relation to a list, a file to its record.`,
  };
}

/** Every relation path `expand` takes on `resource`, breadth by depth: `author`, `author.company`. */
export function expandPaths(resource: string, relations: RelationGraph, depth: number): string[] {
  const paths: string[] = [];
  const walk = (name: string | undefined, prefix: string, left: number): void => {
    if (name === undefined || left === 0 || paths.length > MAX_LISTED_PATHS) return;
    for (const relation of relations.expandable(name).values()) {
      const path = prefix + relation.name;
      paths.push(path);
      const next =
        relation.kind === "forward" || relation.kind === "list"
          ? relation.target
          : relation.kind === "reverse"
            ? relation.source
            : undefined;
      walk(next, `${path}.`, left - 1);
    }
  };
  walk(resource, "", depth);
  return paths;
}
