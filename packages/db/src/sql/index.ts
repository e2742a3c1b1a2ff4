export * from './minutes-balance.ts';
export * from './append-ledger.ts';
export * from './lock-account.ts';
export * from './jobs/index.ts';
export * from './count-request.ts';
export * from './lease-replies.ts';
