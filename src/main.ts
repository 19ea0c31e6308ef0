import { buildProgram } from '../cli/program.ts';

await buildProgram(process.argv).parseAsync(process.argv);
