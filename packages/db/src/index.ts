export * from './schema.ts';
export * from './open.ts';
export * from './dialect.ts';
export * from './prepared.ts';
export * from './sql/index.ts';
export * from './copy.ts';
