process.env.LOG_LEVEL ??= 'silent';
process.on('unhandledRejection', (reason) => {
  throw reason instanceof Error ? reason : new Error(String(reason));
});
