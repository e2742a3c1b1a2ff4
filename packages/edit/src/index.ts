export { planEdit, type PlanEditInput, type PlannedEdit } from './plan.ts';
export type { EditWord } from './cuts.ts';
export { EditFailure } from './failure.ts';
export { type VoiceEnvelope, voiceEnvelope, voicedRegions } from './voiced.ts';
export { fillerPrompt } from './fillers.ts';
export { maskWord } from './profanity.ts';
