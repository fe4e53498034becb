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
import { listPlanOf, ObjectStore, UUID, type InteractiveGate, type Metamodel } from '../../runtime/host.ts';
import type { Knex } from 'knex';
import { appended, formatKey, type RecordWriter, type TransferRecord } from './records.ts';
import { childLists, derivedLabel, labelFromReferences, recordProperties, sortedValue, SYSTEM_COLUMNS, unusedProperties, type KeyedNode, type Node } from './model.ts';

/** Objects of one list read in one statement, past those read ahead. */
const PAGE = 1000;

/** An object as the walk keeps it: without what the store read beside (versions, authors, times). */
const nodeOf = (o: KeyedNode): KeyedNode => ({
  id: o.id, type: o.type, parentId: o.parentId, list: o.list, label: o.label, title: o.title, description: o.description,
  status: o.status, modelId: o.modelId, props: o.props, custom: o.custom,
  ...(o.hasChildren !== undefined ? { hasChildren: o.hasChildren } : {}),
});

/** A history row (the REST read form) as a node. */
function nodeOfRow(row: Record<string, unknown>, model: Metamodel): KeyedNode {
  const type = model.types[row._type as string];
  const props: Record<string, unknown> = {};
  for (const p of type?.properties ?? []) if (row[p.name] !== undefined && !SYSTEM_COLUMNS.has(p.name)) props[p.name] = row[p.name];
  return {
    id: row.id as string, type: row._type as string, parentId: (row.parentId as string | null) ?? null, list: (row.list as string) ?? '',
    label: row.label as string, title: (row.title as string) ?? null, description: (row.description as string) ?? null,
    status: (row.status as string) ?? null, modelId: (row.modelId as string | null) ?? null, props,
    custom: (row.customProperties as Record<string, unknown>) ?? {},
  };
}

/** The key of an object whose children the walk reads: read with it (only objects of the other types are read without). */
function idOf(node: Node): string {
  if (node.id === null) throw new Error(`download: ${node.type} ${JSON.stringify(node.label)} was read without its key`);
  return node.id;
}

/** What the walk leaves out of the objects it reads, by metamodel (unusedProperties). */
const UNUSED = new WeakMap<Metamodel, string[]>();

/** The first children of one list of an object; `rest`, where it may hold more: after which of them (or from the start) they follow. */
export interface ListStart {
  nodes: Node[];
  rest?: { after?: { label: string; id: string } };
}

/** The objects of a database as they are now, or as they were at a time. */
export class Source {
  private readonly store: ObjectStore;
  /** Properties the walk reads without (unusedProperties). */
  private readonly leaveOut: readonly string[];

  constructor(knex: Knex, db: string, private readonly tenant: string, private readonly model: Metamodel, readonly at?: number) {
    this.store = new ObjectStore(knex, db);
    let leaveOut = UNUSED.get(model);
    if (!leaveOut) UNUSED.set(model, leaveOut = unusedProperties(model));
    this.leaveOut = leaveOut;
  }

  /** A list's children a page at a time, by label; `after`: from past this (label, id) on. */
  async *children(parentId: string | null, list: string, o: { tenant?: string; after?: { label: string; id: string }; branchTypes?: readonly string[] } = {}): AsyncGenerator<KeyedNode[]> {
    const tenant = o.tenant ?? this.tenant;
    if (this.at !== undefined) {
      const rows = await this.store.childrenAt(tenant, parentId, list, this.at);
      // History rows do not carry the list; they were asked for by it.
      if (rows.length) yield rows.map((r) => ({ ...nodeOfRow(r, this.model), list }));
      return;
    }
    // Below an object, with whether each child has children (the walk then reads nothing of a leaf's).
    const read = (after?: { label: string; id: string }): Promise<KeyedNode[]> => parentId === null
      ? this.store.children(tenant, parentId, list, { limit: PAGE, ...(after ? { after } : {}) })
      : this.store.treeChildren(tenant, parentId, list, { limit: PAGE, ...(after ? { after } : {}) }, o.branchTypes, { leaveOut: this.leaveOut });
    for (let reading = read(o.after); ;) {
      const page = await reading;
      const last = page[page.length - 1];
      // The next page is read while this one is written.
      if (page.length === PAGE) {
        reading = read({ label: last.label, id: last.id });
        reading.catch(() => undefined);
      }
      if (page.length) yield page.map(nodeOf);
      if (page.length < PAGE) return;
    }
  }

