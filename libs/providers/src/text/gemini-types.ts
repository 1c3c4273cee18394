/**
 * The Gemini `generateContent` / `streamGenerateContent` wire shapes (UPSTREAM §1), as far as
 * the text operations use them. Field names are the wire's lowerCamelCase. Parts are kept as
 * open records: whatever the upstream returns travels back byte for byte.
 */
/** Gemini's largest `maxOutputTokens`; the output cap when a request sets none. */
export const MAX_OUTPUT_TOKENS = 65_536;

export interface GeminiInlineData {
  mimeType: string;
  data: string;
}

export interface GeminiFunctionCall {
  id?: string;
  name: string;
  args?: Record<string, unknown>;
}

export interface GeminiFunctionResponse {
  id?: string;
  name: string;
  response: Record<string, unknown>;
  parts?: Array<{ inlineData: GeminiInlineData }>;
}

export interface GeminiPart {
  text?: string;
  thought?: boolean;
  thoughtSignature?: string;
  inlineData?: GeminiInlineData;
  fileData?: { mimeType?: string; fileUri: string };
  functionCall?: GeminiFunctionCall;
  functionResponse?: GeminiFunctionResponse;
  executableCode?: { language?: string; code: string; id?: string };
  codeExecutionResult?: { outcome?: string; output?: string; id?: string };
  videoMetadata?: { startOffset?: string; endOffset?: string; fps?: number };
  mediaResolution?: { level: string };
  [other: string]: unknown;
}

export interface GeminiContent {
  role: 'user' | 'model';
  parts: GeminiPart[];
}

export interface GeminiThinkingConfig {
  thinkingLevel?: string;
  thinkingBudget?: number;
  includeThoughts?: boolean;
}

export interface GeminiGenerationConfig {
  temperature?: number;
  topP?: number;
  topK?: number;
  candidateCount?: number;
  maxOutputTokens?: number;
  stopSequences?: string[];
  seed?: number;
  presencePenalty?: number;
  frequencyPenalty?: number;
  responseMimeType?: string;
  responseSchema?: unknown;
  responseJsonSchema?: unknown;
  thinkingConfig?: GeminiThinkingConfig;
  [other: string]: unknown;
}

export interface GeminiFunctionDeclaration {
  name: string;
  description?: string;
  parametersJsonSchema?: unknown;
  parameters?: unknown;
}

export interface GeminiTool {
  functionDeclarations?: GeminiFunctionDeclaration[];
  codeExecution?: Record<string, unknown>;
  computerUse?: { environment?: string; excludedPredefinedFunctions?: string[]; enablePromptInjectionDetection?: boolean };
  [other: string]: unknown;
}

export interface GeminiFunctionCallingConfig {
  mode?: 'AUTO' | 'ANY' | 'NONE' | 'VALIDATED';
  allowedFunctionNames?: string[];
  [other: string]: unknown;
}

export interface GeminiRequest {
  contents: GeminiContent[];
  systemInstruction?: { parts: GeminiPart[] };
  tools?: GeminiTool[];
  toolConfig?: { functionCallingConfig?: GeminiFunctionCallingConfig; [other: string]: unknown };
  safetySettings?: unknown[];
  generationConfig?: GeminiGenerationConfig;
}

export interface GeminiUsage {
  promptTokenCount?: number;
  candidatesTokenCount?: number;
  thoughtsTokenCount?: number;
  toolUsePromptTokenCount?: number;
  cachedContentTokenCount?: number;
  totalTokenCount?: number;
}

export interface GeminiCandidate {
  content?: { role?: string; parts?: GeminiPart[] };
  finishReason?: string;
  finishMessage?: string;
  index?: number;
  [other: string]: unknown;
}

export interface GeminiResponse {
  candidates?: GeminiCandidate[];
  promptFeedback?: { blockReason?: string; [other: string]: unknown };
  usageMetadata?: GeminiUsage;
  modelVersion?: string;
  responseId?: string;
}

/** The model families of the spec and their Gemini ids. */
export const TEXT_MODEL_IDS = ['vendor-3.8-flash', 'vendor-3.7-flash', 'vendor-3.5-flash-lite'] as const;
export type TextModelId = (typeof TEXT_MODEL_IDS)[number];

export const isTextModel = (model: unknown): model is TextModelId =>
  typeof model === 'string' && (TEXT_MODEL_IDS as readonly string[]).includes(model);

/** `vendor-3.8-flash` → `gemini-3.8-flash` (the neutral word of the spec stands for the vendor). */
export const upstreamModelId = (model: TextModelId): string => model.replace(/^vendor-/, 'gemini-');
