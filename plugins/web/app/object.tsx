/**
 * An object's page (`/web/<db>/<plural>/<uuid>`, its `href`): breadcrumbs by
 * the parent links, its properties in the metamodel's groups and order, its
 * lists, its history, and for those who may write: edit, delete and new
 * children through the generated forms.
 */
import { Fragment } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, pagePath, type MetaList, type MetaProperty, type MetaType, type Obj } from './api.ts';
import { ObjectForm, initialValues, payloadOf, type FormValues } from './form.tsx';
import { formatTime, labelOf, typeLabel, typeOfPlural, useApp, type AppState } from './state.ts';
import { fetchPage, isRelationType } from './tree.tsx';
import { TransferPanel } from './transfer.tsx';
import { applies, forgetReferences, kindOf, RefLink, refHref, Value, valueOf } from './values.tsx';

interface Loaded { obj: Obj; etag: string | null }

/** The REST address of the object of a page address. */
export function objectPath(db: string, plural: string, id: string): string {
  return `/rest/${encodeURIComponent(db)}/${encodeURIComponent(plural)}/${encodeURIComponent(id)}`;
}

async function loadObject(app: AppState, plural: string, id: string): Promise<Loaded> {
  const a = await app.api.call<Obj>('GET', objectPath(app.db!, plural, id), { query: { version: app.version } });
  return { obj: a.data, etag: a.etag };
}

