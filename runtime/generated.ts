/** Loads what the generator emitted: the metamodel, the route table, validators, views, indexes and OpenAPI document. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Metamodel } from './metamodel/model.ts';
import type { Validators } from './rest/writer.ts';
import { RouteTable } from './rest/route-table.ts';

export interface Generated {
  metamodel: Metamodel;
  routes: RouteTable;
  validators: Validators;
  viewsSql: string;
  /** The indexes the metamodel asks for (inverse lists' references), applied with the views. */
  indexesSql: string;
  openapiYaml: string;
  openapiJson: string;
}

export async function loadGenerated(dir: string): Promise<Generated> {
  const load = (name: string) => import(pathToFileURL(join(dir, name)).href);
  const [metamodel, routes, validators] = await Promise.all([load('metamodel.gen.ts'), load('routes.gen.ts'), load('validators.gen.ts')]);
  return {
    metamodel: metamodel.metamodel,
    routes: new RouteTable(routes.restRoutes),
    validators: validators.validators,
    viewsSql: readFileSync(join(dir, 'views.gen.sql'), 'utf8'),
    indexesSql: readFileSync(join(dir, 'indexes.gen.sql'), 'utf8'),
    openapiYaml: readFileSync(join(dir, 'openapi.gen.yaml'), 'utf8'),
    openapiJson: readFileSync(join(dir, 'openapi.gen.json'), 'utf8'),
  };
}
