/** seqline-admin: the operator CLI (docs/admin.md). Exit codes: 0 ok, 1 failure, 2 usage, 3 unreachable. */
import { runCli } from './program.ts';

process.exitCode = await runCli(process.argv);
