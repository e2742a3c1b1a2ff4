export { centerCrop, cropWindow } from './crop-path.ts';
export { facesOnOutput } from './faces-on-output.ts';
export { type PlanCropOptions, panStepLimit, planCrop } from './plan-crop.ts';
export { choosePosterTime } from './poster.ts';
export type { FrameSample, FramingAnalysis, ScoredBox, Size, ToOutput } from './types.ts';
