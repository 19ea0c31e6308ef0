/**
 * Starts one of content search's worker threads. In the executable each is its own entry point
 * (scripts/build.ts), stored under its source path as .js; from source it is the .ts beside this file.
 */
export function startWorker(name: 'extract-worker' | 'index-writer' | 'snippet-reader'): Worker {
  const url = import.meta.url.includes('/$bunfs/')
    ? `/$bunfs/root/src/services/search/${name}.js`
    : new URL(`./${name}.ts`, import.meta.url).href;
  // `smol` keeps each worker's heap small; the caps on what they are given bound the rest.
  return new Worker(url, { smol: true });
}
