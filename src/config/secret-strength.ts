/**
 * What production refuses in its secrets: the shipped placeholders and values too weak to guess
 * at. The estimate is deliberately simple (length × log2 of the character classes used), so an
 * operator can predict it: a value from `openssl rand -base64 32` or `openssl rand -hex 32`
 * passes, a word with a few digits does not. Each problem names the variable; docs/decisions.md
 * › "Secrets in production" says how to generate each.
 */

/** Words the shipped examples use for values that must be replaced. */
const PLACEHOLDER_WORDS = /change[-_ ]?me|placeholder|example|your[-_ ]|xxxx/i;

/** Bits a guesser must search, estimated from the character classes the value uses. */
export function estimatedEntropyBits(value: string): number {
  // One short run repeated ("abcabcabc…") is no stronger than the run.
  const repeated = /^(.{1,16}?)\1+$/s.exec(value);
  if (repeated) return estimatedEntropyBits(repeated[1]!);
  let pool = 0;
  if (/[a-z]/.test(value)) pool += 26;
  if (/[A-Z]/.test(value)) pool += 26;
  if (/[0-9]/.test(value)) pool += 10;
  if (/[^a-zA-Z0-9]/.test(value)) pool += 33;
  return pool === 0 ? 0 : value.length * Math.log2(pool);
}

/** Why a signing key or bearer token is unfit for production, or undefined when it is fit. */
export function weakSecretReason(value: string, minBits: number, placeholders: readonly string[]): string | undefined {
  if (placeholders.includes(value) || PLACEHOLDER_WORDS.test(value)) return 'is a placeholder; generate a random value';
  const bits = Math.floor(estimatedEntropyBits(value));
  if (bits < minBits) return `is too weak (about ${bits} bits; at least ${minBits} needed); generate a random value`;
  return undefined;
}

/**
 * Why a 32-byte base64 encryption key is unfit for production. Its length is checked elsewhere;
 * here: not a shipped value, and bytes that look random — a key that decodes to printable text was
 * typed, not drawn (a random key is all printable with odds near 1e-14), and one with few distinct
 * bytes is a pattern.
 */
export function weakEncryptionKeyReason(base64: string, placeholders: readonly string[]): string | undefined {
  if (placeholders.includes(base64)) return 'is a placeholder; generate one with `openssl rand -base64 32`';
  const bytes = Buffer.from(base64, 'base64');
  const printable = bytes.every((b) => b >= 0x20 && b < 0x7f);
  if (printable || new Set(bytes).size < 16) return 'does not look random (typed text or a pattern); generate one with `openssl rand -base64 32`';
  return undefined;
}
