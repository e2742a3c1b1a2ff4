export * from './word.ts';
