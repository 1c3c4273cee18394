import { RealtimeFrameErrorCode } from './realtime-errors.js';

/** DESIGN §10: 1 to 80 ASCII letters, digits, `_` or `-`. */
export const TURN_ID = /^[A-Za-z0-9_-]{1,80}$/;

export interface TurnUsage {
  inputCharacters: number;
  billableCharacters: number;
  chargedUsd: number;
}

/** Server frames (DESIGN §10), JSON text frames. */
export type ServerFrame =
  | { type: 'session.ready'; sessionId: string; expiresAt: string; budget: { maxCostUsd: number; allocatedUsd: number; remainingUsd: number } }
  | { type: 'turn.accepted'; turnId: string; taskId: string; estimatedUsd: number }
  | { type: 'audio.delta'; turnId: string; taskId: string; audio: string }
  | { type: 'turn.completed'; turnId: string; taskId: string; status: string; usage: TurnUsage }
  | { type: 'turn.status'; turnId: string; taskId: string; status: string; phase: string | null }
  | { type: 'error'; code: string; message: string; turnId?: string };

export type ClientFrame = { type: 'session.authenticate'; token: string } | { type: 'turn.commit'; turnId: string; text: string };

export class FrameRefusal extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly turnId?: string,
  ) {
    super(message);
  }
}

const FIELDS: Record<ClientFrame['type'], readonly string[]> = {
  'session.authenticate': ['type', 'token'],
  'turn.commit': ['type', 'turnId', 'text'],
};

/** Types of streaming-input protocols (text deltas, appends): refused, the session takes complete turns. */
const STREAMING_INPUT = /(delta|append|buffer)/i;

/**
 * Parses one text frame into a client frame, or throws FrameRefusal with the `error` frame's code.
 * Only the shape is checked here; the text's limits are audio's (checked by the audio service).
 */
export function parseClientFrame(text: string): ClientFrame {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new FrameRefusal(RealtimeFrameErrorCode.InvalidFrame, 'a frame must be one JSON object');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new FrameRefusal(RealtimeFrameErrorCode.InvalidFrame, 'a frame must be one JSON object');
  const frame = value as Record<string, unknown>;
  if (typeof frame.type !== 'string') throw new FrameRefusal(RealtimeFrameErrorCode.InvalidFrame, 'type: must be a string');
  const type = frame.type;
  if (!(type in FIELDS)) {
    if (STREAMING_INPUT.test(type)) {
      throw new FrameRefusal(RealtimeFrameErrorCode.InputModeUnsupported, `${type.slice(0, 64)}: text delta and append frames are not supported; send the whole turn in one turn.commit`);
    }
    throw new FrameRefusal(RealtimeFrameErrorCode.UnknownType, `type: unknown frame type ${JSON.stringify(type.slice(0, 64))}; expected session.authenticate or turn.commit`);
  }
  const known = FIELDS[type as ClientFrame['type']];
  const turnId = typeof frame.turnId === 'string' && TURN_ID.test(frame.turnId) ? frame.turnId : undefined;
  const unknown = Object.keys(frame).find((field) => !known.includes(field));
  if (unknown !== undefined) throw new FrameRefusal(RealtimeFrameErrorCode.UnknownField, `${unknown.slice(0, 64)}: unknown field of ${type}`, turnId);
  if (type === 'session.authenticate') {
    if (typeof frame.token !== 'string') throw new FrameRefusal(RealtimeFrameErrorCode.InvalidFrame, 'token: must be a string');
    return { type, token: frame.token };
  }
  if (typeof frame.turnId !== 'string' || !TURN_ID.test(frame.turnId)) {
    throw new FrameRefusal(RealtimeFrameErrorCode.InvalidTurnId, 'turnId: must be 1 to 80 ASCII letters, digits, _ or -');
  }
  if (typeof frame.text !== 'string') throw new FrameRefusal(RealtimeFrameErrorCode.InvalidFrame, 'text: must be a string', frame.turnId);
  return { type: 'turn.commit', turnId: frame.turnId, text: frame.text };
}
