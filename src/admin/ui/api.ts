// The admin's only way to the server: the app's public API, with the caller's own credentials
// (an API key header, a bearer token, or the browser's session cookie), same origin only.

export interface Credential {
  kind: "apiKey" | "bearer" | "session";
  /** The key or token; empty for a session. */
  secret: string;
  /** The API key's header, from the OpenAPI document's security schemes. */
  header?: string;
}

/** An answer that was not a success: the API's error body. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: { path: string; message: string }[] = [],
  ) {
    super(message);
  }
}

const STORE_KEY = "crudkit-admin-credential";

export function savedCredential(): Credential | undefined {
  try {
    const text = sessionStorage.getItem(STORE_KEY);
    return text ? (JSON.parse(text) as Credential) : undefined;
  } catch {
    return undefined;
  }
}

export function saveCredential(credential: Credential | undefined): void {
  if (credential) sessionStorage.setItem(STORE_KEY, JSON.stringify(credential));
  else sessionStorage.removeItem(STORE_KEY);
}

export function headersFor(credential: Credential | undefined): Record<string, string> {
  if (!credential || credential.kind === "session") return {};
  if (credential.kind === "bearer") return { authorization: `Bearer ${credential.secret}` };
  return { [credential.header ?? "x-api-key"]: credential.secret };
}

export interface Answer<T> {
  body: T;
  headers: Headers;
  status: number;
}

/** `method path` on the API (path under the basePath), JSON in and out. */
export async function request<T>(
  credential: Credential | undefined,
  method: string,
  url: string,
  options: { body?: unknown; headers?: Record<string, string> } = {},
): Promise<Answer<T>> {
  const headers: Record<string, string> = {
    accept: "application/json",
    ...headersFor(credential),
    ...options.headers,
  };
  if (options.body !== undefined) headers["content-type"] = "application/json";
  const response = await fetch(url, {
    method,
    headers,
    credentials: "same-origin",
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
  });
  const text = await response.text();
  let body: unknown;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  if (!response.ok) {
    const error = (body ?? {}) as {
      code?: string;
      message?: string;
      details?: { path: string; message: string }[];
    };
    throw new ApiError(
      response.status,
      error.code ?? "ERROR",
      error.message ?? response.statusText,
      error.details,
    );
  }
  return { body: body as T, headers: response.headers, status: response.status };
}
