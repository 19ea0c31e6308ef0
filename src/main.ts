import { buildProgram } from '../cli/program.ts';

await buildProgram().parseAsync(process.argv);
