// What a file's first bytes prove about its type. A declared type that has a signature must
// match it; types without one (plain text, JSON, CSV…) cannot be checked and pass.

interface Signature {
  type: string;
  /** Bytes at `offset`; `undefined` entries match any byte. */
  bytes: (number | undefined)[];
  offset?: number;
}

const ascii = (text: string) => [...text].map((c) => c.charCodeAt(0));

const SIGNATURES: Signature[] = [
  { type: "image/png", bytes: [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a] },
  { type: "image/jpeg", bytes: [0xff, 0xd8, 0xff] },
  { type: "image/gif", bytes: ascii("GIF87a") },
  { type: "image/gif", bytes: ascii("GIF89a") },
  {
    type: "image/webp",
    bytes: [...ascii("RIFF"), undefined, undefined, undefined, undefined, ...ascii("WEBP")],
  },
  { type: "image/bmp", bytes: ascii("BM") },
  { type: "image/tiff", bytes: [0x49, 0x49, 0x2a, 0x00] },
  { type: "image/tiff", bytes: [0x4d, 0x4d, 0x00, 0x2a] },
  { type: "image/x-icon", bytes: [0x00, 0x00, 0x01, 0x00] },
  { type: "application/pdf", bytes: ascii("%PDF-") },
  { type: "application/zip", bytes: [0x50, 0x4b, 0x03, 0x04] },
  // An empty archive is only its end record; a spanned one starts with the split marker.
  { type: "application/zip", bytes: [0x50, 0x4b, 0x05, 0x06] },
  { type: "application/zip", bytes: [0x50, 0x4b, 0x07, 0x08] },
  { type: "application/gzip", bytes: [0x1f, 0x8b] },
  { type: "audio/mpeg", bytes: ascii("ID3") },
  // An MP3 without an ID3 tag starts with an MPEG audio frame: 11 sync bits, then layer III
  // (MPEG-1, -2 or -2.5, with or without CRC).
  ...[0xfb, 0xfa, 0xf3, 0xf2, 0xe3, 0xe2].map((second) => ({ type: "audio/mpeg", bytes: [0xff, second] })),
  { type: "audio/ogg", bytes: ascii("OggS") },
  {
    type: "audio/wav",
    bytes: [...ascii("RIFF"), undefined, undefined, undefined, undefined, ...ascii("WAVE")],
  },
  { type: "video/mp4", bytes: ascii("ftyp"), offset: 4 },
  { type: "application/wasm", bytes: [0x00, 0x61, 0x73, 0x6d] },
  { type: "application/x-executable", bytes: [0x7f, 0x45, 0x4c, 0x46] },
  { type: "application/x-msdownload", bytes: ascii("MZ") },
];

/** Declared types that are the same format as a sniffed one (zip containers, aliases). */
const SAME_FORMAT: Record<string, string> = {
  "image/jpg": "image/jpeg",
  "image/pjpeg": "image/jpeg",
  "image/x-png": "image/png",
  "image/vnd.microsoft.icon": "image/x-icon",
  "application/x-gzip": "application/gzip",
  "application/x-zip-compressed": "application/zip",
  "application/vnd.openxmlformats-officedocument.wordprocessingml.document": "application/zip",
  "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": "application/zip",
  "application/vnd.openxmlformats-officedocument.presentationml.presentation": "application/zip",
  "application/vnd.oasis.opendocument.text": "application/zip",
  "application/epub+zip": "application/zip",
  "application/java-archive": "application/zip",
  "audio/mp3": "audio/mpeg",
  "audio/x-wav": "audio/wav",
  "audio/wave": "audio/wav",
};

const CHECKABLE = new Set(SIGNATURES.map((s) => s.type));

/** Bytes needed to sniff every known signature. */
export const SNIFF_LENGTH = 16;

/** The type the first bytes prove, or undefined. */
export function sniffMimeType(head: Uint8Array): string | undefined {
  return SIGNATURES.find(({ bytes, offset = 0 }) =>
    bytes.every((b, i) => b === undefined || head[offset + i] === b),
  )?.type;
}

/**
 * Whether the content clearly is not what was declared: the declared type has a signature and
 * the bytes do not carry it. Undeclarable types (text/plain, application/octet-stream…) pass.
 */
export function contradictsDeclaredType(declared: string, head: Uint8Array): boolean {
  const essence = declared.split(";", 1)[0]!.trim().toLowerCase();
  const expected = SAME_FORMAT[essence] ?? essence;
  if (!CHECKABLE.has(expected)) return false;
  const sniffed = sniffMimeType(head);
  return sniffed !== expected;
}
