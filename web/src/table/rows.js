// The node table's rows: pages of GET /clusterws/nodetable (docs/api.md), fetched when the
// table scrolls to them and cached (the most recent MAX_PAGES), all for one query (noderange,
// columns, sort). A new query replaces the cache only once its first page has arrived, so a
// bad noderange leaves the table as it was.
import * as api from '../api.js';

/** Rows per request. */
export const PAGE = 100;
/** Pages kept; the least recently used go first. */
const MAX_PAGES = 60;

export class RowSource {
  /** `onChange()` is called whenever rows or the total changed (the view renders). */
  constructor(onChange) {
    this.onChange = onChange;
    this.query = { noderange: '', attrs: [], sort: 'node', order: 'asc' };
    /** The query asked last (its first page may still be on its way): changes build on it. */
    this.wanted = this.query;
    this.gen = 0;
    this.pages = new Map();
    this.loading = new Map();
    this.total = 0;
  }

  path(query, page) {
    const q = new URLSearchParams();
    if (query.noderange) q.set('noderange', query.noderange);
    if (query.attrs.length) q.set('attrs', query.attrs.join(','));
    q.set('sort', query.sort);
    q.set('order', query.order);
    q.set('offset', String(page * PAGE));
    q.set('limit', String(PAGE));
    return '/nodetable?' + q.toString();
  }

  /**
   * Makes `changes` (some of noderange, attrs, sort, order) the query: fetches its first page
   * and only then drops the old rows. Throws ApiError (the table is unchanged).
   */
  async apply(changes) {
    const query = { ...this.wanted, ...changes };
    this.wanted = query;
    const gen = ++this.gen;
    let r;
    try {
      r = await api.request('GET', this.path(query, 0));
    } catch (e) {
      if (gen === this.gen) this.wanted = this.query; // refused: back to what is shown
      throw e;
    }
    if (gen !== this.gen) return false; // a later query won
    this.query = query;
    this.pages = new Map([[0, r.rows]]);
    this.loading = new Map();
    this.total = r.total;
    this.onChange();
    return true;
  }

  /** Row `i` ({node, attr...}) if its page is here, else undefined. */
  row(i) {
    const p = Math.floor(i / PAGE);
    const rows = this.pages.get(p);
    if (!rows) return undefined;
    // most recently used last (the Map's order is the eviction order)
    this.pages.delete(p);
    this.pages.set(p, rows);
    return rows[i - p * PAGE];
  }

  /** Fetches page `p` (again, when `fresh`); resolves when it is here. */
  load(p, fresh = false) {
    if (!fresh && this.pages.has(p)) return Promise.resolve();
    const key = fresh ? `${p}!` : String(p);
    if (this.loading.has(key)) return this.loading.get(key);
    const gen = this.gen;
    const done = api
      .request('GET', this.path(this.query, p))
      .then((r) => {
        if (gen !== this.gen) return;
        this.pages.set(p, r.rows);
        while (this.pages.size > MAX_PAGES) this.pages.delete(this.pages.keys().next().value);
        const totalChanged = r.total !== this.total;
        this.total = r.total;
        this.onChange(totalChanged);
      })
      .finally(() => {
        if (this.loading.get(key) === done) this.loading.delete(key);
      });
    this.loading.set(key, done);
    return done;
  }

  /** Fetches the pages holding rows `first` to `last` that are not here. */
  ensure(first, last) {
    const waits = [];
    for (let p = Math.floor(first / PAGE); p <= Math.floor(Math.max(first, last) / PAGE); ++p) {
      waits.push(this.load(p));
    }
    return Promise.all(waits);
  }

  /** Fetches again the pages holding rows `first` to `last` (their nodes changed). */
  refresh(first, last) {
    const waits = [];
    for (let p = Math.floor(first / PAGE); p <= Math.floor(Math.max(first, last) / PAGE); ++p) {
      waits.push(this.load(p, true));
    }
    return Promise.all(waits);
  }

  /** The index of `node` among the cached rows, or -1. */
  indexOf(node) {
    for (const [p, rows] of this.pages) {
      const i = rows.findIndex((r) => r.node === node);
      if (i >= 0) return p * PAGE + i;
    }
    return -1;
  }
}
