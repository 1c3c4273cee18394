import { DomainError } from '../../../libs/common/index.js';

/**
 * Every `text.` error code (docs/text.md has the table with statuses). Malformed or out-of-range
 * fields are 400; well-formed requests for something the service or the model does not support
 * are 422; both are answered before any wallet hold.
 */
export enum TextErrorCode {
  InvalidField = 'text.invalid_field',
  UnknownModel = 'text.unknown_model',
  ModelNotFound = 'text.model_not_found',
  ToolChoiceUndeclared = 'text.tool_choice_undeclared',
  UnknownToolCall = 'text.unknown_tool_call',
  CandidateCountUnsupported = 'text.candidate_count_unsupported',
  ParallelToolCallsUnsupported = 'text.parallel_tool_calls_unsupported',
  BackgroundUnsupported = 'text.background_unsupported',
  ReasoningEffortUnsupported = 'text.reasoning_effort_unsupported',
  ThinkingBudgetUnsupported = 'text.thinking_budget_unsupported',
  PenaltiesUnsupported = 'text.penalties_unsupported',
  FinalAssistantMessageUnsupported = 'text.final_assistant_message_unsupported',
  GcsUriUnsupported = 'text.gcs_uri_unsupported',
  StreamFunctionCallArgumentsUnsupported = 'text.stream_function_call_arguments_unsupported',
  MediaFetchFailed = 'text.media_fetch_failed',
  UpstreamRejected = 'text.upstream_rejected',
  UpstreamRateLimited = 'text.upstream_rate_limited',
  UpstreamUnavailable = 'text.upstream_unavailable',
  UpstreamTimeout = 'text.upstream_timeout',
  UpstreamError = 'text.upstream_error',
  StreamInterrupted = 'text.stream_interrupted',
  SettlementFailed = 'text.settlement_failed',
  /** 503: no upstream may serve the model for this key (production live key, no credentials). */
  Unavailable = 'text.unavailable',
}

export const invalid = (path: string, why: string): DomainError => new DomainError(400, TextErrorCode.InvalidField, `${path}: ${why}`);
export const unsupported = (code: TextErrorCode, message: string): DomainError => new DomainError(422, code, message);
