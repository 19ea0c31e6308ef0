export * from './jobs.ts';
export * from './users.ts';
export * from './items.ts';
export * from './shares.ts';
export * from './audit.ts';
export * from './upload-intents.ts';
export * from './storage-location.ts';
export * from './docserver.ts';
