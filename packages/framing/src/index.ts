export { type AnalyzeFramingOptions, analyzeFraming } from './analyze.ts';
export * from './plan/index.ts';
