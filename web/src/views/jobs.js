// Placeholder: the jobs view (docs/web.md). mount(el, params) returns its unmount function.
export function mount(el, params) {
  const h = document.createElement('h1');
  h.textContent = 'jobs';
  el.append(h);
  return () => {};
}
