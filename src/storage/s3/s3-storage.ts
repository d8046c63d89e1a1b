// Files in an S3-protocol object store (AWS S3, R2, MinIO…), through the S3 client the app
// passes in. Large files go up as a multipart upload, part by part, so memory stays bounded.

import type { ByteRange, StorableFile, StorageAdapter, StoredFile, StoreOptions } from "../adapter.ts";
import { assertPlainName, candidateNames, chunksOf } from "../adapter.ts";

/** The one method crudkit needs from an `S3Client` of `@aws-sdk/client-s3`. */
export interface S3ClientLike {
  send(command: any): Promise<any>;
}

export interface S3StorageOptions {
  /** An `S3Client` (create it with `requestChecksumCalculation: "WHEN_REQUIRED"` for non-AWS stores). */
  client: S3ClientLike;
  bucket: string;
  /** Key prefix, for example `uploads/`. @default "" */
  prefix?: string;
  /** Where the objects are served, for example a CDN URL. */
  baseUrl?: string;
  /** Multipart part size in bytes (at least 5 MiB). @default 5242880 */
  partSize?: number;
}

type Commands = typeof import("@aws-sdk/client-s3");

/**
 * Stores uploads in an S3-protocol bucket (AWS S3, MinIO, R2…), streamed in parts, through the
 * `S3Client` you pass in.
 *
 * @example
 * import { S3Client } from "@aws-sdk/client-s3";
 * upload({ storage: new S3Storage({ client: new S3Client({ region: "eu-west-1" }), bucket: "uploads", prefix: "app/" }) })
 */
export class S3Storage implements StorageAdapter {
  readonly #options: Required<Omit<S3StorageOptions, "baseUrl">> & { baseUrl: string | undefined };
  #commands: Promise<Commands> | undefined;

  constructor(options: S3StorageOptions) {
    this.#options = {
      client: options.client,
      bucket: options.bucket,
      prefix: options.prefix ?? "",
      baseUrl: options.baseUrl?.replace(/\/+$/, ""),
      partSize: Math.max(options.partSize ?? 5 * 1024 * 1024, 5 * 1024 * 1024),
    };
  }

  async store(file: StorableFile, filename: string, options: StoreOptions): Promise<StoredFile> {
    assertPlainName(filename);
    // S3 has no portable "create only if absent"; the free name is found before writing.
    let name: string | undefined;
    for (const candidate of candidateNames(filename)) {
      if (!(await this.exists(candidate))) {
        name = candidate;
        break;
      }
    }
    if (!name) throw new Error(`No free name for ${filename}`);
    await this.#upload(file, this.#key(name), options.mimeType);
    return { path: name, url: this.getUrl(name) };
  }

  async retrieve(path: string): Promise<Uint8Array> {
    const { GetObjectCommand } = await this.#sdk();
    const response = await this.#send(
      new GetObjectCommand({ Bucket: this.#options.bucket, Key: this.#key(path) }),
    );
    return response.Body.transformToByteArray();
  }

  async read(path: string, range?: ByteRange) {
    const size = await this.size(path);
    if (size === undefined) return undefined;
    const { GetObjectCommand } = await this.#sdk();
    const response = await this.#send(
      new GetObjectCommand({
        Bucket: this.#options.bucket,
        Key: this.#key(path),
        ...(range ? { Range: `bytes=${range.start}-${range.end}` } : {}),
      }),
    );
    return { body: response.Body.transformToWebStream() as ReadableStream<Uint8Array>, size };
  }

  async delete(path: string): Promise<void> {
    const { DeleteObjectCommand } = await this.#sdk();
    await this.#send(new DeleteObjectCommand({ Bucket: this.#options.bucket, Key: this.#key(path) }));
  }

  async exists(path: string): Promise<boolean> {
    return (await this.size(path)) !== undefined;
  }

  async size(path: string): Promise<number | undefined> {
    const { HeadObjectCommand } = await this.#sdk();
    try {
      const head = await this.#send(
        new HeadObjectCommand({ Bucket: this.#options.bucket, Key: this.#key(path) }),
      );
      return Number(head.ContentLength);
    } catch (error) {
      if ((error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 404)
        return undefined;
      throw error;
    }
  }

  getUrl(path: string): string | undefined {
    const { baseUrl, prefix } = this.#options;
    return baseUrl === undefined ? undefined : `${baseUrl}/${prefix}${encodeURIComponent(path)}`;
  }

  /** One PutObject for a file smaller than a part; otherwise a multipart upload, aborted on failure. */
  async #upload(file: StorableFile, key: string, mimeType: string): Promise<void> {
    const sdk = await this.#sdk();
    const { bucket: Bucket, partSize } = this.#options;
    const chunks = chunksOf(file)[Symbol.asyncIterator]();
    let buffered: Uint8Array[] = [];
    let bufferedSize = 0;
    let done = false;
    const nextPart = async (): Promise<Buffer | undefined> => {
      while (!done && bufferedSize < partSize) {
        const next = await chunks.next();
        if (next.done) done = true;
        else {
          buffered.push(next.value);
          bufferedSize += next.value.byteLength;
        }
      }
      if (bufferedSize === 0) return undefined;
      const part = Buffer.concat(buffered, bufferedSize);
      buffered = [];
      bufferedSize = 0;
      return part;
    };
    const first = (await nextPart()) ?? Buffer.alloc(0);
    if (done) {
      await this.#send(
        new sdk.PutObjectCommand({
          Bucket,
          Key: key,
          Body: first,
          ContentType: mimeType,
          ContentLength: first.byteLength,
        }),
      );
      return;
    }
    const { UploadId } = await this.#send(
      new sdk.CreateMultipartUploadCommand({ Bucket, Key: key, ContentType: mimeType }),
    );
    try {
      const parts: { ETag: string; PartNumber: number }[] = [];
      for (let part: Buffer | undefined = first, number = 1; part; part = await nextPart(), number++) {
        const { ETag } = await this.#send(
          new sdk.UploadPartCommand({
            Bucket,
            Key: key,
            UploadId,
            PartNumber: number,
            Body: part,
            ContentLength: part.byteLength,
          }),
        );
        parts.push({ ETag, PartNumber: number });
      }
      await this.#send(
        new sdk.CompleteMultipartUploadCommand({
          Bucket,
          Key: key,
          UploadId,
          MultipartUpload: { Parts: parts },
        }),
      );
    } catch (error) {
      await this.#send(new sdk.AbortMultipartUploadCommand({ Bucket, Key: key, UploadId })).catch(() => {});
      throw error;
    }
  }

  #key(path: string): string {
    assertPlainName(path);
    return this.#options.prefix + path;
  }

  #send(command: unknown): Promise<any> {
    return this.#options.client.send(command);
  }

  /** The SDK's command classes, loaded on first use: apps without S3 never need the package. */
  #sdk(): Promise<Commands> {
    this.#commands ??= import("@aws-sdk/client-s3");
    return this.#commands;
  }
}
