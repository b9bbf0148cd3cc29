/** URL and URLSearchParams; parsing runs on the host (WHATWG URL), the isolate keeps the fields it returns. */

type HostUrl = (input: string, base: string, field: string, value: string) => string;

interface UrlFields {
  href: string;
  origin: string;
  protocol: string;
  username: string;
  password: string;
  host: string;
  hostname: string;
  port: string;
  pathname: string;
  search: string;
  hash: string;
  error?: true;
}

const URL_FIELDS = ['href', 'origin', 'protocol', 'username', 'password', 'host', 'hostname', 'port', 'pathname', 'search', 'hash'] as const;

function formEncode(s: string): string {
  return encodeURIComponent(s)
    .replace(/%20/g, '+')
    .replace(/[!'()~]/g, (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase());
}
function formDecode(s: string): string {
  try {
    return decodeURIComponent(s.replace(/\+/g, ' '));
  } catch {
    return s;
  }
}

export function urlClasses(hostUrl: HostUrl) {
  const searchParamsOwner = new WeakMap<URLSearchParams, URL>();

  class URLSearchParams {
    _list: Array<[string, string]> = [];
    constructor(init?: unknown) {
      if (init === undefined || init === null) return;
      if (typeof init === 'string') {
        const s = init[0] === '?' ? init.slice(1) : init;
        for (const part of s.split('&')) {
          if (part === '') continue;
          const eq = part.indexOf('=');
          this._list.push(eq < 0 ? [formDecode(part), ''] : [formDecode(part.slice(0, eq)), formDecode(part.slice(eq + 1))]);
        }
      } else if (typeof (init as { [Symbol.iterator]?: unknown })[Symbol.iterator] === 'function') {
        for (const pair of init as Iterable<ArrayLike<unknown>>) this._list.push([String(pair[0]), String(pair[1])]);
      } else {
        const record = init as Record<string, unknown>;
        for (const key of Object.keys(record)) this._list.push([key, String(record[key])]);
      }
    }
    _changed(): void {
      const url = searchParamsOwner.get(this);
      if (url) url._setSearchFromParams(this.toString());
    }
    get size(): number {
      return this._list.length;
    }
    append(name: unknown, value: unknown): void {
      this._list.push([String(name), String(value)]);
      this._changed();
    }
    delete(name: unknown): void {
      this._list = this._list.filter((p) => p[0] !== String(name));
      this._changed();
    }
    get(name: unknown): string | null {
      const p = this._list.find((q) => q[0] === String(name));
      return p ? p[1] : null;
    }
    getAll(name: unknown): string[] {
      return this._list.filter((p) => p[0] === String(name)).map((p) => p[1]);
    }
    has(name: unknown): boolean {
      return this._list.some((p) => p[0] === String(name));
    }
    set(name: unknown, value: unknown): void {
      const n = String(name);
      const i = this._list.findIndex((p) => p[0] === n);
      if (i < 0) this._list.push([n, String(value)]);
      else this._list = this._list.filter((p, k) => k <= i || p[0] !== n).map((p, k): [string, string] => (k === i ? [n, String(value)] : p));
      this._changed();
    }
    sort(): void {
      this._list.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
      this._changed();
    }
    forEach(fn: (value: string, key: string, params: URLSearchParams) => void, thisArg?: unknown): void {
      for (const [k, v] of this._list) fn.call(thisArg, v, k, this);
    }
    keys(): Iterator<string> {
      return this._list.map((p) => p[0])[Symbol.iterator]();
    }
    values(): Iterator<string> {
      return this._list.map((p) => p[1])[Symbol.iterator]();
    }
    entries(): Iterator<[string, string]> {
      return this._list.map((p): [string, string] => [p[0], p[1]])[Symbol.iterator]();
    }
    [Symbol.iterator](): Iterator<[string, string]> {
      return this.entries();
    }
    toString(): string {
      return this._list.map((p) => formEncode(p[0]) + '=' + formEncode(p[1])).join('&');
    }
  }

  function parseUrl(input: string, base: string, field: string, value: string): UrlFields {
    const parsed = JSON.parse(hostUrl(input, base, field, value)) as UrlFields;
    if (parsed.error) throw new TypeError('Invalid URL: ' + input);
    return parsed;
  }

  class URL {
    _fields: UrlFields;
    _params: URLSearchParams | null;
    constructor(input: unknown, base?: unknown) {
      const base_ = base === undefined ? '' : base instanceof URL ? base.href : String(base);
      this._fields = parseUrl(input instanceof URL ? input.href : String(input), base_, '', '');
      this._params = null;
    }
    static canParse(input: unknown, base?: unknown): boolean {
      try {
        new URL(input, base);
        return true;
      } catch {
        return false;
      }
    }
    _update(field: string, value: unknown): void {
      this._fields = parseUrl(this._fields.href, '', field, String(value));
      if (this._params && field !== 'hash') this._params._list = new URLSearchParams(this._fields.search)._list;
    }
    _setSearchFromParams(search: string): void {
      this._fields = parseUrl(this._fields.href, '', 'search', search);
    }
    get searchParams(): URLSearchParams {
      if (!this._params) {
        this._params = new URLSearchParams(this._fields.search);
        searchParamsOwner.set(this._params, this);
      }
      return this._params;
    }
    // Declared for the type checker; the accessors are defined on the prototype below.
    declare readonly href: string;
    toString(): string {
      return this._fields.href;
    }
    toJSON(): string {
      return this._fields.href;
    }
  }
  for (const field of URL_FIELDS) {
    Object.defineProperty(URL.prototype, field, {
      get(this: URL) {
        return this._fields[field];
      },
      set:
        field === 'origin'
          ? undefined
          : function (this: URL, value: unknown) {
              this._update(field, value);
            },
      enumerable: true,
      configurable: false,
    });
  }
  return { URL, URLSearchParams };
}
