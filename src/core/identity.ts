// Who is calling: the app's `identify` option and identity plugins, asked in order, once per request.

/** The caller as access rules, hooks and plugins see it. */
export interface User {
  id: string;
  roles?: readonly string[];
  [key: string]: unknown;
}

export type MaybePromise<T> = T | Promise<T>;

/**
 * Finds the caller of a request. Returns null for an anonymous caller; throws an `APIError`
 * `UNAUTHORIZED` when credentials are present but invalid.
 */
export type Identify = (request: Request) => MaybePromise<User | null>;

/** Asks each identifier in order; the first user found wins. */
export function chainIdentify(identifiers: readonly Identify[]): Identify | undefined {
  if (identifiers.length === 0) return undefined;
  if (identifiers.length === 1) return identifiers[0];
  return async (request) => {
    for (const identify of identifiers) {
      const user = await identify(request);
      if (user) return user;
    }
    return null;
  };
}
