import type { GeminiFunctionCall, GeminiResponse } from '../../../libs/providers/index.js';
import type { TokenUsage } from './translation/gemini-to-openai.js';

/**
 * What one text generation yields, in order, whatever carries it to the client (HTTP JSON, SSE,
 * a WebSocket). Every refusal before `started` is thrown instead (validation, 402, an upstream
 * that refused the call): nothing was produced, and the hold, if any, is already released.
 *
 *   started → (delta → tool_call*)* → usage → settled      a complete answer
 *   started → (delta → tool_call*)* → failed               the upstream broke, or settlement failed
 *   started → (delta → tool_call*)* → settled (partial)    the caller aborted the signal
 *
 * They come in steps (iterables, in order): the events that come together, e.g. every chunk of
 * one upstream read with its tool calls, so that a read costs one async step, not one per chunk.
 */
export type TextEvent =
  /** The upstream accepted the call; output follows. */
  | { type: 'started'; holdId: string }
  /**
   * One upstream chunk (the whole answer when not streaming) in Gemini's wire format, parts and
   * signatures as they came, and its visible text. The Chat and Responses shapes are built from it.
   */
  | { type: 'delta'; chunk: GeminiResponse; text: string }
  /** A function call the model made in the delta just yielded, whole (Gemini never sends half a call). */
  | { type: 'tool_call'; call: GeminiFunctionCall }
  /** The upstream finished; this usage is charged next. The last output (e.g. closing items) goes out now, before the charge. */
  | { type: 'usage'; usage: TokenUsage }
  /**
   * The wallet was charged. `complete`: the answer ended and may be terminated (`[DONE]`, the
   * terminal event); false when the caller aborted and only the output so far was charged.
   */
  | { type: 'settled'; usage: TokenUsage; complete: boolean }
  /** The answer cannot complete (after `started`): charged for the output so far, or released when there was none. */
  | { type: 'failed'; code: string; message: string };