  /**
   * The children in the lists asked of many objects in one statement, at
   * most `total` (as of a past time: all of them, a statement per list that
   * held something then). One map per object, of its lists that hold
   * something, or undefined for an object the statement did not reach.
   */
  async childrenOfMany(asks: { node: Node; lists: string[] }[], total: number, branchTypes?: readonly string[]): Promise<(Map<string, ListStart> | undefined)[]> {
    if (this.at !== undefined) {
      const filled = await this.nonEmptyLists(asks.map((a) => a.node));
      const found: Map<string, ListStart>[] = [];
      for (const { node, lists } of asks) {
        const starts = new Map<string, ListStart>();
        for (const list of lists) {
          if (!filled.get(idOf(node))?.has(list)) continue;
          const nodes: Node[] = [];
          for await (const page of this.children(idOf(node), list)) nodes.push(...page);
          if (nodes.length) starts.set(list, { nodes });
        }
        found.push(starts);
      }
      return found;
    }
    // Lean: of the children, only those of the branch types carry their keys (the walk reads no other's children).
    const lean = { leaveOut: this.leaveOut, branchIdsOnly: branchTypes !== undefined };
    const { children, complete } = await this.store.childrenOfMany(this.tenant, asks.map((a) => idOf(a.node)), total, branchTypes, lean);
    // The object the statement stopped in is read again with the next ones, unless it is the first (its lists then go on from where they were cut).
    const reached = complete > 0 && complete < asks.length ? complete - 1 : complete;
    return asks.map((a, n) => {
      if (n > reached) return undefined;
      const byList = new Map<string, Node[]>();
      for (const o of children[n]) {
        const nodes = byList.get(o.list) ?? [];
        if (!nodes.length) byList.set(o.list, nodes);
        nodes.push(o);
      }
      const starts = new Map<string, ListStart>();
      const cut = n === complete && complete < asks.length ? children[n][children[n].length - 1] : undefined;
      for (const list of a.lists) {
        const nodes = byList.get(list) ?? [];
        const last = nodes[nodes.length - 1];
        if (cut?.list === list) starts.set(list, { nodes, rest: { after: { label: last.label, id: idOf(last) } } });
        // In the object the statement stopped in, a list not seen may come after the one cut short: read from its start.
        else if (cut && !nodes.length) starts.set(list, { nodes, rest: {} });
        else if (nodes.length) starts.set(list, { nodes });
      }
      return starts;
    });
  }

  /**
   * The lists of each object that hold something (as of the source's time), in one statement for all of
   * them: the walk asks only those, instead of one statement per list of every object.
   */
  async nonEmptyLists(nodes: Node[]): Promise<Map<string, Set<string>>> {
    const facts = await this.store.linkFacts(listPlanOf(this.model), nodes.map((n) => ({
      id: idOf(n), type: n.type, tenant: this.tenant, parentId: n.parentId, ...(this.at !== undefined ? { at: this.at } : {}),
    })));
    return new Map(nodes.map((n, i) => [idOf(n), new Set(facts[i].lists)]));
  }

  /**
   * Which of the types the tenant has objects of now; as of a past time, all of them (the walk then reads each
   * list that held something, whatever its types).
   */
  async typesPresent(types: readonly string[]): Promise<Set<string>> {
    return this.at === undefined ? this.store.typesPresent(this.tenant, types) : new Set(types);
  }

