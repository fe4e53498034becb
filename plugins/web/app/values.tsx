/** How a property's value reads on a page: by its data type, with labels from the metamodel. */
import { useEffect, useState } from 'preact/hooks';
import { pagePath, type MetaProperty, type Obj } from './api.ts';
import { markdownToSafeHtml } from './markdown.ts';
import { formatTime, labelOf, useApp, type AppState } from './state.ts';

export function kindOf(p: MetaProperty): string {
  return (p.custom ? p.baseType : p.dataType) ?? 'STRING';
}

export function valueOf(obj: Obj, p: MetaProperty): unknown {
  if (p.custom) return (obj.customProperties as Record<string, unknown> | undefined)?.[p.name];
  return obj[p.name];
}

/** Whether a custom property applies now (its `when`). */
export function applies(p: MetaProperty, read: (name: string) => unknown): boolean {
  return !p.when || read(p.when.property) === p.when.literal;
}

const labels = new Map<string, Promise<{ label: string; page: string } | null>>();

/** The label and page of a referenced object, fetched once per address and time. */
export function referenced(app: AppState, href: string): Promise<{ label: string; page: string } | null> {
  const key = `${href}@${app.version ?? ''}@${app.db}`;
  let found = labels.get(key);
  if (!found) {
    found = app.api.call<Obj>('GET', href, { query: { version: app.version } }).then(
      (a) => ({ label: a.data.label || a.data.id, page: pagePath(a.data.href ?? '') }),
      () => null,
    );
    labels.set(key, found);
    if (labels.size > 2000) labels.delete(labels.keys().next().value!);
  }
  return found;
}

export function forgetReferences(): void {
  labels.clear();
}

export function refHref(app: AppState, p: MetaProperty, id: string, obj?: Obj): string {
  const link = !p.custom ? obj?._links?.[p.name]?.href : undefined;
  if (link) return link;
  const plural = app.meta?.types[p.range ?? '']?.plural ?? 'assets';
  return `/rest/${encodeURIComponent(app.db!)}/${plural}/${id}`;
}

export function RefLink({ href, id }: { href: string; id: string }) {
  const app = useApp();
  const [target, setTarget] = useState<{ label: string; page: string } | null | undefined>();
  useEffect(() => {
    let live = true;
    referenced(app, href).then((t) => live && setTarget(t));
    return () => { live = false; };
  }, [href, app.version]);
  if (target === undefined) return <span class="muted">{id}</span>;
  if (target === null) return <code>{id}</code>;
  return <a href={app.link(target.page)}>{target.label}</a>;
}

export function Value({ p, value, obj }: { p: MetaProperty; value: unknown; obj?: Obj }) {
  const app = useApp();
  if (value === undefined || value === null || value === '') return <span class="muted">{app.t('notSet')}</span>;
  if (p.many && Array.isArray(value)) {
    return <ul class="values">{value.map((v, i) => <li key={i}><Value p={{ ...p, many: false }} value={v} /></li>)}</ul>;
  }
  const kind = kindOf(p);
  const literal = p.literals?.find((l) => l.value === value);
  if (literal) return <span>{labelOf(app, literal)}</span>;
  switch (kind) {
    case 'TEXT':
      return <div class="markdown" dangerouslySetInnerHTML={{ __html: markdownToSafeHtml(String(value)) }} />;
    case 'BOOLEAN':
      return <span>{app.t(value === true || value === 'true' ? 'yes' : 'no')}</span>;
    case 'DATETIME': {
      const ms = typeof value === 'number' ? value : Date.parse(String(value));
      return Number.isNaN(ms) ? <span>{String(value)}</span> : <time dateTime={new Date(ms).toISOString()}>{formatTime(app, ms)}</time>;
    }
    case 'UUID':
      return <code>{String(value)}</code>;
    case 'REFERENCE':
      return <RefLink href={refHref(app, p, String(value), obj)} id={String(value)} />;
    default:
      return <span>{typeof value === 'object' ? JSON.stringify(value) : String(value)}</span>;
  }
}
