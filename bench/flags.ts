/** `--name N` from the command line, a positive number, else `fallback`; anything else stops the bench by name. */
export function flag(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  if (i < 0) return fallback;
  const value = Number(process.argv[i + 1]);
  if (!(value > 0)) throw new Error(`--${name} needs a positive number`);
  return value;
}