export function ObjectPage({ plural, id }: { plural: string; id: string }) {
  const app = useApp();
  const [loaded, setLoaded] = useState<Loaded | undefined>();
  const [error, setError] = useState<ApiError | Error | undefined>();
  const [mode, setMode] = useState<'view' | 'edit'>('view');
  const [notice, setNotice] = useState<{ text: string; kind: 'ok' | 'alert' } | undefined>();
  const [tick, setTick] = useState(0);
  const heading = useRef<HTMLHeadingElement>(null);
  const dialog = useRef<HTMLDialogElement>(null);

  useEffect(() => {
    let live = true;
    setError(undefined);
    loadObject(app, plural, id).then((l) => {
      if (!live) return;
      setLoaded(l);
    }, (e) => live && setError(e));
    return () => { live = false; };
  }, [plural, id, app.version, tick]);

  if (error) return <p class="error" role="alert">{error instanceof ApiError && error.status === 404 ? app.t('notFound') : app.t('error', { message: error.message })}</p>;
  if (!loaded) return <p role="status">{app.t('loading')}</p>;
  const { obj, etag } = loaded;
  const type = app.meta!.types[obj._type] ?? typeOfPlural(app.meta!, plural);
  if (!type) return <p class="error">{app.t('notFound')}</p>;
  const tLabel = typeLabel(app, obj._type);
  const writable = app.canEdit && !app.at;
  const selfHref = obj._links?.self.href ?? `/rest/${app.db}/${plural}/${id}`;

  const save = async (values: FormValues) => {
    try {
      await app.api.call('PUT', selfHref, { body: payloadOf(type, values, obj), headers: etag ? { 'If-Match': etag } : {} });
    } catch (e) {
      if (e instanceof ApiError && e.status === 412) {
        forgetReferences();
        setMode('view');
        setNotice({ text: app.t('conflict'), kind: 'alert' });
        setTick((n) => n + 1);
        return;
      }
      throw e;
    }
    forgetReferences();
    app.noteChange();
    setMode('view');
    setNotice({ text: app.t('saved'), kind: 'ok' });
    setTick((n) => n + 1);
    setTimeout(() => heading.current?.focus());
  };

  const remove = async () => {
    dialog.current?.close();
    try {
      await app.api.call('DELETE', selfHref, { headers: etag ? { 'If-Match': etag } : {} });
    } catch (e) {
      if (e instanceof ApiError && e.status === 412) {
        setNotice({ text: app.t('conflict'), kind: 'alert' });
        setTick((n) => n + 1);
        return;
      }
      setNotice({ text: e instanceof Error ? e.message : String(e), kind: 'alert' });
      return;
    }
    app.noteChange();
    const parent = obj._links?.parent?.href;
    let target = `${app.config.contextPath}/web/${encodeURIComponent(app.db!)}`;
    if (parent) {
      try {
        const p = await app.api.call<Obj>('GET', parent);
        if (p.data.href) target = pagePath(p.data.href);
      } catch { /* the database page then */ }
    }
    app.go(app.link(target));
  };

  return (
    <article class="object-page" aria-labelledby="object-heading">
      <Breadcrumbs obj={obj} />
      <div class="title-row">
        <h1 id="object-heading" tabIndex={-1} ref={heading}><span class="type-label">{tLabel}</span> {obj.label || app.t('noLabel')}</h1>
        {writable && mode === 'view' && (
          <div class="actions">
            <button type="button" onClick={() => { setNotice(undefined); setMode('edit'); }}>{app.t('edit')}</button>
            <button type="button" class="danger" onClick={() => dialog.current?.showModal()}>{app.t('delete')}</button>
          </div>
        )}
      </div>
      {notice && <p class={notice.kind === 'alert' ? 'error notice' : 'ok notice'} role={notice.kind === 'alert' ? 'alert' : 'status'}>{notice.text}</p>}
      {mode === 'edit' ? (
        <ObjectForm type={type} idPrefix="edit" initial={initialValues(type, obj)} heading={app.t('editObject', { type: tLabel, label: obj.label ?? '' })}
          submitLabel={app.t('save')} onSubmit={save} onCancel={() => setMode('view')} />
      ) : (
        <Properties type={type} obj={obj} />
      )}
      {(obj._type === 'Scheme' || obj._type === 'Collection') && mode === 'view' && (
        <TransferPanel obj={obj} onChanged={() => { forgetReferences(); app.noteChange(); setTick((n) => n + 1); }} />
      )}
      {type.lists.filter((l) => !l.hidden && fitsKind(app, obj, l)).map((l) => <ObjectList key={`${l.name}-${tick}`} owner={obj} list={l} writable={writable} />)}
      <History selfHref={selfHref} type={type} key={`h-${tick}`} />
      <dialog ref={dialog} aria-labelledby="delete-title" class="confirm">
        <form method="dialog" onSubmit={(e) => { e.preventDefault(); void remove(); }}>
          <h2 id="delete-title">{app.t('delete')}</h2>
          <p>{app.t('deleteConfirm', { type: tLabel, label: obj.label ?? '' })}</p>
          <div class="actions">
            <button type="submit" class="danger">{app.t('delete')}</button>
            <button type="button" onClick={() => dialog.current?.close()}>{app.t('cancel')}</button>
          </div>
        </form>
      </dialog>
    </article>
  );
}

/**
 * Whether a scheme's list may hold anything in a model of the scheme's kind
 * (decisions §7.1: a data catalog holds datasets, a system catalog systems …):
 * a list none of whose item types the kind allows is not shown (it would be
 * empty, and the service refuses what it offers to add).
 */
function fitsKind(app: AppState, obj: Obj, list: MetaList): boolean {
  const kind = obj._type === 'Scheme' ? obj.modelType : undefined;
  if (typeof kind !== 'string') return true;
  return list.itemTypes.some((name) => {
    const kinds = app.meta!.types[name]?.modelTypes;
    return !kinds || kinds.includes(kind);
  });
}

