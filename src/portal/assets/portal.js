// The portal's one script. Opening a link: the token is in the fragment,
// which the browser never sends to a server; post it once, take it out of
// the address bar and the history, then go to the subscriptions (or to the
// page that says why the link did not open). Every other page and form works
// without it (the copy button of a secret shown once is copy-button.js).
(function () {
  const opener = document.getElementById('portal-open');
  const match = /^#token=([A-Za-z0-9_-]{1,200})$/.exec(window.location.hash);
  if (opener !== null && match !== null) {
    const status = document.getElementById('open-status');
    status.textContent = 'Opening the portal…';
    fetch(opener.getAttribute('data-exchange'), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token: match[1] }),
      credentials: 'same-origin',
    })
      .then((response) => {
        const next = response.headers.get('location');
        if (next === null) throw new Error('no next page');
        window.history.replaceState(null, '', window.location.pathname + window.location.search);
        window.location.replace(next);
      })
      .catch(() => {
        window.history.replaceState(null, '', window.location.pathname + window.location.search);
        status.textContent = 'The portal could not be opened. Check the connection and ask for a new link.';
      });
  }
})();
