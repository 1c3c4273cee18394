import type { TextModelId } from '../../../../libs/providers/index.js';

export type ReasoningLevel = 'minimal' | 'low' | 'medium' | 'high';

export interface ModelRule {
  /** Reasoning levels the model takes, and the one sent when the request names none. */
  levels: ReasoningLevel[];
  defaultLevel: ReasoningLevel;
  /** The lite model: custom sampling ignored, no penalties, no final assistant message. */
  lite: boolean;
  /** Whether a vendor `thinkingBudget` is accepted. */
  thinkingBudget: boolean;
}

/** Model rules of the spec (both operations). */
export const MODEL_RULES: Record<TextModelId, ModelRule> = {
  'vendor-3.8-flash': { levels: ['low', 'medium', 'high'], defaultLevel: 'medium', lite: false, thinkingBudget: false },
  'vendor-3.7-flash': { levels: ['low', 'medium', 'high'], defaultLevel: 'medium', lite: false, thinkingBudget: true },
  'vendor-3.5-flash-lite': { levels: ['minimal', 'low', 'medium', 'high'], defaultLevel: 'minimal', lite: true, thinkingBudget: true },
};
