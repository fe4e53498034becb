#!/usr/bin/env node
// The package's command-line tool (client/cli.ts), run through tsx so that it works from a checkout.
import { register } from 'tsx/esm/api';

register();
const { run } = await import('../client/cli.ts');
process.exitCode = await run(process.argv.slice(2), { env: process.env, stdout: process.stdout, stderr: process.stderr });
