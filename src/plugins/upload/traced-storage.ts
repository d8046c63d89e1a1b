// A storage adapter whose calls are spans of the request that makes them, when it is traced
// (core/tracing.ts): a slow S3 upload shows as such. The path is not an attribute: a file's name
// can say what it holds.

import { traced } from "../../core/tracing.ts";
import type { StorageAdapter } from "../../storage/adapter.ts";

export function tracedStorage(storage: StorageAdapter): StorageAdapter {
  const span = <T>(operation: string, work: () => Promise<T>) =>
    traced(`crudkit.storage ${operation}`, { "crudkit.storage.operation": operation }, work);
  const wrapped: StorageAdapter = {
    store: (file, filename, options) => span("store", () => storage.store(file, filename, options)),
    retrieve: (path) => span("retrieve", () => storage.retrieve(path)),
    delete: (path) => span("delete", () => storage.delete(path)),
    exists: (path) => span("exists", () => storage.exists(path)),
    getUrl: (path) => storage.getUrl(path),
  };
  if (storage.read) wrapped.read = (path, range) => span("read", () => storage.read!(path, range));
  if (storage.size) wrapped.size = (path) => span("size", () => storage.size!(path));
  return wrapped;
}
