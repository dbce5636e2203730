export { buildProgram, runCli } from './program.ts';
export { EXIT, type ExitCode } from './errors.ts';
