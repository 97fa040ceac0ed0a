// The portal's one script. Opening a link: the token is in the fragment,
// which the browser never sends to a server; post it once, take it out of
// the address bar and the history, then go to the subscriptions (or to the
// page that says why the link did not open). Every other page and form works
// without it (the copy button of a secret shown once is copy-button.js).
(function () {
  const opener = document.getElementById('portal-open');
  if (opener === null) return;
  const status = document.getElementById('open-status');
  const signedIn = opener.hasAttribute('data-signed-in');
  const confirm = document.getElementById('open-confirm');
  const button = document.getElementById('open-link');
  // The token of the link last opened, until it is posted: each token is posted once.
  let pending = null;

  const exchange = () => {
    const token = pending;
    if (token === null) return;
    pending = null;
    status.textContent = 'Opening the portal…';
    fetch(opener.getAttribute('data-exchange'), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token: token }),
      credentials: 'same-origin',
    })
      .then((response) => {
        const next = response.headers.get('location');
        if (next === null) throw new Error('no next page');
        window.location.replace(next);
      })
      .catch(() => {
        status.textContent = 'The portal could not be opened. Check the connection and ask for a new link.';
      });
  };

  const openFragment = () => {
    if (window.location.hash === '') return;
    // The fragment is read as URL parameters: a mail tracker or a product may add its own after the token.
    const token = new URLSearchParams(window.location.hash.slice(1)).get('token');
    // Out of the address bar and the history at once, whatever the fragment held, before anything can fail.
    window.history.replaceState(null, '', window.location.pathname + window.location.search);
    if (token === null || !/^[A-Za-z0-9_-]{1,200}$/.test(token)) {
      pending = null;
      if (confirm !== null) confirm.hidden = true;
      status.textContent =
        'This link carries no portal token: it may have been cut short when it was copied. Ask whoever sent it for a new one.';
      return;
    }
    pending = token;
    // Signed in already: a link replaces that session only when the person says so (the page says why).
    if (!signedIn) {
      exchange();
      return;
    }
    confirm.hidden = false;
    button.disabled = false;
    button.focus();
  };

  if (signedIn) {
    button.addEventListener('click', () => {
      button.disabled = true;
      exchange();
    });
  }
  openFragment();
  // A link pasted into a tab that already shows this page differs from its address only after `#`: the browser
  // does not load the page again, it only changes the fragment, which this handles as a page load would.
  window.addEventListener('hashchange', openFragment);
})();