/** The path from the root: each parent by its `parent` link, read as of the page's time. */
function Breadcrumbs({ obj }: { obj: Obj }) {
  const app = useApp();
  const [chain, setChain] = useState<Obj[]>([]);
  useEffect(() => {
    let live = true;
    (async () => {
      const found: Obj[] = [];
      let href = obj._links?.parent?.href;
      for (let depth = 0; href && depth < 30; depth++) {
        try {
          const p = (await app.api.call<Obj>('GET', href, { query: { version: app.version } })).data;
          found.unshift(p);
          href = p._links?.parent?.href;
        } catch {
          break;
        }
      }
      if (live) setChain(found);
    })();
    return () => { live = false; };
  }, [obj.id, app.version]);
  return (
    <nav aria-label={app.t('breadcrumbs')} class="breadcrumbs">
      <ol>
        <li><a href={app.link(`${app.config.contextPath}/web/${encodeURIComponent(app.db!)}`)}>{app.db}</a></li>
        {chain.map((p) => <li key={p.id}><a href={app.link(pagePath(p.href ?? ''))}>{p.label || p.id}</a></li>)}
        <li><a href={app.link(pagePath(obj.href ?? ''))} aria-current="page">{obj.label || obj.id}</a></li>
      </ol>
    </nav>
  );
}

function Properties({ type, obj }: { type: MetaType; obj: Obj }) {
  const app = useApp();
  const visible = type.properties.filter((p) => !p.hidden && !p.writeOnly && applies(p, (name) => obj[name]));
  const groups = [...type.groups].filter((g) => !g.hidden).sort((a, b) => (a.order ?? Infinity) - (b.order ?? Infinity));
  const known = new Set(groups.map((g) => g.name));
  const sections: { key: string; title: string; props: MetaProperty[] }[] = groups.map((g) => ({ key: g.name, title: labelOf(app, g), props: visible.filter((p) => p.group === g.name) }));
  const rest = visible.filter((p) => !p.group || !known.has(p.group));
  if (rest.length) sections.push({ key: '_other', title: app.t('other'), props: rest });
  return (
    <div class="properties">
      {sections.filter((s) => s.props.length).map((s) => (
        <section key={s.key} aria-labelledby={`group-${s.key}`} class="group">
          <h2 id={`group-${s.key}`}>{s.title}</h2>
          <dl>
            {s.props.map((p) => (
              <div key={`${p.custom ? 'c' : 's'}-${p.name}`} class={`prop prop-${kindOf(p).toLowerCase()}`} data-property={p.name}>
                <dt title={p.description}>{labelOf(app, p)}</dt>
                <dd><Value p={p} value={valueOf(obj, p)} obj={obj} /></dd>
              </div>
            ))}
          </dl>
        </section>
      ))}
    </div>
  );
}

/** One of the object's lists: its items as links (a relation's references besides), paged; new items by the form of the item type. */
function ObjectList({ owner, list, writable }: { owner: Obj; list: MetaList; writable: boolean }) {
  const app = useApp();
  // An object links its lists only while they hold something (decisions §7.3): no link, nothing to ask for.
  const linked = owner._links?.[list.name]?.href;
  const href = linked ?? `${owner._links?.self.href}/${list.name}`;
  const empty = { items: [], total: 0 };
  const [page, setPage] = useState<{ items: Obj[]; total: number; next?: string } | undefined>(linked ? undefined : empty);
  const [error, setError] = useState<string | undefined>();
  const [adding, setAdding] = useState<string | undefined>();
  const label = labelOf(app, list);
  useEffect(() => {
    if (!linked) {
      setPage(empty);
      return;
    }
    let live = true;
    fetchPage(app, href, list.name).then((p) => live && setPage(p), (e) => live && setError(String(e.message)));
    return () => { live = false; };
  }, [href, linked, app.version]);
  const itemTypes = list.itemTypes.filter((t) => app.meta!.types[t] && !app.meta!.types[t].abstract && fitsKind(app, owner, { ...list, itemTypes: [t] }));
  const create = async (typeName: string, values: FormValues) => {
    const type = app.meta!.types[typeName];
    const created = await app.api.call<Obj>('POST', href, { body: payloadOf(type, values) });
    app.noteChange();
    setAdding(undefined);
    if (created.data.href && !isRelationType(app.meta!, type)) app.go(app.link(pagePath(created.data.href)));
    else setPage(await fetchPage(app, href, list.name));
  };
  const id = `list-${list.name}`;
  return (
    <section class="object-list" aria-labelledby={id}>
      <h2 id={id}>{label}{page ? <span class="count"> ({page.total})</span> : null}</h2>
      {error && <p class="error">{error}</p>}
      {page && !page.items.length && <p class="muted">{app.t('empty')}</p>}
      {page && page.items.length > 0 && (
        <ul class="items">
          {page.items.map((item) => <ListItem key={item.id} item={item} list={list} />)}
        </ul>
      )}
      {page?.next && (
        <button type="button" class="link-button" onClick={async () => {
          const next = await fetchPage(app, href, list.name, page.next);
          setPage({ items: [...page.items, ...next.items], total: next.total, next: next.next });
        }}>{app.t('loadMore', { shown: page.items.length, total: page.total })}</button>
      )}
      {writable && !list.readOnly && !list.inverse && !adding && itemTypes.map((t) => (
        <button type="button" key={t} class="add" onClick={() => setAdding(t)}>{app.t('add', { type: typeLabel(app, t) })}</button>
      ))}
      {adding && (
        <ObjectForm type={app.meta!.types[adding]} idPrefix={`new-${list.name}`} initial={initialValues(app.meta!.types[adding])}
          heading={app.t('newObject', { type: typeLabel(app, adding) })} submitLabel={app.t('create')}
          onSubmit={(v) => create(adding, v)} onCancel={() => setAdding(undefined)} />
      )}
    </section>
  );
}

