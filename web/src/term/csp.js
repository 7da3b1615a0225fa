// xterm.js under the page's Content-Security-Policy (style-src 'self', no 'unsafe-inline').
// xterm writes its computed styles (theme colours, cell sizes, the scrollbar) as text into
// <style> elements it creates, and 24-bit colours as `style` attributes: the CSP blocks both
// (and reports each). Both are routed through the CSSOM, which the CSP allows: a <style> that
// page code creates becomes an inert placeholder whose text goes into a constructed stylesheet
// (document.adoptedStyleSheets) while the placeholder is in the document; setAttribute('style')
// becomes style.cssText. Only xterm creates styles this way: the page's own code uses classes.

let installed = false;
const sheets = new Map(); // placeholder element -> its CSSStyleSheet

/** Drops the sheets of placeholders no longer in the document (a terminal disposed). */
export function prune() {
  let changed = false;
  for (const [el, sheet] of sheets) {
    if (!el.isConnected) {
      sheets.delete(el);
      changed = true;
      document.adoptedStyleSheets = document.adoptedStyleSheets.filter((s) => s !== sheet);
    }
  }
  return changed;
}

/** Installs the two reroutes once (idempotent). */
export function install() {
  if (installed) return;
  installed = true;
  const create = Document.prototype.createElement;
  Document.prototype.createElement = function (tag, options) {
    if (String(tag).toLowerCase() !== 'style') return create.call(this, tag, options);
    const el = create.call(this, 'cws-style');
    el.hidden = true;
    const sheet = new CSSStyleSheet();
    let text = '';
    Object.defineProperty(el, 'textContent', {
      get: () => text,
      set: (v) => {
        text = v == null ? '' : String(v);
        sheet.replaceSync(text);
      },
    });
    const remove = el.remove.bind(el);
    el.remove = () => {
      remove();
      prune();
    };
    sheets.set(el, sheet);
    document.adoptedStyleSheets = [...document.adoptedStyleSheets, sheet];
    return el;
  };
  const setAttribute = Element.prototype.setAttribute;
  Element.prototype.setAttribute = function (name, value) {
    if (String(name).toLowerCase() === 'style' && this.style) {
      this.style.cssText = String(value);
      return;
    }
    setAttribute.call(this, name, value);
  };
}
