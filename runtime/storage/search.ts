/**
 * Finding objects by what a person types. Each object keeps its label and
 * title, and its description, folded to lower case without common accents
 * (`search_label`, `search_description`: generated columns of a database
 * migration, each with a trigram GIN index). A hit holds the text anywhere
 * (a LIKE the index answers, wildcards escaped) or, for texts of four
 * characters or more, comes close to a word of label or title (pg_trgm's
 * word similarity, the index again). Only what is found is ranked.
 *
 * Most searches are a few characters typed into a field, and a short text
 * is the start of many labels: ranking every object that holds it costs
 * time in proportion to the database. The best tiers (the exact label,
 * then labels that start with the text) come first in every ranking, so a
 * page that they fill is read from them alone, in the order of a b-tree
 * index (tenant, folded label in byte order, id) that stops at the page's
 * end; only a page they do not fill asks the full ranking.
 */
import type { Knex } from 'knex';
import { schemaOf } from './migrations.ts';
import { parentStep } from './objects.ts';

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
      const need = q.offset + q.limit;
      const best = (await trx.raw(...this.prefixStatement(q))).rows as (SearchHit & { rank: number })[];
      if (best.length >= need) return best.slice(q.offset, need).map(({ rank: _rank, ...hit }) => hit);
      await trx.raw(`select set_config('pg_trgm.word_similarity_threshold', ?, true)`, [String(SIMILARITY_THRESHOLD)]);
      // The planner prices trigram scans of frequent trigrams above reading the whole table (on 100,000 objects a
      // three-character search took 100 ms that way, 65 ms through the index; a typo 550 ms against 170 ms).
      await trx.raw(`select set_config('enable_seqscan', 'off', true)`);
      return (await trx.raw(...this.statement(q))).rows as SearchHit[];
    });
  }

  /**
   * The first `offset + limit` hits of the two best tiers in the full
   * ranking's order: the exact label (a folded label equal to the text),
   * then the labels that start with it; each read in index order, so the
   * work ends with the page.
   */
  prefixStatement(q: SearchQuery): [string, Record<string, unknown>] {
    const s = this.s;
    const folded = `${s}.search_fold(:q)`;
    const escaped = `${s}.search_fold(:escaped)`;
    const key = `(o.search_label collate "C")`;
    const tier = (where: string, exact: boolean) => `(
        select o.id, o.type, o.label, o.title, ${key} as sort_key, ${exact ? 0 : 1} as rank,
          case when o.search_description like '%' || ${escaped} || '%'
               then substr(o.description, greatest(1, strpos(o.search_description, ${folded}) - :before), :excerpt) end as excerpt
        from ${s}.objects o
        where ${where} and o.type = any(:types) and ${s}.search_fold(o.label) ${exact ? '=' : 'is distinct from'} ${folded}
          and (${exact ? `${key} = ${folded} or ${key} like ${escaped} || ' %'` : `${key} like ${escaped} || '%'`})
        order by ${key}, o.id
        limit :need)`;
    // The caller's tenant, and for system administrators the other tenants' Tenant objects, each in index order.
    const scopes = ['o.tenant = :tenant', `:allTenants and o.type = 'Tenant' and o.tenant <> :tenant`];
    const sql = `
      select id, type, label, title, excerpt, rank from (
        ${[true, false].flatMap((exact) => scopes.map((scope) => tier(scope, exact))).join(' union all ')}
      ) best
      order by rank, sort_key, id
      limit :need`;
    return [sql, {
      q: q.text, escaped: likeEscaped(q.text), tenant: q.tenant, allTenants: q.allTenants, types: q.types,
      need: q.offset + q.limit, before: EXCERPT / 4, excerpt: EXCERPT,
    }];
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
        select id, type, label, title, rank, excerpt, search_label,
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
      order by rank, score desc, search_label collate "C", id
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
        from up cross join lateral ${parentStep(this.s, 'p.id, p.type, p.label, p.list, p.parent_id')} o where up.depth < 100
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
