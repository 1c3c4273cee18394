import { createHash, randomBytes } from 'node:crypto';

/** A ticket lives 60 seconds (spec › Limits). */
export const TICKET_TTL_MS = 60_000;
/** A session lives 50 minutes (spec › Limits). */
export const SESSION_TTL_MS = 50 * 60_000;

/** A new ticket: `rt_` + 32 random bytes in base64url (256 bits: not guessable, never stored in clear). */
export const newTicketToken = (): string => `rt_${randomBytes(32).toString('base64url')}`;

/** What is stored and looked up: the SHA-256 of the token. */
export const ticketHash = (token: string): Buffer => createHash('sha256').update(token, 'utf8').digest();

/** The shape of a token we could have issued; anything else is refused before any lookup. */
export const TICKET_SHAPE = /^rt_[A-Za-z0-9_-]{43}$/;
