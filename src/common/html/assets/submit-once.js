// A form is sent once per answer: while a form's post waits for its answer,
// another click on its button or Enter in one of its fields is ignored. A
// second post would repeat the action itself (a second key nobody saw, a
// second confirmed order and its order.confirmed, a rotation that ends the
// secret the page says keeps signing); the server cannot tell it from a
// deliberate one. Search forms (GET) are left alone: sending one again only
// reads.
//
// The buttons are marked aria-disabled rather than disabled: a disabled
// button drops the keyboard focus, and the ignored submit still reaches this
// listener. Without JavaScript every form works as before.
(() => {
  const pending = new WeakSet();

  const buttonsOf = (form) => form.querySelectorAll('button:not([type]), button[type="submit"], input[type="submit"]');

  const hold = (form) => {
    pending.add(form);
    form.setAttribute('aria-busy', 'true');
    for (const button of buttonsOf(form)) button.setAttribute('aria-disabled', 'true');
  };

  const release = () => {
    for (const form of document.forms) {
      if (!pending.has(form)) continue;
      pending.delete(form);
      form.removeAttribute('aria-busy');
      for (const button of buttonsOf(form)) button.removeAttribute('aria-disabled');
    }
  };

  document.addEventListener('submit', (event) => {
    const form = event.target;
    if (!(form instanceof window.HTMLFormElement) || form.method !== 'post') return;
    if (pending.has(form)) {
      event.preventDefault();
      return;
    }
    // Another script that took the submit over (or refused it) sends nothing here.
    if (!event.defaultPrevented) hold(form);
  });

  // The page is shown again without a new load (back or forward from the
  // back/forward cache): its forms were held for a post whose answer is gone.
  window.addEventListener('pageshow', (event) => {
    if (event.persisted) release();
  });

  // The post's navigation was stopped (the browser's Stop, Escape) and this
  // page stays: nothing is on its way any more, so the forms work again.
  if ('navigation' in window) window.navigation.addEventListener('navigateerror', release);
})();
