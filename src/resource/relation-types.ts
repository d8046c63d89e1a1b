// Type-level relations: what `expand` may name on a resource (its references, the references that
// point at it from the app's other resources, its file fields), and what a record looks like once
// expanded. `All` is the union of the app's resources: reverse relations are only known there.

import type { z } from "zod";
import type { FileRecord, IsFileRef, ManyBrand, ReferenceMark } from "./references.ts";
import type { AnyResource, RecordOf, Simplify } from "./types.ts";

type Shape<R extends AnyResource> = R["schema"]["shape"];

/** The schema inside `.optional()`, `.nullable()` and `.default()`. */
type Unwrapped<S> =
  S extends z.ZodOptional<infer I>
    ? Unwrapped<I>
    : S extends z.ZodNullable<infer I>
      ? Unwrapped<I>
      : S extends z.ZodDefault<infer I>
        ? Unwrapped<I>
        : S;

type MarkOf<S> = ReferenceMark<Unwrapped<S>>;

/** `authorId` → `author`; a name without the ending stays as it is. */
type WithoutId<K extends string> = K extends `${infer Base}Id` ? (Base extends "" ? K : Base) : K;

type ForwardName<K extends string, M> = M extends { as: infer As }
  ? As extends string
    ? As
    : WithoutId<K>
  : never;

type UnionToIntersection<U> = (U extends unknown ? (u: U) => void : never) extends (i: infer I) => void
  ? I
  : never;

/** One record of `Target` (null when missing or not readable by the caller). */
interface One<Target> {
  one: Target;
}
/** Records of `Source` pointing at this one. */
interface Many<Source> {
  many: Source;
}
interface File {
  file: true;
}

type Forward<R extends AnyResource, All extends AnyResource> = {
  [K in keyof Shape<R> & string as ForwardName<K, MarkOf<Shape<R>[K]>>]: One<
    MarkOf<Shape<R>[K]> extends { target: infer T } ? Lookup<ByName<All>, T> : never
  >;
};

/**
 * The reverse relations `C`'s references give their targets, one entry per reference field:
 * `{ target: "post", relation: { comments: Many<Comment> } }`. Made once per resource, whichever
 * resource asks: a lookup per (resource, target) pair made the checker's work grow with the
 * square of the app's resources (issue 38).
 */
type ReverseEntries<C extends AnyResource> = {
  [K in keyof Shape<C> & string]:
    | ReverseEntry<C, MarkOf<Shape<C>[K]>>
    | ReverseEntry<C, ListMark<Shape<C>[K]>>;
}[keyof Shape<C> & string];

type ReverseEntry<C extends AnyResource, Mark> = [Mark] extends [never]
  ? never
  : Mark extends { target: infer Target extends string; reverse: infer Reverse }
    ? { target: Target; relation: { [N in ReverseName<C, Reverse>]: Many<C> } }
    : never;

/**
 * The name a reverse relation goes by: the one given, else the referencing resource's plural (also
 * for `reverse: { limit: 5 }`, which infers `string | undefined`). A name only known as `string`
 * gives no typed relation, rather than one that would accept any name.
 */
type ReverseName<C extends AnyResource, Reverse> = undefined extends Reverse
  ? C["plural"]
  : string extends Reverse
    ? never
    : Reverse & string;

/**
 * Every reverse relation of the app by target name, made once per app: the relations several
 * resources give one target are united under its key.
 */
type ReverseIndex<All extends AnyResource> = {
  [E in All extends AnyResource ? ReverseEntries<All> : never as E["target"]]: E["relation"];
};

type Reverse<R extends AnyResource, All extends AnyResource> = UnionToIntersection<
  Lookup<ReverseIndex<All>, R["name"]>
>;

/** The app's resources by name, made once per app. */
type ByName<All extends AnyResource> = { [R in All as R["name"]]: R };

/**
 * `M[K]`, or never when `M` has no `K`: one property lookup in a table made once, where
 * `Extract<All, { name: K }>` tries every resource of the app each time it is asked.
 */
type Lookup<M, K> = M extends { [P in K & string]: infer X } ? X : never;

/** `tagIds` → `tags`; a name without the ending stays as it is. */
type WithoutIds<K extends string> = K extends `${infer Base}Ids` ? (Base extends "" ? K : `${Base}s`) : K;

/** The mark of a list of ids (`referencesMany`): what it points at and its reverse's name, or never. */
type ListMark<S> =
  Unwrapped<S> extends ManyBrand<infer M> ? (unknown extends M ? never : NonNullable<M>) : never;

/** What a list of ids points at, or never. */
type ListTarget<S> = [ListMark<S>] extends [never]
  ? never
  : ListMark<S> extends { target: infer T }
    ? T
    : never;

