// Where the admin is, in the URL's hash, so reload, back and a shared link bring it back:
//   #/<resource>?<the list's own API query>   a list (sort, search, filters, cursor)
//   #/<resource>/                              a new record's form
//   #/<resource>/<id>                          a record's form
// The list's state is the API's query itself: what the page asks is what the URL says.

import type { RefObject } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";

export interface Route {
  resource?: string;
  /** A record's id; "" for a new record's form (no record has an empty id). */
  id?: string;
  query: URLSearchParams;
}

export function parseRoute(hash: string): Route {
  const text = hash.replace(/^#\/?/, "");
  const mark = text.indexOf("?");
  const path = mark < 0 ? text : text.slice(0, mark);
  const query = new URLSearchParams(mark < 0 ? "" : text.slice(mark + 1));
  const [resource, ...rest] = path.split("/").map((part) => {
    try {
      return decodeURIComponent(part);
    } catch {
      return part;
    }
  });
  // `#/product/` (nothing after the slash) is the new product's form: no id can collide with it.
  return { resource: resource || undefined, id: rest.length > 0 ? rest.join("/") : undefined, query };
}

export function listHref(resource: string, query?: URLSearchParams): string {
  const text = query?.toString();
  return `#/${encodeURIComponent(resource)}${text ? `?${text}` : ""}`;
}

export function recordHref(resource: string, id: string): string {
  return `#/${encodeURIComponent(resource)}/${encodeURIComponent(id)}`;
}

/** The current route, following the hash. */
export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(location.hash));
  useEffect(() => {
    const follow = () => setRoute(parseRoute(location.hash));
    addEventListener("hashchange", follow);
    return () => removeEventListener("hashchange", follow);
  }, []);
  return route;
}

/**
 * A view's heading, focused when the view appears (once `ready`): after a link or a button moved
 * her elsewhere, the keyboard and the screen reader start at the new view, not at the page's top.
 */
export function useFocusedHeading(ready = true): RefObject<HTMLHeadingElement> {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    // Never taken from a control of the new view she already reached (a quick click or typing).
    const main = heading.current?.closest("main");
    if (ready && !main?.contains(document.activeElement)) heading.current?.focus();
  }, [ready]);
  return heading;
}
