export * from './schema.ts';
export * from './open.ts';
export * from './sql/index.ts';