/** A list of ids expands to the records it names: `tags: Tag[]`. */
type Lists<R extends AnyResource, All extends AnyResource> = {
  [K in keyof Shape<R> & string as [ListTarget<Shape<R>[K]>] extends [never] ? never : WithoutIds<K>]: Many<
    Lookup<ByName<All>, ListTarget<Shape<R>[K]>>
  >;
};

type Files<R extends AnyResource> = {
  [K in keyof Shape<R> & string as IsFileRef<Unwrapped<Shape<R>[K]>> extends true
    ? WithoutId<K>
    : never]: File;
};

/** Every relation `expand` may name on `R`, by name. */
export type RelationsOf<R extends AnyResource, All extends AnyResource> = Forward<R, All> &
  Reverse<R, All> &
  Lists<R, All> &
  Files<R>;

type Depth = [unknown, unknown, unknown];

/** The paths `expand` takes on `R`: `author`, `author.company`, `comments.author`…, 3 deep at most. */
export type ExpandPath<
  R extends AnyResource,
  All extends AnyResource,
  D extends unknown[] = [],
> = D["length"] extends Depth["length"]
  ? never
  : {
      [N in keyof RelationsOf<R, All> & string]:
        | N
        | (RelationsOf<R, All>[N] extends One<infer T extends AnyResource> | Many<infer T extends AnyResource>
            ? `${N}.${ExpandPath<T, All, [...D, unknown]>}`
            : never);
    }[keyof RelationsOf<R, All> & string];

type Head<E extends string> = E extends `${infer H}.${string}` ? H : E;
type Rest<E extends string, H extends string> = E extends `${H}.${infer T}` ? T : never;

/**
 * One relation of a resource, resolved once: its name, whether it holds one record, many or a
 * file, the target resource, and the target's own relations (`Sub`), down to the depth `expand`
 * allows.
 */
interface RelationNode<N extends string, Kind, Target, Sub> {
  name: N;
  kind: Kind;
  target: Target;
  sub: Sub;
}

/**
 * `R`'s relations as a tree of `RelationNode`s, made once per resource when the client's type is
 * made. A call's `expand` then walks only this tree: a per-call type that still named the app's
 * union of resources made the checker re-visit every resource of the app on every call (issue 38).
 */
type RelationTree<
  R extends AnyResource,
  All extends AnyResource,
  D extends unknown[] = [],
> = D["length"] extends Depth["length"]
  ? never
  : {
      [N in keyof RelationsOf<R, All> & string]: RelationsOf<R, All>[N] extends One<
        infer T extends AnyResource
      >
        ? RelationNode<N, "one", T, RelationTree<T, All, [...D, unknown]>>
        : RelationsOf<R, All>[N] extends Many<infer T extends AnyResource>
          ? RelationNode<N, "many", T, RelationTree<T, All, [...D, unknown]>>
          : RelationNode<N, "file", never, never>;
    }[keyof RelationsOf<R, All> & string];

type NamesOf<Tree> = Tree extends RelationNode<infer N, unknown, unknown, unknown> ? N : never;

type ExpandedValue<Node, Tail extends string> =
  Node extends RelationNode<string, infer Kind, infer T extends AnyResource, infer Sub>
    ? Kind extends "one"
      ? ExpandedIn<T, Sub, Tail> | null
      : Kind extends "many"
        ? ExpandedIn<T, Sub, Tail>[]
        : FileRecord | null
    : never;

/** A record of `R` with the relations of `Tree` named by `E` expanded. */
type ExpandedIn<R extends AnyResource, Tree, E extends string> = [E] extends [never]
  ? RecordOf<R>
  : Simplify<
      Omit<RecordOf<R>, Head<E>> & {
        [H in Head<E> & NamesOf<Tree>]: ExpandedValue<
          Extract<Tree, RelationNode<H, unknown, unknown, unknown>>,
          Rest<E, H>
        >;
      }
    >;

/**
 * A record of `R` with the relations named by `E` expanded: `author: Author | null`,
 * `comments: Comment[]`, a file field as its file record.
 */
export type Expanded<R extends AnyResource, All extends AnyResource, E extends string> = ExpandedIn<
  R,
  RelationTree<R, All>,
  E
>;

type Prefixed<N extends string, Rec> = { [K in keyof Rec & string as `${N}.${K}`]: Rec[K] };

/**
 * The fields of the records `R` references, as relation filters name them: `author.name`, and
 * through a list of ids `tags.name` (any of them).
 */
export type RelatedFields<R extends AnyResource, All extends AnyResource> = UnionToIntersection<
  {
    [N in keyof (Forward<R, All> & Lists<R, All>) & string]: (Forward<R, All> & Lists<R, All>)[N] extends
      | One<infer T extends AnyResource>
      | Many<infer T extends AnyResource>
      ? Prefixed<N, RecordOf<T>>
      : never;
  }[keyof (Forward<R, All> & Lists<R, All>) & string]
>;
