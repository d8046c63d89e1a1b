// Accept-Encoding (RFC 9110 §12.5.3): which content coding a client takes. One reading for the
// answers compressed as they are made (serve({ compress })) and the files stored compressed (the
// admin's, the docs page's script), so both answer a header alike.

/** A content coding crudkit sends. */
export type Coding = "br" | "gzip";

const QVALUE = /^(?:0(?:\.\d{0,3})?|1(?:\.0{0,3})?)$/;
/** More than any client sends; what follows is not read (a header of junk costs no more than this). */
const READ_AT_MOST = 4096;

/**
 * The coding to send, among those `offered`, for an Accept-Encoding header (RFC 9110 §12.5.3):
 * brotli when it weighs at least as much as gzip, else gzip, else none (the plain bytes). `q=0`
 * refuses a coding, `*` stands for those not named, and a malformed entry counts for nothing.
 */
export function preferredCoding(
  acceptEncoding: string | null,
  offered: readonly Coding[],
): Coding | undefined {
  if (!acceptEncoding || offered.length === 0) return undefined;
  const weights = new Map<string, number>();
  for (const part of acceptEncoding.slice(0, READ_AT_MOST).split(",")) {
    const [name = "", ...params] = part.split(";").map((p) => p.trim().toLowerCase());
    if (!name || weights.has(name)) continue;
    const q = params
      .find((p) => p.startsWith("q="))
      ?.slice(2)
      .trim();
    weights.set(name, q === undefined ? 1 : QVALUE.test(q) ? Number(q) : 0);
  }
  const weightOf = (coding: Coding) =>
    offered.includes(coding) ? (weights.get(coding) ?? weights.get("*") ?? 0) : 0;
  const br = weightOf("br");
  const gz = weightOf("gzip");
  if (br > 0 && br >= gz) return "br";
  return gz > 0 ? "gzip" : undefined;
}
