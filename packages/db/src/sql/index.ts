export * from './minutes-balance.ts';
export * from './append-ledger.ts';
