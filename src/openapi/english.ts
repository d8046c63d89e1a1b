// English for the document's summaries: "Create an order", "Read a user", "Read an hour".

/** Vowel letters that sound like a consonant ("a user", "a unit", "a European"), and silent h's. */
const CONSONANT_SOUND = /^(?:u[bcdfghjklmnpqrstvwxz][aeiouy]|uni|eu|ewe|one|once)/i;
const SILENT_H = /^(?:hour|honou?r|honest|heir)/i;

/** `word` with its indefinite article: `an order`, `a product`, `a user`. */
export function withArticle(word: string): string {
  const vowel = /^[aeiou]/i.test(word) ? !CONSONANT_SOUND.test(word) : SILENT_H.test(word);
  return `${vowel ? "an" : "a"} ${word}`;
}
