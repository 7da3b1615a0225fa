// Placeholder: the node view (docs/web.md). mount(el, params) returns its unmount function.
export function mount(el, params) {
  const h = document.createElement('h1');
  h.textContent = 'node';
  el.append(h);
  return () => {};
}
