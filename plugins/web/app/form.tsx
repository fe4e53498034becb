/**
 * Forms generated from the metamodel: one field per property the person may
 * write (not read-only, not hidden, not the owner reference that the list
 * path sets), mandatory ones marked, literals as choices, references chosen
 * by searching (a list of references as removable chips, in their order),
 * write-only ones (a password) as an input that is never filled in and
 * sent only when typed into, a list of records (a time series) as its JSON,
 * custom properties by their base type, a scheme's `profiles` as a choice
 * of the tenant's named profiles. The service's violations are shown
 * at the fields they name (one within a value at the field that holds it).
 */
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { ApiError, type ErrorPayload, type MetaProperty, type MetaType, type Obj, type SearchHit } from './api.ts';
import { applies, kindOf, referenced, refHref, RefLink, valueOf } from './values.tsx';
import { labelOf, typeLabel, useApp } from './state.ts';
import { useNamedProfiles } from './named-profiles.ts';

export type FormValues = Record<string, string>;

export function fieldKey(p: MetaProperty): string {
  return p.custom ? `customProperties.${p.name}` : p.name;
}

/** The properties a form asks for, in the metamodel's order. */
export function formProperties(type: MetaType): MetaProperty[] {
  const owner = type.owner?.property;
  return type.properties.filter((p) => !p.readOnly && !p.hidden && p.name !== owner);
}

