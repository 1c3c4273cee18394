import { DomainError } from '../../../libs/common/index.js';

/**
 * Codes of the realtime REST routes: they live under /v1/audio/ and carry `audio.` codes (DESIGN §4:
 * 409 `audio.session_active`). Codes shared code raises (`unauthorized`, `invalid_field`,
 * `unknown_field`) are qualified `audio.` by the route's domain.
 */
export enum RealtimeRestErrorCode {
  /** The key already holds REALTIME_MAX_SESSIONS_PER_KEY open sessions. */
  SessionActive = 'audio.session_active',
  /** No session of this key by that id (another key's counts as none). */
  SessionNotFound = 'audio.session_not_found',
  /** A ticket for a session that was closed or has expired. */
  SessionClosed = 'audio.session_closed',
}

/** Codes of `error` frames on the realtime WebSocket (DESIGN §10); audio's own refusals keep their `audio.` codes. */
export enum RealtimeFrameErrorCode {
  /** Not a JSON object with a string `type`, or a field of the wrong type. */
  InvalidFrame = 'realtime.invalid_frame',
  /** A field the frame type does not have. */
  UnknownField = 'realtime.unknown_field',
  /** A binary frame: the protocol is JSON text frames only. */
  BinaryFrame = 'realtime.binary_frame_unsupported',
  /** A frame type the protocol does not have. */
  UnknownType = 'realtime.unknown_frame_type',
  /** Text delta or append frames: the session takes complete turns only (`inputMode: completeTurn`). */
  InputModeUnsupported = 'realtime.input_mode_unsupported',
  /** `session.authenticate` on an authenticated connection. */
  AlreadyAuthenticated = 'realtime.already_authenticated',
  /** `turnId` is not 1 to 80 of `A-Za-z0-9_-`. */
  InvalidTurnId = 'realtime.invalid_turn_id',
  /** A turn committed while another is in flight on this connection. */
  TurnInFlight = 'realtime.turn_in_flight',
  /** A known `turnId` with another text. */
  TurnConflict = 'realtime.turn_conflict',
  /** The turn's estimate does not fit what is left of `maxCostUsd`. */
  BudgetExhausted = 'realtime.budget_exhausted',
  /** The session was closed or has expired. */
  SessionClosed = 'realtime.session_closed',
  /** The server is shutting down: no new turn; reconnect with a new ticket. */
  ShuttingDown = 'realtime.shutting_down',
  /** Something failed on our side before the turn was accepted; nothing was charged. */
  Internal = 'realtime.internal_error',
}

export const sessionNotFound = (): DomainError => new DomainError(404, RealtimeRestErrorCode.SessionNotFound, 'realtime session not found');

/**
 * WebSocket close codes of the realtime connection (docs/realtime.md › Close codes). 4401, 4408 and
 * 4409 are DESIGN §10's; the others are ours.
 */
export const RealtimeCloseCode = {
  /** Normal closure. */
  Normal: 1000,
  /** A frame over REALTIME_MAX_FRAME_BYTES (sent by the `ws` library itself). */
  TooBig: 1009,
  /** Unexpected server failure (e.g. Redis unreachable while authenticating): reconnect with a new ticket. */
  InternalError: 1011,
  /** The server is shutting down: reconnect (another instance) with a new ticket. */
  ServiceRestart: 1012,
  /** This server holds its maximum of connections: try again later. */
  TryAgainLater: 1013,
  /** Bad, used or expired ticket, a ticket of another session, a first frame that is not `session.authenticate`, or a revoked key. */
  Unauthorized: 4401,
  /** No `session.authenticate` within 5 s. */
  AuthTimeout: 4408,
  /** The session already has a live connection (this newcomer is refused), or this connection lost its lease. */
  Conflict: 4409,
  /** The session was closed (DELETE) or reached `expiresAt`. */
  SessionEnded: 4410,
  /** The client stopped reading: more than REALTIME_MAX_BUFFERED_BYTES were waiting to be sent. */
  SlowConsumer: 4413,
} as const;
