// eslint-disable-next-line no-control-regex -- finding U+0000 is the point
const NOT_STORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * False for text holding U+0000 or an unpaired UTF-16 surrogate. PostgreSQL refuses both (text and
 * jsonb), so a request field that is stored must be refused with a 400 before anything is written,
 * not fail as a 500 at the insert; no upstream wants them either.
 */
export function isStorableText(text: string): boolean {
  return !NOT_STORABLE.test(text);
}

export const NOT_STORABLE_MESSAGE = 'must not contain NUL characters or unpaired UTF-16 surrogates';
