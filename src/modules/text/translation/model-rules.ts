import type { TextModelId } from '../../../../libs/providers/index.js';

export type ReasoningLevel = 'minimal' | 'low' | 'medium' | 'high';

/** Model rules of the spec (both operations). */
export const MODEL_RULES: Record<TextModelId, { levels: ReasoningLevel[]; defaultLevel: ReasoningLevel; lite: boolean; thinkingBudget: boolean }> = {
  'vendor-3.8-flash': { levels: ['low', 'medium', 'high'], defaultLevel: 'medium', lite: false, thinkingBudget: false },
  'vendor-3.7-flash': { levels: ['low', 'medium', 'high'], defaultLevel: 'medium', lite: false, thinkingBudget: true },
  'vendor-3.5-flash-lite': { levels: ['minimal', 'low', 'medium', 'high'], defaultLevel: 'minimal', lite: true, thinkingBudget: true },
};
