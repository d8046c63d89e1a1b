// Spans through @opentelemetry/api, which does nothing until the app registers an SDK. Only a
// request whose span records (an SDK is registered and samples it) gets child spans: every other
// request pays for one no-op span. Attributes carry names, templates and statement text with its
// placeholders: never a value a caller sent, so no secret and no hidden field's value.

import {
  type Attributes,
  type Context,
  context,
  createContextKey,
  propagation,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  type TextMapGetter,
  trace,
} from "@opentelemetry/api";

const tracer = trace.getTracer("crudkit-api");

/** Set on the context of a request of an app with `tracing: false`: no crudkit span under it. */
const UNTRACED = createContextKey("crudkit untraced");

const headerGetter: TextMapGetter<Headers> = {
  keys: (headers) => [...headers.keys()],
  get: (headers, key) => headers.get(key) ?? undefined,
};

/** A request's span, and the context its work runs in; undefined when it does not record. */
export interface RequestTrace {
  span: Span;
  context: Context;
}

/** Methods named as they are; any other is `_OTHER`, as OpenTelemetry's conventions say. */
const METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);

/** A request's method as spans name it. */
export function spanMethod(method: string): string {
  return METHODS.has(method) ? method : "_OTHER";
}

/** Starts the span of a request, child of its `traceparent` when it has one. */
export function startRequestTrace(request: Request): RequestTrace | undefined {
  const parent = propagation.extract(ROOT_CONTEXT, request.headers, headerGetter);
  const method = spanMethod(request.method);
  const span = tracer.startSpan(
    method,
    { kind: SpanKind.SERVER, attributes: { "http.request.method": method } },
    parent,
  );
  if (!span.isRecording()) return undefined;
  return { span, context: trace.setSpan(parent, span) };
}

/** Ends a request's span with what answering it found. */
export function endRequestTrace(
  traced: RequestTrace,
  answer: { method: string; route: string | undefined; status: number; code: string | undefined },
): void {
  const { span } = traced;
  if (answer.route) {
    // "GET /api/product/:id", as OpenTelemetry's HTTP conventions name a server span.
    span.updateName(`${spanMethod(answer.method)} ${answer.route}`);
    span.setAttribute("http.route", answer.route);
  }
  span.setAttribute("http.response.status_code", answer.status);
  if (answer.code) span.setAttribute("crudkit.error.code", answer.code);
  if (answer.status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
  span.end();
}

/** Whether the work running now is part of a recorded trace (a request an SDK samples). */
export function tracing(): boolean {
  const active = context.active();
  return active.getValue(UNTRACED) !== true && trace.getSpan(active)?.isRecording() === true;
}

/**
 * Runs a request of an app with `tracing: false`: whatever span another library made active,
 * crudkit starts none under it.
 */
export function untraced<T>(work: () => T): T {
  return context.with(context.active().setValue(UNTRACED, true), work);
}

/** A child span of the active one, when that one records; undefined otherwise. */
export function startChildSpan(
  name: string,
  attributes?: Attributes,
  kind = SpanKind.INTERNAL,
): Span | undefined {
  if (!tracing()) return undefined;
  return tracer.startSpan(name, { kind, ...(attributes ? { attributes } : {}) }, context.active());
}

/** Ends a span, marked failed with the error's type (not its message: it may quote a value). */
export function endSpan(span: Span, error?: unknown): void {
  if (error !== undefined) {
    span.setStatus({ code: SpanStatusCode.ERROR });
    span.setAttribute("error.type", error instanceof Error ? error.name : typeof error);
  }
  span.end();
}

/**
 * Runs `work` in a span named `name`, child of the active span, when that one records; otherwise
 * just runs it. `work` may answer synchronously.
 *
 * @example
 * const rows = await traced("crudkit.access", { "crudkit.resource": "product" }, async () => 42);
 */
export function traced<T>(name: string, attributes: Attributes | undefined, work: () => T): T {
  const span = startChildSpan(name, attributes);
  return span ? inSpan(span, work) : work();
}

/**
 * A span of its own, not a request's (a webhook delivery, run by the dispatcher), when an SDK is
 * registered and samples it; undefined otherwise.
 */
export function startRootSpan(
  name: string,
  attributes?: Attributes,
  kind = SpanKind.INTERNAL,
): Span | undefined {
  const span = tracer.startSpan(name, { kind, root: true, ...(attributes ? { attributes } : {}) });
  return span.isRecording() ? span : undefined;
}

/** Runs `work` with `span` active, and ends the span when `work` has (sync or async). */
export function inSpan<T>(span: Span, work: () => T): T {
  let result: T;
  try {
    result = context.with(trace.setSpan(context.active(), span), work);
  } catch (error) {
    endSpan(span, error);
    throw error;
  }
  if (!(result instanceof Promise)) {
    endSpan(span);
    return result;
  }
  return result.then(
    (value) => {
      endSpan(span);
      return value;
    },
    (error: unknown) => {
      endSpan(span, error);
      throw error;
    },
  ) as T;
}

/** Runs `work` in `traced`'s context: spans started within are the request's children. */
export function withinTrace<T>(traced: RequestTrace, work: () => T): T {
  return context.with(traced.context, work);
}
