/**
 * The sidebar: the database's root lists (the metamodel's root types that
 * hold lists, such as schemes and organizations) and below each object its
 * content lists, fetched when a node opens, a page at a time.
 */
import { useEffect, useState } from 'preact/hooks';
import { pagePath, type MetaList, type MetaType, type Metamodel, type Obj } from './api.ts';
import { labelOf, useApp, type AppState } from './state.ts';

/** Items per page in the tree and the object's lists. */
export const TREE_PAGE = 100;

interface ListPage { items: Obj[]; total: number; next?: string }

/** The lists shown in the tree: content, not relation objects (an item type whose label is formed from a reference, such as an attribution). */
export function contentLists(meta: Metamodel, type: MetaType): MetaList[] {
  return type.lists.filter((l) => !l.hidden && !l.inverse && !isRelationType(meta, meta.types[l.itemType]));
}

export function isRelationType(meta: Metamodel, type: MetaType | undefined): boolean {
  if (!type) return false;
  return (type.labelFrom ?? []).some((name) => type.properties.find((p) => p.name === name)?.dataType === 'REFERENCE');
}

export async function fetchPage(app: AppState, href: string, listName: string, cursorHref?: string): Promise<ListPage> {
  const answer = await app.api.call<{ total: number; _embedded?: Record<string, Obj[]>; _links: { next?: { href: string } } }>('GET', cursorHref ?? href, {
    query: cursorHref ? { version: app.version } : { limit: TREE_PAGE, version: app.version },
  });
  const items = answer.data._embedded?.[listName] ?? Object.values(answer.data._embedded ?? {})[0] ?? [];
  return { items, total: answer.data.total, next: answer.data._links.next?.href };
}

export function Tree() {
  const app = useApp();
  const meta = app.meta!;
  const roots = Object.values(meta.types).filter((t) => t.root && !t.abstract && !t.hidden && contentLists(meta, t).length > 0);
  return (
    <div class="tree">
      {roots.map((type) => (
        <section key={type.name} aria-labelledby={`tree-root-${type.plural}`}>
          <h2 id={`tree-root-${type.plural}`} class="tree-root">{type.labels[app.language] ?? type.label}</h2>
          <ListItems href={`/rest/${encodeURIComponent(app.db!)}/${type.plural}`} listName={type.plural} />
        </section>
      ))}
    </div>
  );
}

function ListItems({ href, listName }: { href: string; listName: string }) {
  const app = useApp();
  const [page, setPage] = useState<ListPage | undefined>();
  const [error, setError] = useState<string | undefined>();
  useEffect(() => {
    let live = true;
    fetchPage(app, href, listName).then((p) => live && setPage(p), (e) => live && setError(String(e.message)));
    return () => { live = false; };
  }, [href, app.version, app.changes]);
  if (error) return <p class="error">{error}</p>;
  if (!page) return <p class="muted" role="status">{app.t('loading')}</p>;
  if (!page.items.length) return <p class="muted">{app.t('empty')}</p>;
  const more = async () => {
    const next = await fetchPage(app, href, listName, page.next);
    setPage({ items: [...page.items, ...next.items], total: next.total, next: next.next });
  };
  return (
    <>
      <ul class="tree-list">
        {page.items.map((o) => <TreeNode key={o.id} obj={o} />)}
      </ul>
      {page.next && <button type="button" class="link-button" onClick={more}>{app.t('loadMore', { shown: page.items.length, total: page.total })}</button>}
    </>
  );
}

function TreeNode({ obj }: { obj: Obj }) {
  const app = useApp();
  const [open, setOpen] = useState(false);
  const type = app.meta!.types[obj._type];
  // Only the lists that hold something: the service links an object's list only then (decisions §7.3).
  const lists = type ? contentLists(app.meta!, type).filter((l) => !obj._links || obj._links[l.name]) : [];
  const label = obj.label || app.t('noLabel');
  const here = typeof window !== 'undefined' && obj.href && window.location.pathname === pagePath(obj.href);
  return (
    <li>
      <div class="tree-row">
        {lists.length > 0 ? (
          <button type="button" class="toggle" aria-expanded={open ? 'true' : 'false'} onClick={() => setOpen(!open)}
            aria-label={app.t(open ? 'collapse' : 'expand', { label })}>
            <span aria-hidden="true">{open ? '▾' : '▸'}</span>
          </button>
        ) : <span class="toggle-space" aria-hidden="true" />}
        <a href={app.link(pagePath(obj.href ?? ''))} aria-current={here ? 'page' : undefined}>{label}</a>
      </div>
      {open && (
        <ul class="tree-list">
          {lists.map((l) => <TreeList key={l.name} obj={obj} list={l} />)}
        </ul>
      )}
    </li>
  );
}

function TreeList({ obj, list }: { obj: Obj; list: MetaList }) {
  const app = useApp();
  const [open, setOpen] = useState(false);
  const href = obj._links?.[list.name]?.href ?? `${obj._links?.self.href}/${list.name}`;
  const label = labelOf(app, list);
  return (
    <li class="tree-group">
      <div class="tree-row">
        <button type="button" class="toggle" aria-expanded={open ? 'true' : 'false'} onClick={() => setOpen(!open)} aria-label={app.t(open ? 'collapse' : 'expand', { label: `${label} (${obj.label ?? ''})` })}>
          <span aria-hidden="true">{open ? '▾' : '▸'}</span>
        </button>
        <span class="group-label">{label}</span>
      </div>
      {open && <ListItems href={href} listName={list.name} />}
    </li>
  );
}
