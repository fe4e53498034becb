/**
 * Finding objects by what a person types: label, title and description,
 * folded to lower case without common accents (`search_fold`, a database
 * migration), matched by substring and by trigram word similarity for
 * typos. Both conditions are answered by the trigram GIN index on
 * `search_text(label, title, description)`, so the expression here must be
 * the index's, word for word.
 */
import type { Knex } from 'knex';
import { schemaOf } from './migrations.ts';

/** How close a typo must come (pg_trgm's word similarity, 0 to 1): "Custmer" is 0.55 from "Customer". */
export const SIMILARITY_THRESHOLD = 0.5;

/** Description excerpts are cut to about this many characters around the match. */
const EXCERPT = 160;

export interface SearchQuery {
  text: string;
  tenant: string;
  /** System administrators find every tenant's Tenant object, as they list them. */
  allTenants: boolean;
  types: string[];
  offset: number;
  limit: number;
}

export interface SearchHit {
  id: string;
  type: string;
  label: string;
  title: string | null;
  excerpt: string | null;
}

export interface Ancestor {
  id: string;
  type: string;
  label: string;
  list: string;
  parentId: string | null;
}

/** `%`, `_` and the escape character itself stand for themselves. */
export function likeEscaped(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

export class SearchStore {
  private readonly s: string;

  constructor(private readonly knex: Knex, db: string) {
    this.s = `"${schemaOf(db)}"`;
  }

  /** One page of hits, best first: exact label, label prefix, title prefix, contained anywhere, similar. */
  async find(q: SearchQuery): Promise<SearchHit[]> {
    const s = this.s;
    const text = `${s}.search_text(o.label, o.title, o.description)`;
    const folded = `${s}.search_fold(:q)`;
    const prefix = `${s}.search_fold(:escaped) || '%'`;
    const contained = `'%' || ${s}.search_fold(:escaped) || '%'`;
    const sql = `
      select id, type, label, title, excerpt from (
        select o.id, o.type, o.label, o.title,
          case when ${s}.search_fold(o.label) = ${folded} then 0
               when ${s}.search_fold(o.label) like ${prefix} then 1
               when ${s}.search_fold(coalesce(o.title, '')) like ${prefix} then 2
               when ${text} like ${contained} then 3
               else 4 end as rank,
          public.word_similarity(${folded}, ${text}) as score,
          case when ${s}.search_fold(coalesce(o.description, '')) like ${contained}
               then substr(o.description, greatest(1, strpos(${s}.search_fold(o.description), ${folded}) - :before), :excerpt) end as excerpt
        from ${s}.objects o
        where (o.tenant = :tenant or (:allTenants and o.type = 'Tenant'))
          and o.type = any(:types)
          and (${text} like ${contained} or ${folded} operator(public.<%) ${text})
      ) hits
      order by rank, score desc, label, id
      limit :limit offset :offset`;
    return this.knex.transaction(async (trx) => {
      await trx.raw(`select set_config('pg_trgm.word_similarity_threshold', :threshold, true)`, { threshold: String(SIMILARITY_THRESHOLD) });
      const result = await trx.raw(sql, {
        q: q.text, escaped: likeEscaped(q.text), tenant: q.tenant, allTenants: q.allTenants, types: q.types,
        limit: q.limit, offset: q.offset, before: EXCERPT / 4, excerpt: EXCERPT,
      });
      return result.rows as SearchHit[];
    });
  }

  /** The objects above each of `ids`, nearest last, by id (the object itself included, first in the walk). */
  async ancestors(ids: string[]): Promise<Map<string, Ancestor[]>> {
    const chains = new Map<string, Ancestor[]>();
    if (!ids.length) return chains;
    const result = await this.knex.raw(`
      with recursive up as (
        select id as start, id, type, label, list, parent_id, 0 as depth from ${this.s}.objects where id = any(:ids)
        union all
        select up.start, o.id, o.type, o.label, o.list, o.parent_id, up.depth + 1
        from ${this.s}.objects o join up on o.id = up.parent_id where up.depth < 100
      )
      select start, id, type, label, list, parent_id from up order by start, depth desc`, { ids });
    for (const r of result.rows as (Ancestor & { start: string; parent_id: string | null })[]) {
      const chain = chains.get(r.start) ?? [];
      chain.push({ id: r.id, type: r.type, label: r.label, list: r.list, parentId: r.parent_id });
      chains.set(r.start, chain);
    }
    return chains;
  }
}
