/**
 * Finding objects by what a person types. Each object keeps its label and
 * title, and its description, folded to lower case without common accents
 * (`search_label`, `search_description`: generated columns of a database
 * migration, each with a trigram GIN index). A hit holds the text anywhere
 * (a LIKE the index answers, wildcards escaped) or, for texts of four
 * characters or more, comes close to a word of label or title (pg_trgm's
 * word similarity, the index again). Only what is found is ranked.
 */
import type { Knex } from 'knex';
import { schemaOf } from './migrations.ts';

/** How close a typo must come (pg_trgm's word similarity, 0 to 1): "Custmer" is 0.55 from "Customer". */
export const SIMILARITY_THRESHOLD = 0.5;
const MIN_SIMILAR = 4;

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

  /** One page of hits, best first: exact label, label prefix, a word of label or title starting with it, contained anywhere, similar. */
  find(q: SearchQuery): Promise<SearchHit[]> {
    return this.knex.transaction(async (trx) => {
      await trx.raw(`select set_config('pg_trgm.word_similarity_threshold', ?, true)`, [String(SIMILARITY_THRESHOLD)]);
      // The planner prices trigram scans of frequent trigrams above reading the whole table (on 100,000 objects a
      // three-character search took 100 ms that way, 65 ms through the index; a typo 550 ms against 170 ms).
      await trx.raw(`select set_config('enable_seqscan', 'off', true)`);
      return (await trx.raw(...this.statement(q))).rows as SearchHit[];
    });
  }

  /** The statement of `find`, to run in a transaction that set the similarity threshold. */
  statement(q: SearchQuery): [string, Record<string, unknown>] {
    const s = this.s;
    const folded = `${s}.search_fold(:q)`;
    const escaped = `${s}.search_fold(:escaped)`;
    const contained = `'%' || ${escaped} || '%'`;
    // Fewer than four characters have too few trigrams to tell a typo from another word.
    const similar = [...q.text].length >= MIN_SIMILAR ? ` or ${folded} operator(public.<%) o.search_label` : '';
    const sql = `
      select id, type, label, title, excerpt from (
        select id, type, label, title, rank, excerpt,
          case when rank = 4 then public.word_similarity(${folded}, search_label) else 0 end as score
        from (
          select o.id, o.type, o.label, o.title, o.search_label,
            case when o.search_label like ${escaped} || '%' then (case when ${s}.search_fold(o.label) = ${folded} then 0 else 1 end)
                 when o.search_label like '% ' || ${escaped} || '%' then 2
                 when o.search_label like ${contained} or o.search_description like ${contained} then 3
                 else 4 end as rank,
            case when o.search_description like ${contained}
                 then substr(o.description, greatest(1, strpos(o.search_description, ${folded}) - :before), :excerpt) end as excerpt
          from ${s}.objects o
          where (o.tenant = :tenant or (:allTenants and o.type = 'Tenant'))
            and o.type = any(:types)
            and (o.search_label like ${contained} or o.search_description like ${contained}${similar})
        ) matched
      ) ranked
      order by rank, score desc, label, id
      limit :limit offset :offset`;
    return [sql, {
      q: q.text, escaped: likeEscaped(q.text), tenant: q.tenant, allTenants: q.allTenants, types: q.types,
      limit: q.limit, offset: q.offset, before: EXCERPT / 4, excerpt: EXCERPT,
    }];
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