function ListItem({ item, list }: { item: Obj; list: MetaList }) {
  const app = useApp();
  const type = app.meta!.types[item._type];
  const relation = type && isRelationType(app.meta!, type);
  // The reference that names this page's object: the owner in a list of children, the inverse property in an inverse list.
  const ownerProp = list.inverse ? list.inverseOf : type?.owner?.property;
  const refs = relation ? type!.properties.filter((p) => kindOf(p) === 'REFERENCE' && !p.hidden && p.name !== ownerProp && typeof item[p.name] === 'string') : [];
  return (
    <li>
      {relation ? (
        <>
          {refs.map((p) => (
            <span key={p.name} class="relation-ref"><span class="muted">{labelOf(app, p)}:</span> <RefLink href={refHref(app, p, String(item[p.name]), item)} id={String(item[p.name])} /></span>
          ))}
          {type!.properties.filter((p) => !p.hidden && kindOf(p) === 'STRING' && p.name !== 'label' && typeof item[p.name] === 'string' && p.group !== 'system').map((p) => (
            <span key={p.name} class="relation-ref"><span class="muted">{labelOf(app, p)}:</span> {String(item[p.name])}</span>
          ))}
          {item.href && <a class="relation-open" href={app.link(pagePath(item.href))}>{item.label || typeLabel(app, item._type)}</a>}
        </>
      ) : (
        <a href={app.link(pagePath(item.href ?? ''))}>{item.label || app.t('noLabel')}</a>
      )}
      {list.itemTypes.length > 1 && <span class="muted"> ({typeLabel(app, item._type)})</span>}
    </li>
  );
}

interface HistoryEntry { version: number; operation: 'create' | 'update' | 'delete'; validFrom: number; validTo: number | null; changedBy: string | null; changes: string[]; object?: Obj }
interface HistoryPage { items: HistoryEntry[]; total: number; next?: string }

const HISTORY_PAGE = 20;

