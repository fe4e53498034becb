/**
 * Download (decisions §8): a model as records, depth first, read a page at
 * a time so that nothing but the open pages and the keys of referenced
 * objects is held. The root, then each list of it in metamodel order; the
 * objects of a list by label (what the store orders them by), except where
 * the label is derived from references (derivations, usages, attributions):
 * those are ordered by the business keys the references name, since their
 * stored labels are technical keys that differ between databases.
 *
 * References name their target by business key: relative to the download's
 * root when the target is below it, else with a leading `/` and the label of
 * the target's model (its root object). A reference whose target is gone
 * (or invisible at the time asked) is left out.
 */
import { listPlanOf, ObjectStore, type InteractiveGate, type Metamodel, type StoredObject } from '../../runtime/host.ts';
import type { Knex } from 'knex';
import { formatKey, type RecordWriter, type TransferRecord } from './records.ts';
import { childLists, derivedLabel, labelFromReferences, recordProperties, sortedValue, type Node } from './model.ts';

const PAGE = 500;

const nodeOf = (o: StoredObject): Node => ({
  id: o.id, type: o.type, parentId: o.parentId, list: o.list, label: o.label, title: o.title, description: o.description,
  status: o.status, modelId: o.modelId, props: o.props, custom: o.custom,
});

/** A history row (the REST read form) as a node. */
function nodeOfRow(row: Record<string, unknown>, model: Metamodel): Node {
  const type = model.types[row._type as string];
  const props: Record<string, unknown> = {};
  for (const p of type?.properties ?? []) if (row[p.name] !== undefined && !['label', 'title', 'description', 'status'].includes(p.name)) props[p.name] = row[p.name];
  return {
    id: row.id as string, type: row._type as string, parentId: (row.parentId as string | null) ?? null, list: (row.list as string) ?? '',
    label: row.label as string, title: (row.title as string) ?? null, description: (row.description as string) ?? null,
    status: (row.status as string) ?? null, modelId: (row.modelId as string | null) ?? null, props,
    custom: (row.customProperties as Record<string, unknown>) ?? {},
  };
}

/** The objects of a database as they are now, or as they were at a time. */
export class Source {
  private readonly store: ObjectStore;

  constructor(knex: Knex, db: string, private readonly tenant: string, private readonly model: Metamodel, readonly at?: number) {
    this.store = new ObjectStore(knex, db);
  }

  async *children(parentId: string | null, list: string, tenant = this.tenant): AsyncGenerator<Node[]> {
    if (this.at !== undefined) {
      const rows = await this.store.childrenAt(tenant, parentId, list, this.at);
      // History rows do not carry the list; they were asked for by it.
      if (rows.length) yield rows.map((r) => ({ ...nodeOfRow(r, this.model), list }));
      return;
    }
    for (let after: { label: string; id: string } | undefined; ;) {
      const page = await this.store.children(tenant, parentId, list, { limit: PAGE, ...(after ? { after } : {}) });
      if (page.length) yield page.map(nodeOf);
      if (page.length < PAGE) return;
      const last = page[page.length - 1];
      after = { label: last.label, id: last.id };
    }
  }

  /**
   * The lists of each object that hold something (as of the source's time), in one statement for all of
   * them: the walk asks only those, instead of one statement per list of every object.
   */
  async nonEmptyLists(nodes: Node[]): Promise<Map<string, Set<string>>> {
    const facts = await this.store.linkFacts(listPlanOf(this.model), nodes.map((n) => ({
      id: n.id, type: n.type, tenant: this.tenant, parentId: n.parentId, ...(this.at !== undefined ? { at: this.at } : {}),
    })));
    return new Map(nodes.map((n, i) => [n.id, new Set(facts[i].lists)]));
  }

  async byId(id: string): Promise<Node | null> {
    if (this.at !== undefined) {
      const row = await this.store.byIdAt(this.tenant, id, this.at);
      return row ? nodeOfRow(row, this.model) : null;
    }
    const [o] = await this.store.byIds(this.tenant, [id]);
    return o ? nodeOf(o) : null;
  }

  async child(parentId: string | null, list: string, label: string): Promise<Node | null> {
    if (this.at !== undefined) {
      const row = await this.store.childAt(this.tenant, parentId, list, label, this.at);
      return row ? { ...nodeOfRow(row, this.model), list } : null;
    }
    const o = await this.store.child(this.tenant, parentId, list, label);
    return o ? nodeOf(o) : null;
  }
}

/** Where an object stands: its model's root and the labels from there down. */
interface Place {
  rootId: string;
  rootLabel: string;
  labels: string[];
  /** Ids on the way, root first (the object's own last). */
  ids: string[];
}

export interface DownloadOptions {
  model: Metamodel;
  source: Source;
  root: Node;
  /** Types asked for (assetTypes): other objects appear only where they hold some of these. */
  wanted?: Set<string>;
  /** Lists of the root beside the metamodel's (a tenant's users). */
  extraLists?: (node: Node) => { name: string; pages: () => AsyncGenerator<Node[]> }[];
  gate?: InteractiveGate;
  /** Stops the walk (the client went away). */
  signal?: AbortSignal;
}

export class Download {
  private readonly places = new Map<string, Place | null>();
  private readonly keeps: (typeName: string) => boolean;
  /** How many objects were written. */
  count = 0;

