// crudkit-api/storage/s3: the S3-protocol storage adapter.

export { type S3ClientLike, S3Storage, type S3StorageOptions } from "./s3-storage.ts";