function History({ selfHref, type }: { selfHref: string; type: MetaType }) {
  const app = useApp();
  const [entries, setEntries] = useState<HistoryPage | undefined>();
  const [error, setError] = useState<string | undefined>();
  const [open, setOpen] = useState<Set<number>>(new Set());
  const load = async (cursor?: string, limit = HISTORY_PAGE): Promise<HistoryPage> => {
    const a = await app.api.call<{ total: number; _embedded: { history: HistoryEntry[] }; _links: { next?: { href: string } } }>('GET', cursor ?? `${selfHref}/history`, { query: { limit } });
    return { items: a.data._embedded.history, total: a.data.total, next: a.data._links.next?.href };
  };
  useEffect(() => {
    let live = true;
    load().then((e) => live && setEntries(e), (e) => live && setError(String(e.message)));
    return () => { live = false; };
  }, [selfHref]);
  const propLabel = (name: string) => {
    const p = type.properties.find((x) => x.name === name && !x.custom);
    return p ? labelOf(app, p) : name;
  };
  /** What an entry changed, by the labels of the properties; the custom properties each by its own where the version before is at hand. */
  const changedLabels = (h: HistoryEntry, index: number) => h.changes.flatMap((name) => {
    if (name !== 'customProperties') return [propLabel(name)];
    const previous = entries!.items[index + 1]?.object;
    if ((h.operation !== 'create' && !previous) || !h.object) return [app.t('customProperties')];
    const before = (h.operation === 'create' ? {} : previous!.customProperties ?? {}) as Record<string, unknown>;
    return customChanges(type, before, (h.object.customProperties ?? {}) as Record<string, unknown>).map((c) => (c.p ? labelOf(app, c.p) : c.name));
  }).join(', ');
  /** The version before an entry: the next entry of the list, else the first of the next page (one entry only). */
  const older = async (index: number): Promise<Obj | undefined> => {
    const list = entries!;
    if (index + 1 < list.items.length) return list.items[index + 1].object;
    if (!list.next) return undefined;
    return (await load(list.next, 1)).items[0]?.object;
  };
  const toggle = (version: number) => setOpen((o) => {
    const n = new Set(o);
    if (n.has(version)) n.delete(version); else n.add(version);
    return n;
  });
  const path = window.location.pathname;
  return (
    <section class="history" aria-labelledby="history-heading">
      <h2 id="history-heading">{app.t('history')}</h2>
      {error && <p class="error">{error}</p>}
      {entries && (
        <div class="table-wrap">
        <table>
          <thead><tr><th scope="col">{app.t('historyVersion', { version: '' }).trim()}</th><th scope="col">{app.t('historyOperation')}</th><th scope="col">{app.t('historyWho')}</th><th scope="col">{app.t('historyWhen')}</th><th scope="col">{app.t('historyWhat')}</th><th scope="col"><span class="visually-hidden">{app.t('historyShow')}</span></th></tr></thead>
          <tbody>
            {entries.items.map((h, index) => {
              const expanded = open.has(h.version);
              const detailsId = `history-changes-${h.version}`;
              const expandable = h.operation !== 'delete' && h.changes.length > 0 && !!h.object;
              return (
                <Fragment key={h.version}>
                  <tr>
                    <td>{h.version}</td>
                    <td>{app.t(`op_${h.operation}`)}</td>
                    <td>{h.changedBy ?? ''}</td>
                    <td><time dateTime={new Date(h.validFrom).toISOString()}>{formatTime(app, h.validFrom)}</time></td>
                    <td>
                      {expandable ? (
                        <button type="button" class="disclosure" aria-expanded={expanded ? 'true' : 'false'} aria-controls={detailsId} onClick={() => toggle(h.version)}>
                          <span aria-hidden="true" class="disclosure-mark">{expanded ? '▾' : '▸'}</span>{' '}
                          {changedLabels(h, index)}
                          <span class="visually-hidden"> ({app.t('historyChanges', { version: h.version })})</span>
                        </button>
                      ) : changedLabels(h, index)}
                    </td>
                    <td>{h.operation !== 'delete' && <a href={`${path}?at=${encodeURIComponent(new Date(h.validFrom).toISOString())}`}>{app.t('historyShow')}<span class="visually-hidden"> {app.t('historyVersion', { version: h.version })}</span></a>}</td>
                  </tr>
                  {expandable && (
                    <tr id={detailsId} class="history-changes" hidden={!expanded}>
                      <td colSpan={6}>{expanded && <Changes type={type} entry={h} older={() => older(index)} />}</td>
                    </tr>
                  )}
                </Fragment>
              );
            })}
          </tbody>
        </table>
        </div>
      )}
      {entries?.next && <button type="button" class="link-button" onClick={async () => {
        const more = await load(entries.next);
        setEntries({ items: [...entries.items, ...more.items], total: more.total, next: more.next });
      }}>{app.t('loadMore', { shown: entries.items.length, total: entries.total })}</button>}
    </section>
  );
}

