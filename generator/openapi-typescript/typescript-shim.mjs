// The TypeScript compiler API as openapi-typescript imports it (`import ts from 'typescript'`); see typescript-hook.mjs.
import { ts } from 'ts-morph';

export default ts;
