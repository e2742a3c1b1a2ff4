export * from './word.ts';
export * from './job.ts';
export * from './upload.ts';
export * from './errors.ts';
export * from './plans.ts';
export * from './agent.ts';
export * from './fonts.ts';
export * from './languages.ts';