/** The custom properties whose values differ between two versions, in the order of the type's (those it no longer declares last). */
function customChanges(type: MetaType, a: Record<string, unknown>, b: Record<string, unknown>): { name: string; p?: MetaProperty }[] {
  const names = [...new Set([...Object.keys(a), ...Object.keys(b)])].filter((k) => JSON.stringify(a[k] ?? null) !== JSON.stringify(b[k] ?? null));
  const declared = type.properties.filter((x) => x.custom && names.includes(x.name));
  const undeclared = names.filter((n) => !declared.some((d) => d.name === n)).map((name) => ({ name }));
  return [...declared.filter((p) => !p.hidden).map((p) => ({ name: p.name, p })), ...undeclared];
}

/**
 * What one version changed: per changed property, its value before (from
 * the version before, none for a creation) and after, each shown as the
 * object's page shows it. A change of the custom properties is shown per
 * custom property that differs.
 */
function Changes({ type, entry, older }: { type: MetaType; entry: HistoryEntry; older(): Promise<Obj | undefined> }) {
  const app = useApp();
  const [before, setBefore] = useState<{ obj?: Obj } | undefined>(entry.operation === 'create' ? {} : undefined);
  const [error, setError] = useState<string | undefined>();
  useEffect(() => {
    if (before) return;
    let live = true;
    older().then((obj) => live && setBefore({ obj }), (e) => live && setError(String(e.message)));
    return () => { live = false; };
  }, []);
  if (error) return <p class="error">{error}</p>;
  if (!before) return <p role="status" class="muted">{app.t('historyLoadingOld')}</p>;
  const now = entry.object!;
  const rows: { key: string; label: string; p?: MetaProperty; old: unknown; new: unknown }[] = [];
  for (const name of entry.changes) {
    if (name === 'customProperties') {
      const a = (before.obj?.customProperties ?? {}) as Record<string, unknown>;
      const b = (now.customProperties ?? {}) as Record<string, unknown>;
      for (const c of customChanges(type, a, b)) rows.push({ key: `c-${c.name}`, label: c.p ? labelOf(app, c.p) : c.name, p: c.p, old: a[c.name], new: b[c.name] });
      continue;
    }
    const p = type.properties.find((x) => x.name === name && !x.custom);
    if (p?.writeOnly || p?.hidden) continue;
    rows.push({ key: `s-${name}`, label: p ? labelOf(app, p) : name, p, old: before.obj?.[name], new: now[name] });
  }
  const shown = (p: MetaProperty | undefined, value: unknown, obj: Obj | undefined) =>
    p ? <Value p={p} value={value} obj={obj} /> : value === undefined || value === null ? <span class="muted">{app.t('notSet')}</span> : <span>{typeof value === 'object' ? JSON.stringify(value) : String(value)}</span>;
  return (
    <table class="changes" aria-label={app.t('historyChanges', { version: entry.version })}>
      <thead><tr><th scope="col">{app.t('historyProperty')}</th><th scope="col">{app.t('historyOld')}</th><th scope="col">{app.t('historyNew')}</th></tr></thead>
      <tbody>
        {rows.map((r) => (
          <tr key={r.key} data-property={r.key.slice(2)}>
            <th scope="row">{r.label}</th>
            <td class="old">{shown(r.p, r.old, before.obj)}</td>
            <td class="new">{shown(r.p, r.new, now)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