  /** Objects and all above them (id, parent, label), in one statement; undefined as of a past time (byId answers there). */
  async withAncestors(ids: string[]): Promise<{ id: string; parentId: string | null; label: string }[] | undefined> {
    return this.at === undefined ? this.store.withAncestors(this.tenant, ids) : undefined;
  }

  async byId(id: string): Promise<KeyedNode | null> {
    if (this.at !== undefined) {
      const row = await this.store.byIdAt(this.tenant, id, this.at);
      return row ? nodeOfRow(row, this.model) : null;
    }
    const [o] = await this.store.byIds(this.tenant, [id]);
    return o ? nodeOf(o) : null;
  }

  async child(parentId: string | null, list: string, label: string): Promise<KeyedNode | null> {
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

/** What the walk needs of a type, worked out once. */
interface TypeFacts {
  /** The child lists it reads (those that can hold a type the download keeps). */
  lists: string[];
  /** The record's properties taken from the object's columns, in metamodel order. */
  columns: PropertyFacts[];
  /** The record's properties taken from the object's other properties, by name. */
  fromProps: ReadonlyMap<string, PropertyFacts>;
  /** The record's references. */
  referenceProperties: PropertyFacts[];
  derivesLabel: boolean;
  /** Its label is derived from references: its lists are ordered by the business keys they name (labelFromReferences). */
  labelFromReferences: boolean;
  /** Properties naming objects by technical key: the record's references and those the label is derived from. */
  references: string[];
}

/** A property of a record: its place in the record (metamodel order), from a column of the object or its other properties, a reference, many-valued. */
interface PropertyFacts {
  name: string;
  index: number;
  column: boolean;
  reference: boolean;
  many: boolean;
}

/** What a place is made of: an object's key, its parent's and its label. */
type PlaceRow = Pick<KeyedNode, 'id' | 'parentId' | 'label'>;

export interface DownloadOptions {
  model: Metamodel;
  source: Source;
  root: KeyedNode;
  /** Types asked for (assetTypes): other objects appear only where they hold some of these. */
  wanted?: Set<string>;
  /** Lists of the root beside the metamodel's (a tenant's users). */
  extraLists?: (node: Node) => { name: string; pages: () => AsyncGenerator<Node[]> }[];
  gate?: InteractiveGate;
  /** Stops the walk (the client went away). */
  signal?: AbortSignal;
}

/**
 * An object to write. Its lists' first children are read ahead together
 * with those of the objects read in the same statement (its batch), from
 * it on: one statement for the lists of up to AHEAD objects, where a walk
 * that read each object's lists when it came to it took two per object
 * (which lists hold something, then each of them), and the statements, not
 * the writing, were what a download waited for.
 */
interface Item {
  node: Node;
  /** Its lists' first children (of the lists that hold something): undefined until read, null once the walk took them. */
  lists?: ReadonlyMap<string, ItemList> | null;
  /** The read of its lists, while under way. */
  reading?: Promise<void>;
  /** The first object of its batch that the read of its lists did not reach: its read starts when the walk takes these lists. */
  following?: Item;
  batch: Item[];
  /** Its index in the batch. */
  at: number;
  /** Its label in its key where that is not its stored one: a label derived from references, with their business keys (ordered). */
  label: string | undefined;
}

/** An item of a batch, appended to it: a leaf's lists need no reading (the source said whether each has children, where it could). */
function itemOf(node: Node, batch: Item[]): Item {
  const item: Item = { node, lists: node.hasChildren === false ? NO_LISTS : undefined, reading: undefined, following: undefined, batch, at: batch.length, label: undefined };
  batch.push(item);
  return item;
}

/** A list's first children as items, and where the rest follows (ListStart). */
interface ItemList {
  items: Item[];
  rest?: ListStart['rest'];
}

/** The lists of a leaf (never changed: the walk only takes an item's lists). */
const NO_LISTS: ReadonlyMap<string, ItemList> = new Map();

/** Objects whose lists are read in one statement, at most. */
const AHEAD = 1000;
/**
 * Children such a statement reads at most, of one object after the other.
 * The objects past them are read when the walk comes to them, and the rest
 * of a list cut short from where it was left, a PAGE at a time.
 */
const AHEAD_ROWS = 5000;
/**
 * The places of referenced objects kept (the walk reads each once, for all
 * references to it): a download names them by business key again and again.
 * Past this many (a model referring to more distinct objects) they are
 * forgotten and read again as needed, which costs statements, not memory.
 */
const PLACES = 100_000;

export class Download {
  private readonly places = new Map<string, Place | null>();
  private readonly keeps: (typeName: string) => boolean;
  /** Per type: the lists the walk reads, the record's properties, the references among all properties. */
  private readonly byType = new Map<string, TypeFacts>();
  /** How many objects were written. */
  count = 0;
  /** The properties makeRecord found in an object, in order (kept for the next object: 100,000s come through). */
  private readonly found: PropertyFacts[] = [];
  /**
   * The types whose objects' lists the walk reads and may find something in: the source tells only of those
   * whether they have children (a look-up per object, about a third of a statement's time on PostgreSQL), and the
   * walk reads the lists of no other's. Known once the walk starts (run).
   */
  private branchTypes: readonly string[] = [];

  constructor(private readonly o: DownloadOptions) {
    const { model, wanted } = o;
    // A type is kept when it is wanted or can hold (at any depth) a wanted one.
    // (Asked of every object read: the answer is kept per type, and nothing is made to give it.)
    const holds = new Map<string, boolean>();
    const keeps = (name: string, seen: Set<string>): boolean => {
      if (!wanted || wanted.has(name)) return true;
      if (holds.has(name)) return holds.get(name)!;
      if (seen.has(name)) return false;
      seen.add(name);
      const result = childLists(model.types[name]).some((l) => l.itemTypes.some((t) => keeps(t, seen)));
      holds.set(name, result);
      return result;
    };
    this.keeps = (name) => !wanted || wanted.has(name) || (holds.get(name) ?? keeps(name, new Set()));
  }

  async run(writer: RecordWriter): Promise<void> {
    // A type whose lists can hold only types the tenant has no object of holds nothing (most objects of a model are
    // attributes, whose lists hold relations a model may not have).
    const { types } = this.o.model;
    const withLists = Object.keys(types).filter((name) => this.typeFacts(name).lists.length > 0);
    const itemTypes = (name: string) => childLists(types[name]).filter((l) => this.typeFacts(name).lists.includes(l.name)).flatMap((l) => l.itemTypes);
    const present = await this.o.source.typesPresent([...new Set(withLists.flatMap(itemTypes))].filter((t) => this.keeps(t)));
    this.branchTypes = withLists.filter((name) => itemTypes(name).some((t) => present.has(t) && this.keeps(t)));
    const [root] = await this.batchOf([this.o.root]);
    await this.walk(root, [], undefined, writer);
    await writer.end();
  }

  private typeFacts(name: string) {
    let facts = this.byType.get(name);
    if (!facts) {
      const type = this.o.model.types[name];
      const properties = recordProperties(type);
      const all = properties.map((p, index): PropertyFacts => ({ name: p.name, index, column: SYSTEM_COLUMNS.has(p.name), reference: p.dataType === 'REFERENCE', many: !!p.many }));
      facts = {
        lists: childLists(type).filter((l) => l.itemTypes.some((t) => this.keeps(t))).map((l) => l.name),
        columns: all.filter((p) => p.column),
        fromProps: new Map(all.filter((p) => !p.column).map((p) => [p.name, p])),
        referenceProperties: all.filter((p) => p.reference),
        derivesLabel: !!type.labelFrom,
        labelFromReferences: labelFromReferences(this.o.model, name),
        // What a record names by business key: its references, and those its label is derived from.
        references: type.properties.filter((p) => p.dataType === 'REFERENCE' && (properties.includes(p) || type.labelFrom?.includes(p.name))).map((p) => p.name),
      };
      this.byType.set(name, facts);
    }
    return facts;
  }

  private async walk(item: Item, key: string[], list: string | undefined, writer: RecordWriter): Promise<void> {
    if (this.o.signal?.aborted) throw new Error('download stopped');
    const { node } = item;
    await this.write(node, key, list, writer);
    const starts = await this.listsOf(item);
    const lists = this.typeFacts(node.type).lists.filter((name) => starts.has(name))
      .map((name) => ({ name, pages: () => this.pages(node, name, starts.get(name)!) }));
    if (node.id === this.o.root.id) for (const extra of this.o.extraLists?.(node) ?? []) lists.push({ name: extra.name, pages: () => this.batches(extra.pages()) });
    for (const l of lists) {
      for await (const page of this.ordered(l.pages())) {
        await this.o.gate?.pause();
        if (this.o.signal?.aborted) throw new Error('download stopped');
        for (const child of page) {
          const childKey = appended(key, child.label ?? child.node.label);
          // A leaf is written without a walk of its own: most objects of a model are leaves.
          if (child.lists === NO_LISTS) {
            child.lists = null;
            const written = this.write(child.node, childKey, l.name, writer);
            if (written) await written;
          } else {
            await this.walk(child, childKey, l.name, writer);
          }
        }
      }
    }
  }

  /** Writes an object's record; a promise only where something must be waited for (a reference's place, the output). */
  private write(node: Node, key: string[], list: string | undefined, writer: RecordWriter): Promise<void> | undefined {
    this.count++;
    const record = this.recordOf(node, key, list);
    return record instanceof Promise ? record.then((r) => writer.write(r)) : writer.write(record);
  }

  /**
   * The item's lists' first children, taken (the walk asks once): read now
   * unless read or being read. Taking them starts the read of the objects
   * of the batch that the same read did not reach, so that its statement
   * runs while the walk writes these (one read ahead per batch).
   */
  private async listsOf(item: Item): Promise<ReadonlyMap<string, ItemList>> {
    while (item.lists === undefined) await (item.reading ?? this.readAhead(item));
    const lists = item.lists!;
    item.lists = null;
    const next = item.following;
    // A failed read ahead fails the walk when it comes to those objects (their `reading`), not before.
    if (next && next.lists === undefined && !next.reading) this.readAhead(next).catch(() => undefined);
    return lists;
  }

  /** Reads the lists of the item and of the next objects of its batch not read or being read, in one statement. */
  private readAhead(item: Item): Promise<void> {
    const asks: Item[] = [];
    for (let i = item.at; i < item.batch.length && asks.length < AHEAD; i++) {
      const next = item.batch[i];
      if (next.lists === undefined && !next.reading) asks.push(next);
    }
    const reading = this.read(asks).finally(() => {
      for (const a of asks) a.reading = undefined;
    });
    for (const a of asks) a.reading = reading;
    return reading;
  }

  private async read(asks: Item[]): Promise<void> {
    const found = await this.o.source.childrenOfMany(asks.map((a) => ({ node: a.node, lists: this.typeFacts(a.node.type).lists })), AHEAD_ROWS, this.branchTypes);
    // The children read are the next batch, in the order read (by object, list and label).
    const batch: Item[] = [];
    const lists = found.map((starts) => {
      if (!starts) return undefined;
      const itemLists = new Map<string, ItemList>();
      for (const [name, start] of starts) {
        const items: Item[] = [];
        for (const node of start.nodes) if (this.keeps(node.type)) items.push(itemOf(node, batch));
        itemLists.set(name, { items, rest: start.rest });
      }
      return itemLists;
    });
    await this.prepareReferences(batch.map((b) => b.node));
    const last = asks[asks.length - 1];
    const following = asks.find((_, n) => !lists[n]) ?? last.batch[last.at + 1];
    asks.forEach((a, n) => {
      if (!lists[n]) return;
      a.lists = lists[n];
      a.following = following;
    });
  }

  /** A list's pages of items: the children read ahead, then (where it holds more) the rest a page at a time. */
  private async *pages(node: Node, list: string, start: ItemList): AsyncGenerator<Item[]> {
    yield start.items;
    if (start.rest) yield* this.batches(this.o.source.children(node.id, list, { ...start.rest, branchTypes: this.branchTypes }));
  }

  /** Pages of objects as items, each page a batch. */
  private async *batches(pages: AsyncGenerator<Node[]>): AsyncGenerator<Item[]> {
    for await (const page of pages) yield this.batchOf(page.filter((n) => this.keeps(n.type)));
  }

  private async batchOf(nodes: Node[]): Promise<Item[]> {
    const batch: Item[] = [];
    for (const node of nodes) itemOf(node, batch);
    await this.prepareReferences(nodes);
    return batch;
  }

  /**
   * The pages in key order: a list whose labels come from references is read whole, each item's `label` set to its
   * business label, and sorted by those. 100,000s of objects come through here: a page without such items is
   * passed on as it is (the type's answer is kept, typeFacts).
   */
  private async *ordered(pages: AsyncGenerator<Item[]>): AsyncGenerator<Item[]> {
    const derived: Item[] = [];
    for await (const page of pages) {
      if (!page.some((item) => this.typeFacts(item.node.type).labelFromReferences)) {
        if (page.length) yield page;
        continue;
      }
      const plain: Item[] = [];
      for (const item of page) {
        if (!this.typeFacts(item.node.type).labelFromReferences) plain.push(item);
        else {
          item.label = await this.businessLabel(item.node);
          derived.push(item);
        }
      }
      if (plain.length) yield plain;
    }
    if (derived.length) yield derived.sort((a, b) => (a.label! < b.label! ? -1 : a.label! > b.label! ? 1 : 0));
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

  /**
   * The record of an object, made at once when the places of its references
   * are known (read ahead with its batch), which they are but for a place
   * forgotten past PLACES or one as of a past time.
   */
  private recordOf(node: Node, key: string[], list: string | undefined): TransferRecord | Promise<TransferRecord> {
    for (const p of this.typeFacts(node.type).referenceProperties) {
      const value = node.props[p.name];
      if (value === undefined || value === null) continue;
      if (p.many && Array.isArray(value)) {
        for (const id of value) if (!this.places.has(String(id))) return this.recordAfterReading(node, key, list);
      } else if (!this.places.has(String(value))) return this.recordAfterReading(node, key, list);
    }
    return this.makeRecord(node, key, list, this.places);
  }

  /** The record, once the places of its references are read. */
  private async recordAfterReading(node: Node, key: string[], list: string | undefined): Promise<TransferRecord> {
    // Kept here: a read ahead of another batch may forget the places meanwhile (PLACES).
    const places = new Map<string, Place | null>();
    for (const p of this.typeFacts(node.type).referenceProperties) {
      const value = node.props[p.name];
      if (value === undefined || value === null) continue;
      for (const id of p.many && Array.isArray(value) ? value : [value]) places.set(String(id), await this.placeOf(String(id)));
    }
    return this.makeRecord(node, key, list, places);
  }

  /**
   * The record of an object. Its properties are those of the type it has, in metamodel order: looked up by the
   * names the object holds (a few), not by the type's (an attribute has 22, and an object's properties, as
   * JSON.parse made them, have as many shapes as there are combinations, so that each look-up by name was a slow one).
   */
  private makeRecord(node: Node, key: string[], list: string | undefined, places: ReadonlyMap<string, Place | null>): TransferRecord {
    const facts = this.typeFacts(node.type);
    const { props } = node;
    const found = this.found;
    let count = 0;
    for (const p of facts.columns) {
      const value = node[p.name as 'label'];
      if (value !== undefined && value !== null) found[count++] = p;
    }
    for (const name in props) {
      const p = facts.fromProps.get(name);
      if (p === undefined) continue;
      // In metamodel order (a few at most: an insertion).
      let at = count++;
      for (; at > 0 && found[at - 1].index > p.index; at--) found[at] = found[at - 1];
      found[at] = p;
    }
    const properties: Record<string, unknown> = {};
    // A label the service derives from the properties is left for the upload to derive again.
    const derived = facts.derivesLabel && derivedLabel(this.o.model.types[node.type], (n) => props[n]) === node.label;
    for (let i = 0; i < count; i++) {
      const p = found[i];
      let value = p.column ? node[p.name as 'label'] : props[p.name];
      if (value === undefined || value === null) continue;
      if (p.name === 'label' && derived) continue;
      if (p.reference) {
        if (p.many && Array.isArray(value)) {
          const keys: string[] = [];
          for (const id of value) {
            const k = this.keyAt(places.get(String(id)) ?? null);
            if (k !== undefined) keys.push(k);
          }
          value = keys;
        } else {
          value = this.keyAt(places.get(String(value)) ?? null);
          if (value === undefined) continue;
        }
      }
      properties[p.name] = value;
    }
    for (const _ in node.custom) {
      properties.customProperties = sortedValue(node.custom);
      break;
    }
    return list !== undefined ? { type: node.type, key, list, properties } : { type: node.type, key, properties };
  }

  /**
   * Reads the places of the objects that these refer to and that are not
   * known yet, with everything above them, in one statement (as of a past
   * time, keyOf reads them one by one).
   */
  private async prepareReferences(nodes: Node[]): Promise<void> {
    const ids = new Set<string>();
    for (const node of nodes) {
      for (const name of this.typeFacts(node.type).references) {
        const value = node.props[name];
        if (value === undefined || value === null) continue;
        if (!Array.isArray(value)) {
          if (typeof value === 'string' && UUID.test(value) && !this.places.has(value)) ids.add(value);
          continue;
        }
        for (const id of value) if (typeof id === 'string' && UUID.test(id) && !this.places.has(id)) ids.add(id);
      }
    }
    if (!ids.size) return;
    const rows = await this.o.source.withAncestors([...ids]);
    if (!rows) return;
    if (this.places.size + ids.size > PLACES) this.places.clear();
    const known = new Map(rows.map((r) => [r.id, r]));
    for (const id of ids) await this.placeOf(id, 0, known);
  }

  /** The business key of a referenced object: relative below the download's root, else from its model's root with a leading `/`. */
  async keyOf(id: string): Promise<string | undefined> {
    return this.keyAt(await this.placeOf(id));
  }

  private keyAt(place: Place | null): string | undefined {
    if (!place) return undefined;
    const at = place.ids.indexOf(this.o.root.id);
    if (at >= 0) return formatKey(place.labels.slice(at));
    return formatKey(place.labels, place.rootLabel);
  }

  /** `known`: the objects read ahead (prepareReferences); otherwise each is read when asked. */
  private async placeOf(id: string, depth = 0, known?: Map<string, PlaceRow>): Promise<Place | null> {
    if (this.places.has(id)) return this.places.get(id)!;
    const node = depth > 64 ? null : known ? known.get(id) ?? null : await this.o.source.byId(id);
    let place: Place | null = null;
    if (node && node.parentId === null) place = { rootId: node.id, rootLabel: node.label, labels: [], ids: [node.id] };
    else if (node) {
      const parent = await this.placeOf(node.parentId!, depth + 1, known);
      if (parent) place = { rootId: parent.rootId, rootLabel: parent.rootLabel, labels: appended(parent.labels, node.label), ids: appended(parent.ids, node.id) };
    }
    this.places.set(id, place);
    return place;
  }
}