  constructor(private readonly o: DownloadOptions) {
    const { model, wanted } = o;
    // A type is kept when it is wanted or can hold (at any depth) a wanted one.
    const holds = new Map<string, boolean>();
    const keeps = (name: string, seen = new Set<string>()): boolean => {
      if (!wanted || wanted.has(name)) return true;
      if (holds.has(name)) return holds.get(name)!;
      if (seen.has(name)) return false;
      seen.add(name);
      const result = childLists(model.types[name]).some((l) => l.itemTypes.some((t) => keeps(t, seen)));
      holds.set(name, result);
      return result;
    };
    this.keeps = (name) => keeps(name);
  }

  async run(writer: RecordWriter): Promise<void> {
    await this.walk(this.o.root, [], undefined, writer);
    await writer.end();
  }

  /** `filled`: the node's lists that hold something, where known (every list is read otherwise). */
  private async walk(node: Node, key: string[], list: string | undefined, writer: RecordWriter, filled?: Set<string>): Promise<void> {
    if (this.o.signal?.aborted) throw new Error('download stopped');
    await writer.write(await this.recordOf(node, key, list));
    this.count++;
    const { model } = this.o;
    const lists = childLists(model.types[node.type]).filter((l) => l.itemTypes.some((t) => this.keeps(t)) && (!filled || filled.has(l.name)))
      .map((l) => ({ name: l.name, pages: () => this.o.source.children(node.id, l.name) }));
    if (node.id === this.o.root.id) for (const extra of this.o.extraLists?.(node) ?? []) lists.push(extra);
    for (const l of lists) {
      for await (const page of this.ordered(l.pages())) {
        await this.o.gate?.pause();
        const kept = page.filter(({ child }) => this.keeps(child.type));
        const lists = await this.o.source.nonEmptyLists(kept.map(({ child }) => child));
        for (const { child, label } of kept) await this.walk(child, [...key, label], l.name, writer, lists.get(child.id));
      }
    }
  }

  /** Pages with each object's business label; a list whose labels come from references is read whole and sorted by those. */
  private async *ordered(pages: AsyncGenerator<Node[]>): AsyncGenerator<{ child: Node; label: string }[]> {
    const derived: { child: Node; label: string }[] = [];
    for await (const page of pages) {
      const fromRefs = page.filter((n) => labelFromReferences(this.o.model, n.type));
      if (fromRefs.length < page.length) yield page.filter((n) => !labelFromReferences(this.o.model, n.type)).map((child) => ({ child, label: child.label }));
      for (const child of fromRefs) derived.push({ child, label: await this.businessLabel(child) });
    }
    if (derived.length) yield derived.sort((a, b) => (a.label < b.label ? -1 : a.label > b.label ? 1 : 0));
  }

  /** A label derived from references, with the business keys of the references in place of technical keys; else the label. */
  private async businessLabel(node: Node): Promise<string> {
    const type = this.o.model.types[node.type];
    if (!type.labelFrom || node.label !== derivedLabel(type, (n) => node.props[n])) return node.label;
    const parts: string[] = [];
    for (const name of type.labelFrom) {
      const value = node.props[name];
      if (value === undefined || value === null || value === '') continue;
      const p = type.properties.find((d) => d.name === name);
      parts.push(p?.dataType === 'REFERENCE' ? (await this.keyOf(String(value))) ?? String(value) : String(value));
    }
    return parts.join(' ');
  }

  private async recordOf(node: Node, key: string[], list: string | undefined): Promise<TransferRecord> {
    const type = this.o.model.types[node.type];
    const properties: Record<string, unknown> = {};
    const columns: Record<string, unknown> = { label: node.label, title: node.title, description: node.description, status: node.status };
    // A label the service derives from the properties is left for the upload to derive again.
    const derived = derivedLabel(type, (n) => node.props[n]) === node.label;
    for (const p of recordProperties(type)) {
      let value = p.name in columns ? columns[p.name] : node.props[p.name];
      if (value === undefined || value === null) continue;
      if (p.name === 'label' && derived) continue;
      if (p.dataType === 'REFERENCE') {
        if (p.many && Array.isArray(value)) {
          const keys: string[] = [];
          for (const id of value) {
            const k = await this.keyOf(String(id));
            if (k !== undefined) keys.push(k);
          }
          value = keys;
        } else {
          value = await this.keyOf(String(value));
          if (value === undefined) continue;
        }
      }
      properties[p.name] = value;
    }
    if (Object.keys(node.custom).length) properties.customProperties = sortedValue(node.custom);
    return { type: node.type, key, ...(list !== undefined ? { list } : {}), properties };
  }

  /** The business key of a referenced object: relative below the download's root, else from its model's root with a leading `/`. */
  async keyOf(id: string): Promise<string | undefined> {
    const place = await this.placeOf(id);
    if (!place) return undefined;
    const at = place.ids.indexOf(this.o.root.id);
    if (at >= 0) return formatKey(place.labels.slice(at));
    return formatKey(place.labels, place.rootLabel);
  }

  private async placeOf(id: string, depth = 0): Promise<Place | null> {
    if (this.places.has(id)) return this.places.get(id)!;
    const node = depth > 64 ? null : await this.o.source.byId(id);
    let place: Place | null = null;
    if (node && node.parentId === null) place = { rootId: node.id, rootLabel: node.label, labels: [], ids: [node.id] };
    else if (node) {
      const parent = await this.placeOf(node.parentId!, depth + 1);
      if (parent) place = { rootId: parent.rootId, rootLabel: parent.rootLabel, labels: [...parent.labels, node.label], ids: [...parent.ids, node.id] };
    }
    this.places.set(id, place);
    return place;
  }
}
