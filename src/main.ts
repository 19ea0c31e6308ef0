import { restartWithHeapSizing } from './heap-sizing.ts';

restartWithHeapSizing();
const { buildProgram } = await import('../cli/program.ts');
await buildProgram().parseAsync(process.argv);