function toInput(p: MetaProperty, value: unknown): string {
  // A write-only value (a password) is never read back, and never filled in.
  if (value === undefined || value === null || p.writeOnly) return '';
  const kind = kindOf(p);
  if (p.many && Array.isArray(value)) return value.join('\n');
  // A list of records (a time series) is edited as its JSON.
  if (kind === 'RECORDS') return JSON.stringify(value, null, 2);
  if (kind === 'DATETIME') {
    const ms = typeof value === 'number' ? value : Date.parse(String(value));
    if (Number.isNaN(ms)) return '';
    return new Date(ms - new Date(ms).getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
  }
  if (kind === 'BOOLEAN') return value === true || value === 'true' ? 'true' : 'false';
  return String(value);
}

function fromInput(p: MetaProperty, text: string): unknown {
  const kind = kindOf(p);
  if (p.many) return text.split('\n').map((s) => s.trim()).filter(Boolean).map((s) => fromInput({ ...p, many: false }, s));
  switch (kind) {
    case 'RECORDS':
      // Text that is no JSON goes as it is: the service names the field.
      try { return JSON.parse(text); } catch { return text; }
    case 'INTEGER': return /^-?\d+$/.test(text.trim()) ? Number(text) : text;
    case 'DECIMAL': return text.trim() !== '' && !Number.isNaN(Number(text)) ? Number(text) : text;
    case 'BOOLEAN': return text === 'true';
    case 'DATETIME': {
      const ms = Date.parse(text);
      if (Number.isNaN(ms)) return text;
      return p.custom ? new Date(ms).toISOString() : ms;
    }
    default: return text;
  }
}

export function initialValues(type: MetaType, obj?: Obj): FormValues {
  const values: FormValues = {};
  for (const p of formProperties(type)) {
    const v = obj ? valueOf(obj, p) : p.writeOnly ? undefined : p.default;
    values[fieldKey(p)] = toInput(p, v);
  }
  return values;
}

/** The payload: for a change, the object as read with the form's values over it (a PUT writes it back whole); for a new one, only what was filled in. */
export function payloadOf(type: MetaType, values: FormValues, base?: Obj): Record<string, unknown> {
  const out: Record<string, unknown> = base ? { ...base } : { _type: type.name };
  delete out._links;
  delete out._embedded;
  delete out.href;
  const custom: Record<string, unknown> = { ...((base?.customProperties as Record<string, unknown>) ?? {}) };
  for (const p of formProperties(type)) {
    const text = values[fieldKey(p)] ?? '';
    const target = p.custom ? custom : out;
    const active = applies(p, (name) => values[name]);
    // An empty write-only field leaves the value as it is: absent from the body (a PUT keeps the stored secret).
    if (text === '' || !active) delete target[p.name];
    else target[p.name] = fromInput(p, text);
  }
  if (Object.keys(custom).length) out.customProperties = custom;
  else delete out.customProperties;
  out._type = base?._type ?? type.name;
  return out;
}

/** Violations by field key; those that name no field of the form under ''. */
export function violationsByField(type: MetaType, payload: ErrorPayload | undefined): Record<string, string[]> {
  const keys = new Set(formProperties(type).map(fieldKey));
  const out: Record<string, string[]> = {};
  for (const v of payload?.violations ?? []) {
    const path = String(v.path ?? '').replace(/^[/$.]+/, '').replace(/\//g, '.').replace(/\[\d+\]$/, '');
    // A violation within a value (`timeSeries.0.code`, `tags.1`) is shown at the field that holds it.
    const key = keys.has(path) ? path : keys.has(`customProperties.${path}`) ? `customProperties.${path}` : [...keys].find((k) => path.startsWith(`${k}.`)) ?? '';
    (out[key] ??= []).push(v.message);
  }
  return out;
}

export function ObjectForm(props: {
  type: MetaType;
  idPrefix: string;
  initial: FormValues;
  heading: string;
  submitLabel: string;
  onSubmit(values: FormValues): Promise<void>;
  onCancel(): void;
}) {
  const app = useApp();
  const { type, idPrefix } = props;
  const [values, setValues] = useState<FormValues>(props.initial);
  const [errors, setErrors] = useState<Record<string, string[]>>({});
  const [message, setMessage] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  const formRef = useRef<HTMLFormElement>(null);
  // Before the browser paints, not after (useEffect runs later, on the next frame): a person or a test that
  // already moved into the form would otherwise have the focus taken back to its first field.
  useLayoutEffect(() => {
    formRef.current?.querySelector<HTMLElement>('input, select, textarea')?.focus();
  }, []);
  const set = (key: string, value: string) => setValues((v) => ({ ...v, [key]: value }));
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setMessage(undefined);
    setErrors({});
    try {
      await props.onSubmit(values);
    } catch (error) {
      if (error instanceof ApiError && error.status === 400 && error.payload?.violations?.length) {
        const byField = violationsByField(type, error.payload);
        setErrors(byField);
        setMessage(`${error.payload.message} ${app.t('invalid')}`);
        setTimeout(() => formRef.current?.querySelector<HTMLElement>('[aria-invalid="true"]')?.focus());
      } else {
        setMessage(error instanceof Error ? error.message : String(error));
      }
    } finally {
      setBusy(false);
    }
  };
  const props_ = formProperties(type).filter((p) => applies(p, (name) => values[name]));
  return (
    <form ref={formRef} class="form object-form" noValidate onSubmit={submit} aria-labelledby={`${idPrefix}-heading`}>
      <h2 id={`${idPrefix}-heading`}>{props.heading}</h2>
      {message && (
        <div class="error" role="alert">
          <p>{message}</p>
          {errors['']?.length ? <ul>{errors[''].map((m, i) => <li key={i}>{m}</li>)}</ul> : null}
        </div>
      )}
      {props_.map((p) => <Field key={fieldKey(p)} p={p} id={`${idPrefix}-${fieldKey(p).replace(/\W/g, '-')}`} value={values[fieldKey(p)] ?? ''} errors={errors[fieldKey(p)]} onChange={(v) => set(fieldKey(p), v)} />)}
      <div class="actions">
        <button type="submit" class="primary" disabled={busy}>{props.submitLabel}</button>
        <button type="button" onClick={props.onCancel}>{app.t('cancel')}</button>
      </div>
    </form>
  );
}

function Field({ p, id, value, errors, onChange }: { p: MetaProperty; id: string; value: string; errors?: string[]; onChange(v: string): void }) {
  const app = useApp();
  const kind = kindOf(p);
  const label = labelOf(app, p);
  const describedBy = [errors?.length ? `${id}-error` : '', p.description ? `${id}-help` : '', p.writeOnly ? `${id}-secret` : ''].filter(Boolean).join(' ') || undefined;
  const common = {
    id,
    name: fieldKey(p),
    'aria-invalid': errors?.length ? ('true' as const) : undefined,
    'aria-describedby': describedBy,
    required: p.mandatory,
    'aria-required': p.mandatory ? ('true' as const) : undefined,
  };
  const onInput = (e: Event) => onChange((e.currentTarget as HTMLInputElement).value);
  const grouped = (kind === 'REFERENCE' && !p.literals?.length) || isSchemeProfiles(p);
  let control;
  if (isSchemeProfiles(p)) {
    control = <SchemeProfilesField id={id} value={value} onChange={onChange} describedBy={describedBy} invalid={!!errors?.length} />;
  } else if (p.literals?.length) {
    control = (
      <select {...common} value={value} onChange={onInput}>
        <option value="">{app.t('notSet')}</option>
        {p.literals.filter((l) => !l.hidden || l.value === value).map((l) => <option key={l.value} value={l.value}>{labelOf(app, l)}</option>)}
      </select>
    );
  } else if (kind === 'REFERENCE' && p.many) {
    control = <ReferencesField p={p} id={id} value={value} onChange={onChange} describedBy={describedBy} invalid={!!errors?.length} />;
  } else if (kind === 'REFERENCE') {
    control = <ReferenceField p={p} id={id} value={value} onChange={onChange} describedBy={describedBy} invalid={!!errors?.length} />;
  } else if (p.writeOnly) {
    // Never filled in (the service never returns it), not offered to the browser's autofill as the person's own sign-in.
    control = <input {...common} type="password" autoComplete="new-password" maxLength={p.limits.maxLength as number | undefined} value={value} onInput={onInput} />;
  } else if (kind === 'TEXT' || kind === 'RECORDS' || p.many) {
    control = <textarea {...common} rows={p.many ? 3 : 5} maxLength={p.limits.maxLength as number | undefined} value={value} onInput={onInput} />;
  } else if (kind === 'BOOLEAN') {
    control = (
      <select {...common} value={value} onChange={onInput}>
        <option value="">{app.t('notSet')}</option>
        <option value="true">{app.t('yes')}</option>
        <option value="false">{app.t('no')}</option>
      </select>
    );
  } else {
    const type = (kind === 'INTEGER' || kind === 'DECIMAL' ? 'number' : kind === 'DATETIME' ? 'datetime-local' : kind === 'DATE' ? 'date' : 'text') as 'text';
    control = <input {...common} type={type} step={kind === 'DECIMAL' ? 'any' : kind === 'INTEGER' ? '1' : undefined} maxLength={p.limits.maxLength as number | undefined} value={value} onInput={onInput} />;
  }
  return (
    <div class={`field${errors?.length ? ' invalid' : ''}`}>
      {grouped ? (
        <span class="label" id={`${id}-label`}>{label}{p.mandatory && <span class="mandatory"> ({app.t('required')})</span>}</span>
      ) : (
        <label for={id}>{label}{p.mandatory && <span class="mandatory"> ({app.t('required')})</span>}</label>
      )}
      {control}
      {p.description && <p class="help" id={`${id}-help`}>{p.description}</p>}
      {p.writeOnly && <p class="help" id={`${id}-secret`}>{app.t('writeOnlyHelp')}</p>}
      {errors?.length ? <p class="field-error" id={`${id}-error`}>{errors.join(' ')}</p> : null}
    </div>
  );
}

/** The objects of the referenced type (any, for a custom reference) whose label matches what is typed; those already chosen left out. */
function useReferenceHits(p: MetaProperty, q: string, chosen: string[]): SearchHit[] {
  const app = useApp();
  const [hits, setHits] = useState<SearchHit[]>([]);
  const range = p.range ?? '';
  useEffect(() => {
    const text = q.trim();
    if (!text) { setHits([]); return; }
    const c = new AbortController();
    const timer = setTimeout(() => {
      app.api.search(app.db!, text.slice(0, 200), c.signal, range && app.meta?.types[range] ? range : undefined).then(setHits, () => undefined);
    }, 200);
    return () => { clearTimeout(timer); c.abort(); };
  }, [q]);
  return hits.filter((h) => !chosen.includes(h.id));
}

/** The search field of a reference and its hits, each a button that chooses it. */
function ReferenceSearch({ p, id, describedBy, invalid, chosen, onChoose, inputRef }: {
  p: MetaProperty; id: string; describedBy?: string; invalid: boolean; chosen: string[]; onChoose(hit: SearchHit): void; inputRef?: { current: HTMLInputElement | null };
}) {
  const app = useApp();
  const [q, setQ] = useState('');
  const hits = useReferenceHits(p, q, chosen);
  const range = p.range ?? '';
  const prompt = app.t(range ? 'referenceSearch' : 'referenceSearchAny', { type: range ? typeLabel(app, range) : '' });
  return (
    <>
      <label for={id} class="visually-hidden">{prompt}</label>
      <input id={id} ref={inputRef} type="search" placeholder={prompt} aria-invalid={invalid ? 'true' : undefined}
        aria-describedby={describedBy} value={q} onInput={(e) => setQ((e.currentTarget as HTMLInputElement).value)} />
      {hits.length > 0 && (
        <ul class="reference-hits" aria-label={app.t('referenceHits')}>
          {hits.map((h) => (
            <li key={h.id}>
              <button type="button" onClick={() => { onChoose(h); setQ(''); }}>
                {typeLabel(app, h._type)}: {h.label}
              </button>
            </li>
          ))}
        </ul>
      )}
    </>
  );
}

/** A reference: the chosen object, and a search among the objects of the referenced type. */
function ReferenceField({ p, id, value, onChange, describedBy, invalid }: { p: MetaProperty; id: string; value: string; onChange(v: string): void; describedBy?: string; invalid: boolean }) {
  const app = useApp();
  return (
    <div class="reference" role="group" aria-labelledby={`${id}-label`} aria-describedby={describedBy}>
      {value ? (
        <p class="chosen">
          {app.t('referenceCurrent', { label: '' })}<RefLink href={refHref(app, p, value)} id={value} />{' '}
          <button type="button" class="link-button" onClick={() => onChange('')}>{app.t('referenceClear')}</button>
        </p>
      ) : null}
      <ReferenceSearch p={p} id={id} describedBy={describedBy} invalid={invalid} chosen={value ? [value] : []} onChoose={(h) => onChange(h.id)} />
    </div>
  );
}

/** The REST address of a chosen object: as the search named it, else by the property's range. */
const chosenHrefs = new Map<string, string>();

/**
 * A list of references (a many-valued reference property): the chosen
 * objects in their order, each a link with a button that removes it, and a
 * search that adds one at the end. The value is the technical keys, one a
 * line, as `fromInput` turns into the array the REST interface takes.
 */
function ReferencesField({ p, id, value, onChange, describedBy, invalid }: { p: MetaProperty; id: string; value: string; onChange(v: string): void; describedBy?: string; invalid: boolean }) {
  const app = useApp();
  const ids = value.split('\n').map((s) => s.trim()).filter(Boolean);
  const list = useRef<HTMLUListElement>(null);
  const search = useRef<HTMLInputElement>(null);
  // Where the focus goes once the chips are drawn anew: the chip that took a removed one's place (else the search), or the search after an addition.
  const focusNext = useRef<number | 'search' | undefined>(undefined);
  useLayoutEffect(() => {
    const next = focusNext.current;
    if (next === undefined) return;
    focusNext.current = undefined;
    const buttons = list.current?.querySelectorAll<HTMLButtonElement>('button.remove');
    (next === 'search' ? search.current : buttons?.[Math.min(next, buttons.length - 1)] ?? search.current)?.focus();
  }, [value]);
  const remove = (index: number) => {
    focusNext.current = index;
    onChange(ids.filter((_, i) => i !== index).join('\n'));
  };
  const add = (hit: SearchHit) => {
    if (hit._links?.self?.href) chosenHrefs.set(hit.id, hit._links.self.href);
    if (chosenHrefs.size > 2000) chosenHrefs.delete(chosenHrefs.keys().next().value!);
    focusNext.current = 'search';
    onChange([...ids, hit.id].join('\n'));
  };
  const hrefOf = (ref: string) => chosenHrefs.get(ref) ?? refHref(app, p, ref);
  return (
    <div class="reference references" role="group" aria-labelledby={`${id}-label`} aria-describedby={describedBy}>
      {ids.length ? (
        <ul class="chips" ref={list} aria-label={app.t('referencesChosen', { count: ids.length })}>
          {ids.map((ref, i) => <Chip key={ref} href={hrefOf(ref)} id={ref} onRemove={() => remove(i)} />)}
        </ul>
      ) : <p class="muted chosen">{app.t('referencesNone')}</p>}
      <ReferenceSearch p={p} id={id} describedBy={describedBy} invalid={invalid} chosen={ids} onChoose={add} inputRef={search} />
    </div>
  );
}

/** One chosen object: its link, and a button named after it that removes it. */
function Chip({ href, id, onRemove }: { href: string; id: string; onRemove(): void }) {
  const app = useApp();
  const [label, setLabel] = useState<string>(id);
  useEffect(() => {
    let live = true;
    referenced(app, href).then((t) => live && t && setLabel(t.label));
    return () => { live = false; };
  }, [href]);
  return (
    <li class="chip">
      <RefLink href={href} id={id} />
      <button type="button" class="remove" aria-label={app.t('referenceRemove', { label })} title={app.t('referenceRemove', { label })} onClick={onRemove}>
        <span aria-hidden="true">×</span>
      </button>
    </li>
  );
}

/** A scheme's `profiles`: names of the tenant's profiles, chosen from those it has rather than typed. */
function isSchemeProfiles(p: MetaProperty): boolean {
  return !p.custom && p.name === 'profiles' && p.declaredBy === 'Scheme';
}

/** Names a scheme may give beside the named profiles: the tenant's annotations and the standard ones (the service takes them too). */
const OTHER_PROFILES = ['annotations', 'standard-annotations'];

/**
 * The profiles of a scheme, in order (later ones win): each chosen one with
 * buttons that move it up and remove it, and a choice among the tenant's
 * named profiles not chosen yet that adds one at the end. A name the tenant
 * no longer has stays until it is removed, marked so. The value is the
 * names, one a line, as `fromInput` turns into the list the REST interface takes.
 */
function SchemeProfilesField({ id, value, onChange, describedBy, invalid }: { id: string; value: string; onChange(v: string): void; describedBy?: string; invalid: boolean }) {
  const app = useApp();
  const { named, error } = useNamedProfiles(app.db!);
  const names = value.split('\n').map((s) => s.trim()).filter(Boolean);
  const offered = (named ?? []).map((p) => p.name).filter((n) => !names.includes(n));
  const [pick, setPick] = useState('');
  const list = useRef<HTMLOListElement>(null);
  const adder = useRef<HTMLSelectElement>(null);
  // Where the focus goes once the list is drawn anew: the moved or next profile's button, or the choice.
  const focusNext = useRef<{ index: number; which: 'up' | 'remove' } | 'add' | undefined>(undefined);
  useLayoutEffect(() => {
    const next = focusNext.current;
    if (next === undefined) return;
    focusNext.current = undefined;
    const items = list.current?.querySelectorAll<HTMLLIElement>('li') ?? [];
    // The choice is gone once every named profile is chosen: then the profile just added.
    if (next === 'add') return (adder.current ?? items[items.length - 1]?.querySelector<HTMLButtonElement>('button.remove'))?.focus();
    const item = items[Math.min(next.index, items.length - 1)];
    (item?.querySelector<HTMLButtonElement>(`button.${next.which}`) ?? item?.querySelector<HTMLButtonElement>('button.remove') ?? adder.current)?.focus();
  }, [value]);
  const set = (next: string[]) => onChange(next.join('\n'));
  const remove = (i: number) => { focusNext.current = { index: i, which: 'remove' }; set(names.filter((_, j) => j !== i)); };
  const up = (i: number) => { focusNext.current = { index: i - 1, which: i - 1 > 0 ? 'up' : 'remove' }; set([...names.slice(0, i - 1), names[i], names[i - 1], ...names.slice(i + 1)]); };
  const add = () => {
    const chosen = pick || offered[0];
    if (!chosen) return;
    focusNext.current = 'add';
    setPick('');
    set([...names, chosen]);
  };
  const known = (n: string) => !named || named.some((p) => p.name === n) || OTHER_PROFILES.includes(n);
  return (
    <div class="reference references scheme-profiles" role="group" aria-labelledby={`${id}-label`} aria-describedby={describedBy}>
      {names.length ? (
        <ol class="chips" ref={list} aria-label={app.t('schemeProfilesChosen', { count: names.length })}>
          {names.map((n, i) => (
            <li key={n} class={`chip${known(n) ? '' : ' missing'}`}>
              <span>{known(n) ? n : app.t('schemeProfileMissing', { profile: n })}</span>
              {i > 0 && (
                <button type="button" class="up" aria-label={app.t('schemeProfileUp', { profile: n })} title={app.t('schemeProfileUp', { profile: n })} onClick={() => up(i)}>
                  <span aria-hidden="true">↑</span>
                </button>
              )}
              <button type="button" class="remove" aria-label={app.t('schemeProfileRemove', { profile: n })} title={app.t('schemeProfileRemove', { profile: n })} onClick={() => remove(i)}>
                <span aria-hidden="true">×</span>
              </button>
            </li>
          ))}
        </ol>
      ) : <p class="muted chosen">{app.t('schemeProfilesNone')}</p>}
      {error && <p class="error">{error}</p>}
      {named && !offered.length && <p class="muted">{named.length ? app.t('schemeProfilesAll') : app.t('profilesNamedNone')}</p>}
      {offered.length > 0 && (
        <div class="add-profile">
          <label for={id}>{app.t('schemeProfileAdd')}</label>
          <select id={id} ref={adder} value={pick || offered[0]} aria-invalid={invalid ? 'true' : undefined} onChange={(e) => setPick((e.currentTarget as HTMLSelectElement).value)}>
            {offered.map((n) => <option key={n} value={n}>{n}</option>)}
          </select>
          <button type="button" onClick={add}>{app.t('schemeProfileAddButton')}<span class="visually-hidden"> {pick || offered[0]}</span></button>
        </div>
      )}
    </div>
  );
}
